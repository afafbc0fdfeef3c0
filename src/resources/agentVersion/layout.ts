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
 * `props` with the fields carried under `key` at the top level, `key` removed (a field at the top
 * level beside it wins); `props` unchanged when `key` holds no record.
 */
function flatUnder(props: Props, key: string): Props {
  const carried = props[key];
  if (!isRecord(carried)) return props;
  const { [key]: _carried, ...rest } = props;
  return { ...carried, ...rest };
}

/** `props` with `fields` under `key` (no `key` when none of them is there). */
function foldedUnder(props: Props, key: string, fields: readonly string[]): Props {
  const carried: Props = {};
  const rest: Props = {};
  for (const [k, v] of Object.entries(flatUnder(props, key))) {
    if (fields.includes(k)) carried[k] = v;
    else rest[k] = v;
  }
  return Object.keys(carried).length === 0 ? rest : { ...rest, [key]: carried };
}

/**
 * `props` with the bookkeeping at the top level, whichever layout it came in; `__draft` removed (a
 * field at the top level beside it wins). The program registers it as one input too (a plain object
 * of the Agent's Outputs, each value known or unknown on its own: `index.ts`).
 */
export const flatDraft = (props: Props): Props => flatUnder(props, DRAFT_KEY);

/** `props` with the bookkeeping under {@link DRAFT_KEY}, as the checked inputs keep it. */
export const foldedDraft = (props: Props): Props => foldedUnder(props, DRAFT_KEY, DRAFT_FIELDS);

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

/**
 * Where the dynamic resource's state keeps what the deploy made of the version (how it was chosen,
 * the activation, why it is blocked, the verification, the promotion, a rollback since): one
 * output, {@link OUTCOME_KEY}, from which the class derives its six properties on first use. Every
 * property a program registers costs it an Output and its promises per resource, and these six
 * are read far less often than they are registered (500 AgentVersions: about 35 MB of a no-op
 * preview's peak, `docs/performance.md`).
 *
 * Only the dynamic face writes this layout (`withOutcomeLayout`): the handlers, the provider
 * plugin's state and the GitOps tools see these fields at the top level, and a state written
 * before it (top-level fields) is read alike by {@link flatOutcome}. Its first refresh or change
 * rewrites it; a refresh shows no change for it (the engine diffs refreshed state by the
 * provider's diff, which reads the inputs).
 */
export const OUTCOME_KEY = "__outcome";

/** The fields under {@link OUTCOME_KEY}. */
export const OUTCOME_FIELDS = [
  "origin",
  "activation",
  "blockedReasons",
  "verification",
  "promotion",
  "rolledBack",
] as const;

/** `props` with the outcome at the top level, whichever layout it came in (a top-level field wins). */
export const flatOutcome = (props: Props): Props => flatUnder(props, OUTCOME_KEY);

/** `props` with the outcome under {@link OUTCOME_KEY}, as the dynamic resource's state keeps it. */
export const foldedOutcome = (props: Props): Props => foldedUnder(props, OUTCOME_KEY, OUTCOME_FIELDS);

/** Every property map a handler takes, with both carried groups at the top level. */
export function flatLayout(props: Props): Props {
  return flatOutcome(flatDraft(props));
}
