/**
 * The one strategy for values not known during a preview (outputs of resources not created yet, of
 * another stack, secrets being computed). Pulumi's dynamic-provider runtime hands such a value to
 * `check` as the string {@link UNKNOWN}, at any depth of the inputs.
 *
 * The rules:
 * - an unknown value is never reported missing and never checked as something else: it stays in
 *   place (so list indexes in messages are the user's), and a schema problem at or under it is not
 *   reported;
 * - a rule that needs an unknown value is skipped: every rule about a field of a *group* of related
 *   fields (for the Agent: the languages, voice and transcriber, which the catalogue checks against
 *   each other) is skipped when any field of the group holds an unknown value, and the group's
 *   fields are left out of the configuration the rules see, so no platform default stands in for
 *   them.
 */

/** The value Pulumi's dynamic-provider runtime substitutes for values not known during preview. */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** True when `value` is, or contains, a value unknown during preview. */
export function containsUnknown(value: unknown): boolean {
  if (value === UNKNOWN) return true;
  if (Array.isArray(value)) return value.some(containsUnknown);
  if (typeof value === "object" && value !== null) return Object.values(value).some(containsUnknown);
  return false;
}

/** A path in the program's spelling: `voice.voiceId`, `builtinTools.transferCall.numbers[0].number`. */
export type FieldPath = string;

/** Every path at which `value` holds an unknown value (`""` when `value` itself is unknown). */
export function unknownPaths(value: unknown, prefix: FieldPath = ""): FieldPath[] {
  if (value === UNKNOWN) return [prefix];
  if (Array.isArray(value)) return value.flatMap((v, i) => unknownPaths(v, `${prefix}[${i}]`));
  if (typeof value === "object" && value !== null) {
    return Object.entries(value).flatMap(([k, v]) => unknownPaths(v, prefix ? `${prefix}.${k}` : k));
  }
  return [];
}

/** True when `path` is `ancestor` or lies under it. */
export function isWithin(path: FieldPath, ancestor: FieldPath): boolean {
  return (
    ancestor === "" || path === ancestor || path.startsWith(`${ancestor}.`) || path.startsWith(`${ancestor}[`)
  );
}

/** Schema problems that only say a key is missing or not allowed: they never depend on a value. */
const VALUE_FREE_CODES: ReadonlySet<string> = new Set(["missing", "extra_forbidden"]);

/**
 * True when a schema problem reported at `path` (with `code`) may be caused by an unknown value:
 * it sits at or under an unknown value, or it is a rule on an object that holds one.
 */
export function dependsOnUnknown(path: FieldPath, code: string, unknowns: readonly FieldPath[]): boolean {
  return unknowns.some((u) => isWithin(path, u) || (isWithin(u, path) && !VALUE_FREE_CODES.has(code)));
}

/** The top-level field of a path: `voice` for `voice.fallback.voiceId`, `variables` for `variables[2].key`. */
export function topField(path: FieldPath): string {
  return /^[^.[]*/.exec(path)?.[0] ?? path;
}

/**
 * The top-level fields whose rules must be skipped: every field of a group (`related`, lists of
 * top-level fields checked against each other; a field in no group is its own group) any of whose
 * fields holds an unknown value.
 */
export function fieldsWithUnknowns(
  declared: Readonly<Record<string, unknown>>,
  related: readonly (readonly string[])[] = [],
): Set<string> {
  const out = new Set<string>();
  for (const [field, value] of Object.entries(declared)) {
    if (!containsUnknown(value)) continue;
    out.add(field);
    for (const group of related) if (group.includes(field)) for (const f of group) out.add(f);
  }
  return out;
}

/** `declared` without the fields named in `skip`. */
export function withoutFields<T extends Record<string, unknown>>(declared: T, skip: ReadonlySet<string>): T {
  return Object.fromEntries(Object.entries(declared).filter(([k]) => !skip.has(k))) as T;
}
