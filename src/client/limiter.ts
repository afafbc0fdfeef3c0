/**
 * Pacing, as one pure decision with a table of rules (the retry policy's shape): given what this
 * process knows of the key right now (its own requests, and what the service's last answer said of
 * the key: `X-RateLimit-Limit`, `-Remaining`, `-Reset`), may a request go, or until when does it
 * wait. {@link MovingWindowLimiter} keeps that knowledge for the process and follows the decision;
 * the table is tested on its own (test/client/limiter.test.ts).
 */
import { createHash } from "node:crypto";

/** What an answer said of the key (`X-RateLimit-*`); `resetMs`: until a slot of its window frees. */
export interface KeyStanding {
  limit: number;
  remaining: number;
  resetMs: number;
}

/** The `X-RateLimit-*` headers of an answer, or undefined when it carries none (or garbled ones). */
export function standingOf(headers: Record<string, string | string[] | undefined>): KeyStanding | undefined {
  const num = (name: string): number | undefined => {
    const raw = headers[name];
    const v = Number(Array.isArray(raw) ? raw[0] : raw);
    return raw === undefined || !Number.isFinite(v) || v < 0 ? undefined : v;
  };
  const limit = num("x-ratelimit-limit");
  const remaining = num("x-ratelimit-remaining");
  const reset = num("x-ratelimit-reset");
  if (limit === undefined || remaining === undefined || reset === undefined || limit < 1) return undefined;
  return { limit, remaining: Math.min(remaining, limit), resetMs: reset * 1000 };
}

/** The service's standing of the key as this process last heard it, with what it implies. */
export interface Heard {
  limit: number;
  remaining: number;
  /** When (this process's clock) the answer came, and when the oldest request of its window leaves. */
  at: number;
  resetAt: number;
  /** Requests of other processes in the service's window then (at most: unsure ones count as theirs). */
  others: number;
  /** This process's requests that the answer counted and that have since left its window. */
  freed: number;
  /** This process's requests the answer may not have counted (in flight, or answered later). */
  unseen: number;
}

/** What one process knows when a request asks to go. Instants are `performance.now()` values. */
export interface PaceView {
  now: number;
  /** The process's own pace: requests per window (`rateLimitPerMinute`). */
  pace: number;
  /** The service's window (a minute). */
  windowMs: number;
  /** This process's requests in its own window: in flight, or answered less than a window ago. */
  mine: number;
  inFlight: number;
  /** When the oldest answered request of `mine` leaves the own window (+Infinity: none). */
  nextOwnFree: number;
  /** `Retry-After` of the last 429: nothing goes before. */
  pausedUntil: number;
  /** The last answer's `X-RateLimit-*`, if any answer carried them. */
  heard: Heard | undefined;
  /** Whether an answer without `X-RateLimit-*` came (the service may send none). */
  bare: boolean;
  /** Whether the newest answer came without `X-RateLimit-*` (asking again would tell nothing). */
  lastBare: boolean;
  /** When the newest of this process's requests in flight was sent (-Infinity: none in flight). */
  newestSentAt: number;
}

/** Go now, or wait until `until` (+Infinity: until an answer or a release says more). */
export type PaceDecision = { go: true } | { go: false; until: number; rule: string; byLimit: boolean };

/**
 * Slots of the service's window a process keeps free while others share the key: room for a process
 * that has little (the watch, a laptop's preview, a pipeline that just started), and the buffer that
 * absorbs several processes taking the same free slot at once. 1 % of the limit, at least two (one
 * slot is no buffer: two processes that answer within milliseconds of each other both take it),
 * and never more than a tenth of it (a limit of a few requests keeps none).
 * A process holding less than a quarter of the window keeps one slot fewer, so that it, and not a
 * heavy one, takes the last slot but one.
 */
export const holdFor = (limit: number): number =>
  Math.min(Math.max(2, Math.ceil(limit / 100)), Math.floor(limit / 10));

/**
 * How old a standing may be before it is asked again: the time the key's own pace (`limit` a
 * window) takes to spend the hold ({@link holdFor}), or one slot where the limit keeps no hold (12 s
 * at 5 a minute). Older, others may have spent more than the hold absorbs.
 */
export const freshForMs = (limit: number, windowMs: number): number =>
  (windowMs * Math.max(1, holdFor(limit))) / limit;

/**
 * How many processes share the key, as seen from this one: itself, and others assumed each as big
 * as itself (so never fewer than there are; a process with nothing in the window counts every
 * other request as a process).
 */
export const sharersFor = (mine: number, others: number): number =>
  others > 0 ? 1 + Math.ceil(others / Math.max(1, mine)) : 1;

/** What the service's standing leaves this process: free slots, its hold and its share of the rest. */
function shareOf(v: PaceView, h: Heard): { free: number; hold: number; sharers: number } {
  // After Reset the oldest request of the service's window has left it: one more slot, which no
  // answer tells of while nothing is in flight (the answer to the request it lets go will).
  const probe = v.now >= h.resetAt && v.inFlight === 0 ? 1 : 0;
  const free = h.remaining + h.freed + probe;
  // Ours in the service's window, as the answer counted them.
  const ours = h.limit - h.remaining - h.others;
  const hold = h.others === 0 ? 0 : Math.max(0, holdFor(h.limit) - (ours >= h.limit / 4 ? 0 : 1));
  return { free, hold, sharers: sharersFor(v.mine, h.others) };
}

/** One rule of the pacing: the instant before which it holds a request, or undefined: it lets go. */
export interface PaceRule {
  name: string;
  /** Whether its hold is the rate limit's doing (false: it waits for the service to answer). */
  byLimit: boolean;
  holds(v: PaceView): number | undefined;
}

/**
 * The rules, in order; a request goes when none holds it.
 * - `retry-after`: after a 429, every request of the key waits out `Retry-After` (it wins);
 * - `first answer first`: until an answer tells whether the service sends `X-RateLimit-*`, one
 *   request at a time (a process starting beside others does not spend the key blind);
 * - `own pace`: at most `pace` of this process's requests in any window (today's count: all there is
 *   when the service sends no `X-RateLimit-*`);
 * - `one at a time on an old standing`: the last standing is older than the key's pace takes to
 *   spend the hold ({@link freshForMs}: 600 ms at 300 a minute): another process (one sharing the
 *   key, or one just started) may have spent what it said was free, so one request asks first (a
 *   watch pass after its pause, a deploy woken after a hold) and the rest wait for its answer, or
 *   for as long again if it is slow (then another asks): a request in flight since before the
 *   standing grew old (a slow listing) holds nobody. Not when the newest answer carried no standing;
 * - `remaining`: never more requests unseen by the service than its `Remaining` (plus our slots freed
 *   since) allows, less the hold, counting as many unseen for every other process sharing the key
 *   and splitting what is left among them, so that several processes reading `Remaining` at
 *   different instants do not all spend it; when there is nothing to spend, wait for our next slot
 *   to free or, holding none, for `Reset`.
 */
export const PACE_RULES: readonly PaceRule[] = [
  { name: "retry-after", byLimit: true, holds: (v) => (v.now < v.pausedUntil ? v.pausedUntil : undefined) },
  {
    name: "first answer first",
    byLimit: false,
    holds: (v) => (!v.heard && !v.bare && v.inFlight > 0 ? Number.POSITIVE_INFINITY : undefined),
  },
  {
    name: "own pace",
    byLimit: true,
    holds: (v) => (v.mine >= v.pace ? v.nextOwnFree : undefined),
  },
  {
    name: "one at a time on an old standing",
    byLimit: false,
    holds: (v) => {
      const h = v.heard;
      if (!h || v.inFlight === 0 || v.lastBare) return undefined;
      const fresh = freshForMs(h.limit, v.windowMs);
      if (v.now < h.at + fresh) return undefined;
      // A request asking is out (sent on the old standing): wait for its answer, or until it is as old.
      const asking = v.newestSentAt >= h.at + fresh;
      return asking && v.now < v.newestSentAt + fresh ? v.newestSentAt + fresh : undefined;
    },
  },
  {
    name: "remaining",
    byLimit: true,
    holds: (v) => {
      const h = v.heard;
      if (!h || v.now >= h.at + v.windowMs) return undefined;
      const { free, hold, sharers } = shareOf(v, h);
      // Ours unseen, and as many of each other process's (their answers are as old as ours): the
      // room left less the hold must cover them all.
      if ((2 * sharers - 1) * h.unseen < free - hold) return undefined;
      // Nothing in flight, and yet ours unseen: answers overtook each other (the last to come was
      // sent before others already answered), and no answer is on its way to tell. One request
      // goes, and its answer tells the standing again (else the process would wait out a window).
      if (v.inFlight === 0 && h.unseen > 0 && free > hold) return undefined;
      // Reset, or our next slot to free, or the standing a window old (it then tells nothing); an
      // answer in flight tells more anyway.
      const stale = h.at + v.windowMs;
      return h.resetAt > v.now ? Math.min(h.resetAt, v.nextOwnFree, stale) : Math.min(v.nextOwnFree, stale);
    },
  },
];

/** The decision: the first rule that holds the request, or go. */
export function decidePace(v: PaceView): PaceDecision {
  for (const rule of PACE_RULES) {
    const until = rule.holds(v);
    if (until !== undefined) return { go: false, until, rule: rule.name, byLimit: rule.byLimit };
  }
  return { go: true };
}

/** A slot taken from a {@link MovingWindowLimiter}; `release` once the attempt is over. */
export interface Permit {
  /**
   * Ends the attempt. `answer`: the service answered (none: no answer came); its `standing`, what
   * it said of the key (none: no `X-RateLimit-*`); `refused`, a 429 (the service did not count it).
   */
  release(answer?: { standing: KeyStanding | undefined; refused: boolean }): void;
}

interface Waiter {
  resolve: (p: Permit) => void;
}

/** One of our requests in the own window: its order, sent, answered, whether the service counted it. */
interface Slot {
  seq: number;
  sentAt: number;
  answeredAt: number;
  counted: boolean;
}

/**
 * The process's pacer of one key: follows {@link decidePace} for every request of the key.
 *
 * A request occupies a slot of the own window from the moment it is sent until `windowMs` after its
 * answer (or its failure) arrived. The server counts a request when it receives it, which lies
 * between those two instants, so no window of the server's can see more than `limit` of our
 * requests, whatever the network delay: the slot frees at least the answer's way back later than
 * the server's window lets the request go. A margin of 50 ms covers the clocks' granularity (the
 * server's milliseconds, a timer's rounding) and their drift over a window (parts per million); a
 * rate-bound deploy waits it out once per window (docs/performance.md). Waiters are served
 * first-come first-served; retries may jump the queue.
 */
export class MovingWindowLimiter {
  /** Requests allowed per window (the own pace). */
  limit: number;
  readonly windowMs: number;
  private readonly serviceWindowMs: number;
  private readonly done: Slot[] = [];
  /** Requests in flight: their order (see {@link Slot}) → when sent. */
  private readonly flying = new Map<number, number>();
  private nextSeq = 0;
  private pausedUntil = Number.NEGATIVE_INFINITY;
  private readonly waiters: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;
  private heard: (Heard & { seq: number }) | undefined;
  private bare = false;
  private lastBare = false;
  /** When the service last answered a request of this key (see {@link noteAnswer}). */
  private lastAnswer = Number.NEGATIVE_INFINITY;
  /** When waiters held by the pacing were last let go (the end of such a hold). */
  private holdEndedAt = Number.NEGATIVE_INFINITY;
  /** Whether waiters are held by the pacing (not merely by slots in flight). */
  private heldByWindow = false;

  constructor(limit: number, windowMs = 60_000, marginMs = 50) {
    this.limit = Math.max(1, Math.floor(limit));
    this.serviceWindowMs = windowMs;
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
    return this.flying.size + this.done.length;
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
   * requests sleep it out, none may be queued here), or waiters the pacing holds by the limit (not
   * those waiting for the service's first answer). Waiting then is the limit's doing, not a service
   * that does not answer.
   */
  get holding(): boolean {
    const now = performance.now();
    if (now < this.pausedUntil) return true;
    if (this.waiters.length === 0) return false;
    const d = decidePace(this.view(now));
    return !d.go && d.byLimit;
  }

  /** Number of callers waiting for a slot. */
  get queued(): number {
    return this.waiters.length;
  }

  /** What the process knows now, for {@link decidePace}. */
  view(now = performance.now()): PaceView {
    this.prune(now);
    const oldest = this.done[0];
    return {
      now,
      pace: this.limit,
      windowMs: this.serviceWindowMs,
      mine: this.flying.size + this.done.length,
      inFlight: this.flying.size,
      nextOwnFree: oldest ? oldest.answeredAt + this.windowMs : Number.POSITIVE_INFINITY,
      pausedUntil: this.pausedUntil,
      heard: this.heard,
      bare: this.bare,
      lastBare: this.lastBare,
      newestSentAt: this.newestSentAt(),
    };
  }

  /** When the newest request in flight was sent (`flying` keeps the order of sending). */
  private newestSentAt(): number {
    let newest = Number.NEGATIVE_INFINITY;
    for (const sentAt of this.flying.values()) newest = sentAt;
    return newest;
  }

  /**
   * Whether the answer `h` counted a request of ours (`seq`, sent at `sentAt`): sent no later than
   * the answered one (so taken to have arrived first), and still in the service's window at its answer.
   */
  private countedBy(seq: number, sentAt: number, h: { seq: number; at: number }): boolean {
    return seq <= h.seq && sentAt + this.serviceWindowMs > h.at;
  }

  private prune(now: number): void {
    while (this.done.length > 0 && (this.done[0] as Slot).answeredAt <= now - this.windowMs) {
      const left = this.done.shift() as Slot;
      if (this.heard && left.counted && this.countedBy(left.seq, left.sentAt, this.heard)) this.heard.freed++;
    }
  }

  private hear(s: KeyStanding, own: Slot): void {
    const h = { seq: own.seq, at: own.answeredAt };
    let mine = 0;
    let unseen = 0;
    for (const [seq, sentAt] of this.flying) {
      if (this.countedBy(seq, sentAt, h)) mine++;
      else unseen++;
    }
    for (const slot of this.done) {
      if (!slot.counted) continue;
      if (this.countedBy(slot.seq, slot.sentAt, h)) mine++;
      else if (slot.seq > h.seq) unseen++;
    }
    this.heard = {
      ...h,
      limit: s.limit,
      remaining: s.remaining,
      resetAt: h.at + s.resetMs,
      others: Math.max(0, s.limit - s.remaining - mine),
      freed: 0,
      unseen,
    };
  }

  private grant(): Permit {
    const sentAt = performance.now();
    const seq = this.nextSeq++;
    this.flying.set(seq, sentAt);
    if (this.heard) this.heard.unseen++;
    let released = false;
    return {
      release: (answer) => {
        if (released) return;
        released = true;
        this.flying.delete(seq);
        const slot = { seq, sentAt, answeredAt: performance.now(), counted: answer?.refused !== true };
        this.done.push(slot);
        // The newest answer tells the standing; an answer without one leaves the request unseen.
        if (answer?.standing) this.hear(answer.standing, slot);
        else if (answer) this.bare = true;
        if (answer) this.lastBare = answer.standing === undefined;
        this.pump();
      },
    };
  }

  private pump(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    let decision: PaceDecision = { go: true };
    while (this.waiters.length > 0) {
      const now = performance.now();
      decision = decidePace(this.view(now));
      if (!decision.go) break;
      if (this.heldByWindow) {
        this.heldByWindow = false;
        this.holdEndedAt = now;
      }
      this.waiters.shift()?.resolve(this.grant());
    }
    if (this.waiters.length === 0 || decision.go) return;
    // Held: wake when the rule that holds lets go (a release or an answer pumps too).
    if (decision.byLimit) this.heldByWindow = true;
    if (decision.until !== Number.POSITIVE_INFINITY) {
      const delay = Math.max(1, Math.ceil(decision.until - performance.now()));
      this.timer = setTimeout(() => this.pump(), delay);
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
