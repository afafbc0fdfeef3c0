/**
 * An emulator with a tiny rate limit. A client paced far above it still sends nothing the service
 * refuses: it paces by the answers' `X-RateLimit-*`. A 429 comes when another process spent the
 * key's window (here: plain requests the client does not see): the flat body is parsed, and
 * `Retry-After` is waited out before the request is retried. The emulator's window is shortened to
 * a few seconds (the service's is a minute) so that waiting it out takes seconds.
 */
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDispatchers, RateLimitError, VoiceAgentClient } from "../../src/client";
import { type LogEntry, type RunningEmulator, startEmulator } from "../../src/emulator";
import { requestLog } from "../support/control";

const KEY_A = "va_rl_a_key";
const KEY_B = "va_rl_b_key";
const KEY_C = "va_rl_c_key";
const LIMIT = 3;
/** The emulator's rate-limit window: whole seconds, as `Retry-After` counts them. */
const WINDOW_MS = 3_000;
let emu: RunningEmulator;

beforeAll(async () => {
  emu = await startEmulator({
    port: 0,
    rateLimitPerMinute: LIMIT,
    rateWindowMs: WINDOW_MS,
    workspaces: [
      { name: "a", key: KEY_A },
      { name: "b", key: KEY_B },
      { name: "c", key: KEY_C },
    ],
  });
});

afterAll(async () => {
  await closeDispatchers();
  await emu?.close();
});

const log = async (ws: string): Promise<LogEntry[]> =>
  (await requestLog(emu)).filter((e) => e.workspace === ws);

/** Another process spends the key's whole window (requests this process's client never sees). */
async function spendWindow(key: string): Promise<void> {
  for (let i = 0; i < LIMIT; i++) {
    const res = await request(`${emu.url}/v1/languages`, { headers: { authorization: `Bearer ${key}` } });
    await res.body.dump();
    expect(res.statusCode).toBe(200);
  }
}

describe("rate limiting", () => {
  it("parses the flat 429 body and its Retry-After when the budget does not allow waiting", async () => {
    const c = new VoiceAgentClient({
      baseUrl: emu.url,
      apiKey: KEY_A,
      rateLimitPerMinute: 1000,
      retryBudgetMs: 0,
    });
    await spendWindow(KEY_A);
    const e = await c.catalogue.languages().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(RateLimitError);
    const r = e as RateLimitError;
    expect(r.status).toBe(429);
    expect(r.code).toBe("rate_limited");
    expect(r.classCode).toBe("rate_limited");
    expect(r.body).toEqual({ code: "rate_limited" });
    expect(r.retryAfterMs).toBeGreaterThan(0);
    expect(r.retryAfterMs).toBeLessThanOrEqual(WINDOW_MS);
    expect(r.requestId).toMatch(/\S/);
    expect(r.message).toMatch(/^rate_limited: .*\(HTTP 429, GET \/v1\/languages, request \S+\)$/);
    expect((await log("a")).map((x) => x.status)).toEqual([200, 200, 200, 429]);
  });

  it("waits for Retry-After, then retries and succeeds", async () => {
    const c = new VoiceAgentClient({
      baseUrl: emu.url,
      apiKey: KEY_B,
      rateLimitPerMinute: 1000,
      retryBudgetMs: 30_000,
    });
    await spendWindow(KEY_B);
    const t0 = performance.now();
    const models = await c.catalogue.models();
    const waited = performance.now() - t0;
    expect(models.length).toBeGreaterThan(0);
    const entries = await log("b");
    expect(entries.map((x) => x.status)).toEqual([200, 200, 200, 429, 200]);
    const [tooMany, retried] = entries.slice(3) as [LogEntry, LogEntry];
    const gap = Date.parse(retried.at) - Date.parse(tooMany.at);
    // The emulator frees a slot a window after the first request; Retry-After rounds that up to
    // whole seconds, so the retry lands after the window has room and is not refused again.
    const windowLeft = WINDOW_MS - (Date.parse(tooMany.at) - Date.parse((entries[0] as LogEntry).at));
    expect(gap).toBeGreaterThanOrEqual(windowLeft);
    expect(waited).toBeGreaterThanOrEqual(windowLeft);
    expect(waited).toBeLessThan(windowLeft + 3_000);
  }, 30_000);

  it("paces by X-RateLimit-Remaining and Reset: a client paced far above the limit is never refused", async () => {
    const c = new VoiceAgentClient({ baseUrl: emu.url, apiKey: KEY_C, rateLimitPerMinute: 1000 });
    const t0 = performance.now();
    await Promise.all(Array.from({ length: 3 * LIMIT }, () => c.catalogue.languages()));
    const waited = performance.now() - t0;
    const statuses = (await log("c")).map((x) => x.status);
    expect(statuses).toEqual(Array.from({ length: 3 * LIMIT }, () => 200));
    // Three windows' worth: the last LIMIT wait for the second window to pass, not much longer.
    expect(waited).toBeGreaterThanOrEqual(2 * WINDOW_MS - 50);
    expect(waited).toBeLessThan(3 * WINDOW_MS + 2_000);
  }, 30_000);
});
