/**
 * The retry policy, as one pure decision (stripe-node's shape): given what an attempt ended with
 * and where the operation stands, retry after how long, or stop. `transport.ts` performs attempts
 * and follows the decision; the table of cases is tested on its own (test/client/retryPolicy.test.ts).
 */

/** What one attempt ended with. */
export type AttemptOutcome =
  | {
      kind: "connection";
      /** The failure is worth another attempt (a reset, a refused connection, a timeout). */
      retryable: boolean;
      /** The request may have reached the server (false only when it certainly did not). */
      mayHaveCommitted: boolean;
    }
  | { kind: "status"; status: number; retryAfterMs?: number | undefined };

/** Where the operation stands. */
export interface RetryState {
  /** `idempotent`: the request may be repeated even after it may have committed. */
  mode: "idempotent" | "unsafe";
  /** Retries of this request so far. */
  attempt: number;
  /** Now, and the instant after which no retry may start (the operation's retry budget). */
  now: number;
  deadline: number;
  /** The jitter source (tests pass a constant). */
  random?: () => number;
}

/** Retry after `waitMs`, or stop (with why). */
export type RetryDecision = { retry: true; waitMs: number } | { retry: false; reason: string };

const BACKOFF_BASE_MS = 200;
const BACKOFF_CAP_MS = 8_000;

/** Full-jitter exponential backoff: uniform in [0, min(cap, base * 2^retry)]. */
export function backoffMs(retry: number, random: () => number = Math.random): number {
  return random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** retry);
}

/**
 * How long a 429 holds: the larger of `Retry-After` and a backoff plus a second. A `Retry-After` of
 * 0 (or a date already past, which `parseRetryAfter` reads as no hint) never makes the wait shorter
 * than the backoff: a server answering 429 at once would otherwise be asked again at once, and one
 * read would spend the key's whole window for every process on it.
 */
export function rateLimitWaitMs(retryAfterMs: number | undefined, backoff: number): number {
  return Math.max(retryAfterMs ?? 0, backoff + 1000);
}

/**
 * The decision:
 * - a 429 was refused before processing: always safe to repeat, after the larger of `Retry-After`
 *   and a backoff plus a second (`rateLimitWaitMs`);
 * - a 5xx may have committed: repeated only when the request is idempotent, after the larger of
 *   `Retry-After` and a backoff;
 * - a connection failure is repeated when it is retryable and either the request is idempotent
 *   or it certainly never reached the server;
 * - any other status is final, and so is anything whose wait would end past the budget.
 */
export function decideRetry(outcome: AttemptOutcome, state: RetryState): RetryDecision {
  const backoff = backoffMs(state.attempt, state.random);
  let waitMs: number;
  if (outcome.kind === "connection") {
    if (!outcome.retryable) return { retry: false, reason: "not a transient failure" };
    if (outcome.mayHaveCommitted && state.mode !== "idempotent") {
      return { retry: false, reason: "may have committed, and the request is not idempotent" };
    }
    waitMs = backoff;
  } else if (outcome.status === 429) {
    waitMs = rateLimitWaitMs(outcome.retryAfterMs, backoff);
  } else if (outcome.status >= 500) {
    if (state.mode !== "idempotent")
      return { retry: false, reason: "may have committed, and the request is not idempotent" };
    waitMs = Math.max(outcome.retryAfterMs ?? 0, backoff);
  } else {
    return { retry: false, reason: `status ${outcome.status} is final` };
  }
  if (state.now + waitMs > state.deadline) return { retry: false, reason: "the retry budget is spent" };
  return { retry: true, waitMs };
}
