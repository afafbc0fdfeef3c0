/**
 * Agents at volume (`POST /_emulator/workspaces/{name}/agents`, docs/emulator.md "Agents at
 * volume"): many agents at once, each with published versions and a deploy history, as if made
 * through the API some time ago. The body of `POST /v1/agents` is checked once and every agent gets
 * a copy of its configuration (its name numbered).
 */
import { z } from "zod";
import type { ActivationRow } from "../spec";
import { assertCanServe, newVersion, planOrRefuseIn } from "./routes/agents";
import { stableUuid } from "./seed";
import type { AgentRecord, State, VersionRecord, WorkspaceState } from "./state";
import { flat } from "./traffic";

/** Most agents one request creates. */
export const MAX_BULK_AGENTS = 20_000;

/** Most versions each agent gets. */
const MAX_BULK_VERSIONS = 20;

/** `POST /_emulator/workspaces/{name}/agents` body. */
export const BulkAgentsBody = z
  .strictObject({
    /** How many agents. */
    count: z.int().min(1).max(MAX_BULK_AGENTS),
    /** A `POST /v1/agents` body every agent starts from (default `{name: "Agent"}`); names get ` <n>` appended. */
    agent: z.record(z.string(), z.unknown()).optional(),
    /** Published versions per agent, 0 to versions - 1, all the same configuration (default 1). */
    versions: z.int().min(1).max(MAX_BULK_VERSIONS).optional(),
    /** The version live at the end (default the latest; null: none). */
    live_version: z.int().min(0).nullable().optional(),
    /** How long ago the agents were made and their history written, in seconds (default 0). */
    since_seconds: z
      .number()
      .min(0)
      .max(365 * 86_400)
      .optional(),
  })
  .refine((b) => b.live_version == null || b.live_version < (b.versions ?? 1), {
    path: ["live_version"],
    message: "live_version must be one of the versions (0 to versions - 1)",
  });
export type BulkAgentsBody = z.infer<typeof BulkAgentsBody>;

/** One created agent, as the answer lists it. */
export interface BulkAgent {
  id: string;
  name: string;
  live_version: number | null;
}

/**
 * Creates `count` agents in `ws`: versions 0 to `versions - 1` published (revisions 1, 2, ...), and
 * a deploy history that put 0, 1, ... `live_version` live in turn (`activate` rows, each naming
 * the one before). Ids are stable (from the workspace and the ordering number), so the same
 * requests after a reset make the same agents. Refusals (the body, a blocked configuration) come
 * before anything is made.
 */
export function createAgents(state: State, ws: WorkspaceState, b: BulkAgentsBody): BulkAgent[] {
  const template = b.agent ?? { name: "Agent" };
  const config = planOrRefuseIn(state, ws, null, template);
  const versions = b.versions ?? 1;
  const live = b.live_version === undefined ? versions - 1 : b.live_version;
  if (live !== null) {
    const probe = newVersion(0, config, 1);
    probe.is_published = true;
    assertCanServe(state, ws, probe, "agent", { before: "making it live", can: "go live" });
  }
  // The history's times are a millisecond apart and all in the past (a call placed now comes after).
  const base = Date.now() - Math.round((b.since_seconds ?? 0) * 1000) - (versions + (live ?? 0) + 1);
  const at = (ms: number) => new Date(ms).toISOString();
  const meta = template as { label?: string | null; notes?: string | null };
  const out: BulkAgent[] = [];
  state.batch(() => {
    for (let i = 0; i < b.count; i++) {
      const seq = state.nextSeq();
      const id = flat(stableUuid(`bulk-agent:${ws.name}:${seq}`));
      const name = `${config.name} ${i}`;
      const vs: VersionRecord[] = [];
      for (let n = 0; n < versions; n++) {
        const v = newVersion(n, { ...structuredClone(config), name }, n + 1);
        v.version_id = stableUuid(`${id}:version:${n}`);
        v.is_published = true;
        v.created_at = at(base + n);
        v.updated_at = at(base + n);
        if (n === 0) {
          v.label = meta.label ?? null;
          v.notes = meta.notes ?? null;
        }
        vs.push(v);
      }
      const activations: ActivationRow[] = [];
      if (live !== null)
        for (let n = 0; n <= live; n++)
          activations.push({
            id: stableUuid(`${id}:activation:${n}`),
            agent_id: id,
            action: "activate",
            version: n,
            previous_version: n === 0 ? null : n - 1,
            at: at(base + versions + n),
          });
      const agent: AgentRecord = {
        id,
        seq,
        created_at: at(base),
        versions: vs,
        live_version: live,
        activations,
        widget: null,
      };
      ws.agents.set(id, agent);
      state.saveAgent(ws, agent);
      out.push({ id, name, live_version: live });
    }
  });
  return out;
}
