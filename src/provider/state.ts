/**
 * Provider state is parsed, never trusted: every handler parses the property maps the engine hands
 * it (inputs after `check`, or the outputs recorded in state) with its resource's schema.
 */
import type { z } from "zod";

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
