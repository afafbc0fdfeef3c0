/**
 * What the emulator offers other people's tests (docs/emulator.md): the typed control client on
 * what `startEmulator()` returns, health and state, a seed that a reset returns to, chats, and
 * traffic at volume (the traffic contract: `POST /_emulator/traffic`).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  ControlError,
  DEFAULT_API_KEY,
  type EmulatorSeed,
  type RunningEmulator,
  startEmulator,
} from "../../src/emulator";
import { stableUuid } from "../../src/emulator/seed";
import { assignMix } from "../../src/emulator/traffic";
import { ChatList } from "../../src/spec";
import { type Answer, type Api, bind, reason, sleep } from "./helpers";

const CALL_SECONDS = 0.2;
const KB_ID = "11111111-1111-4111-8111-111111111111";
const GROUP_ID = "22222222-2222-4222-8222-222222222222";
const AGENT_ID = "33333333-3333-4333-8333-333333333333";

const SEED: EmulatorSeed = {
  workspaces: {
    default: {
      numbers: ["+91 80 6555 0199"],
      knowledge_bases: [{ id: KB_ID, name: "FAQ", documents: [{ name: "hours", text: "Open 9 to 6." }] }],
      analysis_groups: [
        {
          id: GROUP_ID,
          name: "Sales",
          items: [{ name: "Interested", description: "Keen?", type: "boolean" }],
        },
      ],
      agents: [
        {
          id: AGENT_ID,
          live: true,
          name: "Seeded support",
          knowledge_base_ids: [KB_ID],
          numbers: { inbound_phone: "+918065550199" },
        },
        { name: "Seeded draft" },
      ],
    },
    other: { agents: [{ name: "Other's agent", live: true }] },
  },
};

let emu: RunningEmulator;
let api: Api;
beforeAll(async () => {
  emu = await startEmulator({
    rateLimitPerMinute: 0,
    callSeconds: CALL_SECONDS,
    seed: SEED,
    workspaces: [
      { name: "default", key: DEFAULT_API_KEY },
      { name: "other", key: "va_other" },
    ],
  });
  api = bind(emu);
});
afterAll(async () => {
  await emu?.close();
});
beforeEach(async () => {
  await emu.control.reset();
});

/** An agent with version 0 published and live. */
async function liveAgent(a: Api = api, body: Record<string, unknown> = {}): Promise<{ id: string }> {
  const agent = await a.createAgent(body);
  expect((await a.post(`/v1/agents/${agent.id}/versions/0/publish`)).status).toBe(200);
  expect((await a.post(`/v1/agents/${agent.id}/activations`, { version: 0 })).status).toBe(201);
  return agent;
}

/** Every call of the workspace once each is analysed (within 3 s), in placing order. */
async function finishedCalls(a: Api = api): Promise<any[]> {
  const until = Date.now() + 3_000;
  for (;;) {
    const all: any[] = [];
    let cursor: string | null = null;
    do {
      const r: Answer = await a.get(`/v1/calls?limit=100${cursor ? `&cursor=${cursor}` : ""}`);
      expect(r.status).toBe(200);
      all.push(...r.body.data);
      cursor = r.body.next_cursor;
    } while (cursor);
    if (all.every((c) => c.custom_analysis !== null)) return all.reverse();
    if (Date.now() > until) throw new Error("calls never finished");
    await sleep(25);
  }
}

describe("the control client on startEmulator()", () => {
  it("covers every control route of the emulator", () => {
    const routes = readFileSync(path.join(__dirname, "../../src/emulator/control.ts"), "utf8");
    const client = readFileSync(path.join(__dirname, "../../src/emulator/controlClient.ts"), "utf8");
    const paths = [...routes.matchAll(/router\.add\("([A-Z]+)", "([^"]+)"/g)].map((m) => [m[1], m[2]]);
    expect(paths.length).toBeGreaterThan(20);
    for (const [method, route] of paths) {
      // The client's template literal of the route: `:param` becomes `${seg(...)}`.
      const pattern = (route as string)
        .split("/")
        .map((s) => (s.startsWith(":") ? "\\$\\{seg\\([A-Za-z]+\\)\\}" : s.replace(/[-.]/g, "\\$&")))
        .join("/");
      expect(client, `${method} ${route}`).toMatch(new RegExp(`"${method}", [\`"]${pattern}[\`"]`));
    }
  });

  it("health answers with the workspaces; a refusal throws a ControlError with the status and body", async () => {
    expect(await emu.control.health()).toEqual({ status: "ok", workspaces: ["default", "other"] });
    const err = await emu.control.openDraft("00000000-0000-4000-8000-000000000000").catch((e) => e);
    expect(err).toBeInstanceOf(ControlError);
    expect(err.status).toBe(404);
    expect(err.body.detail.code).toBe("agent_not_found");
  });
});

describe("the seed", () => {
  it("holds the seeded agents, knowledge bases, groups and numbers; the live agent takes calls", async () => {
    const agents = await api.get("/v1/agents");
    expect(agents.body.data.map((a: any) => [a.name, a.live_version]).sort()).toEqual([
      ["Seeded draft", null],
      ["Seeded support", 0],
    ]);
    const detail = await api.get(`/v1/agents/${AGENT_ID}?version=live`);
    expect(detail.body.knowledge_base_ids).toEqual([KB_ID]);
    expect(detail.body.numbers.inbound_phone).toBe("+918065550199");
    const kb = await api.get(`/v1/knowledge-bases/${KB_ID}`);
    expect(kb.body.documents.map((d: any) => [d.name, d.status])).toEqual([["hours", "ready"]]);
    expect((await api.get(`/v1/custom-analysis/groups/${GROUP_ID}`)).body.name).toBe("Sales");
    expect((await api.get("/v1/numbers")).body.map((n: any) => n.number)).toContain("+918065550199");
    const placed = await emu.control.call({ agent_id: AGENT_ID, direction: "inbound" });
    expect(placed.status).toBe("started");
    // The other workspace got its own.
    const others = await api.withKey("va_other").get("/v1/agents");
    expect(others.body.data.map((a: any) => a.name)).toEqual(["Other's agent"]);
  });

  it("a reset returns to it: the same ids, and nothing made since", async () => {
    const before = await emu.control.state();
    await api.createAgent({ name: "Made in a test" });
    expect((await api.del(`/v1/knowledge-bases/${KB_ID}`)).status).toBe(409); // in use by the live agent
    await emu.control.addNumber("default", "+918065550177");
    await emu.control.reset();
    const after = await emu.control.state();
    const names = (s: typeof before) =>
      s.workspaces.map((w) => [
        w.name,
        w.agents.map((a) => [a.id, a.name]).sort(),
        w.numbers.map((n) => n.number),
      ]);
    expect(names(after)).toEqual(names(before));
    expect(JSON.stringify(after.workspaces[0]?.agents)).not.toContain("Made in a test");
  });

  it("refuses at start an entry the service would refuse, naming it, and a workspace not configured", async () => {
    const bad = (seed: unknown) => startEmulator({ port: 0, seed: seed as EmulatorSeed });
    await expect(
      bad({
        workspaces: {
          default: { agents: [{ name: "A" }, { name: "B", voice: { provider: "elevenlabs" } }] },
        },
      }),
    ).rejects.toThrow(/^seed: workspaces\.default\.agents\[1\]: voice\.provider: /);
    await expect(bad({ workspaces: { nowhere: {} } })).rejects.toThrow(
      "seed: workspaces.nowhere: no workspace 'nowhere' is configured (configured: default)",
    );
    await expect(bad({ workspaces: { default: { agent: [] } } })).rejects.toThrow(
      /^seed: workspaces\.default: /,
    );
    await expect(
      bad({ workspaces: { default: { agents: [{ name: "A", knowledge_base_ids: [KB_ID] }] } } }),
    ).rejects.toThrow(/^seed: workspaces\.default\.agents\[0\]: knowledge_base_ids\[0\]/);
  });

  it("refuses an id seeded twice, or the Default Analysis group's, naming it", async () => {
    const bad = (seed: unknown) => startEmulator({ port: 0, seed: seed as EmulatorSeed });
    const id = "6b1f7a52-1111-4c4b-9a0e-000000000001";
    await expect(
      bad({
        workspaces: {
          default: {
            agents: [
              { id, name: "A" },
              { id, name: "B" },
            ],
          },
        },
      }),
    ).rejects.toThrow(`seed: workspaces.default.agents[1]: id: agent '${id}' is seeded twice`);
    await expect(
      bad({
        workspaces: {
          default: {
            knowledge_bases: [
              { id, name: "A" },
              { id, name: "B" },
            ],
          },
        },
      }),
    ).rejects.toThrow(
      `seed: workspaces.default.knowledge_bases[1]: id: knowledge base '${id}' is seeded twice`,
    );
    const builtIn = stableUuid("ws:default:group:default");
    await expect(
      bad({ workspaces: { default: { analysis_groups: [{ id: builtIn, name: "Mine", items: [] }] } } }),
    ).rejects.toThrow(/analysis_groups\[0\]: id: analysis group .* is the built-in Default Analysis group/);
  });

  it("with --db, a bad seed fails the start even over a database that holds the workspace; nothing is lost", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "seed-db-"));
    const db = path.join(dir, "state.db");
    try {
      const first = await startEmulator({
        port: 0,
        db,
        seed: { workspaces: { default: { agents: [{ name: "Kept" }] } } },
      });
      await first.close();
      await expect(
        startEmulator({
          port: 0,
          db,
          seed: {
            workspaces: { default: { agents: [{ name: "Bad", voice: { provider: "elevenlabs" } }] } },
          } as EmulatorSeed,
        }),
      ).rejects.toThrow(/^seed: workspaces\.default\.agents\[0\]: voice\.provider: /);
      const again = await startEmulator({ port: 0, db });
      try {
        const r = await bind(again).get("/v1/agents");
        expect(r.body.data.map((a: any) => a.name)).toEqual(["Kept"]);
      } finally {
        await again.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("comes from a JSON file with --seed's format", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "seed-"));
    try {
      const file = path.join(dir, "seed.json");
      writeFileSync(file, JSON.stringify({ workspaces: { default: { agents: [{ name: "From a file" }] } } }));
      const fromFile = await startEmulator({ port: 0, seed: file });
      try {
        const r = await bind(fromFile).get("/v1/agents");
        expect(r.body.data.map((a: any) => a.name)).toEqual(["From a file"]);
      } finally {
        await fromFile.close();
      }
      writeFileSync(file, "{ not json");
      await expect(startEmulator({ port: 0, seed: file })).rejects.toThrow(`seed: ${file} is not JSON`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("state", () => {
  it("shows what each workspace holds, as the API shows it, and no key", async () => {
    const agent = await liveAgent();
    await emu.control.call({ agent_id: agent.id, direction: "web" });
    await emu.control.retireModel("gemini-1.5-flash");
    const s = await emu.control.state();
    const ws = s.workspaces.find((w) => w.name === "default");
    const mine = ws?.agents.find((a) => a.id === agent.id);
    expect(mine?.live_version).toBe(0);
    expect(mine?.versions.map((v) => [v.version, v.is_published])).toEqual([[0, true]]);
    expect(mine?.activations.map((a) => a.action)).toEqual(["activate"]);
    expect(ws?.calls.map((c) => [c.agent_id, c.direction, c.origin])).toEqual([[agent.id, "web", "widget"]]);
    expect(ws?.knowledge_bases.map((k) => k.id)).toEqual([KB_ID]);
    expect(s.retired_models).toContain("gemini-1.5-flash");
    expect(JSON.stringify(s)).not.toContain(DEFAULT_API_KEY);
    expect(JSON.stringify(s)).not.toContain("va_other");
  });
});

describe("chats", () => {
  it("started through the control API, listed by GET /v1/chats newest first in the spec's envelope", async () => {
    const first = await emu.control.startChat({ agent_id: AGENT_ID });
    const second = await emu.control.startChat({ agent_id: AGENT_ID, origin: "dashboard" });
    expect(first).toMatchObject({ agent_id: AGENT_ID, agent_version: 0, status: "active", origin: "widget" });
    const page1 = await api.get("/v1/chats?limit=1");
    expect(page1.status).toBe(200);
    expect(ChatList.safeParse(page1.body).success).toBe(true);
    expect(page1.body.data.map((c: any) => c.id)).toEqual([second.id]);
    expect(page1.body.has_more).toBe(true);
    const page2 = await api.get(`/v1/chats?limit=1&cursor=${page1.body.next_cursor}`);
    expect(page2.body).toMatchObject({ data: [{ id: first.id }], has_more: false, next_cursor: null });
    const ended = await emu.control.endChat(first.id);
    expect(ended.status).toBe("completed");
    expect(ended.ended_at).not.toBeNull();
    // Another workspace sees none of them; a cursor of another list is refused.
    expect((await api.withKey("va_other").get("/v1/chats")).body.data).toEqual([]);
    expect(
      reason(await api.get(`/v1/chats?cursor=${(await api.get("/v1/agents?limit=1")).body.next_cursor}`)),
    ).toBe("invalid_cursor");
    expect((await api.get("/v1/chats?direction=web")).status).toBe(422);
    await emu.control.reset();
    expect((await api.get("/v1/chats")).body.data).toEqual([]);
  });

  it("is refused as a call is when the agent is off air, and from a widget that takes no chats", async () => {
    const draft = await api.createAgent({ name: "Draft" });
    const off = await emu.control.request("POST", "/_emulator/chats", { agent_id: draft.id });
    expect([off.status, reason(off as Answer)]).toEqual([409, "agent_not_published"]);
    expect(
      (await api.patch(`/v1/agents/${AGENT_ID}/widget`, { enabled_modes: { chat: false } })).status,
    ).toBe(200);
    const noChat = await emu.control.request("POST", "/_emulator/chats", { agent_id: AGENT_ID });
    expect([noChat.status, reason(noChat as Answer)]).toEqual([409, "chat_disabled"]);
    const extra = await emu.control.request("POST", "/_emulator/chats", { agent_id: AGENT_ID, visitor: "x" });
    expect(extra.status).toBe(422);
    expect((await api.get("/v1/chats")).body.data).toEqual([]);
  });
});

describe("traffic at volume (POST /_emulator/traffic)", () => {
  it("exact proportions, interleaved evenly; the rest finishes with the default outcome", async () => {
    const answer = await emu.control.traffic({
      agent_id: AGENT_ID,
      count: 20,
      mix: [
        { share: 0.3, analysis: { "Default Analysis": { "User Sentiment": "negative" } } },
        { share: 0.05, status: "failed" },
        { share: 0.1, analysis: { "Default Analysis": { Outcome: null } } },
      ],
    });
    expect(answer.count).toBe(20);
    expect(answer.calls).toHaveLength(20);
    expect(answer.calls.every((c) => c.status === "started")).toBe(true);
    const calls = await finishedCalls();
    expect(calls.map((c) => c.id)).toEqual(answer.calls.map((c) => c.id));
    const kind = (c: any) =>
      c.status === "failed"
        ? "failed"
        : c.custom_analysis["Default Analysis"]["User Sentiment"] === "negative"
          ? "negative"
          : c.custom_analysis["Default Analysis"].Outcome === null
            ? "no outcome"
            : "default";
    const kinds = calls.map(kind);
    const count = (k: string, list = kinds) => list.filter((x) => x === k).length;
    expect([count("negative"), count("failed"), count("no outcome"), count("default")]).toEqual([
      6, 1, 2, 11,
    ]);
    // Evenly: each half holds half of the negatives.
    expect(count("negative", kinds.slice(0, 10))).toBe(3);
    expect(
      calls.every((c) => c.direction === "inbound" && c.origin === "inbound" && c.agent_version === 0),
    ).toBe(true);
  });

  it("with a seed each call draws its entry: the same seed gives the same calls", async () => {
    const body = {
      agent_id: AGENT_ID,
      count: 40,
      seed: 7,
      mix: [{ share: 0.5, status: "no_answer" as const }],
    };
    await emu.control.traffic(body);
    const first = (await finishedCalls()).map((c) => c.status);
    await emu.control.reset();
    await emu.control.traffic(body);
    const second = (await finishedCalls()).map((c) => c.status);
    expect(second).toEqual(first);
    expect(first.filter((s) => s === "no_answer").length).toBeGreaterThan(8);
    expect(first.filter((s) => s === "completed").length).toBeGreaterThan(8);
    expect(assignMix([{ share: 0.5 }], 40, 7)).toEqual(first.map((s) => (s === "no_answer" ? 0 : -1)));
    expect(assignMix([{ share: 0.5 }], 40, 8)).not.toEqual(assignMix([{ share: 0.5 }], 40, 7));
  });

  it("direction follows the origin; a pinned version answers; the call-outcome rules apply to the rest", async () => {
    await emu.control.setCallOutcomes([{ match: { agent_id: AGENT_ID }, duration_seconds: 42 }]);
    await emu.control.traffic({ agent_id: AGENT_ID, count: 1, origin: "widget" });
    await emu.control.traffic({ agent_id: AGENT_ID, count: 1, origin: "batch" });
    await emu.control.traffic({ agent_id: AGENT_ID, count: 1, origin: "demo", direction: "web", version: 0 });
    await emu.control.traffic({ agent_id: AGENT_ID, count: 1, mix: [{ share: 1, duration_seconds: 7 }] });
    const calls = await finishedCalls();
    expect(calls.map((c) => [c.origin, c.direction, c.duration_seconds])).toEqual([
      ["widget", "web", 42],
      ["batch", "outbound", 42],
      ["demo", "web", 42],
      ["inbound", "inbound", 7],
    ]);
  });

  it("refuses bad bodies (422) and an agent without a live version (409), placing nothing", async () => {
    const draft = await api.createAgent({ name: "Draft" });
    const post = (body: unknown) => emu.control.request("POST", "/_emulator/traffic", body);
    const cases: [unknown, number, string][] = [
      [{ agent_id: AGENT_ID, count: 0 }, 422, "count"],
      [{ agent_id: AGENT_ID, count: 1_000_001 }, 422, "count"],
      [{ agent_id: AGENT_ID, count: 2.5 }, 422, "count"],
      [{ agent_id: AGENT_ID }, 422, "count"],
      [{ agent_id: AGENT_ID, count: 3, speed: 2 }, 422, "speed"],
      [{ agent_id: AGENT_ID, count: 3, mix: [{ share: 0.7 }, { share: 0.4 }] }, 422, "mix"],
      [{ agent_id: AGENT_ID, count: 3, mix: [{ share: 0.5, transcript: [] }] }, 422, "mix[0].transcript"],
      [{ agent_id: AGENT_ID, count: 3, mix: [{ share: 0.5, status: "started" }] }, 422, "mix[0].status"],
      [{ agent_id: AGENT_ID, count: 3, direction: "sideways" }, 422, "direction"],
      [{ agent_id: draft.id, count: 3 }, 409, "agent_id"],
      [{ agent_id: AGENT_ID, count: 3, version: 9 }, 404, "version"],
      [{ agent_id: "00000000-0000-4000-8000-000000000000", count: 3 }, 404, "agent_id"],
    ];
    for (const [body, status, field] of cases) {
      const a = await post(body);
      expect(a.status, JSON.stringify(body)).toBe(status);
      expect(JSON.stringify(a.body), JSON.stringify(body)).toContain(field);
    }
    expect((await api.get("/v1/calls")).body.data).toEqual([]);
  });

  it("every call delivers its webhook events like any other call", async () => {
    const got: { call: string; type: string }[] = [];
    const server: Server = createServer((req, res) => {
      let text = "";
      req.on("data", (d) => {
        text += d;
      });
      req.on("end", () => {
        const e = JSON.parse(text);
        got.push({ call: e.data.call.id, type: e.event_type });
        res.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      await emu.control.setAgentWebhook(
        AGENT_ID,
        `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
      );
      const { calls } = await emu.control.traffic({ agent_id: AGENT_ID, count: 3 });
      const until = Date.now() + 3_000;
      while (got.filter((g) => g.type === "call.processing.completed").length < 3 && Date.now() < until)
        await sleep(20);
      const done = got.filter((g) => g.type === "call.processing.completed").map((g) => g.call);
      expect(done.sort()).toEqual(calls.map((c) => c.id).sort());
    } finally {
      await emu.control.reset();
      await new Promise((r) => server.close(r));
    }
  });
});
