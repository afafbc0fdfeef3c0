/**
 * Provider state is parsed, never trusted: every handler parses the property maps the engine hands
 * it (inputs after `check`, or the outputs recorded in state) with its resource's schema.
 */
import { z } from "zod";
import { UNKNOWN } from "./unknowns";

/** `props` parsed by `schema`; a clear error naming `what` and the fields when it does not parse. */
export function parseProps<S extends z.ZodType>(schema: S, props: unknown, what: string): z.infer<S> {
  const parsed = schema.safeParse(props);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
  throw new Error(
    `pulumi-voice-agent: the ${what} do not have the expected shape (${problems}). ` +
      "If this state was written by another version of pulumi-voice-agent, run `pulumi refresh`.",
    { cause: parsed.error },
  );
}

/**
 * `schema`, or the value Pulumi substitutes at preview for a value not known yet: for the inputs a
 * preview's `diff` may be handed (`create` and `update` never see one).
 */
export function orUnknown<S extends z.ZodType>(schema: S): z.ZodUnion<[S, z.ZodLiteral<typeof UNKNOWN>]> {
  return z.union([schema, z.literal(UNKNOWN)]);
}
