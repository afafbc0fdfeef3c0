/** The request rate limit: a moving window of N requests per 60 s per key (the window is configurable for tests). */

/** The reference's window: 60 seconds. */
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

  constructor(
    public limit: number,
    /** The window's length; the reference's is 60 s, a shorter one lets tests see it pass quickly. */
    readonly windowMs = DEFAULT_RATE_WINDOW_MS,
  ) {}

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
