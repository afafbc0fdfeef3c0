/**
 * Reading a workspace for `voice-agent-export`: every agent (or the ones asked for) at the version
 * its Agent resource would adopt, how its live version is to be declared, its widget, and the
 * knowledge bases and analysis groups. Reads only (GET), through the package's one client.
 */
import type {
  AgentDetailT,
  AgentSummaryT,
  AnalysisGroup,
  KnowledgeBase,
  VoiceAgentClient,
  WidgetT,
} from "../client";
import { NotFoundError } from "../client/errors";
import { configurationDigest } from "../resources/agentVersion/reuse";

/**
 * How an agent's live version is declared:
 * - `live`: an AgentVersion without a pin. The version the Agent adopts is published and live (or
 *   an open draft that holds exactly the live configuration): the AgentVersion finds that version
 *   and leaves it live, publishing nothing.
 * - `pinned`: the open draft holds changes not published yet; an AgentVersion pinned to the live
 *   version keeps it live and leaves the draft untouched.
 * - `offAir`: published versions exist but none is live: no AgentVersion (it would put one live).
 * - `neverPublished`: only the first draft exists: no AgentVersion (it would publish it).
 */
export type Release =
  | { kind: "live"; version: number; label: string | null }
  | { kind: "pinned"; version: number; label: string | null; draft: number }
  | { kind: "offAir"; latest: number }
  | { kind: "neverPublished" };

/** One agent as read. */
export interface AgentSnapshot {
  summary: AgentSummaryT;
  /** The version the Agent resource adopts: the open draft, else the live version, else the latest. */
  working: AgentDetailT;
  release: Release;
  widget: WidgetT;
}

/** A workspace as read. */
export interface WorkspaceSnapshot {
  baseUrl: string;
  /** Oldest first (creation time, then id), so names derived from them are stable. */
  agents: AgentSnapshot[];
  /** Agents in the listing whose read then answered 404: gone meanwhile, so not exported. */
  vanished: AgentSummaryT[];
  /** In the service's order (creation order). */
  knowledgeBases: KnowledgeBase[];
  /** In the service's order (creation order). */
  analysisGroups: AnalysisGroup[];
}

/** Options of {@link readWorkspace}. */
export interface ReadOptions {
  /** Only these agents (and the knowledge bases and groups they use); default: every object. */
  agentIds?: readonly string[];
  /** Agents read at the same time (the client paces the requests whatever this is). Default 8. */
  concurrency?: number;
}

/** An error naming what the user asked for that the workspace does not hold. */
export class ExportInputError extends Error {}

/**
 * Published versions strictly between `above` and `below` whose configuration is `text`: an
 * AgentVersion without a pin would reuse the newest of them instead of the live version.
 */
async function newerTwin(
  c: VoiceAgentClient,
  agentId: string,
  above: number,
  below: number,
  text: string,
): Promise<boolean> {
  for await (const row of c.versions.list(agentId)) {
    if (row.version <= above) break; // newest first
    if (row.version >= below || !row.is_published) continue;
    if (configurationDigest(await c.agents.get(agentId, { version: row.version })) === text) return true;
  }
  return false;
}

/** One agent as the export reads it: its working version, its release, its widget. */
export async function readAgent(c: VoiceAgentClient, summary: AgentSummaryT): Promise<AgentSnapshot> {
  const id = summary.id;
  const [latest, widget] = await Promise.all([c.agents.get(id), c.widget.get(id)]);
  const live = latest.live_version;
  if (latest.is_published) {
    // No open draft: the Agent adopts the live version (a change branches the next draft from it).
    const working =
      live === null || live === latest.version ? latest : await c.agents.get(id, { version: "live" });
    const release: Release =
      live === null
        ? { kind: "offAir", latest: latest.version }
        : { kind: "live", version: live, label: working.label };
    return { summary, working, release, widget };
  }
  if (live === null) {
    const release: Release =
      latest.version === 0 ? { kind: "neverPublished" } : { kind: "offAir", latest: latest.version };
    return { summary, working: latest, release, widget };
  }
  const liveDetail = await c.agents.get(id, { version: "live" });
  const draftText = configurationDigest(latest);
  const same =
    configurationDigest(liveDetail) === draftText &&
    !(latest.version - live > 1 && (await newerTwin(c, id, live, latest.version, draftText)));
  const release: Release = same
    ? { kind: "live", version: live, label: liveDetail.label }
    : { kind: "pinned", version: live, label: liveDetail.label, draft: latest.version };
  return { summary, working: latest, release, widget };
}

/** Runs `work` on every item, at most `limit` at a time, keeping the order of `items`. */
async function pool<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

const byCreation = (a: AgentSummaryT, b: AgentSummaryT) =>
  a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

/** Reads the workspace (or the agents asked for). Only GET requests. */
export async function readWorkspace(c: VoiceAgentClient, opts: ReadOptions = {}): Promise<WorkspaceSnapshot> {
  const [all, knowledgeBases, analysisGroups] = await Promise.all([
    c.agents.list({ limit: 100 }).toArray(),
    c.knowledgeBases.list().toArray(),
    c.analysis.list().toArray(),
  ]);
  let summaries = [...all].sort(byCreation);
  if (opts.agentIds !== undefined) {
    const wanted = new Set(opts.agentIds);
    const missing = [...wanted].filter((id) => !all.some((a) => a.id === id));
    if (missing.length > 0) {
      throw new ExportInputError(
        `--agent: no agent ${missing.join(", ")} in this workspace (it holds ${all.length} agent${all.length === 1 ? "" : "s"})`,
      );
    }
    summaries = summaries.filter((a) => wanted.has(a.id));
  }
  const agents = await pool(summaries, opts.concurrency ?? 8, async (s) => {
    try {
      return await readAgent(c, s);
    } catch (err) {
      // Gone between the listing and the read (its read answers 404): left out, and named in the
      // plan's warnings, so the user knows the export lacks it.
      if (err instanceof NotFoundError) return undefined;
      throw err;
    }
  });
  const read = agents.filter((a): a is AgentSnapshot => a !== undefined);
  const vanished = summaries.filter((_, i) => agents[i] === undefined);
  if (opts.agentIds === undefined)
    return { baseUrl: c.baseUrl, agents: read, vanished, knowledgeBases, analysisGroups };
  // Only what the chosen agents use.
  const kbIds = new Set(read.flatMap((a) => a.working.knowledge_base_ids));
  const groupIds = new Set(read.flatMap((a) => a.working.analysis_group_ids));
  return {
    baseUrl: c.baseUrl,
    agents: read,
    vanished,
    knowledgeBases: knowledgeBases.filter((k) => kbIds.has(k.id)),
    analysisGroups: analysisGroups.filter((g) => groupIds.has(g.id)),
  };
}
