/**
 * The sentences of evidence: a share, a duration, the calls left out and why, and each finding's
 * reason (built by `judge.ts`), plus the lines a refusal, a preview warning, a report line and a
 * watch alert are made of ({@link metAndMissing}, {@link notCounted}). No I/O.
 */
import type { CallSample, Tally } from "./sample";
import type { Finding, Judgement } from "./verdict";

/** A share as a percentage with at most one decimal: `0.125` → `12.5%`. */
export const pct = (share: number): string => `${Math.round(share * 1000) / 10}%`;

/** Minutes in words: whole minutes from 10 up, else two decimals cut. */
export const minutes = (m: number): string =>
  m >= 10 ? String(Math.floor(m)) : String(Math.floor(m * 100) / 100);

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

const WHY: Record<string, string> = {
  not_analysed: "not analysed",
  no_group: "without the group",
  no_analysis: "without the analysis (switched off or renamed)",
  null: "with a null value (nothing extracted)",
};

/** `2 calls left out: 1 without the group, 1 with a null value`, or empty when none were. */
export function leftOutSentence(t: Tally): string {
  const parts = Object.entries(t.leftOut)
    .filter(([, n]) => n > 0)
    .map(([why, n]) => `${n} ${WHY[why] ?? why}`);
  const total = Object.values(t.leftOut).reduce((a, b) => a + b, 0);
  return total === 0 ? "" : `${plural(total, "call")} left out: ${parts.join(", ")}`;
}

/**
 * The calls of a sample that were not counted, and why: `not counted: 2 never connected,
 * 1 awaiting analysis`, or empty.
 */
export function notCounted(s: CallSample): string {
  const parts = [
    s.neverConnected ? `${s.neverConnected} never connected` : "",
    s.voicemail ? `${s.voicemail} reached voicemail` : "",
    s.awaitingAnalysis ? `${s.awaitingAnalysis} awaiting analysis` : "",
    s.running ? `${s.running} still running` : "",
    s.unknownStatus ? `${s.unknownStatus} of an unknown status` : "",
  ].filter(Boolean);
  return parts.length ? `not counted: ${parts.join(", ")}` : "";
}

/** The reasons of the findings that pass (`met`) and of the others (`missing`). */
export function metAndMissing(j: Pick<Judgement, "findings">): { met: string[]; missing: string[] } {
  const met: string[] = [];
  const missing: string[] = [];
  for (const f of j.findings) (f.verdict === "pass" ? met : missing).push(f.reason);
  return { met, missing };
}

/** One line per finding, prefixed with its verdict: a report's or a watch alert's body. */
export function findingLines(findings: readonly Finding[]): string[] {
  return findings.map((f) => `${f.verdict}: ${f.reason}`);
}

/** The finding of evidence that could not be read: verdict `error`, the cause's message. */
export function errorFinding(requirement: string, err: unknown): Finding {
  const message = err instanceof Error ? err.message : String(err);
  return {
    requirement,
    verdict: "error",
    observed: null,
    bound: 0,
    reason: `${requirement}: the calls could not be read: ${message}`,
  };
}
