/**
 * The calls the watch holds from pass to pass (`voice-agent-diff --watch --every`): a pass reads
 * what is new, not every call of every window again.
 *
 * What is held, per watched live version since one deploy-history row (a {@link Track}): the
 * tallies of its settled calls per window (`CallSample`, counts only: no call object is kept), and
 * per agent and version the calls still to settle (running, a conversation awaiting its analysis,
 * a status the reference does not list): their id, when they were placed and their last state.
 * Plus the ids at the top of the last listing (the frontier).
 *
 * A pass ({@link CallMemory.read}) lists the workspace's calls of the watched origins, newest first:
 * - every call above the frontier is new: counted once settled, held as pending otherwise;
 * - below the frontier, calls were seen by an earlier pass: only the pending ones are read (their
 *   state may have moved), and, for a track new this pass (a version that just went live, a new
 *   window stream), its calls back to its window's start (a backfill);
 * - pending calls further down than the listing needs to go are read one by one
 *   (`GET /v1/calls/{id}`) when that costs fewer requests than paging down to them (a call analysed
 *   long after it ended); the choice is re-made after every page.
 * The frontier is by id, not time, and a call met twice in one pass (pages shifting as new calls
 * arrive) counts once. A call is settled (its contribution fixed) when it never connected, reached
 * voicemail, or is a conversation whose analysis is in (`callState`); only then is it tallied.
 * The pass's changes are applied only when every page and read succeeded: a failed pass leaves what
 * is held as it was (the caller reports it incomplete, never a verdict on partial calls).
 *
 * Windows that end are forgotten, with the pending calls no window still wants. Memory is bounded by
 * the watched versions and windows (tallies) and the calls in flight (pending), not by call volume.
 */
import type { CallT, VoiceAgentClient } from "../client";
import {
  addCall,
  type CallFacts,
  type CallSample,
  callState,
  emptySample,
  type Requirement,
} from "../evidence";

/** One window stream the watch judges: a watched live version of one stack since one deploy-history row. */
export interface Track {
  /** Identifies the stream: the same key pass after pass while nothing about it changes. */
  key: string;
  agentId: string;
  version: number;
  /** Go-live (epoch ms): calls before are not its evidence. */
  since: number;
  /** Window length (ms), or undefined for one window from go-live. */
  width: number | undefined;
  origins: readonly string[];
  /** What is tallied (rates and status rates; confidence plays no part in a tally). */
  requirements: readonly Requirement[];
}

/** The window index (1 for the first) a call placed at `at` falls in, or undefined before go-live. */
export function windowIndex(track: Pick<Track, "since" | "width">, at: number): number | undefined {
  if (at < track.since) return undefined;
  return track.width === undefined ? 1 : Math.floor((at - track.since) / track.width) + 1;
}

/** A call still to settle, as last read. */
interface PendingCall {
  at: number;
  origin: string | null;
  facts: CallFacts;
}

interface HeldTrack {
  track: Track;
  /** Settled calls' tallies by window index. */
  samples: Map<number, CallSample>;
  /** Window indexes whose listing was cut short (`maxCalls`): their sample may miss calls. */
  truncated: Set<number>;
}

/** What one pass read, applied only when the whole pass succeeded. */
interface Delta {
  samples: Map<string, Map<number, CallSample>>;
  pending: Map<string, Map<string, PendingCall | null>>;
  truncated: Map<string, number>;
}

const avOf = (agentId: string | null, version: number) => `${agentId ?? ""}/${version}`;
const SETTLED = new Set(["never_connected", "voicemail", "analysed"]);

/** Requests a pass sent for calls, by kind (the bench and the tests read it). */
export interface CallReads {
  pages: number;
  reads: number;
  /** Items of the listing read. */
  items: number;
}

/** How many ids at the top of the last listing mark where it stood. */
const FRONTIER = 10;
/** How many of the last ids read a pass remembers to meet a call twice (ten pages). */
const RECENT = 1000;

/** The calls a watch holds between passes (see the file header). */
export class CallMemory {
  private frontier: Set<string> | undefined;
  private originsKey: string | undefined;
  private readonly tracks = new Map<string, HeldTrack>();
  /** agent/version → call id → the call as last read. */
  private readonly pending = new Map<string, Map<string, PendingCall>>();
  /** What the last pass sent. */
  last: CallReads = { pages: 0, reads: 0, items: 0 };

  /** How much is held: tracks, window samples and pending calls (bounded memory, measured by tests). */
  size(): { tracks: number; samples: number; pending: number } {
    let samples = 0;
    let pending = 0;
    for (const t of this.tracks.values()) samples += t.samples.size;
    for (const p of this.pending.values()) pending += p.size;
    return { tracks: this.tracks.size, samples, pending };
  }

  /**
   * Brings what is held up to date for `tracks` at `now` (see the file header); reads at most `max`
   * items of the listing (beyond, the windows it did not reach are marked cut short). Throws when a
   * page or a call cannot be read; nothing held changes then.
   */
  async read(
    c: Pick<VoiceAgentClient, "calls">,
    tracks: readonly Track[],
    now: number,
    max: number,
  ): Promise<void> {
    this.last = { pages: 0, reads: 0, items: 0 };
    const origins = [...new Set(tracks.flatMap((t) => t.origins))].sort();
    const originsKey = origins.join(",");
    if (originsKey !== this.originsKey) {
      // Calls of an origin not listed before were never seen: start afresh.
      this.frontier = undefined;
      this.tracks.clear();
      this.pending.clear();
    }
    const wanted = new Map(tracks.map((t) => [t.key, t]));
    for (const key of [...this.tracks.keys()]) if (!wanted.has(key)) this.tracks.delete(key);
    const fresh = new Set(tracks.filter((t) => !this.tracks.has(t.key)).map((t) => t.key));
    const byAv = new Map<string, Track[]>();
    for (const t of tracks) {
      const av = avOf(t.agentId, t.version);
      byAv.set(av, [...(byAv.get(av) ?? []), t]);
    }
    this.prune(byAv, now);
    if (tracks.length === 0) {
      this.originsKey = originsKey;
      return;
    }
    const current = new Map(tracks.map((t) => [t.key, windowIndex(t, now) ?? 1]));
    const startOf = (t: Track) =>
      t.since + (t.width === undefined ? 0 : ((current.get(t.key) ?? 1) - 1) * t.width);
    const delta: Delta = { samples: new Map(), pending: new Map(), truncated: new Map() };

    /** Counts `call` for `among` (settled), or holds it as pending when a window of theirs wants it. */
    const take = (
      call: PendingCall & { id: string; agentVersion: string },
      among: readonly Track[],
      wasPending: boolean,
    ) => {
      const state = callState(call.facts);
      let wants = false;
      for (const t of among) {
        const idx = windowIndex(t, call.at);
        if (idx === undefined || idx < (current.get(t.key) ?? 1)) continue;
        if (!t.origins.includes(call.origin ?? "")) continue;
        wants = true;
        if (!SETTLED.has(state)) continue;
        const samples = delta.samples.get(t.key) ?? new Map<number, CallSample>();
        delta.samples.set(t.key, samples);
        let s = samples.get(idx);
        if (!s) {
          s = emptySample(
            { agentId: t.agentId, version: t.version, origins: t.origins, since: null },
            t.requirements,
            "",
          );
          samples.set(idx, s);
        }
        addCall(s, t.requirements, call.facts);
      }
      const changes = delta.pending.get(call.agentVersion) ?? new Map<string, PendingCall | null>();
      delta.pending.set(call.agentVersion, changes);
      if (wants && !SETTLED.has(state))
        changes.set(call.id, { at: call.at, origin: call.origin, facts: call.facts });
      else if (wasPending) changes.set(call.id, null);
    };
    const heldPending = (av: string, id: string) => this.pending.get(av)?.has(id) === true;

    const minStart = Math.min(...tracks.map(startOf));
    const freshStart = Math.min(Infinity, ...tracks.filter((t) => fresh.has(t.key)).map(startOf));
    // The ids of the last pages read: a call met again there (pages shifting as calls arrive
    // while the pass pages) counts once. Bounded, so a first pass over a day of calls stays small.
    const seen = new Set<string>();
    const order: string[] = [];
    const top: string[] = [];
    let reachedOld = false;
    let first: number | undefined;
    let last: number | undefined;
    let cursor: string | undefined;
    for (;;) {
      const page = await c.calls.listPage({ origin: origins, limit: 100, ...(cursor ? { cursor } : {}) });
      this.last.pages++;
      for (const call of page.data) {
        if (top.length < FRONTIER) top.push(call.id);
        if (seen.has(call.id)) continue;
        seen.add(call.id);
        order.push(call.id);
        if (order.length > RECENT) seen.delete(order.shift() as string);
        this.last.items++;
        if (this.frontier?.has(call.id)) reachedOld = true;
        const at = Date.parse(call.created_at);
        first ??= at;
        last = at;
        const av = avOf(call.agent_id, call.agent_version);
        const among = byAv.get(av);
        if (!among) continue;
        const item = { id: call.id, agentVersion: av, at, origin: call.origin, facts: factsOf(call) };
        if (heldPending(av, call.id)) take(item, among, true);
        else if (!reachedOld) take(item, among, false);
        else {
          const backfill = among.filter((t) => fresh.has(t.key));
          if (backfill.length > 0) take(item, backfill, false);
        }
      }
      if (!page.has_more || !page.next_cursor) break;
      cursor = page.next_cursor;
      if (last === undefined) continue;
      // Where the listing stands: what it still must read, and whether paging on beats reading one by one.
      // Without a frontier (the first pass) every call is new, down to the windows' start.
      const newDone = reachedOld || last < minStart;
      const backfillDone = last < freshStart;
      if (this.last.items >= max && !(newDone && backfillDone)) {
        for (const t of tracks)
          if ((!newDone || fresh.has(t.key)) && startOf(t) <= last)
            delta.truncated.set(t.key, current.get(t.key) ?? 1);
        break;
      }
      if (!(newDone && backfillDone)) continue;
      const left = this.unseenPending(delta)
        .filter((p) => p.at <= last!)
        .sort((a, b) => b.at - a.at);
      if (left.length === 0 || !worthPaging(left, first ?? last, last, this.last.items)) break;
    }
    // Pending calls the listing did not reach: one read each.
    const rest = this.unseenPending(delta);
    const read = await inBatches(rest, (p) => c.calls.get(p.id));
    this.last.reads += read.length;
    for (const call of read) {
      const av = avOf(call.agent_id, call.agent_version);
      const among = byAv.get(av) ?? [];
      take(
        {
          id: call.id,
          agentVersion: av,
          at: Date.parse(call.created_at),
          origin: call.origin,
          facts: factsOf(call),
        },
        among,
        true,
      );
    }
    this.commit(tracks, delta, top, originsKey);
  }

  /** Held pending calls not met in this pass's listing (nor settled by it). */
  private unseenPending(delta: Delta): { id: string; at: number }[] {
    const out: { id: string; at: number }[] = [];
    for (const [av, calls] of this.pending)
      for (const [id, p] of calls) if (!delta.pending.get(av)?.has(id)) out.push({ id, at: p.at });
    return out;
  }

  /** Applies a successful pass. */
  private commit(tracks: readonly Track[], delta: Delta, top: string[], originsKey: string): void {
    for (const t of tracks) {
      let held = this.tracks.get(t.key);
      if (!held) {
        held = { track: t, samples: new Map(), truncated: new Set() };
        this.tracks.set(t.key, held);
      }
      for (const [idx, s] of delta.samples.get(t.key) ?? []) {
        const into = held.samples.get(idx);
        if (into) mergeSample(into, s);
        else held.samples.set(idx, s);
      }
      const cut = delta.truncated.get(t.key);
      if (cut !== undefined) held.truncated.add(cut);
    }
    for (const [av, changes] of delta.pending) {
      const calls = this.pending.get(av) ?? new Map<string, PendingCall>();
      for (const [id, p] of changes) {
        if (p) calls.set(id, p);
        else calls.delete(id);
      }
      if (calls.size > 0) this.pending.set(av, calls);
      else this.pending.delete(av);
    }
    this.frontier = new Set(top.length > 0 || this.frontier === undefined ? top : this.frontier);
    this.originsKey = originsKey;
  }

  /** Forgets windows that ended and pending calls no window wants any more. */
  private prune(byAv: ReadonlyMap<string, Track[]>, now: number): void {
    for (const held of this.tracks.values()) {
      const idx = windowIndex(held.track, now) ?? 1;
      for (const k of [...held.samples.keys()]) if (k < idx) held.samples.delete(k);
      for (const k of [...held.truncated]) if (k < idx) held.truncated.delete(k);
    }
    for (const [av, calls] of [...this.pending]) {
      const among = byAv.get(av);
      if (!among) {
        this.pending.delete(av);
        continue;
      }
      for (const [id, p] of [...calls]) {
        const wanted = among.some((t) => {
          const i = windowIndex(t, p.at);
          return i !== undefined && i >= (windowIndex(t, now) ?? 1);
        });
        if (!wanted) calls.delete(id);
      }
      if (calls.size === 0) this.pending.delete(av);
    }
  }

  /**
   * The sample of `track`'s current window at `now`: its settled calls' tallies, the pending calls
   * of the window counted as still running or awaiting analysis, `truncated` when its listing was
   * cut short. A fresh object (the judge may read it freely).
   */
  sampleOf(track: Track, requirements: readonly Requirement[], now: number, takenAt: string): CallSample {
    const idx = windowIndex(track, now) ?? 1;
    const scope = {
      agentId: track.agentId,
      version: track.version,
      origins: track.origins,
      since: new Date(track.since).toISOString(),
      ...(track.width !== undefined ? { lastMinutes: track.width / 60_000 } : {}),
    };
    const out = emptySample(scope, requirements, takenAt);
    const held = this.tracks.get(track.key);
    const settled = held?.samples.get(idx);
    if (settled) mergeSample(out, settled);
    out.truncated = held?.truncated.has(idx) === true;
    for (const p of this.pending.get(avOf(track.agentId, track.version))?.values() ?? [])
      if (windowIndex(track, p.at) === idx && track.origins.includes(p.origin ?? ""))
        addCall(out, requirements, p.facts);
    return out;
  }
}

/** `f` over `items`, at most {@link AT_ONCE} at a time (the client paces them anyway; fewer held at once). */
export async function inBatches<T, R>(items: readonly T[], f: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await f(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(AT_ONCE, items.length) }, worker));
  return out;
}

/** Requests a pass keeps in flight at once (single call reads, deploy-history reads). */
const AT_ONCE = 8;

/** The part of a call the watch keeps (no transcript, no metadata). */
function factsOf(call: CallT): CallFacts {
  return { status: call.status, custom_analysis: call.custom_analysis };
}

/**
 * Whether paging on (from `last`, the listing's position) beats reading the pending calls `left`
 * (newest first, all at or below `last`) one by one: the pages to reach the k newest of them,
 * estimated from the listing's density so far, plus one read for each of the others, against one
 * read each.
 */
function worthPaging(left: readonly { at: number }[], first: number, last: number, items: number): boolean {
  const perMs = items / Math.max(1, first - last);
  let best = Infinity;
  for (let k = 1; k <= left.length; k++) {
    const pages = Math.max(1, Math.ceil(((last - (left[k - 1] as { at: number }).at) * perMs) / 100));
    best = Math.min(best, pages + left.length - k);
  }
  return best < left.length;
}

/** Adds `from`'s counts into `into` (two samples of the same requirements). */
export function mergeSample(into: CallSample, from: CallSample): void {
  into.running += from.running;
  into.neverConnected += from.neverConnected;
  into.voicemail += from.voicemail;
  into.awaitingAnalysis += from.awaitingAnalysis;
  into.analysed += from.analysed;
  into.unknownStatus += from.unknownStatus;
  for (const [k, v] of Object.entries(from.byStatus)) into.byStatus[k] = (into.byStatus[k] ?? 0) + v;
  for (const [k, t] of Object.entries(from.tallies)) {
    const to = into.tallies[k];
    if (!to) continue;
    to.measured += t.measured;
    to.matching += t.matching;
    for (const [why, n] of Object.entries(t.leftOut)) to.leftOut[why] = (to.leftOut[why] ?? 0) + n;
  }
  into.truncated ||= from.truncated;
}
