/**
 * `client.calls` against the emulator (calls of 0.2 s): a place is idempotent by its key and says
 * when it was a replay, a read and the list (newest first, filtered) parse the call object, and a
 * recording comes back as bytes.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ConflictError, NotFoundError, ValidationError, VoiceAgentClient } from "../../src/client";
import { DEFAULT_API_KEY, type RunningEmulator, startEmulator } from "../../src/emulator";
import { clearRequestLog, controlCall, requestLog } from "../support/control";

let emu: RunningEmulator;
let c: VoiceAgentClient;
let agentId: string;
let versionId: string;

beforeAll(async () => {
  emu = await startEmulator({ port: 0, callSeconds: 0.2 });
  c = new VoiceAgentClient({ baseUrl: emu.url, apiKey: DEFAULT_API_KEY });
  const agent = await c.agents.create({
    name: "Calls",
    system_prompt: "Help callers.",
    call: { recording_enabled: true },
  });
  agentId = agent.id;
  const published = await c.versions.publish(agentId, 0);
  versionId = published.version_id;
  await c.versions.activate(agentId, 0);
});
afterAll(async () => {
  await emu?.close();
});

/** Reads the call until its analysis is in. */
async function settled(id: string) {
  for (let i = 0; i < 100; i++) {
    const call = await c.calls.get(id);
    if (call.custom_analysis !== null && call.status !== "in_progress" && call.status !== "started")
      return call;
    await sleep(100);
  }
  throw new Error(`call ${id} did not finish`);
}

describe("client.calls", () => {
  test("place: the same key answers the same call, and says it was a replay; one request each", async () => {
    const key = "7d8f3a8e-2a41-4c4e-9a57-0b5f0f4a1c01";
    await clearRequestLog(emu);
    const body = { agent_id: agentId, to_number: "+14155550123", agent_version_id: versionId };
    const first = await c.calls.place(body, { idempotencyKey: key });
    expect(first).toMatchObject({ status: "started", replayed: false });
    const again = await c.calls.place(body, { idempotencyKey: key });
    expect(again).toEqual({ ...first, replayed: true });
    expect((await requestLog(emu)).filter((e) => e.path === "/v1/calls")).toHaveLength(2);
    // A key names one call: the same key with another request is refused, not a second call.
    await expect(
      c.calls.place({ ...body, to_number: "+14155550124" }, { idempotencyKey: key }),
    ).rejects.toBeInstanceOf(ConflictError);
    await expect(c.calls.place(body, { idempotencyKey: "" })).rejects.toThrow(/idempotencyKey is required/);
    await expect(
      c.calls.place(
        { ...body, to_number: "0800 123" },
        { idempotencyKey: "4b0c9d1e-0000-4000-8000-000000000001" },
      ),
    ).rejects.toBeInstanceOf(ValidationError);
  });

  test("get: the call object as it moves, pinned to the version, finished and analysed", async () => {
    const placed = await c.calls.place(
      {
        agent_id: agentId,
        to_number: "+14155550125",
        version: 0,
        metadata: { suite: "client" },
        variables: { order_id: "7" },
      },
      { idempotencyKey: "0f6c4b9a-1111-4b2c-8d3e-5a6b7c8d9e0f" },
    );
    const call = await settled(placed.id);
    expect(call).toMatchObject({
      id: placed.id,
      agent_id: agentId,
      agent_version: 0,
      status: "completed",
      direction: "outbound",
      origin: "api",
      to_number: "+14155550125",
      metadata: { suite: "client" },
      variables: { order_id: "7" },
    });
    expect(call.cost?.currency).toBe("USD");
    expect(call.custom_analysis?.["Default Analysis"]?.["User Sentiment"]).toBe("neutral");
    expect(call.dashboard_url).toContain(placed.id);
    await expect(c.calls.get("00000000-0000-4000-8000-000000000000")).rejects.toBeInstanceOf(NotFoundError);
  });

  test("list: newest first, page by page, filtered by direction and origin", async () => {
    const inbound = await controlCall(emu, "POST", "/_emulator/calls", {
      agent_id: agentId,
      direction: "inbound",
      from_number: "+14155550199",
    });
    expect(inbound.status).toBe(202);
    const all = await c.calls.list({ limit: 1 }).toArray();
    expect(all.length).toBeGreaterThanOrEqual(3);
    const created = all.map((x) => x.created_at);
    expect([...created].sort().reverse()).toEqual(created);
    expect(all[0]?.id).toBe(inbound.body.id);
    const api = await c.calls.list({ origin: ["api", "batch"] }).toArray();
    expect(api.length).toBeGreaterThan(0);
    expect(api.every((x) => x.origin === "api")).toBe(true);
    const incoming = await c.calls.list({ direction: "inbound" }).toArray();
    expect(incoming.map((x) => x.id)).toEqual([inbound.body.id]);
    await expect(c.calls.list({ direction: "sideways" }).toArray()).rejects.toMatchObject({
      code: "invalid_direction",
    });
  });

  test("recording: the audio's bytes and type once ready", async () => {
    const placed = await c.calls.place(
      { agent_id: agentId, to_number: "+14155550126" },
      { idempotencyKey: "5c3a1f00-2222-4e6f-8a9b-0c1d2e3f4a5b" },
    );
    await settled(placed.id);
    const rec = await c.calls.recording(placed.id);
    expect(rec.contentType).toBe("audio/wav");
    expect(rec.data.subarray(0, 4).toString("latin1")).toBe("RIFF");
    expect(rec.data.subarray(8, 12).toString("latin1")).toBe("WAVE");
  });
});
