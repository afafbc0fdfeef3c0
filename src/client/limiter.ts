import { createHash } from "node:crypto";
import { performance } from "node:perf_hooks";

/** A slot taken from a {@link MovingWindowLimiter}; call `release()` once the attempt is over. */
export interface Permit {
  release(): void;
}

interface Waiter {
  resolve: (p: Permit) => void;
}

/**
 * Client-side moving-window pacer: at most `limit` requests in any window of `windowMs`.
 *
 * A request occupies a slot from the moment it is sent until `windowMs` after its answer (or its
 * failure) arrived. The server counts a request when it receives it, which lies between those two
 * instants, so no window of the server's can see more than `limit` of our requests, whatever the
 * network delay. A small margin covers clock granularity. Waiters are served first-come
 * first-served; retries may jump the queue.
 */
export class MovingWindowLimiter {
  /** Requests allowed per window. */
  limit: number;
  readonly windowMs: number;
  private readonly done: number[] = [];
  private inFlight = 0;
  private pausedUntil = Number.NEGATIVE_INFINITY;
  private readonly waiters: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** When the service last answered a request of this key (see {@link noteAnswer}). */
  private lastAnswer = Number.NEGATIVE_INFINITY;
  /** When waiters held by a full window were last let go (the end of such a hold). */
  private holdEndedAt = Number.NEGATIVE_INFINITY;
  /** Whether waiters are held by a full window (not merely by slots in flight). */
  private heldByWindow = false;

  constructor(limit: number, windowMs = 60_000, marginMs = 250) {
    this.limit = Math.max(1, Math.floor(limit));
    this.windowMs = windowMs + marginMs;
  }

  /** Wait for a slot. `priority` puts the caller at the head of the queue (used by retries). */
  acquire(priority = false): Promise<Permit> {
    return new Promise<Permit>((resolve) => {
      if (priority) this.waiters.unshift({ resolve });
      else this.waiters.push({ resolve });
      this.pump();
    });
  }

  /**
   * Hold every waiter until `untilMs` (a `performance.now()` instant), e.g. after a 429, for one
   * window at most: a moving window frees a slot within a window, so a longer `Retry-After` (a
   * misbehaving proxy, an hour) holds the process no longer; the request that was told it fails,
   * saying how long it was asked to wait (`RateLimitError`).
   */
  pauseUntil(untilMs: number): void {
    const capped = Math.min(untilMs, performance.now() + this.windowMs);
    if (capped > this.pausedUntil) this.pausedUntil = capped;
    this.pump();
  }

  /** Number of slots taken right now (in flight plus answered within the window). */
  get used(): number {
    this.prune(performance.now());
    return this.inFlight + this.done.length;
  }

  /**
   * Records that the service answered: a status below 500 other than 429 (a 429 pauses instead, see
   * {@link pauseUntil}; a 5xx is a failed attempt, not a sign the service is there to answer).
   */
  noteAnswer(): void {
    this.lastAnswer = performance.now();
  }

  /**
   * The `performance.now()` instant since which nothing has been heard of the service, or -Infinity:
   * its last answer to this key, or the end of the last hold by the rate limit (a pause after a
   * 429, a full window), whichever is later. A wait the limit imposed is not the service's silence.
   */
  get heardAt(): number {
    const now = performance.now();
    return Math.max(this.lastAnswer, this.holdEndedAt, Math.min(now, this.pausedUntil));
  }

  /**
   * Whether requests are held by the rate limit right now: a pause after a 429 (the refused
   * requests sleep it out, none may be queued here), or waiters in a full window. Waiting then is
   * the limit's doing, not a service that does not answer.
   */
  get holding(): boolean {
    const now = performance.now();
    this.prune(now);
    return (
      now < this.pausedUntil || (this.waiters.length > 0 && this.inFlight + this.done.length >= this.limit)
    );
  }

  /** Number of callers waiting for a slot. */
  get queued(): number {
    return this.waiters.length;
  }

  private prune(now: number): void {
    while (this.done.length > 0 && (this.done[0] as number) <= now - this.windowMs) this.done.shift();
  }

  private grant(): Permit {
    this.inFlight++;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.inFlight--;
        this.done.push(performance.now());
        this.pump();
      },
    };
  }

  private pump(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const now = performance.now();
    this.prune(now);
    while (
      this.waiters.length > 0 &&
      now >= this.pausedUntil &&
      this.inFlight + this.done.length < this.limit
    ) {
      if (this.heldByWindow) {
        this.heldByWindow = false;
        this.holdEndedAt = now;
      }
      this.waiters.shift()?.resolve(this.grant());
    }
    if (this.waiters.length === 0) return;
    // Still blocked: wake up when the pause ends or the oldest answered slot leaves the window.
    // (When every slot is in flight, the next release() pumps.)
    let wakeAt = Number.POSITIVE_INFINITY;
    if (now < this.pausedUntil) wakeAt = this.pausedUntil;
    else if (this.done.length > 0) wakeAt = (this.done[0] as number) + this.windowMs;
    if (wakeAt !== Number.POSITIVE_INFINITY) {
      this.heldByWindow = true;
      this.timer = setTimeout(() => this.pump(), Math.max(1, Math.ceil(wakeAt - now)));
    }
  }
}

const registry = new Map<string, MovingWindowLimiter>();

/** Registry id of a base URL + key: a hash, so the raw key is never a map key. */
export function limiterId(baseUrl: string, apiKey: string): string {
  return createHash("sha256").update(baseUrl).update("\u0000").update(apiKey).digest("hex");
}

/**
 * The process-wide limiter of this base URL + key. Every client of the pair shares it; when they
 * were configured with different paces, the lowest wins.
 */
export function sharedLimiter(baseUrl: string, apiKey: string, limitPerMinute: number): MovingWindowLimiter {
  const id = limiterId(baseUrl, apiKey);
  let limiter = registry.get(id);
  if (!limiter) {
    limiter = new MovingWindowLimiter(limitPerMinute);
    registry.set(id, limiter);
  } else if (limitPerMinute < limiter.limit) {
    limiter.limit = Math.max(1, Math.floor(limitPerMinute));
  }
  return limiter;
}
