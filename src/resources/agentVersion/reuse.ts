/**
 * Finding a published version that already holds a configuration: what makes a Git revert a
 * rollback instead of a new version. Shared by the AgentVersion and `voice-agent-diff --resolve`;
 * it loads no `@pulumi/pulumi`.
 */
import type { VoiceAgentClient } from "../../client";
import { contentHash } from "../../provider/normalize";

/** Fields of an agent detail that describe the version rather than the configuration. */
const VERSION_METADATA = new Set([
  "id",
  "version",
  "version_id",
  "is_published",
  "is_live",
  "live_version",
  "latest_version",
  "document_revision",
  "label",
  "notes",
  "blocked_reasons",
  "created_at",
  "updated_at",
  "dashboard_url",
]);

/**
 * The hash of the whole configuration a version holds (every field, managed or not; not the
 * version's metadata): equal hashes, equal configurations. The Agent records it for the version it
 * wrote (`draftHash`), so an AgentVersion compares a published version with the draft without
 * reading the draft.
 */
export function configurationDigest(detail: object): string {
  return contentHash(Object.fromEntries(Object.entries(detail).filter(([k]) => !VERSION_METADATA.has(k))));
}

/**
 * `recorded` (when set), then the published versions of the agent above `knownUpTo`, newest first,
 * without `exclude`: where to look for a version to reuse.
 */
export async function reuseCandidates(
  c: VoiceAgentClient,
  agentId: string,
  recorded: number | undefined,
  knownUpTo: number,
  exclude?: number,
): Promise<number[]> {
  const out = recorded === undefined ? [] : [recorded];
  for await (const row of c.versions.list(agentId)) {
    if (row.version <= knownUpTo) break; // newest first: the rest is known
    if (row.is_published && row.version !== exclude && !out.includes(row.version)) out.push(row.version);
  }
  return out;
}
