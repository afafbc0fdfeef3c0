/**
 * Calls in the emulator, to the letter of the spec (Place a call, Call object, Events, Errors), and
 * the control routes that script them: call outcomes, an agent's webhook, real traffic.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startEmulator } from "../../src/emulator";
import {
  API_VERSION,
  CallEvent,
  CallList,
  CallObject,
  isUuid,
  PlaceCallBody,
  parseWith,
  placeCallIssues,
} from "../../src/spec";
import { setAgentWebhook, setCallOutcomes, trafficCall } from "../support/control";
import { type Answer, type Api, bind, reason, request, sleep, start } from "./helpers";

const CALL_SECONDS = 0.2;
const TO = "+918065550199";

let api: Api;
let other: Api;
beforeAll(async () => {
  api = await start({
    callSeconds: CALL_SECONDS,
    workspaces: [
      { name: "default", key: "va_test_local" },
      { name: "other", key: "va_other" },
    ],
  });
  other = api.withKey("va_other");
});
afterAll(async () => {
  await api.emu.close();
});
beforeEach(async () => {
  expect((await api.control("POST", "/_emulator/reset")).status).toBe(200);
});

let keyCounter = 0;
const freshKey = () => `key-${process.pid}-${++keyCounter}`;

/** Places a call through the API with a fresh Idempotency-Key. */
function place(body: Record<string, unknown>, a: Api = api, key = freshKey()): Promise<Answer> {
  return a.post("/v1/calls", body, { "Idempotency-Key": key });
}

/** An agent with version 0 published and live. */
async function liveAgent(body: Record<string, unknown> = {}, a: Api = api): Promise<any> {
  const agent = await a.createAgent(body);
  expect((await a.post(`/v1/agents/${agent.id}/versions/0/publish`)).status).toBe(200);
  expect((await a.post(`/v1/agents/${agent.id}/activations`, { version: 0 })).status).toBe(201);
  return agent;
}

/** Patches the agent (opening a draft) and publishes it; returns the new version number. */
async function publishChange(agentId: string, patch: Record<string, unknown>): Promise<number> {
  const d = await api.patch(`/v1/agents/${agentId}`, patch);
  expect(d.status, JSON.stringify(d.body)).toBe(200);
  expect((await api.post(`/v1/agents/${agentId}/versions/${d.body.version}/publish`)).status).toBe(200);
  return d.body.version;
}

/** Reads the call until `done` holds (default: analysed), within 3 s. */
async function waitCall(
  id: string,
  done: (c: any) => boolean = (c) => c.custom_analysis !== null,
  a: Api = api,
): Promise<any> {
  const until = Date.now() + 3_000;
  for (;;) {
    const r = await a.get(`/v1/calls/${id}`);
    expect(r.status).toBe(200);
    if (done(r.body)) return r.body;
    if (Date.now() > until) throw new Error(`call ${id} never got there: ${JSON.stringify(r.body)}`);
    await sleep(15);
  }
}

/** A webhook receiver on 127.0.0.1 that fails its first `failFirst` deliveries with a 500. */
interface Receiver {
  url: string;
  /** Events answered 2xx, in arrival order. */
  events: CallEvent[];
  /** Every delivery attempt's body, failed ones included. */
  attempts: { event_id: string; event_type: string; status: number }[];
  /** Resolves once an event of `type` about `callId` arrived. */
  waitFor(callId: string, type?: string): Promise<CallEvent[]>;
  close(): Promise<void>;
}

const receivers: Receiver[] = [];
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
});

async function receiver(failFirst = 0): Promise<Receiver> {
  const events: CallEvent[] = [];
  const attempts: Receiver["attempts"] = [];
  let seen = 0;
  const readBody = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const c of req as AsyncIterable<Buffer>) chunks.push(c);
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  };
  const server: Server = createServer((req, res) => {
    void readBody(req).then((body) => {
      expect(req.method).toBe("POST");
      expect(req.headers["content-type"]).toBe("application/json");
      seen += 1;
      const status = seen <= failFirst ? 500 : 204;
      attempts.push({ event_id: body.event_id, event_type: body.event_type, status });
      if (status === 204) events.push(CallEvent.parse(body));
      res.writeHead(status);
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  const r: Receiver = {
    url,
    events,
    attempts,
    async waitFor(callId, type = "call.processing.completed") {
      const until = Date.now() + 5_000;
      for (;;) {
        const mine = events.filter((e) => e.data.call.id === callId);
        if (mine.some((e) => e.event_type === type)) return mine;
        if (Date.now() > until) throw new Error(`no ${type} for ${callId}: ${JSON.stringify(attempts)}`);
        await sleep(15);
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  receivers.push(r);
  return r;
}

/** The fields of the spec's "Call object" table. */
const CALL_FIELDS = [
  "id",
  "agent_id",
  "agent_version",
  "status",
  "direction",
  "origin",
  "from_number",
  "to_number",
  "duration_seconds",
  "created_at",
  "connected_at",
  "ended_at",
  "metadata",
  "variables",
  "cost",
  "custom_analysis",
  "transcript",
  "transfer",
  "recording_url",
  "dashboard_url",
].sort();

describe("the place-a-call body (src/spec/calls.ts)", () => {
  it("is strict, takes E.164 numbers only and names each field", () => {
    const r = parseWith(PlaceCallBody, {
      agent_id: "abc",
      to_number: "+91 80 6555 0199",
      version: -1,
      callback: "x",
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => `${i.field}:${i.code}`)).toEqual([
      "agent_id:uuid_parsing",
      "to_number:value_error",
      "version:greater_than_equal",
      "callback:extra_forbidden",
    ]);
    expect(r.issues[1]?.message).toMatch(/write it as '\+918065550199'/);
    const both = parseWith(PlaceCallBody, {
      agent_id: "00000000-0000-4000-8000-000000000000",
      to_number: TO,
      version: 1,
      agent_version_id: "00000000-0000-4000-8000-000000000001",
    });
    expect(both.ok && placeCallIssues(both.data).map((i) => i.code)).toEqual(["invalid_request"]);
  });
});

describe("POST /v1/calls", () => {
  it("places a call to the live version: 202 {id, status}, origin api, direction outbound", async () => {
    const agent = await liveAgent();
    const r = await place({
      agent_id: agent.id,
      to_number: TO,
      metadata: { ticket: 7 },
      variables: { plan: "gold" },
    });
    expect(r.status).toBe(202);
    expect(Object.keys(r.body).sort()).toEqual(["id", "status"]);
    expect(isUuid(r.body.id)).toBe(true);
    expect(r.body.status).toBe("started");
    const call = (await api.get(`/v1/calls/${r.body.id}`)).body;
    expect(Object.keys(call).sort()).toEqual(CALL_FIELDS);
    // What does not depend on the clock (the call as placed is the webhook test's call.started).
    expect(CallObject.parse(call)).toMatchObject({
      id: r.body.id,
      agent_id: agent.id,
      agent_version: 0,
      direction: "outbound",
      origin: "api",
      to_number: TO,
      metadata: { ticket: 7 },
      variables: { plan: "gold" },
      transfer: null,
    });
    expect(Math.abs(Date.parse(call.created_at) - Date.now())).toBeLessThan(5_000);
  });

  it("requires an Idempotency-Key and refuses malformed bodies, placing nothing", async () => {
    const agent = await liveAgent();
    const noKey = await api.post("/v1/calls", { agent_id: agent.id, to_number: TO });
    expect(noKey.status).toBe(400);
    expect(noKey.body.code).toBe("invalid_request");
    expect(noKey.body.detail).toMatchObject({ code: "invalid_request", param: "Idempotency-Key" });
    const extra = await place({ agent_id: agent.id, to_number: TO, from_number: TO });
    expect(extra.status).toBe(422);
    expect(extra.body.detail.errors[0]).toMatchObject({ field: "from_number", type: "extra_forbidden" });
    const badNumber = await place({ agent_id: agent.id, to_number: "08065550199" });
    expect(badNumber.status).toBe(422);
    expect(badNumber.body.detail.errors[0]).toMatchObject({ field: "to_number", type: "value_error" });
    const missing = await place({ agent_id: agent.id });
    expect(missing.body.detail.errors[0]).toMatchObject({ field: "to_number", type: "missing" });
    const both = await place({
      agent_id: agent.id,
      to_number: TO,
      version: 0,
      agent_version_id: agent.version_id,
    });
    expect(both.status).toBe(400);
    expect(both.body.code).toBe("invalid_request");
    expect(both.body.detail.code).toBe("invalid_request");
    expect((await api.get("/v1/calls")).body.data).toEqual([]);
  });

  it("pins to a published version that is not live (version or agent_version_id)", async () => {
    const agent = await liveAgent();
    const v1 = await publishChange(agent.id, { system_prompt: "Be brief." });
    const byNumber = await place({ agent_id: agent.id, to_number: TO, version: v1 });
    expect(byNumber.status).toBe(202);
    expect((await api.get(`/v1/calls/${byNumber.body.id}`)).body.agent_version).toBe(1);
    const v1Id = (await api.get(`/v1/agents/${agent.id}/versions/1`)).body.version_id;
    const byId = await place({ agent_id: agent.id, to_number: TO, agent_version_id: v1Id });
    expect((await api.get(`/v1/calls/${byId.body.id}`)).body.agent_version).toBe(1);
    const live = await place({ agent_id: agent.id, to_number: TO });
    expect((await api.get(`/v1/calls/${live.body.id}`)).body.agent_version).toBe(0);
    // Version 1 stayed off air.
    expect((await api.get(`/v1/agents/${agent.id}`)).body.live_version).toBe(0);
  });

  it("refuses what cannot answer: unknown agent or version, a draft, no live version, a blocked version", async () => {
    const unknown = await place({ agent_id: "00000000-0000-4000-8000-000000000000", to_number: TO });
    expect([unknown.status, reason(unknown)]).toEqual([404, "agent_not_found"]);
    const draftOnly = await api.createAgent();
    const offAir = await place({ agent_id: draftOnly.id, to_number: TO });
    expect([offAir.status, reason(offAir)]).toEqual([409, "agent_not_published"]);
    expect(offAir.body.detail.message).toMatch(/no live version.*pin the call/);
    const draft = await place({ agent_id: draftOnly.id, to_number: TO, version: 0 });
    expect([draft.status, reason(draft)]).toEqual([409, "agent_not_published"]);
    expect(draft.body.detail.message).toMatch(/version 0 is a draft; publish it/);
    const agent = await liveAgent({ model: { model: "gpt-4o" } });
    const noVersion = await place({ agent_id: agent.id, to_number: TO, version: 9 });
    expect([noVersion.status, reason(noVersion), noVersion.body.detail.param]).toEqual([
      404,
      "version_not_found",
      "version",
    ]);
    const noId = await place({
      agent_id: agent.id,
      to_number: TO,
      agent_version_id: "00000000-0000-4000-8000-000000000000",
    });
    expect([noId.status, reason(noId), noId.body.detail.param]).toEqual([
      404,
      "version_not_found",
      "agent_version_id",
    ]);
    expect((await api.control("POST", "/_emulator/models/gpt-4o/retire")).status).toBe(200);
    const blocked = await place({ agent_id: agent.id, to_number: TO });
    expect([blocked.status, reason(blocked)]).toEqual([409, "version_blocked"]);
    // Another workspace's agent does not exist for this key.
    const theirs = await liveAgent({}, other);
    expect(reason(await place({ agent_id: theirs.id, to_number: TO }))).toBe("agent_not_found");
    expect((await api.get("/v1/calls")).body.data).toEqual([]);
  });

  it("replays the same key and request byte for byte with Idempotent-Replay: true", async () => {
    const agent = await liveAgent();
    const key = freshKey();
    const url = `${api.emu.url}/v1/calls`;
    const send = async (body: string, k = key) => {
      const res = await fetch(url, {
        method: "POST",
        headers: {
          Authorization: "Bearer va_test_local",
          "Idempotency-Key": k,
          "Content-Type": "application/json",
        },
        body,
      });
      return { status: res.status, text: await res.text(), replay: res.headers.get("idempotent-replay") };
    };
    const first = await send(JSON.stringify({ agent_id: agent.id, to_number: TO, metadata: { a: 1, b: 2 } }));
    expect(first.status).toBe(202);
    expect(first.replay).toBeNull();
    await sleep(CALL_SECONDS * 1000 + 50);
    // Same request (keys in another order), after the call finished: the first answer, as it was.
    const again = await send(JSON.stringify({ metadata: { b: 2, a: 1 }, to_number: TO, agent_id: agent.id }));
    expect(again).toEqual({ status: 202, text: first.text, replay: "true" });
    const reused = await send(JSON.stringify({ agent_id: agent.id, to_number: "+918065550198" }));
    expect(reused.status).toBe(409);
    expect(JSON.parse(reused.text).detail).toMatchObject({
      code: "idempotency_key_reused",
      param: "Idempotency-Key",
    });
    expect(JSON.parse(reused.text).detail.message).toContain(JSON.parse(first.text).id);
    expect((await api.get("/v1/calls")).body.data).toHaveLength(1);
    // A refused request does not use up its key; keys belong to one workspace.
    const k2 = freshKey();
    expect((await send(JSON.stringify({ agent_id: agent.id, to_number: "123" }), k2)).status).toBe(422);
    expect((await send(JSON.stringify({ agent_id: agent.id, to_number: TO }), k2)).status).toBe(202);
    const theirs = await liveAgent({}, other);
    const r = await place({ agent_id: theirs.id, to_number: TO }, other, key);
    expect(r.status).toBe(202);
    expect(r.headers.get("idempotent-replay")).toBeNull();
  });
});

describe("a call on its clock", () => {
  it("moves started -> in_progress -> completed, then is billed, recorded and analysed", async () => {
    // A two-second clock: wide enough windows to see each stage on a busy machine.
    const slow = bind(await startEmulator({ rateLimitPerMinute: 0, callSeconds: 2 }));
    try {
      const agent = await liveAgent({ model: { model: "gpt-4o" }, greeting: { message: "Namaste!" } }, slow);
      const placed = await place({ agent_id: agent.id, to_number: TO }, slow);
      const second = await place({ agent_id: agent.id, to_number: TO }, slow);
      const inUse = async () => (await slow.get("/v1/models")).headers.get("x-voice-concurrency-in-use");
      expect(await inUse()).toBe("2");
      const early = await slow.get(`/v1/calls/${second.body.id}/recording`);
      expect([early.status, reason(early)]).toEqual([404, "recording_not_ready"]);
      const seen: string[] = [];
      let call: any;
      const until = Date.now() + 5_000;
      while (Date.now() < until) {
        call = (await slow.get(`/v1/calls/${placed.body.id}`)).body;
        if (seen.at(-1) !== call.status) seen.push(call.status);
        if (call.custom_analysis !== null) break;
        await sleep(10);
      }
      expect(seen).toEqual(["started", "in_progress", "completed"]);
      expect(await inUse()).toBe("0");
      expect(CallObject.parse(call)).toEqual(call);
      expect(Date.parse(call.connected_at)).toBeGreaterThan(Date.parse(call.created_at));
      expect(Date.parse(call.ended_at)).toBeGreaterThan(Date.parse(call.connected_at));
      expect(call.duration_seconds).toBe(1);
      expect(call.cost).toEqual({ currency: "USD", total: 0.001, rate_per_min: 0.06 });
      expect(call.transcript.turns[0]).toEqual({ role: "agent", text: "Namaste!" });
      expect(call.transcript.turns.map((t: any) => t.role)).toContain("user");
      expect(call.recording_url).toBe(`${slow.emu.url}/v1/calls/${call.id}/recording`);
      expect(call.dashboard_url).toMatch(new RegExp(`^https://.+/calls/${call.id}$`));
      expect(call.custom_analysis).toEqual({
        "Default Analysis": { "User Sentiment": "neutral", Outcome: expect.any(String), Language: "hi-IN" },
      });
      const rec = await slow.get(`/v1/calls/${call.id}/recording`);
      expect(rec.status).toBe(200);
      expect(rec.headers.get("content-type")).toBe("audio/wav");
      const bytes = Buffer.from(
        await (
          await fetch(call.recording_url, { headers: { Authorization: "Bearer va_test_local" } })
        ).arrayBuffer(),
      );
      expect(bytes.subarray(0, 4).toString("ascii")).toBe("RIFF");
      expect(bytes.subarray(8, 12).toString("ascii")).toBe("WAVE");
      expect(bytes.length).toBe(44 + 8000 * 2 * call.duration_seconds);
    } finally {
      await slow.emu.close();
    }
  });

  it("answers the recording 404 when the version does not record", async () => {
    const agent = await liveAgent();
    const placed = await place({ agent_id: agent.id, to_number: TO });
    await waitCall(placed.body.id);
    expect((await api.get(`/v1/calls/${placed.body.id}/recording`)).status).toBe(200);
    const v1 = await publishChange(agent.id, { call: { recording_enabled: false } });
    const unrecorded = await place({ agent_id: agent.id, to_number: TO, version: v1 });
    const done = await waitCall(unrecorded.body.id);
    expect(done.recording_url).toBeNull();
    const off = await api.get(`/v1/calls/${unrecorded.body.id}/recording`);
    expect([off.status, reason(off)]).toEqual([404, "recording_not_found"]);
    expect(off.body.detail.message).toMatch(/recording is off on version 1/);
  });
});

describe("GET /v1/calls and GET /v1/calls/{id}", () => {
  it("pages newest first with an opaque cursor; limit like agents; invalid_cursor", async () => {
    const agent = await liveAgent();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await place({ agent_id: agent.id, to_number: TO })).body.id);
    const first = await api.get("/v1/calls?limit=2");
    expect(CallList.parse(first.body).data.map((c) => c.id)).toEqual([ids[4], ids[3]]);
    expect(first.body.has_more).toBe(true);
    const second = await api.get(`/v1/calls?limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body.data.map((c: any) => c.id)).toEqual([ids[2], ids[1]]);
    const last = await api.get(`/v1/calls?limit=2&cursor=${second.body.next_cursor}`);
    expect(last.body).toMatchObject({ has_more: false, next_cursor: null });
    expect(last.body.data.map((c: any) => c.id)).toEqual([ids[0]]);
    expect((await api.get("/v1/calls")).body.data).toHaveLength(5);
    const agentsCursor = (await api.get("/v1/agents?limit=1")).body;
    await api.createAgent();
    const otherCursor = (await api.get("/v1/agents?limit=1")).body.next_cursor;
    expect(agentsCursor).toBeDefined();
    const wrong = await api.get(`/v1/calls?cursor=${otherCursor}`);
    expect([wrong.status, reason(wrong)]).toEqual([400, "invalid_cursor"]);
    expect(reason(await api.get("/v1/calls?cursor=garbage"))).toBe("invalid_cursor");
    for (const [limit, type] of [
      ["0", "greater_than_equal"],
      ["101", "less_than_equal"],
      ["x", "int_parsing"],
    ]) {
      const r = await api.get(`/v1/calls?limit=${limit}`);
      expect(r.status).toBe(422);
      expect(r.body.detail.errors[0]).toMatchObject({ field: "query.limit", type });
    }
    const skip = await api.get("/v1/calls?skip=2");
    expect(skip.body.detail.errors[0]).toMatchObject({ field: "query.skip", type: "extra_forbidden" });
    // Another workspace sees none of them.
    expect((await other.get("/v1/calls")).body.data).toEqual([]);
  });

  it("filters by direction (invalid_direction for an unknown one) and by comma-separated origins", async () => {
    const agent = await liveAgent({ numbers: { inbound_phone: "+918065550101" } });
    const api1 = (await place({ agent_id: agent.id, to_number: TO })).body.id;
    const inbound = (await trafficCall(api.emu, { agent_id: agent.id, direction: "inbound" })).id;
    const web = (await trafficCall(api.emu, { agent_id: agent.id, direction: "web" })).id;
    const demo = (await trafficCall(api.emu, { agent_id: agent.id, direction: "web", origin: "demo" })).id;
    const ids = async (q: string) => (await api.get(`/v1/calls${q}`)).body.data.map((c: any) => c.id);
    expect(await ids("?direction=outbound")).toEqual([api1]);
    expect(await ids("?direction=inbound")).toEqual([inbound]);
    expect(await ids("?direction=web")).toEqual([demo, web]);
    expect(await ids("?origin=api,widget")).toEqual([web, api1]);
    expect(await ids("?origin=inbound")).toEqual([inbound]);
    expect(await ids("?origin=batch")).toEqual([]);
    expect(await ids("?direction=web&origin=widget")).toEqual([web]);
    const bad = await api.get("/v1/calls?direction=sideways");
    expect([bad.status, reason(bad), bad.body.detail.param]).toEqual([400, "invalid_direction", "direction"]);
    expect(reason(await api.get("/v1/calls?origin=,"))).toBe("invalid_request");
  });

  it("answers call_not_found for an unknown, malformed or foreign call id", async () => {
    const agent = await liveAgent();
    const mine = (await place({ agent_id: agent.id, to_number: TO })).body.id;
    for (const path of [
      "/v1/calls/00000000-0000-4000-8000-000000000000",
      "/v1/calls/abc",
      "/v1/calls/abc/recording",
      "/v1/calls/00000000-0000-4000-8000-00000000000",
    ]) {
      const r = await api.get(path);
      expect([r.status, reason(r)], path).toEqual([404, "call_not_found"]);
    }
    const foreign = await other.get(`/v1/calls/${mine}`);
    expect([foreign.status, reason(foreign)]).toEqual([404, "call_not_found"]);
    expect(reason(await other.get(`/v1/calls/${mine}/recording`))).toBe("call_not_found");
    // Memory changes of one call: an empty list for a call of the agent.
    expect((await api.get(`/v1/agents/${agent.id}/memory/calls/${mine}`)).body).toEqual([]);
  });
});

describe("custom_analysis", () => {
  it("has a key for every enabled analysis of every attached, enabled group; renames change keys", async () => {
    const g = await api.post("/v1/custom-analysis/groups", {
      name: "Sales",
      items: [
        { name: "Interested", type: "boolean" },
        { name: "Budget", type: "number", enabled: false },
        { name: "Plan", type: "enum", enum_values: ["basic", "gold"] },
      ],
    });
    expect(g.status).toBe(201);
    const agent = await api.createAgent();
    const defaultGroup = agent.analysis_group_ids[0];
    expect(
      (await api.patch(`/v1/agents/${agent.id}`, { analysis_group_ids: [defaultGroup, g.body.id] })).status,
    ).toBe(200);
    await api.post(`/v1/agents/${agent.id}/versions/0/publish`);
    const analysisOf = async (body: Record<string, unknown>) =>
      (await waitCall((await place({ agent_id: agent.id, to_number: TO, ...body })).body.id)).custom_analysis;
    await setCallOutcomes(api.emu, [{ analysis: { Sales: { Interested: true, Budget: 500 } } }]);
    expect(await analysisOf({ version: 0 })).toEqual({
      "Default Analysis": { "User Sentiment": "neutral", Outcome: expect.any(String), Language: "hi-IN" },
      Sales: { Interested: true, Plan: null },
    });
    // Renaming an analysis and the group: later calls publish the new keys.
    const items = g.body.items.map((it: any) => ({
      id: it.id,
      name: it.name === "Interested" ? "Keen" : it.name,
      type: it.type,
      enum_values: it.enum_values,
      enabled: it.enabled,
    }));
    expect(
      (await api.put(`/v1/custom-analysis/groups/${g.body.id}`, { name: "Sales v2", items })).status,
    ).toBe(200);
    expect(await analysisOf({ version: 0 })).toMatchObject({ "Sales v2": { Keen: null, Plan: null } });
    // A disabled group gives no key.
    expect(
      (await api.put(`/v1/custom-analysis/groups/${g.body.id}`, { name: "Sales v2", items, enabled: false }))
        .status,
    ).toBe(200);
    expect(Object.keys(await analysisOf({ version: 0 }))).toEqual(["Default Analysis"]);
    // Detaching the group (a new version without it) and switching off an item of Default Analysis.
    const def = (await api.get("/v1/custom-analysis")).body.data.find((x: any) => x.id === defaultGroup);
    const defItems = def.items.map((it: any) => ({
      id: it.id,
      name: it.name,
      type: it.type,
      enum_values: it.enum_values,
      enabled: it.name !== "Language",
    }));
    expect(
      (await api.put(`/v1/custom-analysis/groups/${defaultGroup}`, { name: def.name, items: defItems }))
        .status,
    ).toBe(200);
    const v1 = await publishChange(agent.id, { analysis_group_ids: [defaultGroup] });
    expect(await analysisOf({ version: v1 })).toEqual({
      "Default Analysis": { "User Sentiment": "neutral", Outcome: expect.any(String) },
    });
    // No group attached: an empty analysis (never null once analysed).
    const v2 = await publishChange(agent.id, { analysis_group_ids: [] });
    expect(await analysisOf({ version: v2 })).toEqual({});
  });

  it("keeps only the Default Analysis group when the version's custom analysis is off", async () => {
    const g = await api.post("/v1/custom-analysis/groups", {
      name: "Ops",
      items: [{ name: "Escalate", type: "boolean" }],
    });
    const agent = await api.createAgent({ call: { custom_analysis_enabled: false } });
    await api.patch(`/v1/agents/${agent.id}`, {
      analysis_group_ids: [...agent.analysis_group_ids, g.body.id],
    });
    await api.post(`/v1/agents/${agent.id}/versions/0/publish`);
    const id = (await place({ agent_id: agent.id, to_number: TO, version: 0 })).body.id;
    expect(Object.keys((await waitCall(id)).custom_analysis)).toEqual(["Default Analysis"]);
  });
});

describe("PUT /_emulator/call-outcomes", () => {
  it("the first matching rule decides; what it leaves out keeps the default", async () => {
    const agent = await liveAgent({ model: { model: "gpt-4o-mini" } });
    const v1 = await publishChange(agent.id, { system_prompt: "v1" });
    const put = await api.control("PUT", "/_emulator/call-outcomes", {
      rules: [
        { match: { to_number: "+918065550111" }, status: "no_answer", duration_seconds: 30 },
        {
          match: { agent_id: agent.id, version: v1 },
          duration_seconds: 90,
          analysis: {
            "Default Analysis": { "User Sentiment": "negative" },
            Nowhere: { Anything: 1 },
          },
          transcript: [
            { role: "agent", text: "Hello." },
            { role: "user", text: "Goodbye." },
          ],
        },
        { match: { agent_id: agent.id }, status: "voicemail" },
        { status: "failed" },
      ],
    });
    expect(put.status).toBe(200);
    expect((await api.control("GET", "/_emulator/call-outcomes")).body.rules).toHaveLength(4);
    const outcome = async (body: Record<string, unknown>) =>
      waitCall((await place({ agent_id: agent.id, ...body })).body.id);

    const noAnswer = await outcome({ to_number: "+918065550111", version: v1 });
    expect(noAnswer).toMatchObject({
      status: "no_answer",
      connected_at: null,
      duration_seconds: 0,
      transcript: { turns: [] },
      recording_url: null,
      cost: { currency: "USD", total: 0, rate_per_min: 0.02 },
    });
    // Nothing was said, so nothing is extracted: every key, each null (not an invented sentiment).
    expect(noAnswer.custom_analysis["Default Analysis"]).toEqual({
      "User Sentiment": null,
      Outcome: null,
      Language: null,
    });
    expect(reason(await api.get(`/v1/calls/${noAnswer.id}/recording`))).toBe("recording_not_found");

    const scripted = await outcome({ to_number: TO, version: v1 });
    expect(scripted).toMatchObject({
      status: "completed",
      duration_seconds: 90,
      cost: { currency: "USD", total: 0.03, rate_per_min: 0.02 },
      transcript: {
        turns: [
          { role: "agent", text: "Hello." },
          { role: "user", text: "Goodbye." },
        ],
      },
    });
    // The value for a group the call does not have is ignored; unnamed values keep their defaults.
    expect(scripted.custom_analysis).toEqual({
      "Default Analysis": { "User Sentiment": "negative", Outcome: expect.any(String), Language: "hi-IN" },
    });
    expect((await outcome({ to_number: TO })).status).toBe("voicemail");
    const otherAgent = await liveAgent();
    expect((await waitCall((await place({ agent_id: otherAgent.id, to_number: TO })).body.id)).status).toBe(
      "failed",
    );
    // Replacing the rules with none: back to the defaults.
    await setCallOutcomes(api.emu, []);
    const plain = await outcome({ to_number: TO });
    expect(plain.status).toBe("completed");
    expect(plain.custom_analysis["Default Analysis"]["User Sentiment"]).toBe("neutral");
  });

  it("refuses malformed rules, naming the field", async () => {
    for (const [rules, field, type] of [
      [[{ match: { to_number: "12345" } }], "rules[0].match.to_number", "value_error"],
      [[{ status: "ringing" }], "rules[0].status", "literal_error"],
      [[{ match: { agent: "x" } }], "rules[0].match.agent", "extra_forbidden"],
      [[{ transcript: [{ role: "bot", text: "x" }] }], "rules[0].transcript[0].role", "literal_error"],
      [[{ duration_seconds: -1 }], "rules[0].duration_seconds", "greater_than_equal"],
    ] as const) {
      const r = await api.control("PUT", "/_emulator/call-outcomes", { rules });
      expect(r.status, JSON.stringify(rules)).toBe(422);
      expect(r.body.detail.errors[0]).toMatchObject({ field, type });
    }
    expect((await api.control("PUT", "/_emulator/call-outcomes", {})).status).toBe(422);
  });
});

describe("webhooks (PUT /_emulator/agents/{id}/webhook)", () => {
  it("delivers every event of a call in order, in the documented envelope, fields null until their stage", async () => {
    const hooks = await receiver();
    const g = await api.post("/v1/custom-analysis/groups", {
      name: "Ops",
      items: [{ name: "Escalate", type: "boolean" }],
    });
    const agent = await api.createAgent();
    await api.patch(`/v1/agents/${agent.id}`, {
      analysis_group_ids: [...agent.analysis_group_ids, g.body.id],
    });
    await api.post(`/v1/agents/${agent.id}/versions/0/publish`);
    await api.post(`/v1/agents/${agent.id}/activations`, { version: 0 });
    await setAgentWebhook(api.emu, agent.id, hooks.url);
    const id = (
      await place({ agent_id: agent.id, to_number: TO, metadata: { run: 1 }, variables: { v: "x" } })
    ).body.id;
    const events = await hooks.waitFor(id);
    expect(events.map((e) => e.event_type)).toEqual([
      "call.started",
      "call.ended",
      "call.recording.ready",
      "call.analysis.completed",
      "call.custom_analysis.completed",
      "call.processing.completed",
    ]);
    expect(events.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5, 6]);
    const ws = events[0]?.workspace_id;
    for (const e of events) {
      expect(e.event_id).toMatch(/^evt_[0-9a-f]+$/);
      expect(e.api_version).toBe(API_VERSION);
      expect(e.api_version).toBe("2026-08-01");
      expect(isUuid(e.workspace_id) && isUuid(e.org_id)).toBe(true);
      expect(e.workspace_id).toBe(ws);
      expect(e.data.object).toBe("call");
      expect(e.data.call).toMatchObject({
        id,
        agent_id: agent.id,
        metadata: { run: 1 },
        variables: { v: "x" },
      });
      expect(Object.keys(e.data.call)).toEqual(expect.arrayContaining(CALL_FIELDS));
    }
    expect(new Set(events.map((e) => e.event_id)).size).toBe(6);
    const times = events.map((e) => Date.parse(e.occurred_at));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    const [started, ended, recording, analysis, custom, processed] = events.map((e) => e.data.call) as any[];
    expect(started).toMatchObject({
      status: "started",
      connected_at: null,
      ended_at: null,
      duration_seconds: null,
      cost: null,
      custom_analysis: null,
      recording_url: null,
      transcript: { turns: [] },
    });
    expect(ended.status).toBe("completed");
    expect(ended.duration_seconds).toBe(1);
    expect(ended.transcript.turns.length).toBeGreaterThan(0);
    expect([ended.cost, ended.custom_analysis, ended.recording_url]).toEqual([null, null, null]);
    expect(recording.cost).not.toBeNull();
    expect(recording.recording_url).toBe(`${api.emu.url}/v1/calls/${id}/recording`);
    expect(recording.custom_analysis).toBeNull();
    // The presigned link downloads without a key, and only with its signature.
    const audio = await request(recording.recording_presigned_url, "GET");
    expect([audio.status, audio.headers.get("content-type")]).toEqual([200, "audio/wav"]);
    expect(Date.parse(recording.recording_url_expires_at)).toBeGreaterThan(Date.now());
    const forged = await request(
      // One hex digit changed (to another digit, whatever it was).
      recording.recording_presigned_url.replace(
        /signature=(\w)/,
        (_: string, c: string) => `signature=${c === "0" ? "1" : "0"}`,
      ),
      "GET",
    );
    expect(forged.status).toBe(403);
    expect(analysis.custom_analysis).toEqual({
      "Default Analysis": expect.objectContaining({ "User Sentiment": "neutral" }),
      Ops: { Escalate: null },
    });
    expect(custom.custom_analysis).toEqual(analysis.custom_analysis);
    expect(processed).toMatchObject({ recording_status: "available", analysis_status: "completed" });
    expect(processed.recording_presigned_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/recordings\//);
    // What the API answers now is the call of the last event.
    const { recording_presigned_url, recording_url_expires_at, recording_status, analysis_status, ...final } =
      processed;
    expect((await api.get(`/v1/calls/${id}`)).body).toEqual(final);
  });

  it("skips the recording event when recording is off and reports transfers with call.transfer.status", async () => {
    const hooks = await receiver();
    const agent = await liveAgent({
      call: { recording_enabled: false },
      builtin_tools: {
        transfer_call: {
          enabled: true,
          numbers: [
            {
              number: "+918065550177",
              priority: 1,
              start_hour: 0,
              end_hour: 24,
              timezone: "Asia/Kolkata",
              max_concurrent_calls: 1,
            },
          ],
        },
      },
    });
    await setAgentWebhook(api.emu, agent.id, hooks.url);
    await setCallOutcomes(api.emu, [
      { match: { to_number: "+918065550121" }, status: "transfer_completed" },
      { match: { to_number: "+918065550122" }, status: "transfer_failed" },
    ]);
    const ok = (await place({ agent_id: agent.id, to_number: "+918065550121" })).body.id;
    const failed = (await place({ agent_id: agent.id, to_number: "+918065550122" })).body.id;
    const okEvents = await hooks.waitFor(ok);
    expect(okEvents.map((e) => e.event_type)).toEqual([
      "call.started",
      "call.transfer.status",
      "call.transfer.status",
      "call.ended",
      "call.analysis.completed",
      "call.custom_analysis.completed",
      "call.processing.completed",
    ]);
    expect(okEvents.map((e) => e.data.call.transfer?.state ?? null)).toEqual([
      null,
      "transferring",
      "answered",
      "completed",
      "completed",
      "completed",
      "completed",
    ]);
    expect(okEvents.map((e) => e.data.call.status).slice(1, 4)).toEqual([
      "transferring",
      "transfer_answered",
      "transfer_completed",
    ]);
    expect(okEvents[1]?.data.call.transfer).toEqual({
      state: "transferring",
      target: "+918065550177",
      reason: null,
    });
    expect(okEvents.at(-1)?.data.call).toMatchObject({ recording_status: "disabled", recording_url: null });
    const failedEvents = await hooks.waitFor(failed);
    expect(failedEvents.map((e) => e.data.call.transfer?.state ?? null).slice(1, 4)).toEqual([
      "transferring",
      "failed",
      "failed",
    ]);
    expect(failedEvents[3]?.data.call).toMatchObject({
      status: "transfer_failed",
      transfer: { reason: "no_answer" },
    });
  });

  it("retries a failing receiver with the same event, then goes on in order", async () => {
    const hooks = await receiver(2);
    const agent = await liveAgent();
    await setAgentWebhook(api.emu, agent.id, hooks.url);
    const id = (await place({ agent_id: agent.id, to_number: TO })).body.id;
    const events = await hooks.waitFor(id);
    expect(events.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(hooks.attempts.slice(0, 3).map((a) => [a.event_type, a.status])).toEqual([
      ["call.started", 500],
      ["call.started", 500],
      ["call.started", 204],
    ]);
    expect(new Set(hooks.attempts.slice(0, 3).map((a) => a.event_id)).size).toBe(1);
  });

  it("gives up on an event after 4 attempts and delivers the next", async () => {
    const hooks = await receiver(4);
    const agent = await liveAgent();
    await setAgentWebhook(api.emu, agent.id, hooks.url);
    const id = (await place({ agent_id: agent.id, to_number: TO })).body.id;
    const events = await hooks.waitFor(id);
    expect(hooks.attempts.slice(0, 4).every((a) => a.event_type === "call.started" && a.status === 500)).toBe(
      true,
    );
    expect(events[0]).toMatchObject({ event_type: "call.ended", sequence: 2 });
  });

  it("{url: null} removes the webhook; unknown agents and bad urls are refused", async () => {
    const hooks = await receiver();
    const agent = await liveAgent();
    await setAgentWebhook(api.emu, agent.id, hooks.url);
    await setAgentWebhook(api.emu, agent.id, null);
    await place({ agent_id: agent.id, to_number: TO });
    await sleep(CALL_SECONDS * 1000 + 100);
    expect(hooks.attempts).toEqual([]);
    const unknown = await api.control(
      "PUT",
      "/_emulator/agents/00000000-0000-4000-8000-000000000000/webhook",
      {
        url: hooks.url,
      },
    );
    expect([unknown.status, reason(unknown)]).toEqual([404, "agent_not_found"]);
    for (const body of [
      { url: "ftp://x.example/h" },
      { url: "not a url" },
      {},
      { url: hooks.url, secret: "s" },
    ]) {
      expect(
        (await api.control("PUT", `/_emulator/agents/${agent.id}/webhook`, body)).status,
        JSON.stringify(body),
      ).toBe(422);
    }
  });

  it("reset stops deliveries in flight", async () => {
    const hooks = await receiver();
    const slow = bind(await startEmulator({ rateLimitPerMinute: 0, callSeconds: 1 }));
    try {
      const agent = await liveAgent({}, slow);
      await setAgentWebhook(slow.emu, agent.id, hooks.url);
      const id = (await place({ agent_id: agent.id, to_number: TO }, slow)).body.id;
      await hooks.waitFor(id, "call.started");
      await slow.control("POST", "/_emulator/reset");
      await sleep(1_100);
      expect(hooks.attempts.map((a) => a.event_type)).toEqual(["call.started"]);
    } finally {
      await slow.emu.close();
    }
  });
});

describe("POST /_emulator/calls (real traffic)", () => {
  it("places inbound and widget calls without a key, with their origin, numbers and variables", async () => {
    const agent = await liveAgent({ numbers: { inbound_phone: "+918065550101" } });
    const inbound = await api.control("POST", "/_emulator/calls", {
      agent_id: agent.id,
      direction: "inbound",
      from_number: "+919800000001",
      variables: { account: "A-1" },
      metadata: { src: "test" },
    });
    expect(inbound.status).toBe(202);
    expect(Object.keys(inbound.body).sort()).toEqual(["id", "status"]);
    expect((await api.get(`/v1/calls/${inbound.body.id}`)).body).toMatchObject({
      direction: "inbound",
      origin: "inbound",
      from_number: "+919800000001",
      to_number: "+918065550101",
      variables: { caller_no: "+919800000001", account: "A-1" },
      metadata: { src: "test" },
      agent_version: 0,
    });
    const web = await trafficCall(api.emu, { agent_id: agent.id, direction: "web" });
    expect(await waitCall(web.id)).toMatchObject({
      direction: "web",
      origin: "widget",
      from_number: null,
      to_number: null,
      status: "completed",
    });
    const dashboard = await trafficCall(api.emu, {
      agent_id: agent.id,
      direction: "inbound",
      origin: "dashboard",
    });
    expect((await api.get(`/v1/calls/${dashboard.id}`)).body.origin).toBe("dashboard");
    // The agent's own workspace holds the call.
    const theirs = await liveAgent({}, other);
    const t = await trafficCall(api.emu, { agent_id: theirs.id, direction: "web" });
    expect((await other.get(`/v1/calls/${t.id}`)).status).toBe(200);
    expect(reason(await api.get(`/v1/calls/${t.id}`))).toBe("call_not_found");
  });

  it("refuses what the API refuses, and a web call with numbers", async () => {
    const agent = await api.createAgent();
    const offAir = await api.control("POST", "/_emulator/calls", {
      agent_id: agent.id,
      direction: "inbound",
    });
    expect([offAir.status, reason(offAir)]).toEqual([409, "agent_not_published"]);
    const unknown = await api.control("POST", "/_emulator/calls", {
      agent_id: "00000000-0000-4000-8000-000000000000",
      direction: "web",
    });
    expect([unknown.status, reason(unknown)]).toEqual([404, "agent_not_found"]);
    const numbers = await api.control("POST", "/_emulator/calls", {
      agent_id: agent.id,
      direction: "web",
      from_number: "+919800000001",
    });
    expect([numbers.status, reason(numbers)]).toEqual([400, "invalid_request"]);
    const both = await api.control("POST", "/_emulator/calls", {
      agent_id: agent.id,
      direction: "inbound",
      version: 0,
      agent_version_id: agent.version_id,
    });
    expect([both.status, both.body.code, both.body.detail.param]).toEqual([
      400,
      "invalid_request",
      "agent_version_id",
    ]);
    const outbound = await api.control("POST", "/_emulator/calls", {
      agent_id: agent.id,
      direction: "outbound",
    });
    expect(outbound.body.detail.errors[0]).toMatchObject({ field: "direction", type: "literal_error" });
  });
});

describe("persistence", () => {
  it("keeps calls and their idempotency keys across a restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "calls-db-"));
    const db = join(dir, "state.db");
    try {
      const first = bind(await startEmulator({ db, rateLimitPerMinute: 0, callSeconds: 0.1 }));
      const agent = await liveAgent({}, first);
      const placed = await place({ agent_id: agent.id, to_number: TO }, first, "persisted-key");
      const before = await waitCall(placed.body.id, undefined, first);
      expect(before.status).toBe("completed");
      await first.emu.close();
      const second = bind(await startEmulator({ db, rateLimitPerMinute: 0, callSeconds: 0.1 }));
      try {
        // The same call; its stable recording address follows the emulator's new port.
        expect((await second.get(`/v1/calls/${placed.body.id}`)).body).toEqual({
          ...before,
          recording_url: `${second.emu.url}/v1/calls/${placed.body.id}/recording`,
        });
        const replay = await place({ agent_id: agent.id, to_number: TO }, second, "persisted-key");
        expect([replay.status, replay.body, replay.headers.get("idempotent-replay")]).toEqual([
          202,
          placed.body,
          "true",
        ]);
        const next = await place({ agent_id: agent.id, to_number: TO }, second);
        const list = (await second.get("/v1/calls")).body.data.map((c: any) => c.id);
        expect(list).toEqual([next.body.id, placed.body.id]);
      } finally {
        await second.emu.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
