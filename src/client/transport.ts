/**
 * The one module that does HTTP. Every request of the client goes through {@link send}: pacing by
 * the shared limiter (which reads the answers' `X-RateLimit-*`), one undici keep-alive pool per origin, per-attempt timeout, retries with
 * exponential backoff and full jitter inside a time budget, `Retry-After` on 429, error mapping and
 * debug logging. Credentials are read from the config passed to each call and never stored here.
 */
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { Pool } from "undici";
import {
  type ClientConfig,
  DEFAULT_RATE_LIMIT_PER_MINUTE,
  DEFAULT_RETRY_BUDGET_MS,
  DEFAULT_TIMEOUT_MS,
  validateConfig,
} from "./config";
import {
  ApiError,
  apiErrorFor,
  ConnectionError,
  NOTHING_THERE,
  type RequestContext,
  ResponseTooLargeError,
} from "./errors";
import { type MovingWindowLimiter, sharedLimiter, standingOf } from "./limiter";
import { logAttempt } from "./log";
import { redactString } from "./redact";
import { type AttemptOutcome, backoffMs, decideRetry, rateLimitWaitMs } from "./retryPolicy";

/** HTTP methods the API uses. */
export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/**
 * How a request may be repeated.
 * - `idempotent`: safe to send again (GET, PUT, DELETE, If-Match PATCH, publish, activation):
 *   5xx, 429 and connection failures are retried.
 * - `unsafe`: repeating could duplicate an effect (creates, PATCH without If-Match): only a 429
 *   or a failure that certainly never reached the server is retried; anything else is thrown
 *   and the caller decides (see lost-answer adoption in client.ts).
 */
export type RetryMode = "idempotent" | "unsafe";

/** One logical request. */
export interface HttpRequest {
  method: HttpMethod;
  /** API path such as `/v1/agents/abc`; path segments must already be encoded. */
  path: string;
  query?: Record<string, string | number | boolean | null | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  retry: RetryMode;
  /** `bytes`: a 2xx body is returned as a Buffer, unparsed (a recording). Default: JSON. */
  responseType?: "json" | "bytes";
}

/** A 2xx answer. */
export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON (or the raw text when it was not JSON; undefined when empty). */
  body: unknown;
  requestId: string | undefined;
  retries: number;
}

/**
 * State shared by the requests of one operation (e.g. a create and its adoption look-ups): the
 * retry deadline, and whether an earlier attempt may have committed without us seeing the answer.
 */
export interface OperationState {
  /** `performance.now()` instant after which no retry starts; set at the first failure. */
  deadline?: number;
  /** True once an attempt failed after possibly reaching the server. */
  ambiguous: boolean;
  /** Retries spent so far. */
  retries: number;
}

/** Fresh {@link OperationState}. */
export function newOperation(): OperationState {
  return { ambiguous: false, retries: 0 };
}

export { backoffMs };

const pools = new Map<string, Pool>();

/** The process-wide keep-alive pool of an origin (one per base URL origin; holds no credential). */
function dispatcherFor(origin: string): Pool {
  let pool = pools.get(origin);
  if (!pool || pool.closed || pool.destroyed) {
    pool = new Pool(origin, { connections: 8, keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000 });
    pools.set(origin, pool);
  }
  return pool;
}

/** Close every pooled connection (tests and scripts call this to exit promptly). */
export async function closeDispatchers(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.allSettled(all.map((p) => p.close()));
}

/** Base URL normalized for registry keys: origin + path prefix without a trailing slash. */
export function normalizeBaseUrl(url: URL): string {
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

/**
 * Parse `Retry-After` (delta seconds or an HTTP date) into milliseconds. A date already past is no
 * hint (undefined): it says nothing of when the window has room.
 */
export function parseRetryAfter(
  value: string | string[] | undefined,
  nowMs = Date.now(),
): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v.trim() === "") return undefined;
  const secs = Number(v);
  if (Number.isFinite(secs)) return Math.max(0, secs * 1000);
  const at = Date.parse(v);
  return Number.isFinite(at) && at > nowMs ? at - nowMs : undefined;
}

const header = (h: Record<string, string | string[] | undefined>, name: string): string | undefined => {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
};

/** Codes of failures where the request certainly never reached the server. */
const NOT_SENT = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "UND_ERR_CONNECT_TIMEOUT",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);
/*
 * "Nothing is there" (`NOTHING_THERE`, errors.ts): no server listens at the address, or the address
 * leads to none. While the origin has never answered in this process, such a failure is not
 * retried: a wrong port or a stopped emulator fails at once, naming the address (a service still
 * starting is waited for by whoever starts it, as the tutorial does). Once the origin has
 * answered, it is transient (a restart) and retried within the budget as before.
 */
/** Origins that answered (any HTTP status) in this process. */
const answered = new Set<string>();
/** Codes of transient failures after the request may have been sent. */
const TRANSIENT = new Set([
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "ECONNABORTED",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_RES_CONTENT_LENGTH_MISMATCH",
  "HPE_INVALID_CONSTANT",
  "HPE_INVALID_EOF_STATE",
]);

interface Classified {
  code: string;
  message: string;
  retryable: boolean;
  mayHaveCommitted: boolean;
}

function errorCode(err: unknown): string | undefined {
  if (err === null || typeof err !== "object") return undefined;
  const e = err as { code?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.code === "string" && e.code !== "UND_ERR_ABORTED" && e.code !== "ABORT_ERR") return e.code;
  const inner = errorCode(e.cause) ?? (Array.isArray(e.errors) ? errorCode(e.errors[0]) : undefined);
  return inner ?? (typeof e.code === "string" ? e.code : undefined);
}

function classify(err: unknown, timedOut: boolean): Classified {
  const message = err instanceof Error ? err.message : String(err);
  if (timedOut)
    return { code: "ETIMEDOUT", message: "request timed out", retryable: true, mayHaveCommitted: true };
  const code =
    errorCode(err) ?? (err instanceof Error && err.name === "HTTPParserError" ? "HPE_ERROR" : "EUNKNOWN");
  if (NOT_SENT.has(code)) return { code, message, retryable: true, mayHaveCommitted: false };
  if (TRANSIENT.has(code) || code.startsWith("HPE_"))
    return { code, message, retryable: true, mayHaveCommitted: true };
  return { code, message, retryable: false, mayHaveCommitted: true };
}

function parseBody(text: string, contentType: string | undefined): unknown {
  if (text === "") return undefined;
  if (contentType?.includes("json") || /^\s*[[{]/.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

/** The process-wide limiter every request with this configuration's base URL and key goes through. */
export function limiterFor(config: ClientConfig): MovingWindowLimiter {
  return sharedLimiter(
    normalizeBaseUrl(validateConfig(config)),
    config.apiKey,
    config.rateLimitPerMinute ?? DEFAULT_RATE_LIMIT_PER_MINUTE,
  );
}

/**
 * Send one logical request, retrying as its {@link RetryMode} allows.
 *
 * @returns the 2xx answer.
 * @throws {ApiError} (a subclass by status) for a non-2xx answer that is final;
 *   {@link ConnectionError} when no answer came and retrying is not allowed or the budget ran out.
 */
export async function send(
  config: ClientConfig,
  req: HttpRequest,
  op: OperationState = newOperation(),
): Promise<HttpResponse> {
  const base = validateConfig(config);
  const secrets = [config.apiKey];
  const limiter = limiterFor(config);
  const timeoutMs = config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const budgetMs = config.retryBudgetMs ?? DEFAULT_RETRY_BUDGET_MS;
  const pool = dispatcherFor(base.origin);

  const fullPath = `${base.pathname.replace(/\/+$/, "")}${req.path}`;
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(req.query ?? {})) {
    if (v !== undefined && v !== null) search.set(k, String(v));
  }
  const pathWithQuery = search.size > 0 ? `${fullPath}?${search.toString()}` : fullPath;
  const origin = normalizeBaseUrl(base);
  const ctx: RequestContext = { method: req.method, path: req.path, secrets, baseUrl: origin };
  const headers: Record<string, string> = {
    accept: "application/json",
    "user-agent": config.userAgent ?? "pulumi-voice-agent",
    ...req.headers,
    authorization: `Bearer ${config.apiKey}`,
  };
  const payload = req.body === undefined ? undefined : JSON.stringify(req.body);
  if (payload !== undefined) headers["content-type"] = "application/json";

  /** The request cancelled (`config.signal`): `sent`, whether an attempt may have reached the server. */
  const cancelled = (sent: boolean, cause?: unknown) =>
    new ConnectionError(
      {
        code: "ECANCELLED",
        message: "cancelled by the Pulumi engine (Ctrl-C, or the deployment stopping)",
        timedOut: false,
        mayHaveCommitted: sent || op.ambiguous,
        retries: op.retries,
      },
      ctx,
      cause === undefined ? undefined : { cause },
    );
  /** Follows the retry policy: waits and returns true to retry, or returns false. */
  const mayRetry = async (outcome: AttemptOutcome, attempt: number): Promise<boolean> => {
    const now = performance.now();
    op.deadline ??= now + budgetMs;
    const decision = decideRetry(outcome, { mode: req.retry, attempt, now, deadline: op.deadline });
    if (!decision.retry) return false;
    if (decision.waitMs > 0) {
      // A cancel ends the wait: the request is not tried again.
      const waited = await sleep(decision.waitMs, true, { signal: config.signal }).catch(() => false);
      if (!waited) throw cancelled(outcome.kind === "status" || outcome.mayHaveCommitted);
    }
    op.retries++;
    return true;
  };
  const maxBytes = config.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;

  let retryOfThisRequest = 0;
  for (;;) {
    if (config.signal?.aborted) throw cancelled(retryOfThisRequest > 0);
    const permit = await limiter.acquire(retryOfThisRequest > 0);
    const started = performance.now();
    const abort = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.abort();
    }, timeoutMs);
    const onCancel = () => abort.abort();
    config.signal?.addEventListener("abort", onCancel, { once: true });
    let status: number;
    let resHeaders: Record<string, string | string[] | undefined>;
    let raw: Buffer;
    try {
      const res = await pool.request({
        method: req.method,
        path: pathWithQuery,
        headers,
        body: payload,
        signal: abort.signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      status = res.statusCode;
      answered.add(origin);
      if (status < 500 && status !== 429) limiter.noteAnswer();
      resHeaders = res.headers;
      raw = await readCapped(res.body, maxBytes, ctx);
    } catch (err) {
      clearTimeout(timer);
      config.signal?.removeEventListener("abort", onCancel);
      permit.release();
      if (err instanceof ResponseTooLargeError) throw err;
      // Abandoned on the engine's Cancel: not tried again, and it may have reached the server.
      if (config.signal?.aborted && !timedOut) throw cancelled(true, err);
      const c = classify(err, timedOut);
      logAttempt(
        {
          method: req.method,
          path: req.path,
          status: c.code,
          durationMs: performance.now() - started,
          requestId: undefined,
          retry: op.retries,
        },
        secrets,
      );
      if (c.mayHaveCommitted) op.ambiguous = true;
      const outcome = {
        kind: "connection",
        retryable: c.retryable,
        mayHaveCommitted: c.mayHaveCommitted,
      } as const;
      // Nothing there, and never was in this process: no retry can succeed.
      const nothingThere = NOTHING_THERE.has(c.code) && !answered.has(origin);
      if (!nothingThere && (await mayRetry(outcome, retryOfThisRequest))) {
        retryOfThisRequest++;
        continue;
      }
      throw new ConnectionError(
        {
          code: c.code,
          message: redactString(c.message, secrets),
          timedOut,
          mayHaveCommitted: c.mayHaveCommitted,
          retries: op.retries,
        },
        ctx,
        { cause: err },
      );
    }
    clearTimeout(timer);
    config.signal?.removeEventListener("abort", onCancel);
    // What the answer says of the key paces every later request of the process (limiter.ts).
    permit.release({ standing: standingOf(resHeaders), refused: status === 429 });
    const requestId = header(resHeaders, "x-request-id");
    logAttempt(
      {
        method: req.method,
        path: req.path,
        status,
        durationMs: performance.now() - started,
        requestId,
        retry: op.retries,
      },
      secrets,
    );
    const bytes = req.responseType === "bytes" && status >= 200 && status < 300;
    const body = bytes ? raw : parseBody(raw.toString("utf8"), header(resHeaders, "content-type"));
    if (status >= 200 && status < 300) {
      return { status, headers: resHeaders, body, requestId, retries: op.retries };
    }
    const retryAfterMs = parseRetryAfter(resHeaders["retry-after"]);
    // Refused before processing: hold every client of this key until the server's window has room.
    if (status === 429)
      limiter.pauseUntil(performance.now() + rateLimitWaitMs(retryAfterMs, backoffMs(retryOfThisRequest)));
    if (status >= 500) op.ambiguous = true;
    if (await mayRetry({ kind: "status", status, retryAfterMs }, retryOfThisRequest)) {
      retryOfThisRequest++;
      continue;
    }
    throw apiErrorFor({ status, body, requestId, retryAfterMs, retries: op.retries }, ctx);
  }
}

/** Default of `maxResponseBytes`: 16 MiB, far above any answer of the API. */
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/** The body's bytes, refusing (and no longer reading) one larger than `maxBytes`. */
async function readCapped(
  body: AsyncIterable<Uint8Array> & { destroy(): unknown },
  maxBytes: number,
  ctx: RequestContext,
): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.byteLength;
    if (total > maxBytes) {
      body.destroy();
      throw new ResponseTooLargeError(maxBytes, ctx);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** True when the failed request may nevertheless have been carried out by the server. */
export function mayHaveCommitted(err: unknown): boolean {
  if (err instanceof ConnectionError) return err.mayHaveCommitted;
  if (err instanceof ApiError) return err.status >= 500;
  return false;
}
