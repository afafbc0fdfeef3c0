/** The retry policy as a table: one pure decision per case, no I/O. */
import { describe, expect, test } from "vitest";
import { type AttemptOutcome, decideRetry, type RetryState } from "../../src/client/retryPolicy";

const state = (over: Partial<RetryState> = {}): RetryState => ({
  mode: "idempotent",
  attempt: 0,
  now: 0,
  deadline: 120_000,
  random: () => 0.5,
  ...over,
});
const conn = (retryable: boolean, mayHaveCommitted: boolean): AttemptOutcome => ({
  kind: "connection",
  retryable,
  mayHaveCommitted,
});
const status = (s: number, retryAfterMs?: number): AttemptOutcome => ({
  kind: "status",
  status: s,
  retryAfterMs,
});

describe("decideRetry", () => {
  test.each<[string, AttemptOutcome, Partial<RetryState>, boolean | number]>([
    ["429 waits Retry-After, even for an unsafe request", status(429, 7_000), { mode: "unsafe" }, 7_000],
    ["429 without Retry-After: backoff plus a second", status(429), {}, 1_100],
    ["429 with Retry-After: 0 waits the backoff plus a second, not 0", status(429, 0), {}, 1_100],
    ["429 with a short Retry-After: the longer backoff wins", status(429, 500), { attempt: 2 }, 1_400],
    ["429 with Retry-After: 0, no jitter: still a second", status(429, 0), { random: () => 0 }, 1_000],
    ["503 of an idempotent request: the larger of Retry-After and backoff", status(503, 50), {}, 100],
    ["503 with a long Retry-After", status(503, 3_000), {}, 3_000],
    ["503 of an unsafe request is final: it may have committed", status(503), { mode: "unsafe" }, false],
    ["500 of an idempotent request, third retry: backoff doubles", status(500), { attempt: 3 }, 800],
    ["backoff is capped at 8 s", status(502), { attempt: 10, random: () => 1 }, 8_000],
    ["400 is final", status(400), {}, false],
    ["404 is final", status(404), {}, false],
    ["409 is final", status(409), {}, false],
    ["a reset of an idempotent request", conn(true, true), {}, 100],
    [
      "a reset of an unsafe request is final: it may have committed",
      conn(true, true),
      { mode: "unsafe" },
      false,
    ],
    [
      "a refused connection of an unsafe request: it never reached the server",
      conn(true, false),
      { mode: "unsafe" },
      100,
    ],
    ["a non-transient connection failure is final", conn(false, true), {}, false],
    ["a wait past the budget is final", status(429, 10_000), { now: 115_000 }, false],
    ["a wait that ends exactly at the deadline is allowed", status(429, 5_000), { now: 115_000 }, 5_000],
  ])("%s", (_name, outcome, over, expected) => {
    const decision = decideRetry(outcome, state(over));
    if (expected === false) {
      expect(decision.retry).toBe(false);
      expect(decision.retry === false && decision.reason.length).toBeGreaterThan(0);
    } else {
      expect(decision).toEqual({ retry: true, waitMs: expected });
    }
  });
});
