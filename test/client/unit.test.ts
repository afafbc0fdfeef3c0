/** Pure parts of the client: config, error parsing, redaction, backoff, the limiter, pagination. */
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import {
  ApiError,
  AuthError,
  ClientConfigError,
  ConflictError,
  configFromPulumi,
  isLoopbackHost,
  MovingWindowLimiter,
  PageIterator,
  parseErrorBody,
  RateLimitError,
  ValidationError,
} from "../../src/client";
import { apiErrorFor } from "../../src/client/errors";
import { formatAttempt } from "../../src/client/log";
import { reflects } from "../../src/client/recovery";
import { redactString } from "../../src/client/redact";
import { backoffMs, parseRetryAfter } from "../../src/client/transport";

const KEY = "va_live_SUPERSECRET_0123456789";
const ctx = { method: "PATCH", path: "/v1/agents/a1", secrets: [KEY] };

describe("configFromPulumi", () => {
  const cfg = (values: Record<string, string>) => ({ get: (k: string) => values[k] });

  it("reads the stack config, then the environment", () => {
    expect(
      configFromPulumi(
        cfg({ "voice-agent:baseUrl": "https://api.example.com", "voice-agent:apiKey": KEY }),
        {},
      ),
    ).toEqual({ baseUrl: "https://api.example.com", apiKey: KEY });
    expect(
      configFromPulumi(undefined, {
        VOICE_AGENT_BASE_URL: "http://127.0.0.1:9999",
        VOICE_AGENT_API_KEY: KEY,
        VOICE_AGENT_RATE_LIMIT: "120",
      }),
    ).toEqual({ baseUrl: "http://127.0.0.1:9999", apiKey: KEY, rateLimitPerMinute: 120 });
    // Stack config wins over the environment; a pulumi.Config("voice-agent") answers short keys.
    expect(
      configFromPulumi(cfg({ baseUrl: "https://a.example.com", apiKey: "k1234", rateLimitPerMinute: "60" }), {
        VOICE_AGENT_BASE_URL: "https://b.example.com",
      }),
    ).toEqual({ baseUrl: "https://a.example.com", apiKey: "k1234", rateLimitPerMinute: 60 });
  });

  it("names the missing key", () => {
    expect(() => configFromPulumi(undefined, {})).toThrow(/voice-agent:baseUrl.*VOICE_AGENT_BASE_URL/);
    expect(() => configFromPulumi(undefined, { VOICE_AGENT_BASE_URL: "https://x.example.com" })).toThrow(
      /voice-agent:apiKey.*VOICE_AGENT_API_KEY/,
    );
    expect(() =>
      configFromPulumi(undefined, {
        VOICE_AGENT_BASE_URL: "https://x.example.com",
        VOICE_AGENT_API_KEY: KEY,
        VOICE_AGENT_RATE_LIMIT: "fast",
      }),
    ).toThrow(/rateLimitPerMinute/);
  });

  it("refuses plain http unless the host is loopback", () => {
    const env = (url: string) => ({ VOICE_AGENT_BASE_URL: url, VOICE_AGENT_API_KEY: KEY });
    expect(() => configFromPulumi(undefined, env("http://api.example.com"))).toThrow(ClientConfigError);
    expect(() => configFromPulumi(undefined, env("http://10.0.0.1:8080"))).toThrow(/https/);
    expect(() => configFromPulumi(undefined, env("ftp://127.0.0.1"))).toThrow(/https/);
    expect(() => configFromPulumi(undefined, env("http://127.0.0.1.example.com"))).toThrow(/https/);
    for (const ok of [
      "http://localhost:8787",
      "http://127.0.0.1:1",
      "http://127.10.20.30",
      "http://[::1]:8787",
    ]) {
      expect(configFromPulumi(undefined, env(ok)).baseUrl).toBe(ok);
    }
    expect(isLoopbackHost("LOCALHOST")).toBe(true);
    expect(isLoopbackHost("128.0.0.1")).toBe(false);
    expect(isLoopbackHost("[::2]")).toBe(false);
  });

  it("never puts the key in its error", () => {
    // Caught outside any assertion, so the test fails if the call stops throwing.
    let error: unknown;
    try {
      configFromPulumi(undefined, {
        VOICE_AGENT_BASE_URL: "http://evil.example.com",
        VOICE_AGENT_API_KEY: KEY,
      });
    } catch (e) {
      error = e;
    }
    expect(error, "expected the plain-http URL to be refused").toBeInstanceOf(ClientConfigError);
    expect((error as Error).message).toMatch(/https/);
    expect(JSON.stringify(error)).not.toContain(KEY);
    expect(String((error as Error).stack)).not.toContain(KEY);
    expect(inspect(error, { depth: 10, showHidden: true })).not.toContain(KEY);
  });
});

describe("error bodies", () => {
  it("reads detail.code when detail is an object, else the top-level code", () => {
    expect(parseErrorBody(401, { detail: "Invalid API key", code: "UNAUTHORIZED" }).code).toBe(
      "UNAUTHORIZED",
    );
    expect(parseErrorBody(429, { code: "rate_limited" }).code).toBe("rate_limited");
    expect(
      parseErrorBody(400, { detail: { code: "voice_not_found", message: "m", param: "voice.voice_id" } }),
    ).toMatchObject({ code: "voice_not_found", param: "voice.voice_id", message: "m" });
    expect(parseErrorBody(404, { detail: "Not Found", code: "NOT_FOUND" }).message).toBe("Not Found");
    expect(parseErrorBody(502, "<html>bad gateway</html>").code).toBe("SERVICE_ERROR");
    expect(parseErrorBody(418, undefined).code).toBe("HTTP_418");
  });

  it("builds the class by status with field and request id in the message", () => {
    const e = apiErrorFor(
      {
        status: 422,
        requestId: "req_123",
        body: {
          detail: {
            code: "validation_error",
            message: "voice.speed: too fast",
            errors: [
              { field: "voice.speed", message: "too fast", type: "less_than_equal" },
              { field: "variables[0].key", message: "missing", type: "missing" },
            ],
          },
          code: "VALIDATION_ERROR",
        },
      },
      ctx,
    );
    expect(e).toBeInstanceOf(ValidationError);
    expect(e).toBeInstanceOf(ApiError);
    expect(e.code).toBe("validation_error");
    expect(e.classCode).toBe("VALIDATION_ERROR");
    expect(e.errors.map((x) => x.field)).toEqual(["voice.speed", "variables[0].key"]);
    expect(e.message).toMatch(/^validation_error: voice\.speed: .*request req_123\)$/);
    expect(e.name).toBe("ValidationError");
    expect(e.stack).toMatch(/^ValidationError: validation_error/);

    const c = apiErrorFor(
      {
        status: 409,
        requestId: "r",
        body: { detail: { code: "revision_conflict", message: "m", param: "If-Match", current_revision: 7 } },
      },
      ctx,
    );
    expect(c).toBeInstanceOf(ConflictError);
    expect(c.currentRevision).toBe(7);
    expect(apiErrorFor({ status: 401, requestId: "r", body: {} }, ctx)).toBeInstanceOf(AuthError);
    expect(apiErrorFor({ status: 429, requestId: "r", body: {} }, ctx)).toBeInstanceOf(RateLimitError);
  });
});

describe("redaction", () => {
  it("removes the key and bearer credentials from strings", () => {
    expect(redactString(`Authorization: Bearer ${KEY}`, [KEY])).not.toContain(KEY);
    expect(redactString(`headers {"authorization":"Bearer abc.def"}`)).not.toContain("abc.def");
    expect(redactString(`key=${KEY}&x=1`, [KEY])).toBe("key=[REDACTED]&x=1");
  });

  it("keeps the key out of every form of an error, even when the server echoes it", () => {
    const e = apiErrorFor(
      {
        status: 400,
        requestId: "req_9",
        body: { detail: { code: "invalid_request", message: `bad token ${KEY}`, param: `x${KEY}` } },
      },
      { method: "GET", path: `/v1/agents/${KEY}`, secrets: [KEY] },
    );
    for (const form of [
      e.message,
      String(e.stack),
      JSON.stringify(e),
      inspect(e, { depth: 10 }),
      String(e),
    ]) {
      expect(form).not.toContain(KEY);
    }
    expect(JSON.parse(JSON.stringify(e))).toMatchObject({
      name: "BadRequestError",
      status: 400,
      requestId: "req_9",
    });
  });

  it("keeps the key out of debug lines", () => {
    const line = formatAttempt(
      { method: "GET", path: `/v1/x/${KEY}`, status: 200, durationMs: 3.4, requestId: "req_1", retry: 2 },
      [KEY],
    );
    expect(line).toBe(
      "voice-agent method=GET path=/v1/x/[REDACTED] status=200 duration_ms=3 request_id=req_1 retry=2",
    );
  });
});

describe("backoff and Retry-After", () => {
  it("uses full jitter under an exponential cap", () => {
    expect(backoffMs(0, () => 1)).toBe(200);
    expect(backoffMs(3, () => 1)).toBe(1600);
    expect(backoffMs(30, () => 1)).toBe(8000);
    expect(backoffMs(5, () => 0)).toBe(0);
  });

  it("parses seconds and HTTP dates", () => {
    expect(parseRetryAfter("3")).toBe(3000);
    expect(parseRetryAfter(["1.5"])).toBe(1500);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseRetryAfter("soon")).toBeUndefined();
  });

  it("reads a date already past as no hint, and 0 as 0", () => {
    expect(parseRetryAfter(new Date(1_000).toUTCString(), 4_000)).toBeUndefined();
    expect(parseRetryAfter(new Date(4_000).toUTCString(), 4_000)).toBeUndefined();
    expect(parseRetryAfter("0")).toBe(0);
  });
});

describe("MovingWindowLimiter", () => {
  it("admits at most `limit` requests in any window", async () => {
    const windowMs = 300;
    const lim = new MovingWindowLimiter(4, windowMs, 0);
    const grants: number[] = [];
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: 12 }, async () => {
        const p = await lim.acquire();
        grants.push(performance.now() - t0);
        await new Promise((r) => setTimeout(r, 5));
        p.release();
      }),
    );
    grants.sort((a, b) => a - b);
    expect(grants).toHaveLength(12);
    // Any 5 consecutive grants span more than a window.
    for (let i = 4; i < grants.length; i++) {
      expect((grants[i] as number) - (grants[i - 4] as number)).toBeGreaterThanOrEqual(windowMs - 2);
    }
    // ... and the limiter does not dawdle: three windows' worth in a little over two windows.
    expect(grants[11]).toBeLessThan(3 * windowMs);
  });

  it("holds everyone during a pause", async () => {
    const lim = new MovingWindowLimiter(100, 1000, 0);
    lim.pauseUntil(performance.now() + 150);
    const t0 = performance.now();
    (await lim.acquire()).release();
    expect(performance.now() - t0).toBeGreaterThanOrEqual(140);
  });

  it("a Retry-After of an hour holds everyone one window at most", async () => {
    const lim = new MovingWindowLimiter(100, 200, 0);
    lim.pauseUntil(performance.now() + 3_600_000);
    const t0 = performance.now();
    (await lim.acquire()).release();
    const held = performance.now() - t0;
    expect(held).toBeGreaterThanOrEqual(190);
    expect(held).toBeLessThan(1000);
  });

  it("a pause holds even with nobody queued (the refused requests sleep it out), and its end counts as heard", () => {
    const lim = new MovingWindowLimiter(100, 1000, 0);
    expect(lim.holding).toBe(false);
    expect(lim.heardAt).toBe(Number.NEGATIVE_INFINITY);
    const until = performance.now() + 200;
    lim.pauseUntil(until);
    expect(lim.holding).toBe(true);
    expect(lim.heardAt).toBeLessThanOrEqual(until);
    expect(lim.heardAt).toBeGreaterThan(until - 250);
  });

  it("the end of a hold by a full window counts as heard, though the last answer is a window old", async () => {
    const lim = new MovingWindowLimiter(1, 200, 0);
    const first = await lim.acquire();
    lim.noteAnswer();
    const answered = performance.now();
    first.release();
    const queued = lim.acquire();
    expect(lim.holding).toBe(true);
    (await queued).release();
    // Let go about a window after the answer: the silence is counted from then, not from the answer.
    expect(lim.heardAt - answered).toBeGreaterThanOrEqual(190);
    expect(lim.holding).toBe(false);
  });
});

describe("PageIterator", () => {
  it("follows next_cursor until has_more is false", async () => {
    const seen: (string | undefined)[] = [];
    const it = new PageIterator<number>(async (cursor) => {
      seen.push(cursor);
      const page = cursor ? Number(cursor) : 0;
      return {
        data: [page * 2, page * 2 + 1],
        has_more: page < 2,
        next_cursor: page < 2 ? String(page + 1) : null,
      };
    });
    expect(await it.toArray()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(seen).toEqual([undefined, "1", "2"]);
    expect(await it.find((n) => n === 3)).toBe(3);
  });

  it("stops on a repeated cursor instead of looping", async () => {
    const it = new PageIterator<number>(async () => ({ data: [1], has_more: true, next_cursor: "same" }));
    await expect(it.toArray()).rejects.toThrow(/repeated/);
  });
});

describe("reflects (lost-patch read-back check)", () => {
  const readBack = {
    name: "a",
    voice: { provider: "sarvam", model: "bulbul:v2", voice_id: "meera", speed: 1.1 },
    variables: [
      { key: "callee_name", default_value: null, system_defined: true, deletable: false },
      { key: "city", default_value: "Pune", system_defined: false, deletable: true },
    ],
    greeting: {},
    label: null,
  };
  it("accepts a read-back holding everything sent, as a merge-patch", () => {
    expect(reflects({ name: "a", voice: { voice_id: "meera", speed: 1.1 } }, readBack)).toBe(true);
    expect(
      reflects({ variables: [{ key: "city", default_value: "Pune" }, { key: "callee_name" }] }, readBack),
    ).toBe(true);
    expect(reflects({ greeting: null, label: null }, readBack)).toBe(true);
    expect(reflects({}, readBack)).toBe(true);
  });
  it("refuses anything else", () => {
    expect(reflects({ name: "b" }, readBack)).toBe(false);
    expect(reflects({ voice: { speed: 1.2 } }, readBack)).toBe(false);
    expect(reflects({ variables: [{ key: "city" }] }, readBack)).toBe(false);
    expect(reflects({ voice: null }, readBack)).toBe(false);
    expect(reflects({ missing: { a: 1 } }, readBack)).toBe(false);
  });
});
