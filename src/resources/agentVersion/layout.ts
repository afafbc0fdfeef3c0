/**
 * Where the AgentVersion keeps what it copies from its Agent to choose a version without reading
 * it (the content hash, the known version, the draft's number, revision, hash and whether it is
 * published, the latest version): in its checked inputs, under one key, {@link DRAFT_KEY}. The
 * engine never displays a property whose name starts with `__` (nor counts it in the diff's keys),
 * so `pulumi preview --diff` of a prompt change shows what the person changed, not this
 * bookkeeping. The outputs keep these fields at the top level, as every earlier release wrote them.
 *
 * A state written before this layout holds them at the top level of the inputs too: every handler
 * reads them through {@link flatDraft}, which accepts both. Loads nothing (the report reads it).
 */

/** The input that carries the bookkeeping. */
export const DRAFT_KEY = "__draft";

/** The bookkeeping fields, read by the provider at the top level (`flatDraft`). */
export const DRAFT_FIELDS = [
  "contentHash",
  "knownVersion",
  "knownUpTo",
  "draftVersion",
  "documentRevision",
  "draftPublished",
  "draftHash",
  "latestVersion",
] as const;

/**
 * The program's second copy of the Agent's content hash: its checked input (`__contentHash`, known
 * in the preview of the Agent's change, when the output `contentHash` is not), beside the output
 * (known in every other case, including an Agent whose state predates `__contentHash`).
 */
export const NEXT_HASH_KEY = "__contentHash";

type Props = Record<string, unknown>;

const isRecord = (v: unknown): v is Props => v !== null && typeof v === "object" && !Array.isArray(v);

/** The fields a pinned version takes from its agent (it publishes nothing: no hash, no history). */
export const PINNED_DRAFT_FIELDS = ["draftVersion", "documentRevision"] as const;

/**
 * `props` with the bookkeeping at the top level, whichever layout it came in; `__draft` removed (a
 * field at the top level beside it wins). The program registers the bookkeeping as one input (one
 * Output, one dependency on the Agent in the state, instead of eight): unknown at preview as a
 * whole (the preview of the Agent's change), it is each of its fields unknown, as the eight were.
 */
export function flatDraft(props: Props, unknown?: string): Props {
  const carried = props[DRAFT_KEY];
  if (carried === undefined || (!isRecord(carried) && carried !== unknown)) return props;
  const { [DRAFT_KEY]: _carried, ...rest } = props;
  if (isRecord(carried)) return { ...carried, ...rest };
  const fields = rest.pinnedVersion === undefined ? DRAFT_FIELDS : PINNED_DRAFT_FIELDS;
  return { ...Object.fromEntries(fields.map((k) => [k, unknown])), ...rest };
}

/** `props` with the bookkeeping under {@link DRAFT_KEY}, as the checked inputs keep it. */
export function foldedDraft(props: Props): Props {
  const flat = flatDraft(props);
  const draft: Props = {};
  const rest: Props = {};
  for (const [k, v] of Object.entries(flat)) {
    if ((DRAFT_FIELDS as readonly string[]).includes(k)) draft[k] = v;
    else rest[k] = v;
  }
  return Object.keys(draft).length === 0 ? rest : { ...rest, [DRAFT_KEY]: draft };
}

/**
 * The inputs as the program sent them, with the one content hash the handlers read: the Agent's
 * output `contentHash` when known, else its checked `__contentHash` (the preview of the Agent's own
 * change), else the unknown it was.
 */
export function withContentHash(news: Props, unknown: string): Props {
  const { [NEXT_HASH_KEY]: next, ...rest } = news;
  if (rest.contentHash === unknown && typeof next === "string" && next !== unknown)
    return { ...rest, contentHash: next };
  return rest;
}
