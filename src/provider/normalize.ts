/**
 * Value plumbing shared by every resource: the camelCase ↔ snake_case mapping between Pulumi inputs
 * and the wire format, values unknown during preview, canonical JSON and content hashes, and the
 * projection of what the service reads back onto the shape of what the user declared (so that
 * nothing the user did not set can cause a diff).
 */
import { createHash } from "node:crypto";
import { compare } from "fast-json-patch";

export { containsUnknown, UNKNOWN } from "./unknowns";

/** A JSON value: what the inputs, the state and the wire carry. */
export type Json = null | boolean | number | string | Json[] | JsonObject;
/** A JSON object. */
export type JsonObject = { [key: string]: Json };

/** True for a plain object (not an array, not null). */
export function isPlainObject(value: unknown): value is Record<string, Json> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export const toSnakeKey = (key: string): string => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
export const toCamelKey = (key: string): string =>
  key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/**
 * Renames the keys of `value` recursively, except inside the subtrees named by `opaque` (dotted
 * paths of camelCase input names, e.g. `defaultVariables`): those are user data whose keys keep
 * their exact spelling. Array indices do not appear in the paths.
 */
function renameKeys(
  value: unknown,
  rename: (key: string) => string,
  opaque: ReadonlySet<string>,
  camelPath: (key: string, renamed: string) => string,
  path = "",
): unknown {
  if (Array.isArray(value)) return value.map((v) => renameKeys(v, rename, opaque, camelPath, path));
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (v === undefined) continue;
    const renamed = rename(key);
    const childPath = path ? `${path}.${camelPath(key, renamed)}` : camelPath(key, renamed);
    out[renamed] = opaque.has(childPath) ? v : renameKeys(v, rename, opaque, camelPath, childPath);
  }
  return out;
}

/** Pulumi inputs (camelCase) to the wire format (snake_case). */
export function toWire(value: unknown, opaque: ReadonlySet<string> = new Set()): unknown {
  return renameKeys(value, toSnakeKey, opaque, (key) => key);
}

/** The wire format (snake_case) to Pulumi inputs (camelCase). */
export function fromWire(value: unknown, opaque: ReadonlySet<string> = new Set()): unknown {
  return renameKeys(value, toCamelKey, opaque, (_key, renamed) => renamed);
}

/** JSON with object keys sorted, so that equal values have equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    if (value[key] !== undefined) out[key] = sortKeys(value[key]);
  }
  return out;
}

/** A short, stable content hash: `sha256:` and the first 32 hex digits of the canonical JSON's digest. */
export function contentHash(value: unknown): string {
  return `sha256:${createHash("sha256").update(canonicalJson(value)).digest("hex").slice(0, 32)}`;
}

export function deepEqual(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/**
 * What the service holds, restricted to the shape of what the user declared: for an object the user
 * declared, only the keys the user set; a list of objects item by item when the lengths match
 * (otherwise whole); a scalar as it is. A key the user declared that the service does not return
 * reads as `null`.
 */
export function project(observed: unknown, declared: unknown): unknown {
  if (isPlainObject(declared)) {
    if (!isPlainObject(observed)) return observed ?? null;
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(declared)) {
      if (declared[key] === undefined) continue;
      out[key] = project(observed[key], declared[key]);
    }
    return out;
  }
  if (Array.isArray(declared) && Array.isArray(observed) && declared.length === observed.length) {
    return observed.map((item, i) => (isPlainObject(declared[i]) ? project(item, declared[i]) : item));
  }
  return observed === undefined ? null : observed;
}

/** The top-level keys whose values differ between `a` and `b` (both plain objects). */
export function changedKeys(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((k) => !deepEqual(a[k] ?? null, b[k] ?? null)).sort();
}

/** Drops keys whose value is `undefined`, recursively (Pulumi never stores them). */
export function dropUndefined<T>(value: T): T {
  return JSON.parse(JSON.stringify(value ?? null)) as T;
}

/**
 * The JSON merge-patch (RFC 7386) that turns `from` into `to`: changed fields with their new value,
 * removed fields as `null`, nested objects patched field by field, lists replaced whole. The changed
 * paths come from fast-json-patch's `compare`; a change inside a list sends the whole list.
 */
export function mergePatch(from: JsonObject, to: JsonObject): JsonObject {
  const patch: JsonObject = {};
  for (const op of compare(from, to)) {
    const segments = op.path
      .split("/")
      .slice(1)
      .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
    let source: JsonObject = to;
    let target: JsonObject = patch;
    for (let i = 0; i < segments.length; i++) {
      const key = segments[i] as string;
      const value = source[key];
      const last = i === segments.length - 1;
      if (last || !isPlainObject(value)) {
        target[key] = value === undefined ? null : structuredClone(value);
        break;
      }
      let next = target[key];
      if (!isPlainObject(next)) {
        next = {};
        target[key] = next;
      }
      target = next;
      source = value;
    }
  }
  return patch;
}
