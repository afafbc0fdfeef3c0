/**
 * The watch's false rollbacks: how often a version whose true share equals its bound is rolled back
 * over a whole day of passes, and how soon one at twice its bound is.
 *
 * Simulated days: callers arrive at `perMinute` calls a minute (each lasting one minute, so a call
 * begun in minute m is analysed by the pass at the end of minute m + 1), each call negative with
 * probability `share`, and a pass judges every call since go-live at the end of each minute, for
 * `minutes` minutes or until the first rollback. A pass is exactly what the watch runs on the calls
 * it has listed: `watchRequirements` (the `watch` input's requirements) and `addCall`, `judgeSample`
 * of `src/evidence` (with `sequential` off, the same judge as before this bench: Wilson's interval
 * at every look). Seeded (mulberry32), so every run gives the same figures.
 *
 *   npx ts-node --transpile-only bench/watch-false-rollback.ts [days=200] [perMinute=30] [bound=0.2]
 *
 * About 20 s on 2 cores with the defaults.
 */

import { mulberry32 } from "../src/emulator/faults";
import {
  addCall,
  emptySample,
  judgeSample,
  type Requirement,
  windowConfidence,
  windowOf,
} from "../src/evidence";
import { watchRequirements } from "../src/resources/agentVersion/watch";

const ANALYSIS = "Default Analysis/User Sentiment";
const NEGATIVE = { "Default Analysis": { "User Sentiment": "negative" } };
const NEUTRAL = { "Default Analysis": { "User Sentiment": "neutral" } };

/** What one simulation is. */
export interface Simulation {
  days: number;
  /** Passes a day, one a minute. */
  minutes: number;
  perMinute: number;
  /** The rate's `atMost`. */
  bound: number;
  /** The true share of negative calls. */
  share: number;
  /** The judge before (Wilson's interval at every look) instead of the confidence sequence. */
  fixedInterval?: boolean;
  /** `watch.windowMinutes`: judged as the watch judges it (back-to-back windows, the budget split). */
  windowMinutes?: number;
  /** The sliding window of before (the last N minutes at the whole confidence), for comparison. */
  sliding?: boolean;
  /** Judgements a minute (default 1): the calls of each minute arrive spread over them, as a watch looking sooner reads them. */
  looksPerMinute?: number;
  seed?: number;
}

/** The days rolled back, and when (minutes from go-live) each was. */
export interface Outcome {
  days: number;
  rolledBack: number;
  /** Minutes from go-live to the pass (or look) that rolled back, one per day rolled back. */
  minutesToRollback: number[];
}

/** The requirements of `watch: { rates: [{ analysis, value: "negative", atMost: bound }] }`, as the watch builds them. */
export function requirementsFor(bound: number, fixedInterval = false): Requirement[] {
  const watch = { rates: [{ analysis: ANALYSIS, value: "negative", atMost: bound }] };
  return watchRequirements(watch).map((r) => (fixedInterval ? { ...r, sequential: false } : r));
}

/** Runs `s.days` simulated days (see the file header). */
export function simulate(s: Simulation): Outcome {
  const base = requirementsFor(s.bound, s.fixedInterval);
  const scope = {
    agentId: "a",
    version: 1,
    origins: ["inbound"],
    since: "2026-01-01T00:00:00.000Z",
    ...(s.windowMinutes !== undefined ? { lastMinutes: s.windowMinutes } : {}),
  };
  const since = Date.parse(scope.since);
  const width = (s.windowMinutes ?? 0) * 60_000;
  const out: Outcome = { days: s.days, rolledBack: 0, minutesToRollback: [] };
  for (let day = 0; day < s.days; day++) {
    const draw = mulberry32((s.seed ?? 1) * 1_000_003 + day);
    let current = 0;
    let requirements = base;
    let sample = emptySample(scope, requirements, scope.since);
    // The sliding window of before drops each minute's calls as they fall out of it.
    const held: { created: number; negative: number; count: number }[] = [];
    const looks = s.looksPerMinute ?? 1;
    for (let step = looks; step <= s.minutes * looks; step++) {
      const minute = step / looks;
      const now = since + minute * 60_000;
      // The window this pass judges and its confidence, as src/gitops/watch.ts takes them.
      const window = s.sliding ? { start: now - width, index: 1 } : windowOf(scope, now);
      if (window.index !== current) {
        current = window.index;
        requirements =
          s.windowMinutes === undefined || s.sliding
            ? base
            : base.map((r) => ({ ...r, confidence: windowConfidence(0.95, window.index) }));
        sample = emptySample(scope, requirements, new Date(now).toISOString());
      }
      // The calls begun in the minute before this one (created mid-minute) have ended and been analysed.
      if (minute > 1) {
        const created = now - 90_000;
        let negative = 0;
        // This look's part of the minute's calls.
        const count =
          Math.floor((step * s.perMinute) / looks) - Math.floor(((step - 1) * s.perMinute) / looks);
        for (let i = 0; i < count; i++) {
          const bad = draw() < s.share;
          if (bad) negative++;
          if (window.start === undefined || created >= window.start)
            addCall(sample, requirements, { status: "completed", custom_analysis: bad ? NEGATIVE : NEUTRAL });
        }
        if (s.sliding) held.push({ created, negative, count });
      }
      const tally = Object.values(sample.tallies)[0];
      while (s.sliding && tally && held.length && (held[0]?.created ?? now) < (window.start ?? 0)) {
        const gone = held.shift() as { negative: number; count: number };
        tally.measured -= gone.count;
        tally.matching -= gone.negative;
        sample.analysed -= gone.count;
      }
      if (judgeSample(sample, requirements, now).verdict === "fail") {
        out.rolledBack += 1;
        out.minutesToRollback.push(minute);
        break;
      }
    }
  }
  return out;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length === 0
    ? Number.NaN
    : s.length % 2
      ? (s[m] as number)
      : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

function main(): void {
  const days = Number(process.argv[2] ?? 200);
  const perMinute = Number(process.argv[3] ?? 30);
  const bound = Number(process.argv[4] ?? 0.2);
  const day = { days, minutes: 24 * 60, perMinute, bound };
  console.log(
    `${days} simulated days, ${perMinute} calls a minute, one pass a minute, atMost ${bound}, confidence 0.95`,
  );
  const runs: { name: string; over: Partial<Simulation> }[] = [
    { name: "now: the confidence sequence", over: {} },
    { name: "before: Wilson's 95% interval at every pass", over: { fixedInterval: true } },
    ...[60, 240].flatMap((w) => [
      { name: `windowMinutes ${w}, now: back-to-back windows, the budget split`, over: { windowMinutes: w } },
      {
        name: `windowMinutes ${w}, before: a sliding window at the whole budget`,
        over: { windowMinutes: w, sliding: true },
      },
    ]),
  ];
  for (const { name, over } of runs) {
    const started = Date.now();
    const even = simulate({ ...day, ...over, share: bound });
    const bad = simulate({ ...day, ...over, share: 2 * bound });
    console.log(
      `${name}: true share = bound: rolled back in ${even.rolledBack} of ${days} days (${((100 * even.rolledBack) / days).toFixed(1)} %); ` +
        `true share = 2 x bound: rolled back in ${bad.rolledBack} of ${days} days, median ${median(bad.minutesToRollback)} min ` +
        `from go-live (max ${Math.max(...bad.minutesToRollback)}) [${((Date.now() - started) / 1000).toFixed(1)} s]`,
    );
  }
}

if (require.main === module) main();
