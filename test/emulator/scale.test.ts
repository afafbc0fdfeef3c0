/**
 * The emulator at the watch's scale (issue 51): agents and traffic at volume through the control
 * API, listings that cost a page (not the list) however deep the cursor, cursors that stay right
 * while calls arrive between pages, and fills that repeat exactly for a seed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator } from "../../src/emulator";
import { mulberry32 } from "../../src/emulator/faults";
import { decodeCursor, encodeCursor, pageNewestFirst, pageOf } from "../../src/emulator/http";
import { type Api, bind, reason, start } from "./helpers";

const WALK_KEY = "va_test_walk";

interface CallRow {
  id: string;
  agent_id: string;
  status: string;
  created_at: string;
  ended_at: string | null;
  custom_analysis: unknown;
  duration_seconds: number | null;
}

/** Every page of a listing, following the cursor; `between` runs after each page. */
async function walk(api: Api, path: string, between?: (page: number) => Promise<void>): Promise<CallRow[]> {
  const out: CallRow[] = [];
  let cursor: string | null = null;
  let page = 0;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const r = await api.get(`${path}${cursor ? `${sep}cursor=${cursor}` : ""}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    out.push(...(r.body.data as CallRow[]));
    cursor = r.body.next_cursor;
    page++;
    if (cursor && between) await between(page);
  } while (cursor);
  return out;
}

describe("pageNewestFirst", () => {
  it("gives exactly the page pageOf gives for the reversed, filtered list, at any cursor", () => {
    const random = mulberry32(51);
    for (let trial = 0; trial < 200; trial++) {
      // Ascending seqs with gaps (other lists take numbers from the same counter).
      const list: { seq: number; kind: number }[] = [];
      let seq = 0;
      for (let i = Math.floor(random() * 60); i > 0; i--) {
        seq += 1 + Math.floor(random() * 3);
        list.push({ seq, kind: Math.floor(random() * 3) });
      }
      const kind = Math.floor(random() * 4); // 3: no filter
      const match = kind === 3 ? undefined : (t: { kind: number }) => t.kind === kind;
      const limit = 1 + Math.floor(random() * 10);
      const at = Math.floor(random() * (seq + 3));
      const cursor = random() < 0.3 ? undefined : encodeCursor("calls", at);
      const row = (t: { seq: number }) => t.seq;
      const want = pageOf(
        [...list].reverse().filter((t) => !match || match(t)),
        (t) => t.seq,
        row,
        { list: "calls", cursor, limit, desc: true },
      );
      expect(pageNewestFirst(list, (t) => t.seq, match, row, { list: "calls", cursor, limit })).toEqual(want);
    }
  });
});

describe("at volume", () => {
  let api: Api;
  let walkApi: Api;
  let agentIds: string[];

  beforeAll(async () => {
    api = await start({
      workspaces: [
        { name: "default", key: "va_test_local" },
        { name: "walk", key: WALK_KEY },
      ],
    });
    walkApi = bind(api.emu, WALK_KEY);
    const made = await api.emu.control.createAgents("default", {
      count: 500,
      versions: 2,
      live_version: 1,
      since_seconds: 86_400,
    });
    agentIds = made.agents.map((a) => a.id);
    // 200,000 calls over the last day (two requests, the older half first), lengths 30 s to 10 min.
    for (const part of [0, 1])
      await api.emu.control.traffic({
        workspace: "default",
        count: 100_000,
        seed: part + 1,
        spread_seconds: 43_200,
        until_seconds_ago: 43_200 * (1 - part),
        call_seconds: { min: 30, max: 600 },
        list_calls: false,
      });
  }, 120_000);

  afterAll(() => api.emu.close());

  it("makes agents with published versions and a deploy history, listed newest first", async () => {
    const page = await api.get("/v1/agents?limit=100");
    expect(page.body.data).toHaveLength(100);
    expect(page.body.data[0]).toMatchObject({ id: agentIds.at(-1), live_version: 1, latest_version: 1 });
    const history = await api.get(`/v1/agents/${agentIds[0]}/activations`);
    expect(history.body.data).toMatchObject([
      { action: "activate", version: 1, previous_version: 0 },
      { action: "activate", version: 0, previous_version: null },
    ]);
    expect(Date.parse(history.body.data[0].at)).toBeLessThan(Date.now() - 86_000_000);
    const versions = await api.get(`/v1/agents/${agentIds[0]}/versions`);
    expect(versions.body.data.map((v: { is_published: boolean }) => v.is_published)).toEqual([true, true]);
  });

  it("answers a page deep in 200,000 calls in well under 200 ms", async () => {
    const first = await api.get("/v1/calls?limit=100");
    expect(first.body.data).toHaveLength(100);
    const top = decodeCursor(first.body.next_cursor, "calls");
    // A cursor 150,000 calls down (the seqs of one traffic request are consecutive).
    const deep = encodeCursor("calls", top - 150_000);
    const times: number[] = [];
    let page: { data: CallRow[]; has_more: boolean } = { data: [], has_more: false };
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      const r = await api.get(`/v1/calls?limit=100&cursor=${deep}`);
      times.push(performance.now() - t0);
      page = r.body;
    }
    expect(page.data).toHaveLength(100);
    expect(page.has_more).toBe(true);
    // Older than the first page, newest first.
    expect(Date.parse(page.data[0]?.created_at ?? "")).toBeLessThanOrEqual(
      Date.parse(first.body.data[99].created_at),
    );
    times.sort((a, b) => a - b);
    expect(times[2], `page times ${times.map((t) => t.toFixed(1)).join(", ")} ms`).toBeLessThan(200);
    const t0 = performance.now();
    expect((await api.get("/v1/agents?limit=100")).status).toBe(200);
    expect(performance.now() - t0).toBeLessThan(200);
  });

  it("refuses a backdated spread that would begin before the workspace's newest call", async () => {
    const r = await api.control("POST", "/_emulator/traffic", {
      workspace: "default",
      count: 10,
      spread_seconds: 3600,
    });
    expect(r.status).toBe(400);
    expect(r.body.detail.param).toBe("spread_seconds");
  });

  it("pages every call exactly once, newest first, while calls arrive between pages", async () => {
    const agents = await api.emu.control.createAgents("walk", { count: 50 });
    await api.emu.control.traffic({
      workspace: "walk",
      count: 5_000,
      seed: 3,
      spread_seconds: 3600,
      call_seconds: { min: 1, max: 900 },
      analysis_delay_seconds: { min: 0, max: 3600 },
      list_calls: false,
    });
    const before = new Set((await walk(walkApi, "/v1/calls?limit=100")).map((c) => c.id));
    expect(before.size).toBe(5_000);
    const added: string[] = [];
    const seen = await walk(walkApi, "/v1/calls?limit=100", async (page) => {
      if (page % 5 === 0) {
        const r = await api.emu.control.traffic({
          agent_ids: [agents.agents[page % 50]?.id ?? ""],
          count: 30,
        });
        added.push(...r.calls.map((c) => c.id));
      }
    });
    expect(added.length).toBeGreaterThan(0);
    expect(seen.map((c) => c.id).filter((id) => !before.has(id))).toEqual([]);
    expect(new Set(seen.map((c) => c.id)).size).toBe(seen.length);
    expect(seen.length).toBe(5_000);
    for (let i = 1; i < seen.length; i++)
      expect(Date.parse(seen[i]?.created_at ?? "")).toBeLessThanOrEqual(
        Date.parse(seen[i - 1]?.created_at ?? ""),
      );
    // A fresh listing starts with the calls that arrived, newest first.
    const fresh = await walkApi.get("/v1/calls?limit=100");
    expect(fresh.body.data.slice(0, 30).map((c: CallRow) => c.id)).toEqual(added.slice(-30).reverse());
    // Filtered by a direction every call has and one none has.
    expect((await walkApi.get("/v1/calls?limit=100&direction=inbound")).body.data).toHaveLength(100);
    expect((await walkApi.get("/v1/calls?limit=100&direction=web")).body).toEqual({
      data: [],
      has_more: false,
      next_cursor: null,
    });
  }, 120_000);
});

describe("traffic fills by seed", () => {
  let api: Api;
  beforeAll(async () => {
    api = await start({ callSeconds: 0.1 });
  });
  afterAll(() => api.emu.close());

  /** A fill of 1,000 calls over two hours that ended an hour ago, read back whole. */
  async function fill(seed: number): Promise<CallRow[]> {
    await api.emu.control.reset();
    await api.emu.control.createAgents("default", { count: 20, versions: 2, since_seconds: 86_400 });
    await api.emu.control.traffic({
      workspace: "default",
      count: 1_000,
      seed,
      spread_seconds: 7200,
      until_seconds_ago: 3600,
      call_seconds: { min: 10, max: 1200 },
      analysis_delay_seconds: { min: 0, max: 600 },
      mix: [
        { share: 0.2, analysis: { "Default Analysis": { "User Sentiment": "negative" } } },
        { share: 0.1, status: "no_answer" },
      ],
      list_calls: false,
    });
    return walk(api, "/v1/calls?limit=100");
  }

  /** What a fill decides, independent of when it ran: times relative to the newest call. */
  const shape = (calls: CallRow[]) => {
    const t0 = Date.parse(calls[0]?.created_at ?? "");
    return calls.map((c) => ({
      id: c.id,
      agent_id: c.agent_id,
      status: c.status,
      duration: c.duration_seconds,
      analysis: c.custom_analysis,
      created: Date.parse(c.created_at) - t0,
      length: c.ended_at === null ? null : Date.parse(c.ended_at) - Date.parse(c.created_at),
    }));
  };

  it("gives the same calls for the same seed, and others for another", async () => {
    const a = shape(await fill(7));
    const b = shape(await fill(7));
    const c = shape(await fill(8));
    expect(a).toHaveLength(1_000);
    expect(b).toEqual(a);
    expect(c.map((x) => x.id)).not.toEqual(a.map((x) => x.id));
    expect(c.map((x) => x.created)).not.toEqual(a.map((x) => x.created));
    // Spread over the agents, the mix drawn, lengths drawn in the range.
    expect(new Set(a.map((x) => x.agent_id)).size).toBe(20);
    const negative = a.filter(
      (x) =>
        (x.analysis as Record<string, Record<string, unknown>>)["Default Analysis"]?.["User Sentiment"] ===
        "negative",
    ).length;
    expect(negative).toBeGreaterThan(150);
    expect(negative).toBeLessThan(250);
    expect(a.filter((x) => x.status === "no_answer").length).toBeGreaterThan(60);
    for (const x of a) if (x.length !== null) expect(x.length).toBeLessThanOrEqual(0.6 * 1_200_000 + 1);
    expect(Math.min(...a.map((x) => x.created))).toBeGreaterThan(-7_200_000);
  });

  it("analyses a call after it ended, late and out of order", async () => {
    await api.emu.control.reset();
    await api.emu.control.createAgents("default", { count: 1 });
    await api.emu.control.traffic({
      workspace: "default",
      count: 20,
      seed: 1,
      spread_seconds: 2,
      until_seconds_ago: 1,
      call_seconds: { min: 0.1, max: 0.1 },
      analysis_delay_seconds: { min: 3600, max: 3600 },
      list_calls: false,
    });
    const calls = await walk(api, "/v1/calls?limit=100");
    expect(calls).toHaveLength(20);
    for (const c of calls) {
      expect(c.status).toBe("completed");
      expect(c.ended_at).not.toBeNull();
      expect(c.custom_analysis).toBeNull();
    }
  });

  it("refuses bodies that name no target or two, and an unknown workspace", async () => {
    const post = (body: unknown) => api.control("POST", "/_emulator/traffic", body);
    expect((await post({ count: 1 })).status).toBe(422);
    expect((await post({ count: 1, workspace: "default", agent_ids: [] })).status).toBe(422);
    expect((await post({ count: 1, workspace: "default", version: 0 })).status).toBe(422);
    expect((await post({ count: 1, workspace: "default", until_seconds_ago: 5 })).status).toBe(422);
    const nowhere = await post({ count: 1, workspace: "nowhere" });
    expect([nowhere.status, reason(nowhere)]).toEqual([404, "workspace_not_found"]);
    const bulk = await api.control("POST", "/_emulator/workspaces/default/agents", {
      count: 2,
      versions: 2,
      live_version: 2,
    });
    expect(bulk.status).toBe(422);
  });
});

describe("at volume with a database", () => {
  it("keeps bulk agents and backdated, late-analysed calls across a restart, in listing order", async () => {
    const dir = mkdtempSync(join(tmpdir(), "va-scale-"));
    const db = join(dir, "state.db");
    try {
      const emu1 = await startEmulator({ db, rateLimitPerMinute: 0 });
      await emu1.control.createAgents("default", { count: 30, versions: 2, since_seconds: 7200 });
      // An older half analysed at once, then a newer half whose analysis comes a day late.
      for (const [until, delay] of [
        [1860, 0],
        [60, 86_400],
      ] as const)
        await emu1.control.traffic({
          workspace: "default",
          count: 300,
          seed: 5,
          spread_seconds: 1800,
          until_seconds_ago: until,
          call_seconds: { min: 1, max: 10 },
          analysis_delay_seconds: { min: delay, max: delay },
          list_calls: false,
        });
      const api1 = bind(emu1);
      const calls1 = await walk(api1, "/v1/calls?limit=100");
      const agents1 = (await api1.get("/v1/agents?limit=100")).body.data;
      await emu1.close();
      const emu2 = await startEmulator({ db, rateLimitPerMinute: 0 });
      try {
        const api2 = bind(emu2);
        const calls2 = await walk(api2, "/v1/calls?limit=100");
        expect(calls2.map((c) => c.id)).toEqual(calls1.map((c) => c.id));
        // The late half still waits for its analysis (the delays were kept), the older half does not.
        const waiting = (cs: CallRow[]) => cs.filter((c) => c.custom_analysis === null).map((c) => c.id);
        expect(waiting(calls1)).toEqual(calls1.slice(0, 300).map((c) => c.id));
        expect(waiting(calls2)).toEqual(waiting(calls1));
        expect(calls2.every((c) => c.ended_at !== null)).toBe(true);
        expect((await api2.get("/v1/agents?limit=100")).body.data).toEqual(agents1);
      } finally {
        await emu2.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
