/**
 * Sampling one version's calls: the only I/O of `src/evidence/`.
 *
 * {@link sampleCalls}`(client, scope, requirements)` lists the workspace's calls of `scope.origins`
 * through the client (newest first, pages of 100), keeps those of `scope.agentId` answered by
 * `scope.version` since `scope.since` (and within the last `scope.lastMinutes` when set), sorts
 * each by {@link callState} and tallies, per rate and status rate of `requirements`:
 * - a rate over the `analysed` calls: how many carry a value for its analysis (`measured`), how many
 *   hold its value (`matching`), and why the others were left out (no group, no analysis, null);
 * - a status rate over the finished calls: how many have one of its statuses.
 * A listing that reaches `maxCalls` items stops and marks the sample `truncated` (the judge then
 * says `inconclusive`, never `pass`). A failed listing throws (the caller's verdict is `error`).
 * Loads no `@pulumi/pulumi`.
 */
import type { VoiceAgentClient } from "../client";
import { analysisValue, type CallState, callState, isFinished } from "./calls";
import { isRate, isStatusRate, type Requirement, tallyKey } from "./requirements";

/** Which calls: one version's, of some origins, since a time. */
export interface SampleScope {
  agentId: string;
  version: number;
  /** Origins listed (`?origin=`): e.g. `widget`, `batch`, `inbound` (callers, not tests). */
  origins: readonly string[];
  /** When the version went live (ISO): calls before are not its evidence. Null: unknown (all its calls). */
  since: string | null;
  /**
   * A watch's windows of N minutes: back to back from `since` (go-live), the calls of the current
   * one only ({@link windowOf}); with `since` null, the last N minutes before now (one look).
   * Default: every call since `since`.
   */
  lastMinutes?: number;
}

/** One rate's or status rate's counting. */
export interface Tally {
  /** Calls that carry a value (a rate) or finished calls (a status rate): the denominator. */
  measured: number;
  /** Of those, calls holding the value or one of the statuses. */
  matching: number;
  /** Counted calls left out of the denominator, by why (`no_group`, `no_analysis`, `null`). */
  leftOut: Record<string, number>;
}

/** What the calls of a scope show. */
export interface CallSample {
  scope: SampleScope;
  /** When it was taken (ISO). */
  takenAt: string;
  /** Calls still on the line. */
  running: number;
  /** Finished without connecting (not evidence; reported). */
  neverConnected: number;
  /** Answered by a voicemail (not a conversation; reported). */
  voicemail: number;
  /** Conversations whose analysis is not in yet (reported, never counted). */
  awaitingAnalysis: number;
  /** Conversations finished and analysed: the calls that count. */
  analysed: number;
  /** Calls of a status the reference does not list (reported, never counted). */
  unknownStatus: number;
  /** Finished calls per status (never connected, voicemail, conversations). */
  byStatus: Record<string, number>;
  /** Per rate and status rate, by {@link tallyKey}. */
  tallies: Record<string, Tally>;
  /** The listing stopped at `maxCalls` items: the sample may miss calls. */
  truncated: boolean;
}

/** The calls client a sample needs. */
export type CallsReader = Pick<VoiceAgentClient, "calls">;

/** Options of {@link sampleCalls}. */
export interface SampleOptions {
  /** The clock (epoch ms). Default `Date.now`. */
  now?: () => number;
  /** Items of the listing read at most (all agents' calls of the origins). Default 10 000. */
  maxCalls?: number;
}

const DEFAULT_MAX_CALLS = 10_000;

/** An empty sample of `scope` taken at `takenAt`. */
export function emptySample(
  scope: SampleScope,
  requirements: readonly Requirement[],
  takenAt: string,
): CallSample {
  const tallies: Record<string, Tally> = {};
  for (const r of requirements)
    if (isRate(r) || isStatusRate(r)) tallies[tallyKey(r)] = { measured: 0, matching: 0, leftOut: {} };
  return {
    scope,
    takenAt,
    running: 0,
    neverConnected: 0,
    voicemail: 0,
    awaitingAnalysis: 0,
    analysed: 0,
    unknownStatus: 0,
    byStatus: {},
    tallies,
    truncated: false,
  };
}

const COUNTERS: Record<CallState, keyof CallSample & string> = {
  running: "running",
  never_connected: "neverConnected",
  voicemail: "voicemail",
  awaiting_analysis: "awaitingAnalysis",
  analysed: "analysed",
  unknown_status: "unknownStatus",
};

/**
 * Adds one call (already known to be of the scope) to `sample`: the pure half of
 * {@link sampleCalls}, for callers that hold the calls already.
 */
export function addCall(
  sample: CallSample,
  requirements: readonly Requirement[],
  call: Parameters<typeof callState>[0],
): void {
  const state = callState(call);
  const counter = COUNTERS[state] as "running";
  sample[counter] += 1;
  if (isFinished(state)) sample.byStatus[call.status] = (sample.byStatus[call.status] ?? 0) + 1;
  for (const r of requirements) {
    if (isStatusRate(r)) {
      if (!isFinished(state)) continue;
      const t = sample.tallies[tallyKey(r)] as Tally;
      t.measured += 1;
      if (r.status.includes(call.status)) t.matching += 1;
    } else if (isRate(r)) {
      if (state !== "analysed") continue;
      const t = sample.tallies[tallyKey(r)] as Tally;
      const read = analysisValue(call, r.analysis);
      if (read.missing !== undefined) t.leftOut[read.missing] = (t.leftOut[read.missing] ?? 0) + 1;
      else {
        t.measured += 1;
        if (read.value === r.value) t.matching += 1;
      }
    }
  }
}

/**
 * The window a look at `now` judges: back-to-back windows of `scope.lastMinutes` from `scope.since`,
 * the current one (`index` 1 for the first); without `lastMinutes`, one window from `since` (`index`
 * 1, `start` undefined when `since` is null). With `since` null and `lastMinutes`, the last N
 * minutes, `index` 1. Windows are back to back, not sliding, so that each is a stream of its own that
 * the confidence sequence watches over every look, and the error budget is split across them
 * ({@link windowConfidence}): a sliding window judges ever new samples, and a version at its bound
 * was rolled back on 27-29 % of days at 95 % (bench/watch-false-rollback.ts).
 */
export function windowOf(scope: SampleScope, now: number): { start: number | undefined; index: number } {
  const since = scope.since === null ? undefined : Date.parse(scope.since);
  const minutes = scope.lastMinutes;
  if (minutes === undefined) return { start: since, index: 1 };
  const width = minutes * 60_000;
  if (since === undefined) return { start: now - width, index: 1 };
  const index = Math.max(0, Math.floor((now - since) / width)) + 1;
  return { start: since + (index - 1) * width, index };
}

/** Lists and tallies the calls of `scope` (see the file header). */
export async function sampleCalls(
  client: CallsReader,
  scope: SampleScope,
  requirements: readonly Requirement[],
  opts: SampleOptions = {},
): Promise<CallSample> {
  const now = (opts.now ?? Date.now)();
  const max = opts.maxCalls ?? DEFAULT_MAX_CALLS;
  const sample = emptySample(scope, requirements, new Date(now).toISOString());
  const { start } = windowOf(scope, now);
  let read = 0;
  for await (const call of client.calls.list({ origin: scope.origins, limit: 100 })) {
    if (start !== undefined && Date.parse(call.created_at) < start) break; // newest first: the rest is older
    if (++read > max) {
      sample.truncated = true;
      break;
    }
    if (call.agent_id !== scope.agentId || call.agent_version !== scope.version) continue;
    addCall(sample, requirements, call);
  }
  return sample;
}
