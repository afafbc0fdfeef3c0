/**
 * Judging a sample of calls against requirements: pure, no I/O, the clock given.
 *
 * The fail-closed rules, in order (the first that applies decides):
 *
 * | requirement   | when                                                        | verdict        |
 * |---------------|-------------------------------------------------------------|----------------|
 * | soak          | the version's go-live time is unknown (`since` null)        | inconclusive   |
 * | soak          | live less than `soakMinutes`                                | inconclusive   |
 * | minCalls      | fewer counted (`analysed`) calls than `minCalls`            | inconclusive   |
 * | rate          | the sample was cut short (`truncated`)                      | inconclusive   |
 * | rate          | no counted call carries a value for the analysis            | inconclusive   |
 * | rate          | fewer measured calls than its `minMeasured`                 | inconclusive   |
 * | rate          | with `sequential`: the confidence sequence rules out <= bound | fail         |
 * | rate          | with `sequential`: it rules out >= bound                    | pass           |
 * | rate          | with `sequential`: neither                                  | inconclusive   |
 * | rate          | share (or, with `confidence`, the interval's bottom) > bound | fail          |
 * | rate          | with `confidence`, the interval's top > bound               | inconclusive   |
 * | status rate   | the sample was cut short, or no call has finished           | inconclusive   |
 * | status rate   | as a rate, over finished calls                              | fail / incon.  |
 * | any           | otherwise                                                   | pass           |
 *
 * Missing evidence is never a pass: calls that never connected, reached voicemail, await their
 * analysis or carry no value (a missing key, `null`) are never in a denominator, and a share over
 * no call is not met. {@link wilson} is the Wilson score interval (exported for the watch).
 */
import { isMinCalls, isRate, isSoak, type Requirement, tallyKey } from "./requirements";
import type { CallSample, Tally } from "./sample";
import { confidenceSequence, sequentialVerdict } from "./sequential";
import { type Finding, type Judgement, judgementOf } from "./verdict";
import { leftOutSentence, minutes, notCounted, pct } from "./words";

/**
 * The standard normal quantile (probit) of `p`, 0 < p < 1: Wichura's algorithm AS 241 (PPND16),
 * accurate to about 1e-16.
 */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile: p must be in (0, 1), got ${p}`);
  const q = p - 0.5;
  const poly = (c: readonly number[], x: number) => c.reduceRight((acc, k) => acc * x + k, 0);
  if (Math.abs(q) <= 0.425) {
    const r = 0.180625 - q * q;
    return (
      (q *
        poly(
          [
            3.3871328727963665, 133.14166789178438, 1971.5909503065513, 13731.69376550946, 45921.95393154987,
            67265.7709270087, 33430.57558358813, 2509.0809287301227,
          ],
          r,
        )) /
      poly(
        [
          1, 42.31333070160091, 687.1870074920579, 5394.196021424751, 21213.794301586597, 39307.89580009271,
          28729.085735721943, 5226.495278852546,
        ],
        r,
      )
    );
  }
  let r = Math.sqrt(-Math.log(q < 0 ? p : 1 - p));
  let x: number;
  if (r <= 5) {
    r -= 1.6;
    x =
      poly(
        [
          1.4234371107496835, 4.630337846156546, 5.769497221460691, 3.6478483247632045, 1.2704582524523684,
          0.2417807251774506, 0.022723844989269184, 0.0007745450142783414,
        ],
        r,
      ) /
      poly(
        [
          1, 2.053191626637759, 1.6763848301838038, 0.6897673349851, 0.14810397642748008,
          0.015198666563616457, 0.0005475938084995345, 1.0507500716444169e-9,
        ],
        r,
      );
  } else {
    r -= 5;
    x =
      poly(
        [
          6.657904643501103, 5.463784911164114, 1.7848265399172913, 0.29656057182850487, 0.026532189526576124,
          0.0012426609473880784, 0.000027115555687434876, 2.0103343992922881e-7,
        ],
        r,
      ) /
      poly(
        [
          1, 0.599832206555888, 0.1369298809227358, 0.014875361290850615, 0.0007868691311456133,
          0.000018463183175100548, 1.421511758316446e-7, 2.0442631033899397e-15,
        ],
        r,
      );
  }
  return q < 0 ? -x : x;
}

/**
 * The Wilson score interval of a share `successes / n` at `confidence` (two-sided, e.g. 0.95):
 * `{ low, high }` within 0..1. With `n` 0 it is the whole `{ low: 0, high: 1 }` (nothing known).
 */
export function wilson(successes: number, n: number, confidence: number): { low: number; high: number } {
  if (!(confidence > 0 && confidence < 1))
    throw new RangeError(`wilson: confidence must be in (0, 1), got ${confidence}`);
  if (!(Number.isInteger(n) && n >= 0 && Number.isInteger(successes) && successes >= 0 && successes <= n))
    throw new RangeError(`wilson: need integers 0 <= successes <= n, got ${successes} of ${n}`);
  if (n === 0) return { low: 0, high: 1 };
  const z = normalQuantile(1 - (1 - confidence) / 2);
  const p = successes / n;
  const z2n = (z * z) / n;
  const centre = p + z2n / 2;
  const spread = z * Math.sqrt((p * (1 - p)) / n + z2n / (4 * n));
  const denom = 1 + z2n;
  // At 0 and n the bounds are exactly 0 and 1 (the formula gives them up to rounding).
  return {
    low: successes === 0 ? 0 : Math.max(0, (centre - spread) / denom),
    high: successes === n ? 1 : Math.min(1, (centre + spread) / denom),
  };
}

/**
 * A share against its bound: by the observed share, by its Wilson interval at `confidence`, or with
 * `sequential`, by the confidence sequence at `confidence` (valid over every look: `sequential.ts`).
 */
function shareVerdict(
  t: Tally,
  atMost: number,
  confidence: number | undefined,
  sequential = false,
): { verdict: "pass" | "fail" | "inconclusive"; detail: string } {
  const share = t.matching / t.measured;
  if (confidence === undefined)
    return { verdict: share > atMost ? "fail" : "pass", detail: `${pct(share)}, at most ${pct(atMost)}` };
  const { low, high } = shareInterval(t.matching, t.measured, confidence, sequential);
  const kind = sequential ? "always-valid interval" : "interval";
  const detail = `${pct(share)}; ${pct(confidence)} ${kind} ${pct(low)} to ${pct(high)}, at most ${pct(atMost)}`;
  if (sequential) {
    const verdict = sequentialVerdict(t.matching, t.measured, atMost, confidence);
    return { verdict, detail: verdict === "inconclusive" ? `${detail}: too few calls to tell` : detail };
  }
  if (low > atMost) return { verdict: "fail", detail };
  if (high > atMost) return { verdict: "inconclusive", detail: `${detail}: too few calls to tell` };
  return { verdict: "pass", detail };
}

/** The interval a share is judged by: Wilson's at one look, or the confidence sequence over every look. */
export function shareInterval(
  matching: number,
  measured: number,
  confidence: number,
  sequential: boolean,
): { low: number; high: number } {
  return sequential
    ? confidenceSequence(matching, measured, confidence)
    : wilson(matching, measured, confidence);
}

const withTail = (head: string, ...tails: string[]) => [head, ...tails.filter(Boolean)].join("; ");

/**
 * Each requirement judged on `sample` at `now` (epoch ms), combined by the worst verdict. See the
 * rules at the top of this file.
 */
export function judgeSample(
  sample: CallSample,
  requirements: readonly Requirement[],
  now: number,
): Judgement {
  const findings: Finding[] = [];
  const origins = `origins ${sample.scope.origins.join(", ")}`;
  const cut = sample.truncated ? "the listing was cut short, so calls may be missing" : "";
  for (const r of requirements) {
    if (isSoak(r)) {
      const requirement = `live at least ${minutes(r.soakMinutes)} minutes`;
      const since = sample.scope.since === null ? undefined : Date.parse(sample.scope.since);
      if (since === undefined) {
        findings.push({
          requirement,
          verdict: "inconclusive",
          observed: null,
          bound: r.soakMinutes,
          reason: `live for an unknown time (no deploy-history row) of ${minutes(r.soakMinutes)} minutes`,
        });
        continue;
      }
      const live = (now - since) / 60_000;
      findings.push(
        live >= r.soakMinutes
          ? {
              requirement,
              verdict: "pass",
              observed: live,
              bound: r.soakMinutes,
              reason: `live ${minutes(live)} minutes (at least ${minutes(r.soakMinutes)})`,
            }
          : {
              requirement,
              verdict: "inconclusive",
              observed: live,
              bound: r.soakMinutes,
              reason: `live ${minutes(live)} of ${minutes(r.soakMinutes)} minutes`,
            },
      );
    } else if (isMinCalls(r)) {
      const requirement = `at least ${r.minCalls} answered calls`;
      const n = sample.analysed;
      const others = notCounted(sample);
      findings.push(
        n >= r.minCalls
          ? {
              requirement,
              verdict: "pass",
              observed: n,
              bound: r.minCalls,
              reason: withTail(`${n} calls (at least ${r.minCalls}; ${origins})`, others),
            }
          : {
              requirement,
              verdict: "inconclusive",
              observed: n,
              bound: r.minCalls,
              reason: withTail(`${n} of ${r.minCalls} calls (${origins})`, others, cut),
            },
      );
    } else {
      const t = sample.tallies[tallyKey(r)] ?? { measured: 0, matching: 0, leftOut: {} };
      const what = isRate(r)
        ? `${r.analysis} = ${JSON.stringify(r.value)}`
        : `status ${r.status.join(" or ")}`;
      const requirement = `${what} at most ${pct(r.atMost)}`;
      const over = isRate(r) ? "calls" : "finished calls";
      const leftOut = leftOutSentence(t);
      if (sample.truncated || t.measured === 0) {
        const none = isRate(r)
          ? `no call carries ${r.analysis} yet (at most ${pct(r.atMost)})`
          : `no call has finished yet (${what} at most ${pct(r.atMost)})`;
        findings.push({
          requirement,
          verdict: "inconclusive",
          observed: t.measured === 0 ? null : t.matching / t.measured,
          bound: r.atMost,
          reason:
            t.measured === 0
              ? withTail(none, leftOut, isRate(r) ? notCounted(sample) : "", cut)
              : withTail(`${what} on ${t.matching} of ${t.measured} ${over}`, cut),
        });
        continue;
      }
      if (r.minMeasured !== undefined && t.measured < r.minMeasured) {
        findings.push({
          requirement,
          verdict: "inconclusive",
          observed: t.matching / t.measured,
          bound: r.atMost,
          reason: withTail(
            isRate(r)
              ? `${r.analysis} measured on ${t.measured} of the ${sample.analysed} calls, ${JSON.stringify(r.value)} on ${t.matching}: too few to judge (at least ${r.minMeasured} measured calls needed; at most ${pct(r.atMost)})`
              : `${what} on ${t.matching} of ${t.measured} ${over}: too few to judge (at least ${r.minMeasured} needed; at most ${pct(r.atMost)})`,
            leftOut,
          ),
        });
        continue;
      }
      const { verdict, detail } = shareVerdict(t, r.atMost, r.confidence, r.sequential === true);
      findings.push({
        requirement,
        verdict,
        observed: t.matching / t.measured,
        bound: r.atMost,
        reason: withTail(`${what} on ${t.matching} of ${t.measured} ${over} (${detail})`, leftOut),
      });
    }
  }
  return judgementOf(findings);
}
