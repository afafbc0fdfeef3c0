/**
 * The pacing as a table: one pure decision per case (no I/O, no clock), then the whole limiter of
 * several processes sharing one key against the emulator's moving window, on a simulated clock at
 * the service's size (300 requests a minute): few 429s, the key's pace, and nobody starves.
 */
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import {
  decidePace,
  type Heard,
  holdFor,
  MovingWindowLimiter,
  type PaceView,
  standingOf,
} from "../../src/client/limiter";
import { mulberry32 } from "../../src/emulator/faults";
import { RateLimiter } from "../../src/emulator/rateLimit";

const W = 60_000;
const heard = (over: Partial<Heard> = {}): Heard => ({
  limit: 300,
  remaining: 100,
  at: 1_000,
  resetAt: 5_000,
  others: 0,
  freed: 0,
  unseen: 0,
  ...over,
});
const view = (over: Partial<PaceView> = {}): PaceView => ({
  now: 1_200,
  pace: 300,
  windowMs: W,
  mine: 0,
  inFlight: 0,
  nextOwnFree: Number.POSITIVE_INFINITY,
  pausedUntil: Number.NEGATIVE_INFINITY,
  heard: undefined,
  bare: false,
  lastBare: false,
  newestSentAt: Number.NEGATIVE_INFINITY,
  ...over,
});
const INF = Number.POSITIVE_INFINITY;

describe("decidePace", () => {
  test.each<[string, Partial<PaceView>, true | [string, number]]>([
    ["nothing known, nothing in flight: the first request goes", {}, true],
    [
      "nothing known, one in flight: wait for its answer",
      { inFlight: 1, mine: 1 },
      ["first answer first", INF],
    ],
    ["a service without X-RateLimit-*: today's own count", { inFlight: 5, mine: 5, bare: true }, true],
    [
      "own pace reached: wait for the oldest own slot to leave",
      { mine: 300, bare: true, nextOwnFree: 9_000 },
      ["own pace", 9_000],
    ],
    [
      "Retry-After wins over a Remaining that would allow",
      { pausedUntil: 3_000, heard: heard({ remaining: 200 }) },
      ["retry-after", 3_000],
    ],
    ["alone, Remaining 100, 8 unseen: go", { inFlight: 8, mine: 8, heard: heard({ unseen: 8 }) }, true],
    [
      "alone, every remaining slot taken by our unseen requests: wait for an answer",
      { inFlight: 3, mine: 3, heard: heard({ remaining: 3, unseen: 3 }) },
      ["remaining", 5_000],
    ],
    [
      "Remaining 0, nothing in flight, holding slots: wait for Reset or our next slot, whichever first",
      { mine: 40, nextOwnFree: 7_000, heard: heard({ remaining: 0, resetAt: 4_000 }) },
      ["remaining", 4_000],
    ],
    [
      "after Reset, nothing in flight: one slot has freed",
      { now: 4_000, mine: 40, heard: heard({ remaining: 0, resetAt: 4_000 }) },
      true,
    ],
    [
      "after Reset, but an answer to an ask is on its way: it will tell",
      {
        now: 4_000,
        mine: 40,
        inFlight: 1,
        newestSentAt: 3_900,
        heard: heard({ remaining: 0, resetAt: 4_000, unseen: 1 }),
      },
      ["one at a time on an old standing", 4_500],
    ],
    [
      "Remaining 0, an answer on its way, the standing fresh: wait for Reset (or the answer)",
      { now: 1_500, mine: 40, inFlight: 1, heard: heard({ remaining: 0, resetAt: 4_000, unseen: 1 }) },
      ["remaining", 4_000],
    ],
    [
      "our own slots freed since the answer count as free",
      { mine: 10, heard: heard({ remaining: 0, freed: 2, unseen: 1 }) },
      true,
    ],
    [
      "two processes read the same Remaining: each spends its share (10 left, 4 of ours unseen)",
      { mine: 150, inFlight: 4, heard: heard({ remaining: 10, others: 140, unseen: 4 }) },
      ["remaining", 5_000],
    ],
    [
      "two processes: 2 of ours unseen and as many of the other's, of 10 left less the hold of 3: go",
      { mine: 150, inFlight: 2, heard: heard({ remaining: 10, others: 140, unseen: 2 }) },
      true,
    ],
    [
      "two processes: 3 of ours unseen and as many of the other's would not fit in 10 less the hold of 3",
      { mine: 150, inFlight: 3, heard: heard({ remaining: 10, others: 140, unseen: 3 }) },
      ["remaining", 5_000],
    ],
    [
      "nothing in flight, yet ours unseen (answers overtook each other): one goes to ask",
      { mine: 200, heard: heard({ remaining: 105, others: 31, unseen: 36 }), nextOwnFree: 60_000 },
      true,
    ],
    [
      "nothing in flight, ours unseen, and no room past the hold: no request goes to ask",
      { mine: 200, heard: heard({ remaining: 3, others: 61, unseen: 36 }), nextOwnFree: 60_000 },
      ["remaining", 5_000],
    ],
    [
      "held with nothing of ours in the window: wake when the standing is a window old",
      { now: 6_000, mine: 0, heard: heard({ remaining: 1, others: 299 }) },
      ["remaining", 1_000 + W],
    ],
    [
      "a heavy process keeps the hold free for others (3 of 300)",
      { mine: 150, heard: heard({ remaining: holdFor(300), others: 144 }), nextOwnFree: 8_000 },
      ["remaining", 5_000],
    ],
    [
      "a light process (the watch) may take the hold but one slot",
      { mine: 2, heard: heard({ remaining: holdFor(300), others: 292 }) },
      true,
    ],
    [
      "a light process sends one at a time when others fill the window",
      { mine: 2, inFlight: 1, heard: heard({ remaining: holdFor(300), others: 292, unseen: 1 }) },
      ["remaining", 5_000],
    ],
    [
      "a standing 1 s old (over the 600 ms the hold lasts at 300 a minute), an ask out: wait for its answer, or as long again",
      {
        now: 2_000,
        inFlight: 1,
        newestSentAt: 1_700,
        mine: 20,
        heard: heard({ remaining: 100, others: 100, unseen: 1 }),
      },
      ["one at a time on an old standing", 2_300],
    ],
    [
      "alone on the key when last heard, the same: another process may have started since",
      { now: 2_000, inFlight: 1, newestSentAt: 1_700, mine: 20, heard: heard({ remaining: 100, unseen: 1 }) },
      ["one at a time on an old standing", 2_300],
    ],
    [
      "exactly 600 ms old: old",
      { now: 1_600, inFlight: 1, newestSentAt: 1_600, mine: 20, heard: heard({ remaining: 100, unseen: 1 }) },
      ["one at a time on an old standing", 2_200],
    ],
    [
      "the same, nothing in flight: the request that asks goes",
      { now: 2_000, mine: 20, heard: heard({ remaining: 100, others: 100 }) },
      true,
    ],
    [
      "only a request sent while the standing was fresh is out (a slow listing): it holds nobody, this one asks",
      {
        now: 2_000,
        inFlight: 1,
        newestSentAt: 1_100,
        mine: 20,
        heard: heard({ remaining: 100, others: 100, unseen: 1 }),
      },
      true,
    ],
    [
      "the ask is as old as the standing was (a slow answer): another asks",
      {
        now: 2_300,
        inFlight: 1,
        newestSentAt: 1_700,
        mine: 20,
        heard: heard({ remaining: 100, others: 100, unseen: 1 }),
      },
      true,
    ],
    [
      "the newest answer carried no standing (a 503, a proxy): asking would tell nothing, the rest go",
      {
        now: 2_000,
        inFlight: 1,
        newestSentAt: 1_700,
        lastBare: true,
        mine: 20,
        heard: heard({ remaining: 100, unseen: 1 }),
      },
      true,
    ],
    [
      "the same standing 500 ms old: still fresh, several go",
      {
        now: 1_500,
        inFlight: 1,
        newestSentAt: 1_500,
        mine: 20,
        heard: heard({ remaining: 100, others: 100, unseen: 1 }),
      },
      true,
    ],
    [
      "a limit that keeps no hold (5 a minute): a standing is fresh for one slot's time, 12 s",
      {
        now: 12_000,
        pace: 5,
        inFlight: 1,
        newestSentAt: 11_900,
        mine: 1,
        heard: heard({ limit: 5, remaining: 4, resetAt: 20_000, unseen: 1 }),
      },
      true,
    ],
    [
      "a standing a window old: one request at a time",
      {
        now: 1_000 + W,
        inFlight: 1,
        newestSentAt: 900 + W,
        mine: 1,
        heard: heard({ remaining: 0, unseen: 1 }),
      },
      ["one at a time on an old standing", 1_500 + W],
    ],
    [
      "a standing a window old, nothing in flight: go",
      { now: 1_000 + W, heard: heard({ remaining: 0 }) },
      true,
    ],
  ])("%s", (_name, over, expected) => {
    const d = decidePace(view(over));
    expect(d.go ? true : [d.rule, d.until]).toEqual(expected);
  });

  test("the headers are read as numbers; missing or garbled ones are no standing", () => {
    expect(
      standingOf({ "x-ratelimit-limit": "300", "x-ratelimit-remaining": "12", "x-ratelimit-reset": "7" }),
    ).toEqual({ limit: 300, remaining: 12, resetMs: 7_000 });
    expect(standingOf({ "x-ratelimit-limit": "300", "x-ratelimit-remaining": "12" })).toBeUndefined();
    expect(
      standingOf({ "x-ratelimit-limit": "x", "x-ratelimit-remaining": "12", "x-ratelimit-reset": "7" }),
    ).toBeUndefined();
  });
});

/** One simulated process: `work` requests through its own limiter, `concurrency` at a time. */
interface Proc {
  name: string;
  /** Bursts: `requests` at each instant of `at` (ms from the start). */
  bursts: { at: number; requests: number }[];
  concurrency: number;
  /** Its own pace (`rateLimitPerMinute`); the service's limit when absent. */
  pace?: number;
}

interface Outcome {
  admitted: number;
  refused: number;
  seconds: number;
  /** Per process: when it finished, and the longest any of its bursts took. */
  done: Record<string, { seconds: number; longestBurst: number }>;
}

/** Timing of the simulated network and engine, in ms: fixed, or drawn from a seeded generator. */
interface Timing {
  /** One way, client to server or back. */
  leg: () => number;
  /** The engine's own work between two requests of a worker. */
  gap: () => number;
}
const STEADY: Timing = { leg: () => 5, gap: () => 50 };
/** A loaded machine: a leg of 2 to 80 ms, a gap of 10 to 400 ms. */
const jittery = (seed: number): Timing => {
  const r = mulberry32(seed);
  return { leg: () => 2 + 78 * r(), gap: () => 10 + 390 * r() };
};

/**
 * Runs the processes against the emulator's moving window on vitest's fake clock: each request
 * goes through its process's limiter, reaches the server after one leg, and its answer (with the
 * server's `X-RateLimit-*`) comes a leg later; a 429 pauses its process until `Retry-After`.
 */
async function simulate(procs: Proc[], limit = 300, timing: Timing = STEADY): Promise<Outcome> {
  const server = new RateLimiter(limit, W);
  let admitted = 0;
  let refused = 0;
  const t0 = performance.now();
  const done: Outcome["done"] = {};
  const oneRequest = async (lim: MovingWindowLimiter) => {
    for (let retry = 0; ; retry++) {
      const permit = await lim.acquire(retry > 0);
      await new Promise((r) => setTimeout(r, timing.leg()));
      const d = server.hit("key", Date.now()) ?? { allowed: true, limit, remaining: limit, resetSeconds: 60 };
      await new Promise((r) => setTimeout(r, timing.leg()));
      permit.release({
        standing: { limit: d.limit, remaining: d.remaining, resetMs: d.resetSeconds * 1000 },
        refused: !d.allowed,
      });
      if (d.allowed) {
        admitted++;
        return;
      }
      refused++;
      lim.pauseUntil(performance.now() + d.resetSeconds * 1000);
    }
  };
  const runs = procs.map(async (p) => {
    const lim = new MovingWindowLimiter(p.pace ?? limit, W);
    let longestBurst = 0;
    for (const b of p.bursts) {
      const wait = t0 + b.at - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const started = performance.now();
      let left = b.requests;
      await Promise.all(
        Array.from({ length: p.concurrency }, async () => {
          while (left > 0) {
            left--;
            await oneRequest(lim);
            await new Promise((r) => setTimeout(r, timing.gap()));
          }
        }),
      );
      longestBurst = Math.max(longestBurst, (performance.now() - started) / 1000);
    }
    done[p.name] = { seconds: (performance.now() - t0) / 1000, longestBurst };
  });
  let finished = false;
  void Promise.all(runs).then(() => {
    finished = true;
  });
  while (!finished) await vi.advanceTimersByTimeAsync(50);
  return { admitted, refused, seconds: (performance.now() - t0) / 1000, done };
}

/** With a fresh moving window the first `limit` go at once: the last of n no sooner than this. */
const boundSeconds = (n: number, limit = 300) => Math.floor((n - 1) / limit) * (W / 1000);

describe("several processes on one key (simulated clock, the service's size)", () => {
  beforeEach(() => {
    vi.useFakeTimers({
      toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date", "performance"],
    });
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  const deploy = (name: string, requests: number): Proc => ({
    name,
    bursts: [{ at: 0, requests }],
    concurrency: 8,
  });
  const watch: Proc = {
    name: "watch",
    bursts: Array.from({ length: 30 }, (_, i) => ({ at: i * 10_000, requests: 3 })),
    concurrency: 1,
  };

  test.each<[string, Proc[], number?]>([
    ["one process", [deploy("a", 1000)]],
    ["two processes", [deploy("a", 800), deploy("b", 800)]],
    ["two processes and a watch pass every 10 s", [deploy("a", 800), deploy("b", 800), watch]],
    // As `voice-agent-diff --watch` reads 10 versions' histories: at once, on a standing 10 s old.
    // Without asking first, 9 of them were answered 429 (0.5 %): one asks, the rest follow its answer.
    [
      "two processes and a watch pass of 10 reads at once every 10 s",
      [
        deploy("a", 800),
        deploy("b", 800),
        { ...watch, bursts: watch.bursts.map((b) => ({ ...b, requests: 10 })), concurrency: 10 },
      ],
      1,
    ],
    [
      "a second process starting a window later",
      [deploy("a", 1000), { ...deploy("b", 600), bursts: [{ at: 70_000, requests: 600 }] }],
    ],
  ])(
    "%s: at most 1 %% answered 429, within 1.10 of the bound, nobody starves",
    async (_name, procs, refusals) => {
      const out = await simulate(procs);
      const bound = boundSeconds(out.admitted);
      console.log(
        `${_name}: ${out.admitted} admitted, ${out.refused} refused, ${out.seconds.toFixed(1)} s, bound ${bound} s`,
        out.done,
      );
      expect(out.refused).toBeLessThanOrEqual(refusals ?? 0.01 * (out.admitted + out.refused));
      expect(out.seconds).toBeLessThanOrEqual(1.1 * bound);
      // The watch's passes never wait more than a window.
      if (out.done.watch) expect(out.done.watch.longestBurst).toBeLessThanOrEqual(W / 1000);
    },
  );

  // `pulumi up` of 500 changed agents alone on the key: the preview reads one listing per
  // AgentVersion, then the update patches each agent and publishes and activates its version, one
  // request after the other. Answers overtake each other (5 to 25 ms each way): the answer to a
  // request sent earlier, arriving later, took the later requests (answered already) for unseen and
  // their slots for another process's, and held the lone process a whole window (1.17 of the bound).
  test("one process: a preview's 500 reads, then 500 chains of three writes, answers overtaking each other: within 1.02 of the bound", async () => {
    const server = new RateLimiter(300, W);
    const lim = new MovingWindowLimiter(300, W);
    const r = mulberry32(7);
    const timing = { leg: () => 5 + 20 * r() };
    let admitted = 0;
    const one = async () => {
      const permit = await lim.acquire();
      await new Promise((r) => setTimeout(r, timing.leg()));
      const d = server.hit("key", Date.now()) as NonNullable<ReturnType<RateLimiter["hit"]>>;
      await new Promise((r) => setTimeout(r, timing.leg()));
      permit.release({
        standing: { limit: d.limit, remaining: d.remaining, resetMs: d.resetSeconds * 1000 },
        refused: !d.allowed,
      });
      expect(d.allowed).toBe(true);
      admitted++;
    };
    const t0 = performance.now();
    let finished = false;
    void (async () => {
      await Promise.all(Array.from({ length: 500 }, one));
      await Promise.all(
        Array.from({ length: 500 }, async () => {
          for (let step = 0; step < 3; step++) await one();
        }),
      );
    })().then(() => {
      finished = true;
    });
    while (!finished) await vi.advanceTimersByTimeAsync(50);
    const seconds = (performance.now() - t0) / 1000;
    expect(admitted).toBe(2000);
    console.log(
      `one process, a preview then chains: ${(seconds / boundSeconds(admitted)).toFixed(2)} of the bound`,
    );
    expect(seconds / boundSeconds(admitted)).toBeLessThanOrEqual(1.02);
  });

  // A slow service (answers 0.3 to 1 s each way, the engine 0.7 s between requests, so every
  // standing is older than 600 ms) and one request that hangs 20 s (a big listing): the other
  // worker asks and goes on; it never waits for the slow request's answer.
  test("a slow answer holds nobody: the other worker goes on while one request hangs 20 s", async () => {
    const server = new RateLimiter(300, W);
    const lim = new MovingWindowLimiter(300, W);
    const r = mulberry32(3);
    const leg = () => 300 + 700 * r();
    const one = async (legMs: number) => {
      const permit = await lim.acquire();
      await new Promise((res) => setTimeout(res, legMs));
      const d = server.hit("key", Date.now()) as NonNullable<ReturnType<RateLimiter["hit"]>>;
      await new Promise((res) => setTimeout(res, legMs));
      permit.release({
        standing: { limit: d.limit, remaining: d.remaining, resetMs: d.resetSeconds * 1000 },
        refused: !d.allowed,
      });
    };
    let slowDone = false;
    let during = 0;
    let finished = false;
    void (async () => {
      await one(leg());
      await Promise.all([
        one(10_000).then(() => {
          slowDone = true;
        }),
        (async () => {
          for (let i = 0; i < 30; i++) {
            // The engine's own work between two requests: the standing is 0.7 s old at each.
            await new Promise((res) => setTimeout(res, 700));
            await one(leg());
            if (!slowDone) during++;
          }
        })(),
      ]);
    })().then(() => {
      finished = true;
    });
    while (!finished) await vi.advanceTimersByTimeAsync(50);
    // About 2 s a request: some 10 answered in the 20 s the slow one took, not 0 or 1.
    expect(during).toBeGreaterThanOrEqual(8);
  });

  // The size of test/reliability/two-pipelines (100 a minute, the stacks' pace too) on a loaded
  // machine: answers 2 to 80 ms each way, the engine 10 to 400 ms between requests, so the
  // processes read `Remaining` at scattered instants. Twelve seeded runs each; every one within
  // the bar (the rule before this one let 1.5 % through, and 2 % with a watch).
  const pipeline = (name: string): Proc => ({ ...deploy(name, 230), concurrency: 10, pace: 100 });
  test.each<[string, Proc[]]>([
    ["two pipelines", [pipeline("a"), pipeline("b")]],
    ["two pipelines and a watch pass every 10 s", [pipeline("a"), pipeline("b"), watch]],
  ])(
    "%s at 100 a minute on a loaded machine, 12 seeds: each at most 1 %% answered 429, within 1.10 of the bound",
    async (name, procs) => {
      for (let seed = 1; seed <= 12; seed++) {
        const out = await simulate(procs, 100, jittery(seed));
        const share = out.refused / (out.admitted + out.refused);
        const ratio = out.seconds / boundSeconds(out.admitted, 100);
        console.log(
          `${name}, seed ${seed}: ${out.refused} of ${out.admitted + out.refused} answered 429, ${ratio.toFixed(2)} of the bound`,
        );
        expect(share, `seed ${seed}`).toBeLessThanOrEqual(0.01);
        expect(ratio, `seed ${seed}`).toBeLessThanOrEqual(1.1);
        // A pass waits at most a window, and the answers' jitter.
        if (out.done.watch)
          expect(out.done.watch.longestBurst, `seed ${seed}`).toBeLessThanOrEqual(W / 1000 + 1);
      }
    },
  );
});
