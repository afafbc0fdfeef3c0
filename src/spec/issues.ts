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
      return [at(field, type, msg)];
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
  return {
    ok: false,
    issues: zodIssues(r.error, prefix).map((i) => (i.field === "" ? { ...i, field: "body" } : i)),
  };
}
