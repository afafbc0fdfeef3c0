/**
 * What the watch holds between passes (`CallMemory`): after every pass, what it holds for each
 * watched version's current window equals a fresh count of every call of that window (the reading
 * today's full listing gives), while a pass reads only what is new and what is still pending.
 * Against a scripted calls listing: calls that finish and are analysed out of order, a call analysed
 * long after it ended (read on its own, not by paging down to it), new calls arriving while a pass
 * pages (a keyset cursor, and an offset cursor whose pages shift), windows that roll, a page that
 * cannot be read (nothing held changes), and a bounded hold over a long run.
 */
import { describe, expect, test } from "vitest";
import type { CallT, VoiceAgentClient } from "../../src/client";
import { mulberry32 } from "../../src/emulator/faults";
import { addCall, type CallSample, emptySample, type Requirement } from "../../src/evidence";
import { CallMemory, type Track, windowIndex } from "../../src/gitops/watchCalls";

const NEG = { "Default Analysis": { "User Sentiment": "negative" } };
const POS = { "Default Analysis": { "User Sentiment": "positive" } };
const REQS: Requirement[] = [
  { analysis: "Default Analysis/User Sentiment", value: "negative", atMost: 0.2 },
  { status: ["failed", "no_answer"], atMost: 0.05 },
];

/** A scripted call: placed at `at`, ending at `ends` with `status`, analysed at `analysed` (or never). */
interface Scripted {
  id: string;
  agent: string;
  version: number;
  origin: string;
  at: number;
  ends: number;
  status: string;
  analysed: number;
  analysis: typeof NEG;
}

/** The call as the service shows it at `now`. */
function view(c: Scripted, now: number): CallT {
  const ended = now >= c.ends;
  const conversation = ["completed"].includes(c.status);
  return {
    id: c.id,
    agent_id: c.agent,
    agent_version: c.version,
    origin: c.origin,
    direction: "inbound",
    status: ended ? c.status : "in_progress",
    created_at: new Date(c.at).toISOString(),
    custom_analysis: ended && now >= c.analysed && conversation ? c.analysis : null,
  } as unknown as CallT;
}

/** A scripted workspace: the calls listing (newest first, by placing order) and single reads. */
class Service {
  calls: Scripted[] = [];
  now = 0;
  pages = 0;
  reads = 0;
  /** Runs before each page is answered (new calls arriving while a pass pages). */
  beforePage: ((n: number) => void) | undefined;
  /** The page number that fails (a 5xx the client gave up on). */
  failPage: number | undefined;
  offset = false;
  private cache: { key: string; listed: Scripted[] } | undefined;
  client(): Pick<VoiceAgentClient, "calls"> {
    const calls = {
      listPage: async (opts: { origin?: readonly string[]; limit?: number; cursor?: string }) => {
        this.beforePage?.(this.pages);
        this.pages++;
        if (this.failPage !== undefined && this.pages === this.failPage)
          throw new Error("HTTP 503 (gave up)");
        const key = `${this.now} ${this.calls.length} ${opts.origin}`;
        if (this.cache?.key !== key)
          this.cache = {
            key,
            listed: this.calls
              .filter((c) => c.at <= this.now && (opts.origin ?? []).includes(c.origin))
              .reverse(),
          };
        const listed = this.cache.listed;
        const limit = opts.limit ?? 20;
        let start = 0;
        if (opts.cursor !== undefined) {
          const [kind, v] = opts.cursor.split(":");
          start = kind === "o" ? Number(v) : listed.findIndex((c) => c.id === v) + 1;
        }
        const data = listed.slice(start, start + limit);
        const more = start + limit < listed.length;
        const next = this.offset ? `o:${start + limit}` : `k:${data.at(-1)?.id}`;
        return { data: data.map((c) => view(c, this.now)), has_more: more, next_cursor: more ? next : null };
      },
      get: async (id: string) => {
        this.reads++;
        const c = this.calls.find((x) => x.id === id);
        if (!c) throw new Error(`no call ${id}`);
        return view(c, this.now);
      },
    };
    return { calls } as unknown as Pick<VoiceAgentClient, "calls">;
  }
}

/** A fresh count of `track`'s current window at the service's `now`: what a full listing gives. */
function fresh(s: Service, track: Track, at = s.now): CallSample {
  const sample = emptySample(
    { agentId: track.agentId, version: track.version, origins: track.origins, since: null },
    REQS,
    "",
  );
  const idx = windowIndex(track, at) ?? 1;
  for (const c of s.calls)
    if (
      c.at <= at &&
      c.agent === track.agentId &&
      c.version === track.version &&
      track.origins.includes(c.origin) &&
      windowIndex(track, c.at) === idx
    )
      addCall(sample, REQS, view(c, at) as never);
  return sample;
}

const counts = (x: CallSample) => ({
  running: x.running,
  analysed: x.analysed,
  awaitingAnalysis: x.awaitingAnalysis,
  neverConnected: x.neverConnected,
  voicemail: x.voicemail,
  byStatus: x.byStatus,
  tallies: Object.fromEntries(Object.entries(x.tallies).map(([k, t]) => [k, [t.matching, t.measured]])),
  truncated: x.truncated,
});

const track = (agent: string, version: number, since: number, width?: number): Track => ({
  key: `${agent}/${version}@${since}/${width ?? "-"}`,
  agentId: agent,
  version,
  since,
  width,
  origins: ["inbound", "widget"],
  requirements: REQS,
});

/**
 * Calls at `perMinute` over `agents` agents from `from` to `to` (ms), each lasting 0.5-3 minutes and
 * analysed 0-2 minutes after it ends (so they finish and are analysed out of order), some negative,
 * some never connected, some of a test origin.
 */
function placeCalls(s: Service, seed: number, agents: string[], from: number, to: number, perMinute: number) {
  const rnd = mulberry32(seed);
  const step = 60_000 / perMinute;
  for (let at = from; at < to; at += step) {
    const u = rnd();
    const ends = at + 30_000 + rnd() * 150_000;
    s.calls.push({
      id: `c${s.calls.length}`,
      agent: agents[Math.floor(rnd() * agents.length)] as string,
      version: 1,
      origin: u < 0.05 ? "api" : u < 0.5 ? "inbound" : "widget",
      at: Math.round(at),
      ends,
      status: u > 0.93 ? "no_answer" : u > 0.9 ? "voicemail" : "completed",
      analysed: ends + rnd() * 120_000,
      analysis: rnd() < 0.25 ? NEG : POS,
    });
  }
}

describe("the calls a watch holds between passes", () => {
  for (const offset of [false, true])
    test(`after every pass, each window's hold equals a fresh count (${offset ? "offset cursor: pages shift" : "keyset cursor"}; calls arriving while it pages)`, async () => {
      const s = new Service();
      s.offset = offset;
      const agents = ["a", "b", "c"];
      const tracks = [track("a", 1, 0), track("b", 1, 0, 10 * 60_000), track("c", 1, 5 * 60_000)];
      placeCalls(s, 7, agents, 0, 60 * 60_000, 120);
      const memory = new CallMemory();
      const client = s.client();
      // A pass every 4 minutes: several pages of new calls, many settled already.
      for (let minute = 2; minute <= 58; minute += 4) {
        s.now = minute * 60_000;
        // While the pass pages, more calls arrive (placed now, at the top of the listing).
        let added = 0;
        let page = 0;
        const snapshot = new Service();
        snapshot.calls = [...s.calls];
        snapshot.now = s.now;
        s.beforePage = () => {
          if (page++ > 0 && added < 12) {
            const late = {
              ...(s.calls[0] as Scripted),
              id: `late${minute}-${added++}`,
              origin: "inbound",
              at: s.now,
              ends: s.now + 60_000,
            };
            // Placing order: after every call placed so far, before those the script places later.
            const at = s.calls.findIndex((c) => c.at > s.now);
            s.calls.splice(at < 0 ? s.calls.length : at, 0, late);
          }
        };
        await memory.read(client, tracks, s.now, 50_000);
        s.beforePage = undefined;
        // Compare with the workspace as it stood when the pass began (the calls that arrived while
        // it paged are counted from the next pass on).
        for (const t of tracks)
          expect(counts(memory.sampleOf(t, REQS, s.now, "")), `minute ${minute}, ${t.key}`).toEqual(
            counts(fresh(snapshot, t)),
          );
      }
    });

  test("a pass reads what is new: a few pages a minute, not the whole window", async () => {
    const s = new Service();
    placeCalls(s, 3, ["a", "b"], 0, 120 * 60_000, 300);
    const tracks = [track("a", 1, 0), track("b", 1, 0)];
    const memory = new CallMemory();
    const client = s.client();
    s.now = 60 * 60_000;
    await memory.read(client, tracks, s.now, 50_000);
    // The first pass: every call of the hour (about 300 a minute, origins filtered: ~95%).
    expect(memory.last.pages).toBeGreaterThan(160);
    const perPass: number[] = [];
    for (let minute = 61; minute <= 80; minute++) {
      s.now = minute * 60_000;
      await memory.read(client, tracks, s.now, 50_000);
      perPass.push(memory.last.pages + memory.last.reads);
      for (const t of tracks)
        expect(counts(memory.sampleOf(t, REQS, s.now, ""))).toEqual(counts(fresh(s, t)));
    }
    // ~285 new calls a minute (3 pages), plus paging down to the calls still running or awaiting
    // analysis (up to ~5 minutes old: ~15 pages), or reading the oldest few one by one.
    expect(Math.max(...perPass)).toBeLessThanOrEqual(25);
    expect(memory.size().samples).toBe(2);
  });

  test("a call analysed long after it ended is read on its own, not by paging down to it", async () => {
    const s = new Service();
    placeCalls(s, 5, ["a"], 0, 60 * 60_000, 200);
    const slow = s.calls[10] as Scripted; // placed in the first minute
    Object.assign(slow, {
      agent: "a",
      origin: "inbound",
      status: "completed",
      ends: 60_000,
      analysed: 50 * 60_000,
      analysis: NEG,
    });
    const t = track("a", 1, 0);
    const memory = new CallMemory();
    const client = s.client();
    for (let minute = 5; minute <= 55; minute++) {
      s.now = minute * 60_000;
      s.reads = 0;
      const pages = s.pages;
      await memory.read(client, [t], s.now, 50_000);
      expect(counts(memory.sampleOf(t, REQS, s.now, ""))).toEqual(counts(fresh(s, t)));
      if (minute > 10 && minute < 50) {
        expect(s.reads).toBeGreaterThanOrEqual(1); // the slow call, on its own
        expect(s.pages - pages).toBeLessThan(20); // not the ~100-200 pages down to it
      }
    }
    expect(memory.size().pending).toBeLessThan(1000);
  });

  test("a page that cannot be read: the pass throws and nothing held changes; the next pass is whole", async () => {
    const s = new Service();
    placeCalls(s, 9, ["a"], 0, 30 * 60_000, 300);
    const t = track("a", 1, 0);
    const memory = new CallMemory();
    const client = s.client();
    s.now = 10 * 60_000;
    await memory.read(client, [t], s.now, 50_000);
    const held = counts(memory.sampleOf(t, REQS, s.now, ""));
    s.now = 15 * 60_000;
    s.failPage = s.pages + 3;
    await expect(memory.read(client, [t], s.now, 50_000)).rejects.toThrow("HTTP 503");
    expect(counts(memory.sampleOf(t, REQS, 10 * 60_000, ""))).toMatchObject({
      analysed: held.analysed,
      tallies: held.tallies,
    });
    s.failPage = undefined;
    await memory.read(client, [t], s.now, 50_000);
    expect(counts(memory.sampleOf(t, REQS, s.now, ""))).toEqual(counts(fresh(s, t)));
  });

  test("a version that goes live later is backfilled from its go-live; a listing cut short marks its window", async () => {
    const s = new Service();
    placeCalls(s, 11, ["a", "b"], 0, 40 * 60_000, 300);
    const a = track("a", 1, 0);
    const memory = new CallMemory();
    const client = s.client();
    s.now = 20 * 60_000;
    await memory.read(client, [a], s.now, 50_000);
    // b's version went live at minute 12: its calls since are below the frontier already.
    const b = track("b", 1, 12 * 60_000);
    s.now = 21 * 60_000;
    await memory.read(client, [a, b], s.now, 50_000);
    for (const t of [a, b]) expect(counts(memory.sampleOf(t, REQS, s.now, ""))).toEqual(counts(fresh(s, t)));
    // A new stream whose backfill is cut at 500 items: inconclusive material (truncated), never whole.
    const c = track("a", 1, 60_000, 60 * 60_000);
    s.now = 22 * 60_000;
    await memory.read(client, [a, b, c], s.now, 500);
    expect(memory.sampleOf(c, REQS, s.now, "").truncated).toBe(true);
    expect(memory.sampleOf(a, REQS, s.now, "").truncated).toBe(false);
  });

  test("a day of passes a minute holds a bounded set: the current windows' tallies and the calls in flight", async () => {
    const s = new Service();
    const agents = Array.from({ length: 20 }, (_, i) => `g${i}`);
    const tracks = agents.map((g, i) => track(g, 1, 0, i % 2 === 0 ? 60 * 60_000 : undefined));
    const memory = new CallMemory();
    const client = s.client();
    const sizes: number[] = [];
    for (let hour = 0; hour < 24; hour++) {
      placeCalls(s, 100 + hour, agents, hour * 3_600_000, (hour + 1) * 3_600_000, 20);
      for (let minute = 1; minute <= 60; minute += 10) {
        s.now = hour * 3_600_000 + minute * 60_000;
        await memory.read(client, tracks, s.now, 50_000);
        const size = memory.size();
        sizes.push(size.pending);
        expect(size.samples).toBeLessThanOrEqual(tracks.length * 2);
      }
    }
    // In flight at 20 calls a minute, each up to ~5 minutes from placing to analysis: about 100.
    expect(Math.max(...sizes)).toBeLessThan(150);
    for (const t of tracks) expect(counts(memory.sampleOf(t, REQS, s.now, ""))).toEqual(counts(fresh(s, t)));
  });
});
