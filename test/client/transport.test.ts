/**
 * The transport against a scripted local HTTP server: connection reuse, retry rules by method,
 * per-attempt timeouts, the budget, Retry-After, and the debug log.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  ConnectionError,
  RateLimitError,
  ResponseShapeError,
  ServiceError,
  VoiceAgentClient,
} from "../../src/client";
import { closeDispatchers, send } from "../../src/client/transport";

const KEY = "va_test_transport_secret_42";
type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

let server: Server;
let baseUrl: string;
let handler: Handler = (_q, res) => res.end("{}");
let hits = 0;
let current = 0;
let connections = 0;
const seen: { method: string; url: string; headers: IncomingMessage["headers"] }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
    req.resume();
    req.on("end", () => {
      current = hits++;
      handler(req, res, current);
    });
  });
  server.on("connection", () => connections++);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await closeDispatchers();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

afterEach(() => {
  hits = 0;
  seen.length = 0;
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json", "x-request-id": `req_${current}`, ...headers });
  res.end(JSON.stringify(body));
};

// A separate limiter per test (the limiter registry is keyed by base URL + key).
let n = 0;
const cfg = (extra: Record<string, unknown> = {}) => ({
  baseUrl: `${baseUrl}/t${n++}`,
  apiKey: KEY,
  rateLimitPerMinute: 10_000,
  ...extra,
});

describe("transport", () => {
  it("reuses one keep-alive connection and sends the key only as a Bearer header", async () => {
    handler = (_q, res) => json(res, 200, { ok: true });
    const before = connections;
    const c = cfg({ userAgent: "bench/1" });
    for (let i = 0; i < 10; i++) {
      const r = await send(c, {
        method: "GET",
        path: "/v1/models",
        query: { provider: "x y", none: undefined },
        retry: "idempotent",
      });
      expect(r.body).toEqual({ ok: true });
    }
    // undici may open a second socket when a request follows the previous answer within the same
    // tick; what matters is that sockets are reused rather than opened per request.
    expect(connections - before).toBeLessThanOrEqual(2);
    expect(seen[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(seen[0]?.headers["user-agent"]).toBe("bench/1");
    expect(seen[0]?.url).toMatch(/^\/t\d+\/v1\/models\?provider=x\+y$/);
  });

  it("retries 5xx for idempotent requests and logs one line per attempt without secrets", async () => {
    vi.stubEnv("VOICE_AGENT_DEBUG", "1");
    const lines: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    handler = (_q, res, i) =>
      i < 2 ? json(res, 503, { detail: { code: "x", message: "m" } }) : json(res, 200, [1]);
    const r = await send(cfg(), { method: "GET", path: "/v1/numbers", retry: "idempotent" });
    expect(r.body).toEqual([1]);
    expect(r.retries).toBe(2);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(
      /^voice-agent method=GET path=\/v1\/numbers status=503 duration_ms=\d+ request_id=req_0 retry=0\n$/,
    );
    expect(lines[2]).toMatch(/status=200 .*request_id=req_2 retry=2/);
    expect(lines.join("")).not.toContain(KEY);
  });

  it("does not repeat an unsafe request after a 5xx, and says it may have committed", async () => {
    handler = (_q, res) => json(res, 500, { detail: "boom", code: "SERVICE_UNAVAILABLE" });
    const err = await send(cfg(), {
      method: "POST",
      path: "/v1/knowledge-bases",
      body: {},
      retry: "unsafe",
    }).catch((e) => e);
    expect(err).toBeInstanceOf(ServiceError);
    expect(seen).toHaveLength(1);
  });

  it("repeats an unsafe request after a 429, waiting Retry-After (HTTP date form too)", async () => {
    handler = (_q, res, i) =>
      i === 0
        ? json(
            res,
            429,
            { code: "rate_limited" },
            { "retry-after": new Date(Date.now() + 1500).toUTCString() },
          )
        : json(res, 201, { id: "k" });
    const t0 = performance.now();
    const r = await send(cfg(), { method: "POST", path: "/v1/knowledge-bases", body: {}, retry: "unsafe" });
    expect(r.status).toBe(201);
    // HTTP dates have 1 s resolution: the wait is between ~0.5 and 1.5 s.
    expect(performance.now() - t0).toBeGreaterThan(400);
  });

  it("a 429 with Retry-After: 0, or a date already past, still waits the backoff: no storm", async () => {
    // A server that answers every request 429 at once, with a hint that says "now" (or earlier):
    // over 20 s of retry budget one read asks at most 30 times (the storm was 300 in under 3 s).
    const forms = ["0", new Date(Date.now() - 60_000).toUTCString()];
    const counts = await Promise.all(
      forms.map(async (retryAfter, f) => {
        const base = cfg({ retryBudgetMs: 20_000 });
        let asked = 0;
        const prev = handler;
        const path = `/v1/agents/storm${f}`;
        handler = (q, res, i) => {
          if (q.url?.endsWith(path)) {
            asked++;
            json(res, 429, { code: "rate_limited", message: "slow down" }, { "retry-after": retryAfter });
          } else prev(q, res, i);
        };
        const t0 = performance.now();
        const err = await send(base, { method: "GET", path, retry: "idempotent" }).catch((e) => e);
        expect(err).toBeInstanceOf(RateLimitError);
        expect(err.status).toBe(429);
        return { asked, seconds: (performance.now() - t0) / 1000 };
      }),
    );
    for (const { asked, seconds } of counts) {
      expect(seconds).toBeLessThan(30); // the budget, and the last answer (a loaded machine)
      expect(asked).toBeGreaterThan(1);
      expect(asked).toBeLessThanOrEqual(30);
    }
  }, 60_000);

  it("a cancel (the engine's Cancel) ends a retry wait and abandons an attempt in flight: no further attempt", async () => {
    // A 429 asking for 30 s: cancelled 300 ms in, the request fails at once and is not tried again.
    handler = (_q, res) => json(res, 429, { code: "rate_limited" }, { "retry-after": "30" });
    const waiting = new AbortController();
    setTimeout(() => waiting.abort(), 300);
    let t0 = performance.now();
    const err = await send(cfg({ signal: waiting.signal }), {
      method: "GET",
      path: "/v1/agents",
      retry: "idempotent",
    }).catch((e) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err.code).toBe("ECANCELLED");
    expect(err.message).toMatch(/cancelled by the Pulumi engine/);
    expect(performance.now() - t0).toBeLessThan(3_000);
    expect(seen).toHaveLength(1);
    expect(JSON.stringify(err)).not.toContain(KEY);

    // An answer that never comes: the attempt is abandoned when the cancel arrives, not at its timeout.
    seen.length = 0;
    handler = () => undefined;
    const inFlight = new AbortController();
    setTimeout(() => inFlight.abort(), 300);
    t0 = performance.now();
    const gone = await send(cfg({ signal: inFlight.signal, timeoutMs: 20_000 }), {
      method: "POST",
      path: "/v1/knowledge-bases",
      body: {},
      retry: "unsafe",
    }).catch((e) => e);
    expect(gone).toBeInstanceOf(ConnectionError);
    expect(gone.code).toBe("ECANCELLED");
    expect(gone.mayHaveCommitted).toBe(true);
    expect(performance.now() - t0).toBeLessThan(3_000);
    expect(seen).toHaveLength(1);

    // Already cancelled: nothing is sent.
    seen.length = 0;
    const none = await send(cfg({ signal: AbortSignal.abort() }), {
      method: "GET",
      path: "/v1/agents",
      retry: "idempotent",
    }).catch((e) => e);
    expect(none.code).toBe("ECANCELLED");
    expect(none.mayHaveCommitted).toBe(false);
    expect(seen).toHaveLength(0);
  });

  it("times out an attempt, retries it, and gives up at the budget with a ConnectionError", async () => {
    handler = (_q, res) => setTimeout(() => json(res, 200, {}), 400);
    const t0 = performance.now();
    const err = await send(cfg({ timeoutMs: 100, retryBudgetMs: 700 }), {
      method: "GET",
      path: "/v1/languages",
      retry: "idempotent",
    }).catch((e) => e);
    const took = performance.now() - t0;
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err.timedOut).toBe(true);
    expect(err.mayHaveCommitted).toBe(true);
    expect(err.retries).toBeGreaterThanOrEqual(1);
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(took).toBeLessThan(2500);
    expect(JSON.stringify(err)).not.toContain(KEY);
  });

  it("retries a connection refused even for unsafe requests (never sent), once the service has answered", async () => {
    const dead = createServer((_q, res) => res.end('{"ok":1}'));
    await new Promise<void>((r) => dead.listen(0, "127.0.0.1", r));
    const port = (dead.address() as AddressInfo).port;
    const cfgHere = { baseUrl: `http://127.0.0.1:${port}`, apiKey: KEY, retryBudgetMs: 300 };
    await send(cfgHere, { method: "GET", path: "/v1/models", retry: "idempotent" });
    await closeDispatchers();
    dead.closeAllConnections();
    await new Promise((r) => dead.close(r));
    const err = await send(cfgHere, { method: "POST", path: "/v1/agents", body: {}, retry: "unsafe" }).catch(
      (e) => e,
    );
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err.code).toBe("ECONNREFUSED");
    expect(err.mayHaveCommitted).toBe(false);
    expect(err.retries).toBeGreaterThanOrEqual(1);
  });

  it("fails at once at an address nothing ever answered on, naming it, cause first (default budget): no retry can succeed", async () => {
    const port = await closedPort();
    const t0 = performance.now();
    const err = await send(
      { baseUrl: `http://127.0.0.1:${port}`, apiKey: KEY },
      { method: "GET", path: "/v1/models", retry: "idempotent" },
    ).catch((e) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err.retries).toBe(0);
    expect(performance.now() - t0).toBeLessThan(500);
    expect(err.message).toBe(
      `connection refused at http://127.0.0.1:${port}: is the service or the emulator running?`,
    );
    // A later request to the same dead address does not wait again.
    const t1 = performance.now();
    await send(
      { baseUrl: `http://127.0.0.1:${port}`, apiKey: KEY },
      { method: "GET", path: "/v1/languages", retry: "idempotent" },
    ).catch((e) => e);
    expect(performance.now() - t1).toBeLessThan(500);
  });

  it("keeps retrying a refused connection within the budget once the service has answered (a restart)", async () => {
    const port = await closedPort();
    const listen = () =>
      new Promise<Server>((r) => {
        const s = createServer((_q, res) => res.end('{"ok":1}'));
        s.listen(port, "127.0.0.1", () => r(s));
      });
    const cfgHere = { baseUrl: `http://127.0.0.1:${port}`, apiKey: KEY };
    const up = await listen();
    await send(cfgHere, { method: "GET", path: "/v1/models", retry: "idempotent" });
    await closeDispatchers();
    up.closeAllConnections();
    await new Promise((r) => up.close(r));
    // Down for longer than a never-seen address is retried; back after that.
    let back: Server | undefined;
    const restart = setTimeout(async () => {
      back = await listen();
    }, 4500);
    try {
      const r = await send(cfgHere, { method: "GET", path: "/v1/models", retry: "idempotent" });
      expect(r.body).toEqual({ ok: 1 });
    } finally {
      clearTimeout(restart);
      await closeDispatchers();
      back?.closeAllConnections();
      await new Promise((r) => (back ? back.close(r) : r(undefined)));
    }
  }, 20_000);

  it("sees a reset mid-request as a transient, possibly committed failure", async () => {
    handler = (req, res, i) => (i === 0 ? req.socket.destroy() : json(res, 200, { ok: 1 }));
    const r = await send(cfg(), {
      method: "PUT",
      path: "/v1/knowledge-bases/x",
      body: {},
      retry: "idempotent",
    });
    expect(r.body).toEqual({ ok: 1 });
    expect(r.retries).toBe(1);
    handler = (req) => req.socket.destroy();
    const err = await send(cfg(), { method: "POST", path: "/v1/agents", body: {}, retry: "unsafe" }).catch(
      (e) => e,
    );
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err.mayHaveCommitted).toBe(true);
  });

  it("parses answers tolerantly: additive fields are dropped, a broken contract is a ResponseShapeError", async () => {
    const row = {
      id: "gpt-x",
      provider: "openai",
      display_name: "X",
      supports_temperature: true,
      rate_per_min: 0.01,
      retired: false,
    };
    handler = (_q, res) => json(res, 200, [{ ...row, new_field: { nested: true }, context_window: 128000 }]);
    const c = new VoiceAgentClient(cfg());
    expect(await c.catalogue.models()).toEqual([row]);
    handler = (_q, res) => json(res, 200, [{ ...row, retired: undefined }]);
    const err = await c.catalogue.models().catch((e) => e);
    expect(err).toBeInstanceOf(ResponseShapeError);
    expect(err.issues[0].path).toBe("0.retired");
    expect(err.message).toContain("request req_");
  });
});

/** A port on 127.0.0.1 that nothing listens on any more. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}
