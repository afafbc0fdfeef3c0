/**
 * What evidence is held against: the requirements `promote` and the watch of live versions state.
 *
 * - `{ soakMinutes }`: the version has been live at least this long (from the sample's `since`).
 * - `{ minCalls }`: at least this many counted calls (`analysed` conversations, `calls.ts`).
 * - `{ analysis, value, atMost, confidence? }`: among the counted calls that carry a value for
 *   `analysis` (`"Group/Name"`), the share holding `value` is at most `atMost`.
 * - `{ status, atMost, confidence? }`: among all finished calls (never connected, voicemail and
 *   conversations), the share whose status is one of `status` is at most `atMost`.
 *
 * With `confidence` (e.g. 0.95) a share is judged by its Wilson score interval: `pass` when the
 * interval's top is within the bound, `fail` when its bottom is above it, `inconclusive` between.
 * With `sequential` too (the watch), by the confidence sequence instead, valid over every look
 * (`sequential.ts`). Without `confidence`, the observed share is compared with the bound. With
 * `minMeasured` (the watch's and promotion's `minCalls`), a share over fewer measured calls than
 * that is `inconclusive`, whatever it shows.
 * No I/O.
 */

/** An analysis value counted by a rate. */
export type Scalar = string | number | boolean;

export interface SoakRequirement {
  /** Minutes the version has been live, at least (fractions allowed). */
  soakMinutes: number;
}
export interface MinCallsRequirement {
  /** Counted calls, at least. */
  minCalls: number;
}
export interface RateRequirement {
  /** `"Group/Name"` as calls key their `custom_analysis`, names compared exactly. */
  analysis: string;
  /** The value counted. */
  value: Scalar;
  /** The largest share allowed, 0 to 1. */
  atMost: number;
  /** Judge by the Wilson interval at this confidence (0 < c < 1) instead of the observed share. */
  confidence?: number;
  /** Fewer measured calls (the denominator) than this is inconclusive, even a share over the bound. */
  minMeasured?: number;
  /**
   * With `confidence`: judge by the confidence sequence (`sequential.ts`), valid however many times
   * the same growing sample is judged (the watch), instead of Wilson's interval (one look).
   */
  sequential?: boolean;
}
export interface StatusRateRequirement {
  /** The finished statuses counted, e.g. `["failed", "no_answer"]`. */
  status: readonly string[];
  /** The largest share of finished calls allowed, 0 to 1. */
  atMost: number;
  /** See {@link RateRequirement.confidence}. */
  confidence?: number;
  /** See {@link RateRequirement.minMeasured}. */
  minMeasured?: number;
  /** See {@link RateRequirement.sequential}. */
  sequential?: boolean;
}
export type Requirement = SoakRequirement | MinCallsRequirement | RateRequirement | StatusRateRequirement;

export const isRate = (r: Requirement): r is RateRequirement => "analysis" in r;
export const isStatusRate = (r: Requirement): r is StatusRateRequirement => "status" in r;
export const isMinCalls = (r: Requirement): r is MinCallsRequirement => "minCalls" in r;
export const isSoak = (r: Requirement): r is SoakRequirement => "soakMinutes" in r;

/** The key of a rate's or a status rate's tally in a sample: the same for the same counting. */
export function tallyKey(r: RateRequirement | StatusRateRequirement): string {
  return isRate(r)
    ? `analysis ${r.analysis} = ${JSON.stringify(r.value)}`
    : `status ${[...r.status].sort().join(", ")}`;
}
