/**
 * An always-valid judgement of a share against its bound: a confidence sequence, for the watch,
 * which looks at the same version's calls again and again (one pass a minute, for days).
 *
 * A fixed interval (Wilson's) holds at one look: judged again at every pass over the growing calls,
 * a version whose true share equals its bound crosses it by chance sooner or later (at one pass a
 * minute for a day, in about 28 % of days at 95 %). Here each side is a test by a mixture of
 * likelihood ratios (Robbins 1970; Howard, Ramdas, McAuliffe and Sekhon 2021, "Time-uniform,
 * nonparametric, nonasymptotic confidence sequences", Ann. Statist. 49(2); the mixture SPRT of
 * Johari, Koomen, Pekelis and Walsh 2022, "Always valid inference", Oper. Res. 70(3)):
 *
 *   M(k, n; b) = mean over the alternatives p of (p / b)^k ((1 - p) / (1 - b))^(n - k)
 *
 * with `k` matching of `n` measured calls. For alternatives above `b` it is, whatever the true share
 * at or below `b`, a nonnegative supermartingale starting at 1 (each call multiplies it by a factor
 * whose mean is at most 1), so by Ville's inequality (1939) the chance that it EVER reaches `1/α`,
 * over every pass of the whole watch, is at most `α`: `fail` only then. Alternatives below `b` give
 * `pass` the same way. The alternatives are a fixed grid, `b + (1 - b)·g` above and `b·(1 - g)`
 * below, `g` in {1/2, 1/4, ..., 1/128}: close ones detect a small excess, far ones a large one fast,
 * and the mixture pays `ln 7` nats for not knowing which. The verdict depends only on `k` and `n`:
 * the watch keeps no state between passes. Pure, no I/O.
 */

/** The grid of the mixture: each alternative's distance from the bound, as a share of the room beyond it. */
const GRID: readonly number[] = [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128];

/** ln of the mean of exp(xs), without overflow. */
function logMeanExp(xs: readonly number[]): number {
  const top = Math.max(...xs);
  if (top === Number.POSITIVE_INFINITY) return top;
  if (top === Number.NEGATIVE_INFINITY) return top;
  return top + Math.log(xs.reduce((s, x) => s + Math.exp(x - top), 0) / xs.length);
}

/** k ln(p/b) + (n-k) ln((1-p)/(1-b)), with 0·ln(anything) = 0. */
function logRatio(k: number, n: number, p: number, b: number): number {
  const up = k === 0 ? 0 : k * Math.log(p / b);
  const down = n - k === 0 ? 0 : (n - k) * Math.log((1 - p) / (1 - b));
  return up + down;
}

/**
 * ln M: the mixture's evidence, after `k` matching of `n` measured calls, that the true share is
 * above `bound` (`side` "above") or below it ("below"). Infinite when the calls rule the bound out
 * (a matching call against a bound of 0, a call that does not match against a bound of 1).
 */
export function logEvidence(k: number, n: number, bound: number, side: "above" | "below"): number {
  if (side === "above") {
    if (bound >= 1) return Number.NEGATIVE_INFINITY;
    if (bound <= 0) return k > 0 ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
    return logMeanExp(GRID.map((g) => logRatio(k, n, bound + (1 - bound) * g, bound)));
  }
  if (bound <= 0) return Number.NEGATIVE_INFINITY;
  if (bound >= 1) return k < n ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
  return logMeanExp(GRID.map((g) => logRatio(k, n, bound * (1 - g), bound)));
}

/**
 * The share of `k` in `n` against `atMost` at `confidence`, valid over every look: `fail` when the
 * evidence that it is above reaches `1/(1 - confidence)`, `pass` when the evidence that it is below
 * does, else `inconclusive`. The chance that a version whose true share is at most `atMost` is ever
 * judged `fail`, however often it is judged, is at most `1 - confidence`.
 */
export function sequentialVerdict(
  k: number,
  n: number,
  atMost: number,
  confidence: number,
): "pass" | "fail" | "inconclusive" {
  const threshold = Math.log(1 / (1 - confidence));
  if (logEvidence(k, n, atMost, "above") >= threshold) return "fail";
  if (logEvidence(k, n, atMost, "below") >= threshold) return "pass";
  return "inconclusive";
}

/**
 * How far the evidence that the share of `k` in `n` is above `atMost` has gone toward a `fail` at
 * `confidence`: ln M over the threshold ln(1/(1 - confidence)), 1 or more being a `fail` (given
 * enough measured calls; 0 or less: none). The watch looks again sooner at a version past half way:
 * by Ville's inequality the chance that M ever reaches the threshold is at most 1 - confidence
 * whatever the looks, however chosen, so looking more often cannot take the error past that bound;
 * it costs requests.
 */
export function towardFail(k: number, n: number, atMost: number, confidence: number): number {
  return logEvidence(k, n, atMost, "above") / Math.log(1 / (1 - confidence));
}

/**
 * The confidence sequence at `k` of `n`: the shares neither side rules out at `confidence`,
 * `{ low, high }` (to 1e-4). `fail` for a bound below `low`, `pass` for one above `high`. With `n` 0
 * it is the whole `{ low: 0, high: 1 }`.
 */
export function confidenceSequence(k: number, n: number, confidence: number): { low: number; high: number } {
  if (n === 0) return { low: 0, high: 1 };
  const threshold = Math.log(1 / (1 - confidence));
  const share = k / n;
  const edge = (from: number, to: number, side: "above" | "below") => {
    // `from` is ruled out (or the end of 0..1), `to` is not: bisect between them.
    if (logEvidence(k, n, from, side) < threshold) return from;
    let [out, inside] = [from, to];
    while (Math.abs(inside - out) > 1e-5) {
      const mid = (out + inside) / 2;
      if (logEvidence(k, n, mid, side) >= threshold) out = mid;
      else inside = mid;
    }
    return inside;
  };
  return { low: edge(0, share, "above"), high: edge(1, share, "below") };
}

/**
 * The confidence the `index`-th window (1, 2, ...) of a watch is judged at, so that over every window
 * of every day the chance of a `fail` for a version at its bound stays at most `1 - confidence`:
 * window `i` spends `(1 - confidence) / (i (i + 1))` of the error budget, and these add up to the
 * whole budget (a union bound over windows; each window's confidence sequence holds over every look
 * within it). The first window is judged at `1 - (1 - confidence) / 2`, the 24th of a day of hourly
 * windows at `1 - (1 - confidence) / 600`.
 */
export function windowConfidence(confidence: number, index: number): number {
  const i = Math.max(1, Math.floor(index));
  return 1 - (1 - confidence) / (i * (i + 1));
}
