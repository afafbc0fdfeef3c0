/**
 * Failures as the user reads them. Check failures in the program's spelling: a spec issue (wire
 * path, snake_case) becomes a Pulumi check failure naming the input as the program writes it. And
 * which thrown errors are expected failures, said by their message alone.
 */
import type * as pulumi from "@pulumi/pulumi";
import type { z } from "zod";
import { VoiceAgentError } from "../client/errors";
import type { Issue } from "../spec/common";
import { parseWith } from "../spec/issues";
import { toCamelKey } from "./normalize";
import { dependsOnUnknown, type FieldPath } from "./unknowns";

/** `builtin_tools.transfer_call.numbers[0].timezone` → `builtinTools.transferCall.numbers[0].timezone`. */
export function inputPath(wirePath: string): string {
  return wirePath.replace(/[a-z0-9_]+/gi, (segment) => toCamelKey(segment));
}

/**
 * A spec issue as a Pulumi check failure, in input spelling, cause first; the value itself is never
 * echoed whole. A value of the wrong type says what was expected and what was given
 * (`voice.speed: expected a number, got the string "1.2"`); an unknown key, at any depth, the
 * nearest known one (`conversation.silenceRemindr: not an input (did you mean silenceReminder?)`).
 */
export function failure(issue: Issue, property = inputPath(issue.field)): pulumi.dynamic.CheckFailure {
  const said = issue.message.startsWith(`${issue.field}:`)
    ? issue.message.slice(issue.field.length + 1).trim()
    : issue.message;
  let message = said;
  if (issue.expected !== undefined && issue.got !== undefined)
    message = `expected ${issue.expected}, got ${issue.got}`;
  else if (issue.code === "extra_forbidden")
    message = `not an input${issue.suggestion ? ` (did you mean ${inputPath(issue.suggestion)}?)` : ""}`;
  else if (issue.code === "missing") message = "required, and not set";
  return { property, reason: `${property}: ${clip(message)} (${issue.code})` };
}

/** Messages quote values: a 65,536-character prompt is not repeated in full. */
function clip(message: string, max = 300): string {
  return message.length <= max
    ? message
    : `${message.slice(0, max)}… (${message.length - max} more characters)`;
}

/**
 * The failures of a body checked by `schema` and then `rules`, leaving out every problem that may
 * come from a value unknown at preview (`unknowns`, paths in the program's spelling). The body may
 * hold valid stand-ins for those values, so the rules check what is known; what they report about
 * a stand-in is dropped with the rest.
 */
export function bodyFailures<T>(
  schema: z.ZodType<T>,
  rules: (data: T) => Issue[],
  body: unknown,
  unknowns: readonly FieldPath[],
  toPath: (field: string) => string = inputPath,
): pulumi.dynamic.CheckFailure[] {
  const parsed = parseWith(schema, body);
  const issues = parsed.ok ? rules(parsed.data) : parsed.issues;
  return issues
    .filter((i) => !dependsOnUnknown(toPath(i.field), i.code, unknowns))
    .map((i) => failure(i, toPath(i.field)));
}

/**
 * A failure the user acts on from its message alone (the service did not answer in time, a change
 * was made outside Pulumi): our stack trace tells them nothing, so it is not printed.
 */
export class ExpectedFailure extends Error {}

/**
 * True for an expected failure: an {@link ExpectedFailure}, an error of the client's family (the
 * service unreachable, the key refused, a value refused, the configuration refused), or an error
 * whose `cause` chain holds one (a message of ours around it). Anything else (a bug) is unexpected
 * and keeps its stack trace wherever it is printed.
 */
export function isExpectedFailure(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++) {
    if (e instanceof ExpectedFailure || e instanceof VoiceAgentError) return true;
  }
  return false;
}
