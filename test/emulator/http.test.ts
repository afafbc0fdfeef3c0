/** Envelopes, headers, auth, workspaces, pagination, rate limit, faults and the request log. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startEmulator } from "../../src/emulator";
import { clearRequestLog, controlCall, requestLog, resetEmulator, setFaults } from "../support/control";
import { type Api, bind, reason, request, sleep, start } from "./helpers";

let api: Api;
let other: Api;
beforeAll(async () => {
  api = await start({
    workspaces: [
      { name: "acme", key: "va_acme" },
      { name: "globex", key: "va_globex" },
    ],
  });
  api = api.withKey("va_acme");
  other = api.withKey("va_globex");
});
afterAll(async () => {
  await api.emu.close();
});
beforeEach(async () => {
  await resetEmulator(api.emu);
});

describe("envelopes and headers", () => {
  it("unknown path: 404 plain-string detail; wrong method: 405 plain-string detail", async () => {
    const nf = await api.get("/v1/nothing-here");
    expect(nf.status).toBe(404);
    expect(nf.body).toEqual({ detail: expect.any(String), code: "NOT_FOUND" });
    const na = await api.call("DELETE", "/v1/agents");
    expect(na.status).toBe(405);
    expect(na.body).toEqual({ detail: expect.any(String), code: "METHOD_NOT_ALLOWED" });
    expect(na.headers.get("allow")).toContain("GET");
  });

  it("every answer carries X-Request-ID (unique) and the voice concurrency headers", async () => {
    const answers = [
      await api.get("/v1/agents"),
      await api.get("/v1/nope"),
      await request(`${api.emu.url}/v1/agents`, "GET"),
      await api.post("/v1/agents", {}),
      await api.control("GET", "/_emulator/requests"),
    ];
    const ids = answers.map((a) => a.headers.get("x-request-id"));
    for (const a of answers) {
      expect(a.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]+$/);
      expect(a.headers.get("x-voice-concurrency-limit")).toMatch(/^\d+$/);
      expect(a.headers.get("x-voice-concurrency-in-use")).toBe("0");
    }
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe("auth and workspaces", () => {
  it("missing or invalid key: 401 {detail: 'Invalid API key', code: 'UNAUTHORIZED'}", async () => {
    const variants: Record<string, string>[] = [
      {},
      { Authorization: "Bearer nope" },
      { Authorization: "Basic va_acme" },
    ];
    for (const headers of variants) {
      const r = await request(`${api.emu.url}/v1/agents`, "GET", undefined, headers);
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ detail: "Invalid API key", code: "UNAUTHORIZED" });
    }
  });

  it("a revoked key stops working immediately", async () => {
    expect((await other.get("/v1/agents")).status).toBe(200);
    const rv = await api.control("POST", "/_emulator/keys/va_globex/revoke");
    expect(rv.status).toBe(200);
    const r = await other.get("/v1/agents");
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ detail: "Invalid API key", code: "UNAUTHORIZED" });
    expect((await api.get("/v1/agents")).status).toBe(200);
  });

  it("workspace headers are ignored when they agree and refused with 403 when not", async () => {
    expect(
      (await api.get("/v1/agents", { "X-Service-Workspace": "acme", "X-Service-Org": "emulator" })).status,
    ).toBe(200);
    const ws = await api.get("/v1/agents", { "X-Service-Workspace": "globex" });
    expect(ws.status).toBe(403);
    expect(ws.body.code).toBe("FORBIDDEN");
    expect(ws.body.detail.param).toBe("X-Service-Workspace");
    const org = await api.get("/v1/agents", { "X-Service-Org": "00000000-0000-4000-8000-000000000000" });
    expect(org.status).toBe(403);
  });

  it("another workspace's agent is 404, and lists never show it", async () => {
    const a = await api.createAgent({ name: "Mine" });
    const r = await other.get(`/v1/agents/${a.id}`);
    expect(r.status).toBe(404);
    expect(reason(r)).toBe("agent_not_found");
    expect((await other.patch(`/v1/agents/${a.id}`, { name: "x" })).status).toBe(404);
    expect((await other.get("/v1/agents")).body.data).toEqual([]);
    // Each workspace holds its own numbers.
    const acmeNumbers = (await api.get("/v1/numbers")).body.map((n: any) => n.number);
    const globexNumbers = (await other.get("/v1/numbers")).body.map((n: any) => n.number);
    expect(acmeNumbers).toContain("+918065550101");
    expect(globexNumbers).toContain("+918065550201");
    const foreign = await other.post("/v1/agents", {
      name: "x",
      numbers: { inbound_phone: "+918065550101" },
    });
    expect(foreign.body.detail).toMatchObject({ code: "document_invalid", param: "numbers.inbound_phone" });
  });
});

describe("cursor pagination", () => {
  it("pages agents newest first with opaque cursors; limit 1..100 default 20", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 23; i++) ids.push((await api.createAgent({ name: `A${i}` })).id);
    const first = await api.get("/v1/agents");
    expect(first.body.data).toHaveLength(20);
    expect(first.body.has_more).toBe(true);
    expect(first.body.data[0].id).toBe(ids[22]);
    expect(Object.keys(first.body.data[0]).sort()).toEqual(
      [
        "created_at",
        "id",
        "inbound_phone",
        "is_live",
        "latest_version",
        "live_version",
        "name",
        "updated_at",
      ].sort(),
    );
    const second = await api.get(`/v1/agents?cursor=${encodeURIComponent(first.body.next_cursor)}`);
    expect(second.body.data.map((a: any) => a.id)).toEqual(ids.slice(0, 3).reverse());
    expect(second.body).toMatchObject({ has_more: false, next_cursor: null });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await api.get(`/v1/agents?limit=7${cursor ? `&cursor=${cursor}` : ""}`);
      seen.push(...page.body.data.map((a: any) => a.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
    for (const [limit, type] of [
      ["0", "greater_than_equal"],
      ["101", "less_than_equal"],
      ["ten", "int_parsing"],
    ]) {
      const r = await api.get(`/v1/agents?limit=${limit}`);
      expect(r.status).toBe(422);
      expect(r.body.detail.errors[0]).toMatchObject({ field: "query.limit", type });
    }
    expect((await api.get("/v1/agents?limit=100")).body.data).toHaveLength(23);
  });

  it("a cursor from a differently sorted list, or garbage, is invalid_cursor", async () => {
    for (let i = 0; i < 3; i++) await api.post("/v1/knowledge-bases", { name: `k${i}` });
    const kbPage = await api.get("/v1/knowledge-bases?limit=1");
    const r = await api.get(`/v1/agents?cursor=${kbPage.body.next_cursor}`);
    expect(r.status).toBe(400);
    expect(reason(r)).toBe("invalid_cursor");
    expect(r.body.detail.param).toBe("cursor");
    expect(reason(await api.get("/v1/agents?cursor=garbage"))).toBe("invalid_cursor");
  });

  it("?skip=, ?offset= and unknown query parameters are 422 extra_forbidden, each listed", async () => {
    const r = await api.get("/v1/agents?skip=1&offset=2&sort=name");
    expect(r.status).toBe(422);
    expect(r.body.detail.errors.map((e: any) => `${e.field}:${e.type}`)).toEqual([
      "query.skip:extra_forbidden",
      "query.offset:extra_forbidden",
      "query.sort:extra_forbidden",
    ]);
    expect((await api.get("/v1/numbers?limit=5")).status).toBe(422);
  });
});

describe("rate limit", () => {
  it("answers a flat 429 with Retry-After and X-RateLimit-* once N requests fall in the window", async () => {
    const emu = await startEmulator({ rateLimitPerMinute: 5 });
    try {
      const limited = bind(emu);
      const seen: number[] = [];
      for (let i = 0; i < 5; i++) {
        const r = await limited.get("/v1/models");
        expect(r.status).toBe(200);
        expect(r.headers.get("x-ratelimit-limit")).toBe("5");
        seen.push(Number(r.headers.get("x-ratelimit-remaining")));
        expect(Number(r.headers.get("x-ratelimit-reset"))).toBeGreaterThan(0);
      }
      expect(seen).toEqual([4, 3, 2, 1, 0]);
      const r = await limited.get("/v1/models");
      expect(r.status).toBe(429);
      expect(r.body).toEqual({ code: "rate_limited" });
      const retry = Number(r.headers.get("retry-after"));
      expect(retry).toBeGreaterThan(0);
      expect(retry).toBeLessThanOrEqual(60);
      expect(r.headers.get("x-ratelimit-remaining")).toBe("0");
      expect(r.headers.get("x-request-id")).toBeTruthy();
      // The control API is never limited.
      expect((await limited.control("GET", "/_emulator/requests")).status).toBe(200);
      // Clearing the windows gives a fresh minute, and keeps the state.
      const created = await limited.control("POST", "/_emulator/workspaces/default/custom-tools", {
        name: "kept",
      });
      expect(created.status).toBe(201);
      expect((await limited.control("POST", "/_emulator/rate-limit/clear")).body).toEqual({ cleared: true });
      for (let i = 0; i < 5; i++) expect((await limited.get("/v1/models")).status).toBe(200);
      expect((await limited.get("/v1/models")).status).toBe(429);
      const again = await limited.control("POST", "/_emulator/workspaces/default/custom-tools", {
        name: "kept",
      });
      expect(again.status).toBe(200);
    } finally {
      await emu.close();
    }
  });

  it("counts per key", async () => {
    const emu = await startEmulator({
      rateLimitPerMinute: 2,
      workspaces: [
        { name: "a", key: "ka" },
        { name: "b", key: "kb" },
      ],
    });
    try {
      const a = bind(emu, "ka");
      const b = bind(emu, "kb");
      await a.get("/v1/models");
      await a.get("/v1/models");
      expect((await a.get("/v1/models")).status).toBe(429);
      expect((await b.get("/v1/models")).status).toBe(200);
    } finally {
      await emu.close();
    }
  });
});

describe("rate limit under concurrent requests", () => {
  it("many parallel requests of one key: each admitted one gets its own Remaining, never below 0", async () => {
    const LIMIT = 40;
    const emu = await startEmulator({ rateLimitPerMinute: LIMIT });
    try {
      const api = bind(emu);
      // Reads and writes at once (a write reads its body after it was counted), from many sockets.
      const answers = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          i % 2 ? api.get("/v1/models") : api.post("/v1/agents", { name: `parallel ${i}` }),
        ),
      );
      const admitted = answers.filter((r) => r.status !== 429);
      const refused = answers.filter((r) => r.status === 429);
      expect(admitted).toHaveLength(LIMIT);
      expect(refused).toHaveLength(100 - LIMIT);
      // Within the window Remaining only falls: the admitted requests hold LIMIT-1 .. 0, each once.
      const remaining = admitted.map((r) => Number(r.headers.get("x-ratelimit-remaining")));
      expect([...remaining].sort((a, b) => b - a)).toEqual(
        Array.from({ length: LIMIT }, (_, i) => LIMIT - 1 - i),
      );
      for (const r of refused) {
        expect(r.headers.get("x-ratelimit-remaining")).toBe("0");
        expect(Number(r.headers.get("retry-after"))).toBe(Number(r.headers.get("x-ratelimit-reset")));
      }
      for (const r of answers) {
        expect(r.headers.get("x-ratelimit-limit")).toBe(String(LIMIT));
        const reset = Number(r.headers.get("x-ratelimit-reset"));
        expect(reset).toBeGreaterThanOrEqual(1);
        expect(reset).toBeLessThanOrEqual(60);
      }
    } finally {
      await emu.close();
    }
  });
});

describe("rate-limit window", () => {
  it("frees a slot once the oldest counted request is a window old; Retry-After counts to then", async () => {
    const emu = await startEmulator({ rateLimitPerMinute: 2, rateWindowMs: 1_000 });
    try {
      const limited = bind(emu);
      expect((await limited.get("/v1/models")).status).toBe(200);
      expect((await limited.get("/v1/models")).status).toBe(200);
      const refused = await limited.get("/v1/models");
      expect(refused.status).toBe(429);
      expect(refused.headers.get("retry-after")).toBe("1");
      // Refused requests are not counted: after the window the key has its whole budget again.
      // Retry-After counts from the refusal to when the oldest counted request leaves the window.
      await sleep(Number(refused.headers.get("retry-after")) * 1_000);
      const again = await limited.get("/v1/models");
      expect(again.status).toBe(200);
      expect(again.headers.get("x-ratelimit-remaining")).toBe("1");
    } finally {
      await emu.close();
    }
  });

  it("is a minute by default, as the service's", async () => {
    const emu = await startEmulator({ rateLimitPerMinute: 1 });
    try {
      const limited = bind(emu);
      expect((await limited.get("/v1/models")).status).toBe(200);
      const r = await limited.get("/v1/models");
      expect(r.status).toBe(429);
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(58);
      expect(Number(r.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    } finally {
      await emu.close();
    }
  });

  it("refuses a window that is not a positive length", async () => {
    await expect(startEmulator({ rateWindowMs: 0 })).rejects.toThrow(/window/);
  });
});

describe("faults and the request log", () => {
  const outcomes = async (n: number): Promise<string[]> => {
    const out: string[] = [];
    for (let i = 0; i < n; i++) {
      try {
        const r = await api.get("/v1/models");
        out.push(String(r.status));
      } catch {
        out.push("reset");
      }
    }
    return out;
  };

  it("injects 5xx answers and dropped connections deterministically from the seed", async () => {
    const faults = { error_rate: 0.3, reset_rate: 0.2, latency_ms: 0, drop_after_commit_rate: 0, seed: 42 };
    expect((await api.control("PUT", "/_emulator/faults", faults)).status).toBe(200);
    const first = await outcomes(30);
    await setFaults(api.emu, faults);
    const second = await outcomes(30);
    expect(second).toEqual(first);
    expect(first).toContain("503");
    expect(first).toContain("reset");
    expect(first).toContain("200");
    await setFaults(api.emu, { ...faults, seed: 7 });
    expect(await outcomes(30)).not.toEqual(first);
    // The control API is never faulted.
    await setFaults(api.emu, { ...faults, error_rate: 1 });
    expect((await api.control("GET", "/_emulator/requests")).status).toBe(200);
    const r = await api.get("/v1/models");
    expect(r.status).toBe(503);
    expect(r.body).toMatchObject({ detail: { code: "service_unavailable" }, code: "SERVICE_UNAVAILABLE" });
  });

  it("adds latency", async () => {
    await setFaults(api.emu, { latency_ms: 150 });
    const t0 = Date.now();
    await api.get("/v1/models");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
  });

  it("drop_after_commit: the write is committed but its answer is lost", async () => {
    await clearRequestLog(api.emu);
    await setFaults(api.emu, { drop_after_commit_rate: 1, seed: 1 });
    await expect(api.post("/v1/agents", { name: "Ghost" })).rejects.toThrow();
    // Reads are not writes: they are answered.
    const list = await api.get("/v1/agents");
    expect(list.body.data.map((a: any) => a.name)).toEqual(["Ghost"]);
    const log: any[] = await requestLog(api.emu);
    expect(log[0]).toMatchObject({
      method: "POST",
      path: "/v1/agents",
      status: 0,
      dropped: "after_commit",
      workspace: "acme",
    });
    expect(log[1]).toMatchObject({ method: "GET", status: 200 });
  });

  it("hold_after_commit: the matching write commits, its answer never comes; once only", async () => {
    await clearRequestLog(api.emu);
    await setFaults(api.emu, { hold_after_commit: { method: "POST", path: "/v1/agents" } });
    const held = fetch(`${api.emu.url}/v1/agents`, {
      method: "POST",
      headers: { authorization: `Bearer ${api.key}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Held" }),
      signal: AbortSignal.timeout(700),
    });
    await expect(held).rejects.toThrow();
    const list = await api.get("/v1/agents");
    expect(list.body.data.map((a: any) => a.name)).toContain("Held");
    // Fired once: the next create is answered, and the configuration no longer holds anything.
    expect((await api.post("/v1/agents", { name: "Answered" })).status).toBe(201);
    expect((await controlCall(api.emu, "GET", "/_emulator/faults")).body.hold_after_commit).toBeUndefined();
    const log: any[] = await requestLog(api.emu);
    expect(log[0]).toMatchObject({ method: "POST", path: "/v1/agents", status: 0, dropped: "held" });
    expect(log.at(-1)).toMatchObject({ method: "POST", path: "/v1/agents", status: 201 });
    await setFaults(api.emu, {});
  });

  it("hold_after_commit with a list: one write held per rule, each rule once, the others answered", async () => {
    await clearRequestLog(api.emu);
    await setFaults(api.emu, {
      hold_after_commit: [
        { method: "POST", path: "/v1/agents" },
        { method: "PATCH", path: "/v1/agents/[^/]+" },
        { method: "POST", path: "/v1/agents" },
      ],
    });
    const send = (method: string, path: string, body: unknown) =>
      fetch(`${api.emu.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${api.key}`, "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(700),
      });
    await expect(send("POST", "/v1/agents", { name: "Held one" })).rejects.toThrow();
    // The PATCH rule waits for a PATCH: a read is answered, and the first rule has gone.
    expect((await controlCall(api.emu, "GET", "/_emulator/faults")).body.hold_after_commit).toEqual([
      { method: "PATCH", path: "/v1/agents/[^/]+" },
      { method: "POST", path: "/v1/agents" },
    ]);
    const list = await api.get("/v1/agents?limit=100");
    const heldOne = list.body.data.find((a: any) => a.name === "Held one");
    expect(heldOne).toBeDefined();
    await expect(send("POST", "/v1/agents", { name: "Held two" })).rejects.toThrow();
    await expect(send("PATCH", `/v1/agents/${heldOne.id}`, { name: "Held patch" })).rejects.toThrow();
    expect((await api.get(`/v1/agents/${heldOne.id}`)).body.name).toBe("Held patch");
    // Every rule fired: the next create is answered, and nothing is held any more.
    expect((await api.post("/v1/agents", { name: "Answered" })).status).toBe(201);
    expect((await controlCall(api.emu, "GET", "/_emulator/faults")).body.hold_after_commit).toBeUndefined();
    const log: any[] = await requestLog(api.emu);
    expect(log.filter((r) => r.dropped === "held").map((r) => `${r.method} ${r.path}`)).toEqual([
      "POST /v1/agents",
      "POST /v1/agents",
      `PATCH /v1/agents/${heldOne.id}`,
    ]);
    await setFaults(api.emu, {});
  });

  it("logs /v1 requests with status, request id, workspace and user agent; DELETE clears", async () => {
    await clearRequestLog(api.emu);
    const ok = await api.get("/v1/agents?limit=5", { "user-agent": "pulumi-voice-agent (voice-agent-diff)" });
    await request(`${api.emu.url}/v1/agents`, "GET");
    await other.get("/v1/models");
    const log: any[] = await requestLog(api.emu);
    expect(log).toHaveLength(3);
    expect(log[0]).toEqual({
      at: expect.any(String),
      method: "GET",
      path: "/v1/agents?limit=5",
      status: 200,
      request_id: ok.headers.get("x-request-id"),
      workspace: "acme",
      user_agent: "pulumi-voice-agent (voice-agent-diff)",
    });
    expect(log[1]).toMatchObject({ status: 401, workspace: null });
    expect(log[2]).toMatchObject({ status: 200, workspace: "globex" });
    expect((await api.control("DELETE", "/_emulator/requests")).status).toBe(204);
    expect((await api.control("GET", "/_emulator/requests")).body).toEqual([]);
  });

  it("logs connections reset before handling with status 0", async () => {
    await clearRequestLog(api.emu);
    await setFaults(api.emu, { reset_rate: 1 });
    await expect(api.get("/v1/models")).rejects.toThrow();
    const log: any[] = await requestLog(api.emu);
    expect(log).toEqual([expect.objectContaining({ status: 0, dropped: "reset", path: "/v1/models" })]);
  });

  it("refuses a malformed fault configuration", async () => {
    const r = await api.control("PUT", "/_emulator/faults", { error_rate: 2, colour: 1 });
    expect(r.status).toBe(422);
    expect(r.body.detail.errors.map((e: any) => e.field).sort()).toEqual(["colour", "error_rate"]);
  });
});
