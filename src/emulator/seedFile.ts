/**
 * The emulator's own seed (`--seed FILE`, the `seed` start option; docs/emulator.md, "Your own
 * seed"): agents, knowledge bases, analysis groups and numbers a workspace holds from the start and
 * after every `POST /_emulator/reset`. Each entry goes through the same checks as the API request
 * that would create it, so a seed the service would refuse is refused at start, naming the entry.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import {
  type AgentCreateBody,
  type AnalysisGroupInput,
  type KnowledgeBaseInput,
  normalizeE164,
} from "../spec";
import { ApiError } from "./http";
import { createAgentIn } from "./routes/agents";
import { createGroupIn } from "./routes/analysis";
import { createKbIn } from "./routes/knowledgeBases";
import { activate } from "./routes/versions";
import { stableUuid } from "./seed";
import type { State, WorkspaceSeeder, WorkspaceState } from "./state";

/** A seeded agent: a `POST /v1/agents` body, its id, and whether its version 0 is published and live. */
export type SeedAgent = AgentCreateBody & {
  /** Its id (default: a stable id from the workspace and the entry's position). */
  id?: string;
  /** Publish version 0 and put it live (default false: a draft, as `POST /v1/agents` leaves it). */
  live?: boolean;
};

/** A seeded knowledge base: a `POST /v1/knowledge-bases` body and its id. Its documents are ready at once. */
export type SeedKnowledgeBase = KnowledgeBaseInput & {
  /** Its id (default: a stable id from the workspace and the entry's position). */
  id?: string;
};

/** A seeded analysis group: a `POST /v1/custom-analysis/groups` body and its id. */
export type SeedAnalysisGroup = AnalysisGroupInput & {
  /** Its id (default: a stable id from the workspace and the entry's position). */
  id?: string;
};

/** What one workspace holds besides the built-in seed. */
export interface SeedWorkspace {
  /** Phone numbers the workspace holds (any notation; stored E.164, active), besides the seeded four. */
  numbers?: string[];
  /** Knowledge bases, created first (agents may attach them by id). */
  knowledge_bases?: SeedKnowledgeBase[];
  /** Analysis groups, created next (agents may attach them by id). */
  analysis_groups?: SeedAnalysisGroup[];
  /** Agents, created last, in this order. */
  agents?: SeedAgent[];
}

/** The seed: per configured workspace (by name), what it holds. */
export interface EmulatorSeed {
  workspaces: Record<string, SeedWorkspace>;
}

const WithId = z.looseObject({ id: z.guid().optional() });
const SeedSchema = z.strictObject({
  workspaces: z.record(
    z.string(),
    z.strictObject({
      numbers: z.array(z.string().min(1)).optional(),
      knowledge_bases: z.array(WithId).optional(),
      analysis_groups: z.array(WithId).optional(),
      agents: z.array(z.looseObject({ id: z.guid().optional(), live: z.boolean().optional() })).optional(),
    }),
  ),
});
type ParsedSeed = z.infer<typeof SeedSchema>;

/** The message of a refusal, as the service would word it. */
function reason(err: unknown): string {
  if (err instanceof ApiError) {
    const body = err.body as { detail?: { message?: string } | string };
    const detail = body.detail;
    if (typeof detail === "object" && detail?.message) return detail.message;
  }
  return err instanceof Error ? err.message : String(err);
}

/** Runs `step` for the entry at `where`; a refusal becomes an error naming the entry. */
function entry<T>(where: string, step: () => T): T {
  try {
    return step();
  } catch (err) {
    throw new Error(`seed: ${where}: ${reason(err)}`, { cause: err });
  }
}

/** Reads and checks a seed file (JSON). */
export function readSeedFile(file: string): EmulatorSeed {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new Error(`seed: cannot read ${file}: ${(err as Error).message}`, { cause: err });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`seed: ${file} is not JSON: ${(err as Error).message}`, { cause: err });
  }
  return json as EmulatorSeed;
}

/**
 * Checks the seed's shape and that it names only configured workspaces, and returns the seeder that
 * fills a workspace with it. The entries themselves are checked as the API checks their requests
 * when the seeder runs (at start, so a bad seed fails `startEmulator`).
 */
export function seederOf(seed: EmulatorSeed, workspaceNames: readonly string[]): WorkspaceSeeder {
  const parsed = SeedSchema.safeParse(seed);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join(".") : "(the file)";
    throw new Error(`seed: ${where}: ${issue?.message ?? "not a seed"}`);
  }
  for (const name of Object.keys(parsed.data.workspaces)) {
    if (!workspaceNames.includes(name))
      throw new Error(
        `seed: workspaces.${name}: no workspace '${name}' is configured (configured: ${workspaceNames.join(", ")})`,
      );
  }
  return (state, ws) => {
    const mine = parsed.data.workspaces[ws.name];
    if (mine) applySeed(state, ws, mine);
  };
}

function applySeed(state: State, ws: WorkspaceState, seed: ParsedSeed["workspaces"][string]): void {
  const at = `workspaces.${ws.name}`;
  for (const [i, raw] of (seed.numbers ?? []).entries()) {
    const number = normalizeE164(raw);
    if (!number) throw new Error(`seed: ${at}.numbers[${i}]: '${raw}' is not an E.164 number`);
    const held = ws.numbers.find((n) => n.number === number);
    if (held) {
      held.lifecycle_status = "active";
      held.carrier_status = "listed";
    } else {
      ws.numbers.push({
        id: stableUuid(`ws:${ws.name}:number:${number}`),
        number,
        carrier_status: "listed",
        lifecycle_status: "active",
      });
    }
  }
  state.saveWorkspace(ws);
  for (const [i, { id, ...body }] of (seed.knowledge_bases ?? []).entries())
    entry(`${at}.knowledge_bases[${i}]`, () => {
      const kbId = id ?? stableUuid(`ws:${ws.name}:seed:kb:${i}`);
      if (ws.kbs.has(kbId)) throw new Error(`id: knowledge base '${kbId}' is seeded twice`);
      return createKbIn(state, ws, body, 0, kbId);
    });
  for (const [i, { id, ...body }] of (seed.analysis_groups ?? []).entries())
    entry(`${at}.analysis_groups[${i}]`, () => {
      const groupId = id ?? stableUuid(`ws:${ws.name}:seed:group:${i}`);
      if (ws.groups.has(groupId))
        throw new Error(
          `id: analysis group '${groupId}' is seeded twice, or is the built-in Default Analysis group`,
        );
      return createGroupIn(state, ws, body, groupId);
    });
  for (const [i, { id, live, ...body }] of (seed.agents ?? []).entries()) {
    entry(`${at}.agents[${i}]`, () => {
      const agentId = id ?? stableUuid(`ws:${ws.name}:seed:agent:${i}`);
      if (ws.agents.has(agentId) || state.findAgentAnywhere(agentId))
        throw new Error(`id: agent '${agentId}' is seeded twice`);
      const agent = createAgentIn(state, ws, body, agentId);
      if (live) {
        const v0 = agent.versions[0];
        if (v0) v0.is_published = true;
        activate(state, ws, agent, 0);
      }
    });
  }
}
