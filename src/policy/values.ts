/**
 * What every policy reads: a resource's inputs as plain values, with the values Pulumi does not
 * know yet (at preview, anything computed from another resource's outputs) kept as {@link NOT_YET_KNOWN}
 * instead of the exception `@pulumi/policy` throws when one is touched; and the fields a policy
 * looks at, found by path and named as the program spells them (`variables[1].defaultValue`).
 */
import { UnknownValueError } from "@pulumi/policy";

/** A value not known yet: a policy never fails on it; the pack runs again once it is known. */
export const NOT_YET_KNOWN: unique symbol = Symbol("unknown");
export type NotYetKnown = typeof NOT_YET_KNOWN;

/** A resource input as the policy sees it: JSON, or {@link NOT_YET_KNOWN} wherever it is not known yet. */
export type Plain = string | number | boolean | null | NotYetKnown | Plain[] | { [key: string]: Plain };

/**
 * The plain form of `@pulumi/policy`'s proxied properties. The proxy throws `UnknownValueError`
 * when an unknown value is read; here each such value becomes {@link NOT_YET_KNOWN}.
 */
export function plain(value: unknown): Plain {
  if (value === null || value === undefined) return null;
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return value;
  if (Array.isArray(value)) {
    const out: Plain[] = [];
    for (let i = 0; i < value.length; i++) out.push(read(value, i));
    return out;
  }
  if (typeof value === "object") {
    const out: { [key: string]: Plain } = {};
    for (const key of Object.keys(value)) out[key] = read(value as Record<string, unknown>, key);
    return out;
  }
  return null;
}

function read(container: object, key: string | number): Plain {
  try {
    return plain((container as Record<string | number, unknown>)[key]);
  } catch (err) {
    if (err instanceof UnknownValueError) return NOT_YET_KNOWN;
    throw err;
  }
}

/** The plain inputs of a resource (`args.props` of a resource or stack policy). */
export function inputs(props: Record<string, unknown>): { [key: string]: Plain } {
  const value = plain(props);
  return typeof value === "object" && value !== null && !Array.isArray(value) ? value : {};
}

/** A field found by {@link fieldsAt}: its path as the program spells it, and its value. */
export interface Field {
  path: string;
  value: Plain;
}

/**
 * The fields at `pattern`, a dotted path where `[]` stands for every element of an array and `{}`
 * for every value of a map: `variables[].defaultValue`, `defaultVariables.{}`. Fields absent (or
 * `null`) are left out; a container not known yet yields one field whose value is {@link NOT_YET_KNOWN}.
 */
export function fieldsAt(root: Plain, pattern: string): Field[] {
  const steps = pattern.match(/\[\]|\{\}|[^.[\]{}]+/g) ?? [];
  let found: Field[] = [{ path: "", value: root }];
  for (const step of steps) {
    const next: Field[] = [];
    for (const { path, value } of found) {
      if (value === NOT_YET_KNOWN) {
        next.push({ path, value });
      } else if (step === "[]") {
        if (Array.isArray(value)) {
          for (const [i, v] of value.entries()) next.push({ path: `${path}[${i}]`, value: v });
        }
      } else if (typeof value === "object" && value !== null && !Array.isArray(value)) {
        if (step === "{}") {
          for (const [k, v] of Object.entries(value)) next.push({ path: joinKey(path, k), value: v });
        } else if (value[step] !== undefined && value[step] !== null) {
          next.push({ path: joinKey(path, step), value: value[step] });
        }
      }
    }
    found = next;
  }
  return found;
}

/** `path.key`, or `path["odd key"]` for a key that is not an identifier. */
export function joinKey(path: string, key: string): string {
  if (/^[A-Za-z_$][\w$]*$/.test(key)) return path === "" ? key : `${path}.${key}`;
  return `${path}[${JSON.stringify(key)}]`;
}

/** The one value at `path` (no `[]`/`{}`): `undefined` when absent, {@link NOT_YET_KNOWN} when not known yet. */
export function valueAt(root: Plain, path: string): Plain | undefined {
  const [field] = fieldsAt(root, path);
  return field?.value;
}
