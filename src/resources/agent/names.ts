/**
 * The names of the knowledge bases and analysis groups an agent attaches, as its workspace names
 * them: what makes a configuration comparable across workspaces (`projection.ts`). The lists are
 * read once per deployment (and again when a KnowledgeBase or AnalysisGroup wrote, or an id is
 * missing from them).
 */
import type { VoiceAgentClient } from "../../client";
import type { ResourceHandler } from "../../provider/resource";
import type { AttachmentNames } from "./projection";

type Kind = "knowledgeBases" | "analysisGroups";
type Listing = Promise<ReadonlyMap<string, string>>;

/**
 * The workspace's listings as last read in this process, per client (the provider process keeps
 * one client): one listing serves every agent of a deployment, instead of one per agent (a
 * 500-agent create would pay 500 more requests: every new agent attaches the Default Analysis
 * group). The KnowledgeBase and AnalysisGroup resources forget them once they wrote
 * ({@link forgettingNames}); an id missing from a listing reads it again once.
 */
let listed = new WeakMap<VoiceAgentClient, Partial<Record<Kind, Listing>>>();

/** Forgets the listings read so far (a knowledge base or analysis group was written). */
export function forgetListedNames(): void {
  listed = new WeakMap();
}

/**
 * `handler` (a KnowledgeBase's or AnalysisGroup's) forgetting the listings once each write is over,
 * answered or failed: a listing read while the write was under way (by an agent of the same
 * deployment) holds the names from before it.
 */
export function forgettingNames(handler: ResourceHandler): ResourceHandler {
  const after = async <T>(write: Promise<T>): Promise<T> => {
    try {
      return await write;
    } finally {
      forgetListedNames();
    }
  };
  return {
    ...handler,
    create: (inputs) => after(handler.create(inputs)),
    update: (id, olds, news) => after(handler.update(id, olds, news)),
    delete: (id, props) => after(handler.delete(id, props)),
  };
}

function listing(client: VoiceAgentClient, kind: Kind, fresh: boolean): Listing {
  const cache = listed.get(client) ?? {};
  listed.set(client, cache);
  const held = cache[kind];
  if (held && !fresh) return held;
  const read = (async () => {
    const rows = kind === "knowledgeBases" ? client.knowledgeBases.list() : client.analysis.list();
    const names = new Map<string, string>();
    for await (const row of rows) names.set(row.id, row.name);
    return names;
  })();
  cache[kind] = read;
  // A failed read is not kept: the next agent reads again.
  read.catch(() => {
    if (cache[kind] === read) delete cache[kind];
  });
  return read;
}

/**
 * The names of `ids` (and no others), from the workspace's listings (one per kind and process,
 * read again when an id is missing from it). An id the workspace does not hold has no name.
 */
export async function namesOf(
  client: VoiceAgentClient,
  ids: { knowledgeBases: readonly string[]; analysisGroups: readonly string[] },
): Promise<AttachmentNames> {
  const pick = async (kind: Kind, wanted: readonly string[]): Promise<Record<string, string>> => {
    const out: Record<string, string> = {};
    if (wanted.length === 0) return out;
    let names = await listing(client, kind, false);
    if (wanted.some((id) => !names.has(id))) names = await listing(client, kind, true);
    for (const id of wanted) {
      const name = names.get(id);
      if (name !== undefined) out[id] = name;
    }
    return out;
  };
  const [knowledgeBases, analysisGroups] = await Promise.all([
    pick("knowledgeBases", ids.knowledgeBases),
    pick("analysisGroups", ids.analysisGroups),
  ]);
  return { knowledgeBases, analysisGroups };
}
