/**
 * The Agent's preview check waits for the catalogue as long as the service answers: time held by
 * the rate limit (a full window, a pause after a 429: another pipeline may share the key) is not
 * "the service did not answer", which a service that answers nothing still is, quickly.
 */
import { createServer } from "node:http";
import { afterAll, beforeAll, expect, test } from "vitest";
import { VoiceAgentClient } from "../../src/client";
import { DEFAULT_API_KEY, type RunningEmulator, startEmulator } from "../../src/emulator";
import { catalogueReader } from "../../src/resources/agent/rules";

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
});
afterAll(async () => {
  await emu.close();
});

const settle = <T>(p: Promise<T>, ms: number) =>
  Promise.race([
    p.then(
      () => "answered",
      (e: Error) => `failed: ${e.message}`,
    ),
    new Promise<string>((r) => setTimeout(() => r("still waiting"), ms).unref()),
  ]);

test("held by a full rate window longer than the wait: still waiting, not failed", async () => {
  // A pace of 3 a minute: the window is full after three requests, the catalogue's reads wait.
  const client = new VoiceAgentClient({ baseUrl: emu.url, apiKey: DEFAULT_API_KEY, rateLimitPerMinute: 3 });
  for (let i = 0; i < 3; i++) await client.catalogue.models();
  const read = catalogueReader(async () => client, 300)({});
  expect(await settle(read, 1500)).toBe("still waiting");
});

test("a service that answers nothing fails within the wait", async () => {
  // Accepts connections and never answers.
  const silent = createServer(() => undefined);
  await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
  const { port } = silent.address() as { port: number };
  try {
    const client = new VoiceAgentClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: DEFAULT_API_KEY });
    const started = Date.now();
    const outcome = await settle(catalogueReader(async () => client, 300)({}), 5000);
    expect(outcome).toBe(
      `failed: no answer from http://127.0.0.1:${port} within 0 s (the agent's configuration was not checked against the service's catalogue)`,
    );
    expect(Date.now() - started).toBeLessThan(2000);
  } finally {
    silent.closeAllConnections();
    silent.close();
  }
});

test("every read refused with 429 and sleeping out its Retry-After: still waiting, not failed", async () => {
  // The service's window (2 requests per 2 s) is full for this key, as when another pipeline
  // shares it: most reads are answered 429 and each waits out its Retry-After, none queued in
  // the client's own limiter meanwhile. That is the limit's doing, not a silent service.
  const busy = await startEmulator({ port: 0, rateLimitPerMinute: 2, rateWindowMs: 2000 });
  try {
    const client = new VoiceAgentClient({ baseUrl: busy.url, apiKey: DEFAULT_API_KEY });
    const read = catalogueReader(async () => client, 300)({});
    expect(await settle(read, 1500)).toBe("still waiting");
    expect(await settle(read, 30_000)).toBe("answered");
  } finally {
    await busy.close();
  }
}, 40_000);

/** A service on a random port that answers every request with `status` and `headers`. */
async function answering(status: number, headers: Record<string, string> = {}) {
  const server = createServer((_req, res) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(
      JSON.stringify(
        status === 429 ? { code: "rate_limited" } : { detail: "down", code: "SERVICE_UNAVAILABLE" },
      ),
    );
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

test("a service answering only 5xx is not heard from: its failures do not count as answers", async () => {
  const down = await answering(503);
  try {
    const client = new VoiceAgentClient({ baseUrl: down.url, apiKey: DEFAULT_API_KEY, retryBudgetMs: 0 });
    await expect(client.catalogue.models()).rejects.toThrow(/HTTP 503/);
    expect(client.pace().heardAt).toBe(Number.NEGATIVE_INFINITY);
    // An answer (a 4xx is one: the service is there) counts.
    const refusing = await answering(404);
    try {
      const other = new VoiceAgentClient({ baseUrl: refusing.url, apiKey: DEFAULT_API_KEY });
      await expect(other.catalogue.models()).rejects.toThrow(/HTTP 404/);
      expect(other.pace().heardAt).toBeGreaterThan(performance.now() - 5000);
    } finally {
      refusing.close();
    }
  } finally {
    down.close();
  }
});

test("a 429 asking to wait an hour fails at once, saying so, and does not hold the process for the hour", async () => {
  const limited = await answering(429, { "retry-after": "3600" });
  try {
    const client = new VoiceAgentClient({ baseUrl: limited.url, apiKey: DEFAULT_API_KEY });
    const outcome = await settle(catalogueReader(async () => client, 300)({}), 5000);
    expect(outcome).toMatch(
      /failed: .*rate_limited: too many requests \(the service asked to wait 3600 s: Retry-After\)/,
    );
    // What the process holds from then on: one window at most (60 s and its margin), not an hour.
    const { holding, heardAt } = client.pace();
    expect(holding).toBe(true);
    expect(heardAt - performance.now()).toBeLessThanOrEqual(61_000);
  } finally {
    limited.close();
  }
});
