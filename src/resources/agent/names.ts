/**
 * The names of the knowledge bases and analysis groups an agent attaches, as its workspace names
 * them: what makes a configuration comparable across workspaces (`projection.ts`). Names already
 * known (recorded in state) are reused; the lists are read only for ids not known yet.
 */
import type { VoiceAgentClient } from "../../client";
import type { AttachmentNames } from "./projection";

/** No names known. */
export const NO_NAMES: AttachmentNames = { knowledgeBases: {}, analysisGroups: {} };

/**
 * The names of `ids` (and no others), from `known` where it has them, else from the workspace's
 * listings (one listing per kind, read only when an id is missing). An id the workspace does not
 * hold has no name.
 */
export async function namesOf(
  client: VoiceAgentClient,
  ids: { knowledgeBases: readonly string[]; analysisGroups: readonly string[] },
  known: AttachmentNames = NO_NAMES,
): Promise<AttachmentNames> {
  const pick = async (
    wanted: readonly string[],
    table: Readonly<Record<string, string>>,
    list: () => AsyncIterable<{ id: string; name: string }>,
  ): Promise<Record<string, string>> => {
    const out: Record<string, string> = {};
    const missing = wanted.filter((id) => {
      const name = table[id];
      if (name !== undefined) out[id] = name;
      return name === undefined;
    });
    if (missing.length === 0) return out;
    for await (const row of list()) if (missing.includes(row.id)) out[row.id] = row.name;
    return out;
  };
  const [knowledgeBases, analysisGroups] = await Promise.all([
    pick(ids.knowledgeBases, known.knowledgeBases, () => client.knowledgeBases.list()),
    pick(ids.analysisGroups, known.analysisGroups, () => client.analysis.list()),
  ]);
  return { knowledgeBases, analysisGroups };
}
