/**
 * The verdicts of call evidence, shared by `verify`, `promote` and the watch of live versions.
 *
 * A verdict is one of four (as Argo Rollouts' analysis phases and Kayenta's classifications):
 * - `pass`: the evidence is there and meets the requirement;
 * - `fail`: the evidence is there and does not meet it;
 * - `inconclusive`: not enough evidence to tell (no call measured yet, too few calls, a sample cut
 *   short, an interval that straddles the bound): never a pass;
 * - `error`: the evidence could not be read (the service refused, a listing failed).
 *
 * A {@link Finding} is one requirement's verdict with what was observed and why; a
 * {@link Judgement} combines findings by taking the {@link worst}. What each level does with a
 * verdict (verify refuses anything but `pass`; promote warns at preview and refuses at `up`; the
 * watch keeps, alerts or rolls back) is up to the caller. No I/O.
 */

/** One verdict of evidence. */
export type Verdict = "pass" | "fail" | "inconclusive" | "error";

/** Verdicts from the best to the worst: a definite `fail` outranks an `error` (which only says "could not tell"). */
export const VERDICT_ORDER: readonly Verdict[] = ["pass", "inconclusive", "error", "fail"];

/** One requirement, judged. */
export interface Finding {
  /** The requirement in words, e.g. `Default Analysis/User Sentiment = "negative" at most 10%`. */
  requirement: string;
  verdict: Verdict;
  /** What was observed (a count, a share 0..1, minutes), or null when nothing could be observed. */
  observed: number | null;
  /** The bound it was held against (a count, a share 0..1, minutes). */
  bound: number;
  /** A sentence: what was seen against the bound, and for a verdict other than `pass`, why. */
  reason: string;
}

/** Findings combined: the worst verdict, and every finding. */
export interface Judgement {
  verdict: Verdict;
  findings: Finding[];
}

/** The worst of `verdicts`; `pass` for none (no requirement is met vacuously by the caller's choice). */
export function worst(verdicts: Iterable<Verdict>): Verdict {
  let out: Verdict = "pass";
  for (const v of verdicts) if (VERDICT_ORDER.indexOf(v) > VERDICT_ORDER.indexOf(out)) out = v;
  return out;
}

/** The judgement of `findings`: their worst verdict. */
export function judgementOf(findings: Finding[]): Judgement {
  return { verdict: worst(findings.map((f) => f.verdict)), findings };
}
