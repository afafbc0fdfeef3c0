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
    expect(outcome).toMatch(/failed: .*the service did not answer within 0 s/);
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
