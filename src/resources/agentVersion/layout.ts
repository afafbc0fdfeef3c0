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
 * (known in every other case, including an Agent whose state predates `__contentHash`). The class
 * sends it inside `__draft` (one registered property); {@link flatDraft} brings it to the top level,
 * where the handlers read it, as a top-level input is read.
 */
export const NEXT_HASH_KEY = "__contentHash";

type Props = Record<string, unknown>;

const isRecord = (v: unknown): v is Props => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * `props` with the bookkeeping at the top level, whichever layout it came in; `__draft` removed (a
 * field at the top level beside it wins). The program registers it as one input too (a plain object
 * of the Agent's Outputs, each value known or unknown on its own: `index.ts`).
 */
export function flatDraft(props: Props): Props {
  const carried = props[DRAFT_KEY];
  if (!isRecord(carried)) return props;
  const { [DRAFT_KEY]: _carried, ...rest } = props;
  return { ...carried, ...rest };
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
