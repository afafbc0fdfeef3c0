/**
 * Which stacks are production. Every policy whose rule depends on it takes the parameter
 * `productionStacks`: glob patterns of stack names (Pulumi's `--policy-pack-config` file has no
 * pack-wide entry, so each policy declares it). The stack's name is read from the resource's URN
 * (`urn:pulumi:<stack>::<project>::…`): the engine tells the pack process the stack only in its
 * `ConfigureStack` call, which `@pulumi/policy` does not pass on to policies.
 */
import type { PolicyConfigJSONSchema } from "@pulumi/policy/schema";
import { minimatch } from "minimatch";

/** Default of `productionStacks`. */
export const DEFAULT_PRODUCTION_STACKS: readonly string[] = ["prod", "prod-*", "production", "production-*"];

/** The `configSchema` entry of `productionStacks`. */
export const productionStacksSchema: PolicyConfigJSONSchema = {
  type: "array",
  items: { type: "string", minLength: 1 },
  default: [...DEFAULT_PRODUCTION_STACKS],
  description: 'Glob patterns of the stack names that are production, e.g. ["prod", "prod-*"].',
};

/** The stack name in a resource URN (`urn:pulumi:<stack>::<project>::<type>::<name>`). */
export function stackOfUrn(urn: string): string {
  const match = /^urn:pulumi:([^:]*)::/.exec(urn);
  if (!match?.[1]) throw new Error(`not a Pulumi resource URN: ${urn}`);
  // A fully qualified stack (`org/project/stack`) keeps its own name last.
  return match[1].split("/").pop() as string;
}

/**
 * Whether `stack` matches one of `patterns` (globs over the whole name, `*` and `?` and `[…]`),
 * whatever the case: `Prod-EU` is as much production as `prod-eu`.
 */
export function isProduction(
  stack: string,
  patterns: readonly string[] = DEFAULT_PRODUCTION_STACKS,
): boolean {
  return patterns.some((pattern) =>
    minimatch(stack, pattern, { nocomment: true, nonegate: true, nocase: true }),
  );
}
