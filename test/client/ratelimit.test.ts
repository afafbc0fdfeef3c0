/**
 * 429 from an emulator with a tiny rate limit, reached by clients paced above it: the flat body is
 * parsed, and `Retry-After` is waited out before the request is retried. The emulator's window is
 * shortened to a few seconds (the service's is a minute) so that waiting it out takes seconds.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDispatchers, RateLimitError, VoiceAgentClient } from "../../src/client";
import { type LogEntry, type RunningEmulator, startEmulator } from "../../src/emulator";
import { requestLog } from "../support/control";

const KEY_A = "va_rl_a_key";
const KEY_B = "va_rl_b_key";
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
    ],
  });
});

afterAll(async () => {
  await closeDispatchers();
  await emu?.close();
});

const log = async (ws: string): Promise<LogEntry[]> =>
  (await requestLog(emu)).filter((e) => e.workspace === ws);

describe("rate limiting", () => {
  it("parses the flat 429 body and its Retry-After when the budget does not allow waiting", async () => {
    const c = new VoiceAgentClient({
      baseUrl: emu.url,
      apiKey: KEY_A,
      rateLimitPerMinute: 1000,
      retryBudgetMs: 0,
    });
    for (let i = 0; i < LIMIT; i++) await c.catalogue.languages();
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
    for (let i = 0; i < LIMIT; i++) await c.catalogue.models();
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
});
