/**
 * The one algorithm every managed resource shares: from a resource's field table, what the program
 * declares, what the service holds (projected onto what the program declares), the diff, the
 * inputs a refresh hands back, and the compare-and-set check before a write.
 *
 * A field table names the managed fields (the configuration the program may set, in its camelCase
 * spelling) and, by dotted path, how a value is compared:
 * - `set`: a list whose order and repeats mean nothing (sorted, deduplicated);
 * - `keyedBy`: a list of objects identified by a key (sorted by it);
 * - `opaque`: user data compared whole; its keys keep their spelling and a key the program drops
 *   must go (a map of variables);
 * - `canonical`: one spelling for values the service treats as equal (colour case, E.164).
 * The items of a list are at the list's path followed by `[]` (`variables[]`).
 * Everything else is projected: only the keys the program sets are compared, so server defaults
 * and fields the program leaves alone never cause a change.
 */
import { nearestKey } from "../spec/issues";
import { ExpectedFailure } from "./failures";
import { deepEqual, isPlainObject, type Json, type JsonObject, project } from "./normalize";
import { containsUnknown, UNKNOWN } from "./unknowns";

/** How the value at a path is compared. */
export type PathRule =
  | { readonly set: true }
  | { readonly keyedBy: string }
  | { readonly opaque: true }
  | { readonly canonical: (value: Json) => Json };

/** A resource's managed fields and their comparison rules. */
export interface FieldTable {
  /** The managed configuration fields, top level, in the program's spelling. */
  readonly managed: readonly string[];
  /** Comparison rules by dotted path without list indexes (`theme.accentColor`, `memory.fields`). */
  readonly paths?: Readonly<Record<string, PathRule>>;
}

/** The dotted paths whose keys are user data (never renamed between camelCase and snake_case). */
export function opaquePaths(table: FieldTable): ReadonlySet<string> {
  return new Set(
    Object.entries(table.paths ?? {})
      .filter(([, rule]) => "opaque" in rule)
      .map(([path]) => path),
  );
}

function normalizeAt(value: Json, path: string, table: FieldTable, reorder = true): Json {
  if (value === UNKNOWN || (reorder && containsUnknown(value))) return value;
  const rule = table.paths?.[path];
  if (rule && "opaque" in rule) return value;
  let v = value;
  if (Array.isArray(v)) {
    v = v.map((item) => normalizeAt(item, `${path}[]`, table, reorder));
    if (reorder && rule && "set" in rule) {
      v = [...new Set(v.map((x) => JSON.stringify(x)))].sort().map((s) => JSON.parse(s));
    }
    if (reorder && rule && "keyedBy" in rule) {
      const key = rule.keyedBy;
      v = [...v].sort((a, b) => String(keyOf(a, key)).localeCompare(String(keyOf(b, key))));
    }
  } else if (isPlainObject(v)) {
    const out: JsonObject = {};
    for (const [k, child] of Object.entries(v)) {
      out[k] = normalizeAt(child, path ? `${path}.${k}` : k, table, reorder);
    }
    v = out;
  }
  return rule && "canonical" in rule ? rule.canonical(v) : v;
}

function keyOf(item: Json, key: string): Json {
  return isPlainObject(item) ? (item[key] ?? null) : item;
}

/** One spelling for values the service treats as equal. Values unknown at preview are left alone. */
export function normalize(table: FieldTable, config: JsonObject): JsonObject {
  return normalizeAt(config, "", table) as JsonObject;
}

/** The managed fields `values` sets (inputs or recorded state), normalized. */
export function pickManaged(table: FieldTable, values: Readonly<Record<string, unknown>>): JsonObject {
  const out: JsonObject = {};
  for (const key of table.managed) {
    if (values[key] !== undefined) out[key] = values[key] as Json;
  }
  return normalize(table, out);
}

/**
 * The managed fields `values` sets, in their canonical spelling but in the order written (sets not
 * sorted, lists not reordered, values unknown at preview in place): what the check validates, so
 * that messages name the user's own list indexes.
 */
export function pickWritten(table: FieldTable, values: Readonly<Record<string, unknown>>): JsonObject {
  const out: JsonObject = {};
  for (const key of table.managed) {
    if (values[key] !== undefined) out[key] = normalizeAt(values[key] as Json, key, table, false);
  }
  return out;
}

/**
 * What the service holds (`current`: every managed field, program spelling), restricted to the
 * shape of `declared`: the fields it sets, objects by the keys it sets, opaque values whole.
 */
export function observe(table: FieldTable, current: JsonObject, declared: JsonObject): JsonObject {
  const normalized = normalize(table, current);
  const out = project(normalized, declared) as JsonObject;
  for (const path of opaquePaths(table)) {
    const segments = path.split(".");
    if (readPath(declared, segments) !== undefined)
      writePath(out, segments, readPath(normalized, segments) ?? null);
  }
  return out;
}

function readPath(value: Json | undefined, segments: readonly string[]): Json | undefined {
  let v = value;
  for (const s of segments) v = isPlainObject(v) ? v[s] : undefined;
  return v;
}

function writePath(target: JsonObject, segments: readonly string[], value: Json): void {
  let t: JsonObject = target;
  for (const s of segments.slice(0, -1)) {
    const next = t[s];
    if (!isPlainObject(next)) return;
    t = next;
  }
  t[segments[segments.length - 1] as string] = value;
}

/**
 * The managed fields that differ between what the state recorded (`olds`, the service's values
 * as last read or written) and what the program declares now (`news`): changed values, and fields
 * the program stopped setting. A value unknown at preview counts as a change.
 */
export function changedFields(
  table: FieldTable,
  olds: Readonly<Record<string, unknown>>,
  news: Readonly<Record<string, unknown>>,
): string[] {
  const before = pickManaged(table, olds);
  const after = pickManaged(table, news);
  return table.managed.filter((k) => {
    if (after[k] === undefined) return before[k] !== undefined;
    return !deepEqual(before[k] ?? null, after[k]);
  });
}

/**
 * The managed fields that changed in the service since the stack last saw them: `lastSeen` is the
 * state's record (the service's values when the stack last read or wrote them), `current` what the
 * service holds now. Empty when the service still holds what the stack last saw.
 */
export function changedOutside(table: FieldTable, lastSeen: JsonObject, current: JsonObject): string[] {
  const now = observe(table, current, lastSeen);
  return Object.keys(lastSeen).filter((k) => !deepEqual(lastSeen[k] ?? null, now[k] ?? null));
}

/**
 * The error a write refuses with when the service changed since the stack last saw it: nothing
 * was written, and it says what to do next.
 */
export class ChangedOutsidePulumiError extends ExpectedFailure {
  constructor(
    readonly resource: string,
    readonly fields: readonly string[],
    detail = "",
  ) {
    super(
      `${resource} was changed outside Pulumi${fields.length ? ` (${fields.join(", ")})` : ""}${detail}. ` +
        "Nothing was written. Run `pulumi refresh` to bring the change into the stack (the next " +
        "preview shows it as drift), then `pulumi up` again to apply your program over it.",
    );
    this.name = "ChangedOutsidePulumiError";
  }
}

/**
 * Compare-and-set for a service without revisions: throws {@link ChangedOutsidePulumiError} when a
 * managed field the stack last saw (`olds`) differs from what the service holds now (`current`).
 */
export function assertUnchanged(
  table: FieldTable,
  resource: string,
  olds: Readonly<Record<string, unknown>>,
  current: JsonObject,
): void {
  const fields = changedOutside(table, pickManaged(table, olds), current);
  if (fields.length > 0) throw new ChangedOutsidePulumiError(resource, fields);
}

/**
 * Check failures for the inputs `news` holds that are neither managed fields nor in `own` (the
 * resource's other inputs): a misspelt key is refused at preview, as the service refuses an
 * unknown field, instead of being dropped with the user's intent.
 */
export function unknownInputs(
  table: FieldTable,
  news: Readonly<Record<string, unknown>>,
  own: readonly string[],
  resource: string,
): { property: string; reason: string }[] {
  const known = [...table.managed, ...own];
  return Object.keys(news)
    .filter((k) => k !== "__provider" && news[k] !== undefined && !known.includes(k))
    .map((k) => {
      const near = nearestKey(k, known);
      return {
        property: k,
        reason: `${k}: not an input of ${resource}${near ? ` (did you mean ${near}?)` : ""} (extra_forbidden)`,
      };
    });
}

/** Levenshtein distance, for "did you mean" hints (one home: `spec/issues.ts`). */
export { editDistance } from "../spec/issues";

/**
 * The inputs a refresh hands back to the engine: the resource's own inputs as recorded, and each
 * managed field the program set, with the value the service holds (so the next preview shows drift).
 */
export function refreshedInputs(
  table: FieldTable,
  recorded: Readonly<Record<string, unknown>>,
  outs: Readonly<Record<string, unknown>>,
  ownInputs: readonly string[],
): Record<string, unknown> {
  const inputs: Record<string, unknown> = {};
  for (const key of ownInputs) if (recorded[key] !== undefined) inputs[key] = recorded[key];
  for (const key of table.managed) if (recorded[key] !== undefined) inputs[key] = outs[key];
  return inputs;
}
