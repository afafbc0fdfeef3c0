/** The request rate limit: a moving window of N requests per key (60 s, as the service's). */

/** The service's window: a minute. */
export const DEFAULT_RATE_WINDOW_MS = 60_000;

/** Outcome of counting one request. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the oldest request in the window leaves it (a slot frees). */
  resetSeconds: number;
}

interface Window {
  stamps: number[];
  head: number;
}

/** Moving-window counter per key; `limit` 0 disables it. */
export class RateLimiter {
  private readonly windows = new Map<string, Window>();

  /**
   * @param limit requests per key within any `windowMs` (0: no limit)
   * @param windowMs length of the moving window (default a minute; tests shorten it)
   */
  constructor(
    public limit: number,
    public readonly windowMs: number = DEFAULT_RATE_WINDOW_MS,
  ) {
    if (!(windowMs > 0))
      throw new Error(`the rate-limit window must be a positive number of ms, got ${windowMs}`);
  }

  clear(): void {
    this.windows.clear();
  }

  /** Counts a request of `key` at `now` (refused requests are not counted). */
  hit(key: string, now = Date.now()): RateDecision | null {
    if (this.limit <= 0) return null;
    let w = this.windows.get(key);
    if (!w) {
      w = { stamps: [], head: 0 };
      this.windows.set(key, w);
    }
    while (w.head < w.stamps.length && (w.stamps[w.head] as number) <= now - this.windowMs) w.head++;
    if (w.head > 1024 && w.head * 2 > w.stamps.length) {
      w.stamps = w.stamps.slice(w.head);
      w.head = 0;
    }
    const count = w.stamps.length - w.head;
    const oldest = w.stamps[w.head];
    const resetFor = (t: number) => Math.max(1, Math.ceil((t + this.windowMs - now) / 1000));
    if (count >= this.limit) {
      return { allowed: false, limit: this.limit, remaining: 0, resetSeconds: resetFor(oldest ?? now) };
    }
    w.stamps.push(now);
    return {
      allowed: true,
      limit: this.limit,
      remaining: this.limit - count - 1,
      resetSeconds: resetFor(oldest ?? now),
    };
  }
}
