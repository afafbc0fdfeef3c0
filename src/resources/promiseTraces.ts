/**
 * Pulumi's promise traces, left unformatted. `@pulumi/pulumi` records `new Error().stack` on every
 * promise it makes (`runtime/debuggable.js`, `debuggablePromise`): read only to describe a leaked
 * promise when `PULUMI_DEBUG_PROMISE_LEAKS` is set. Reading `.stack` formats the trace at once, and a
 * TypeScript program's formatter is source-map-support's, which maps every frame through the source
 * maps: in a no-op preview of 200 agents and their versions it was 280 MB of the program's 695 MB of
 * allocations, most of them made while Pulumi serializes the inputs, after the registration
 * (`serviceResource.ts` already turns traces off during the registration itself). Garbage, but V8
 * sizes the heap by it: the program's peak memory (docs/performance.md, section 9).
 *
 * Once a program registers one of this package's resources, {@link skipPromiseTraces} wraps the
 * program's formatter: a trace whose first frame is Pulumi's `debuggablePromise` gets one fixed line
 * instead, unless `PULUMI_DEBUG_PROMISE_LEAKS` is set; every other trace goes to the program's
 * formatter, untouched. A program without a formatter (plain JavaScript: V8 formats natively) is
 * left alone.
 */
import type { Site } from "./registrationTrace";

/** What Pulumi's promise trace says instead. */
export const UNRECORDED =
  "Error: (Pulumi's promise trace, not recorded: set PULUMI_DEBUG_PROMISE_LEAKS=true to record it)";

const WRAPPED = Symbol.for("pulumi-voice-agent:promise-traces");

type Formatter = NonNullable<typeof Error.prepareStackTrace> & { [WRAPPED]?: true };

const isDebuggableFile = (file: string | null | undefined): boolean =>
  typeof file === "string" && /[\\/]@pulumi[\\/]pulumi[\\/]runtime[\\/]debuggable\.[jt]s$/.test(file);

/** Whether `sites` is Pulumi's capture of a promise's trace (`debuggablePromise`). */
export function isPromiseCapture(sites: readonly Site[]): boolean {
  const [first] = sites;
  return first?.getFunctionName() === "debuggablePromise" && isDebuggableFile(first.getFileName());
}

/** Wraps the program's formatter (once; again if the program replaced it since). */
export function skipPromiseTraces(): void {
  const previous = Error.prepareStackTrace as Formatter | undefined;
  if (!previous || previous[WRAPPED]) return;
  const wrapper: Formatter = (err, sites) =>
    isPromiseCapture(sites) && !process.env.PULUMI_DEBUG_PROMISE_LEAKS ? UNRECORDED : previous(err, sites);
  wrapper[WRAPPED] = true;
  Error.prepareStackTrace = wrapper;
}
