/** Turns zod problems into the service's 422 vocabulary (`field`, `type`, `message`). */
import type { z } from "zod";
import { formatPath, type Issue } from "./common";

function describe(values: readonly unknown[]): string {
  const shown = values.map((v) => (typeof v === "string" ? `'${v}'` : String(v)));
  return shown.length <= 1 ? (shown[0] ?? "") : `${shown.slice(0, -1).join(", ")} or ${shown.at(-1)}`;
}

const TYPE_NAMES: Record<string, [string, string]> = {
  string: ["string_type", "Input should be a valid string"],
  number: ["float_type", "Input should be a valid number"],
  int: ["int_type", "Input should be a valid integer"],
  boolean: ["bool_type", "Input should be a valid boolean"],
  array: ["list_type", "Input should be a valid list"],
  object: ["model_type", "Input should be a valid dictionary or object"],
  record: ["dict_type", "Input should be a valid dictionary"],
  tuple: ["tuple_type", "Input should be a valid tuple"],
  null: ["none_required", "Input should be None"],
};

/** What the user wrote should have been, in words, by zod's expected type. */
const EXPECTED: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "a whole number",
  boolean: "true or false",
  array: "a list",
  object: "an object",
  record: "an object",
  tuple: "a list",
  null: "null",
};

/** A value given, in words: `the string "1.2"`, `the number 3`, `a list`, `an object`. */
export function described(value: unknown): string {
  if (typeof value === "string") {
    const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
    return `the string ${JSON.stringify(shown)}`;
  }
  if (typeof value === "number" || typeof value === "bigint") return `the number ${String(value)}`;
  if (typeof value === "boolean") return String(value);
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

function one(issue: z.core.$ZodIssue, prefix: string): Issue[] {
  const field = formatPath(issue.path, prefix);
  const at = (f: string, type: string, msg: string): Issue => ({
    field: f,
    code: type,
    message: `${f || "body"}: ${msg}`,
  });
  switch (issue.code) {
    case "invalid_type": {
      if (!("input" in issue) || issue.input === undefined) return [at(field, "missing", "Field required")];
      if (issue.expected === "int" && typeof issue.input === "number") {
        return [
          at(field, "int_from_float", "Input should be a valid integer, got a number with a fractional part"),
        ];
      }
      const [type, msg] = TYPE_NAMES[issue.expected] ?? [
        `${issue.expected}_type`,
        `Input should be ${issue.expected}`,
      ];
      return [
        {
          ...at(field, type, msg),
          expected: EXPECTED[issue.expected] ?? issue.expected,
          got: described(issue.input),
        },
      ];
    }
    case "too_big": {
      const max = String(issue.maximum);
      if (issue.origin === "string") {
        return [at(field, "string_too_long", `String should have at most ${max} characters`)];
      }
      if (issue.origin === "array" || issue.origin === "set") {
        return [at(field, "too_long", `List should have at most ${max} items`)];
      }
      return issue.inclusive
        ? [at(field, "less_than_equal", `Input should be less than or equal to ${max}`)]
        : [at(field, "less_than", `Input should be less than ${max}`)];
    }
    case "too_small": {
      const min = String(issue.minimum);
      if (issue.origin === "string") {
        return [
          at(
            field,
            "string_too_short",
            `String should have at least ${min} character${min === "1" ? "" : "s"}`,
          ),
        ];
      }
      if (issue.origin === "array" || issue.origin === "set") {
        return [at(field, "too_short", `List should have at least ${min} item${min === "1" ? "" : "s"}`)];
      }
      return issue.inclusive
        ? [at(field, "greater_than_equal", `Input should be greater than or equal to ${min}`)]
        : [at(field, "greater_than", `Input should be greater than ${min}`)];
    }
    case "unrecognized_keys":
      return issue.keys.map((k) =>
        at(formatPath([...issue.path, k], prefix), "extra_forbidden", "Extra inputs are not permitted"),
      );
    case "invalid_value":
      return [at(field, "literal_error", `Input should be ${describe(issue.values)}`)];
    case "invalid_format":
      if (issue.format === "uuid" || issue.format === "guid")
        return [at(field, "uuid_parsing", "Input should be a valid UUID")];
      if (issue.format === "url") return [at(field, "url_parsing", "Input should be a valid URL")];
      return [at(field, "string_pattern_mismatch", issue.message)];
    case "custom":
      return [at(field, "value_error", issue.message)];
    default:
      return [at(field, "value_error", issue.message)];
  }
}

/**
 * Maps a zod error to issues whose `code` is the service's validation type (`missing`,
 * `extra_forbidden`, `less_than_equal`, `string_too_long`, `literal_error`, ...). `prefix` roots
 * the paths (`query`, `path`); the body is the root itself.
 */
export function zodIssues(error: z.ZodError, prefix = ""): Issue[] {
  return error.issues.flatMap((i) => one(i, prefix));
}

/** Parses `input` with `schema`: the data, or every problem as issues (empty-path problems name `body`). */
export function parseWith<T extends z.ZodType>(
  schema: T,
  input: unknown,
  prefix = "",
): { ok: true; data: z.infer<T> } | { ok: false; issues: Issue[] } {
  const r = schema.safeParse(input, { reportInput: true });
  if (r.success) return { ok: true, data: r.data };
  const issues = r.error.issues.flatMap((i) => {
    const found = one(i, prefix);
    if (i.code !== "unrecognized_keys") return found;
    // An unknown key, at any depth: the nearest key the schema knows at that path.
    const known = keysAt(schema, i.path);
    return found.map((f, n) => {
      const suggestion = nearestKey(i.keys[n] ?? "", known);
      return suggestion === undefined ? f : { ...f, suggestion };
    });
  });
  return { ok: false, issues: issues.map((i) => (i.field === "" ? { ...i, field: "body" } : i)) };
}

/** Levenshtein distance, for "did you mean" hints on short keys. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
    }
    prev = row;
  }
  return prev[b.length] ?? 0;
}

/**
 * The key of `known` nearest to `key` (case and `_` ignored, at most two edits apart), if any:
 * `silence_remindr` → `silence_reminder`, `voice_i_d` (`voiceID`) → `voice_id`.
 */
export function nearestKey(key: string, known: readonly string[]): string | undefined {
  const plain = (k: string) => k.toLowerCase().replaceAll("_", "");
  let best: { key: string; distance: number } | undefined;
  for (const k of known) {
    const distance = editDistance(plain(k), plain(key));
    if (distance <= 2 && (best === undefined || distance < best.distance)) best = { key: k, distance };
  }
  return best?.key;
}

/** The object keys `schema` knows at `path` (through optional, default, lists, unions, pipes). */
export function keysAt(schema: z.core.$ZodType, path: readonly PropertyKey[]): string[] {
  const out = new Set<string>();
  const visit = (s: z.core.$ZodType, rest: readonly PropertyKey[], depth: number): void => {
    if (depth > 40) return;
    const def = s._zod.def as z.core.$ZodTypeDef & Record<string, unknown>;
    const inner = (d: unknown) => visit(d as z.core.$ZodType, rest, depth + 1);
    switch (def.type) {
      case "object": {
        const shape = (def as unknown as { shape: Record<string, z.core.$ZodType> }).shape;
        const [head, ...tail] = rest;
        if (head === undefined) for (const k of Object.keys(shape)) out.add(k);
        else if (typeof head === "string" && shape[head]) visit(shape[head], tail, depth + 1);
        return;
      }
      case "array":
      case "record": {
        const next = def.type === "array" ? def.element : def.valueType;
        if (rest.length > 0) visit(next as z.core.$ZodType, rest.slice(1), depth + 1);
        return;
      }
      case "union":
        for (const o of def.options as z.core.$ZodType[]) inner(o);
        return;
      case "intersection":
        inner(def.left);
        inner(def.right);
        return;
      case "pipe":
        inner(def.in);
        return;
      case "lazy":
        inner((def.getter as () => z.core.$ZodType)());
        return;
      default:
        if (def.innerType) inner(def.innerType);
    }
  };
  visit(schema, path, 0);
  return [...out];
}
