/**
 * Evidence: one home for "does this version hold up?", answered from calls. Shared by `verify`
 * (test calls before go-live), `promote` (staging's callers before production publishes) and the
 * watch of live versions (production's callers after go-live). Loads no `@pulumi/pulumi`; the only
 * I/O is `sample.ts`.
 *
 * | file              | holds                                                                         |
 * |-------------------|-------------------------------------------------------------------------------|
 * | `verdict.ts`      | `Verdict` (pass, fail, inconclusive, error), `Finding`, `Judgement`, `worst()` |
 * | `calls.ts`        | `callState(call)`: the one rule for which calls count; `isSettled`; `analysisValue(call, "Group/Name")` |
 * | `requirements.ts` | soak, minCalls, analysis rates and status rates (`{ status, atMost }`)         |
 * | `sample.ts`       | `sampleCalls(client, scope, requirements)`: one version's calls of some origins since a time, tallied |
 * | `judge.ts`        | `judgeSample(sample, requirements, now)`: pure, the fail-closed rules as a table; `wilson()` |
 * | `sequential.ts`   | the watch's confidence sequence: `sequentialVerdict`, `confidenceSequence` (valid over every look) |
 * | `words.ts`        | the sentences: shares, left-out calls, met and missing lines, an error finding |
 */
export * from "./calls";
export * from "./judge";
export * from "./requirements";
export * from "./sample";
export * from "./sequential";
export * from "./verdict";
export * from "./words";
