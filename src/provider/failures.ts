/**
 * Check failures in the program's spelling: a spec issue (wire path, snake_case) becomes a Pulumi
 * check failure naming the input as the program writes it.
 */
import type * as pulumi from "@pulumi/pulumi";
import type { Issue } from "../spec/common";
import { toCamelKey } from "./normalize";

/** `builtin_tools.transfer_call.numbers[0].timezone` → `builtinTools.transferCall.numbers[0].timezone`. */
export function inputPath(wirePath: string): string {
  return wirePath.replace(/[a-z0-9_]+/gi, (segment) => toCamelKey(segment));
}

/** A spec issue as a Pulumi check failure, in input spelling; the value itself is never echoed whole. */
export function failure(issue: Issue, property = inputPath(issue.field)): pulumi.dynamic.CheckFailure {
  const message = issue.message.startsWith(`${issue.field}:`)
    ? issue.message.slice(issue.field.length + 1).trim()
    : issue.message;
  return { property, reason: `${property}: ${clip(message)} (${issue.code})` };
}

/** Messages quote values: a 65,536-character prompt is not repeated in full. */
function clip(message: string, max = 300): string {
  return message.length <= max
    ? message
    : `${message.slice(0, max)}… (${message.length - max} more characters)`;
}
