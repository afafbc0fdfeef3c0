import { inspect } from "node:util";
import { redactDeep, redactString } from "./redact";

/** One problem of a 422 `validation_error`: `field` is a path from the root of the request. */
export interface FieldError {
  /** Path of the offending field, e.g. `voice.speed`, `variables[0].key`, `query.limit`. */
  field: string;
  message: string;
  /** Stable machine code such as `missing`, `extra_forbidden`, `less_than_equal`. */
  type: string;
}

/** Base class of every error this client throws. Never holds a credential. */
export class VoiceAgentError extends Error {
  /** Plain-object form; safe to log or serialize. */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = { name: this.name, message: this.message };
    for (const [k, v] of Object.entries(this)) {
      if (k !== "name" && k !== "message" && k !== "stack") out[k] = v;
    }
    return out;
  }

  /** `util.inspect` shows the (redacted) stack and the fields of {@link toJSON}, nothing else. */
  [inspect.custom](_depth: number, options: { stylize?: unknown }): string {
    const fields = { ...this.toJSON() };
    delete fields.name;
    delete fields.message;
    return `${this.stack ?? `${this.name}: ${this.message}`} ${inspect(fields, { ...options, depth: 4 } as never)}`;
  }
}

/** The configuration is missing a value or holds one the client refuses (e.g. a non-https URL). */
export class ClientConfigError extends VoiceAgentError {}

/** An answer larger than the client accepts (`maxResponseBytes`): it was not read further. */
export class ResponseTooLargeError extends VoiceAgentError {
  constructor(
    readonly limitBytes: number,
    ctx: RequestContext,
  ) {
    super(
      redactString(
        `the answer to ${ctx.method} ${ctx.path} is larger than ${limitBytes} bytes (maxResponseBytes); it was not read further`,
        ctx.secrets,
      ),
    );
  }
}

/** Context of a request, as known to the transport when it builds an error. */
export interface RequestContext {
  method: string;
  /** Path without the query string (queries are never copied into errors). */
  path: string;
  /** Values to redact wherever they occur (the API key of the request). */
  secrets: readonly string[];
  /** The service's address (origin and path prefix), named when nothing answers there. */
  baseUrl?: string;
}

/** Fields an {@link ApiError} is built from. */
export interface ApiErrorInit {
  status: number;
  body: unknown;
  requestId: string | undefined;
  retryAfterMs?: number | undefined;
  retries?: number;
}

/**
 * An HTTP error answer from the service.
 *
 * `code` is the reason read as the reference says: `detail.code` when `detail` is an object, else
 * the top-level `code` (e.g. `UNAUTHORIZED`, `NOT_FOUND`, `rate_limited`). `message` names the field
 * (`param`, or the first validation error's field) and the request id.
 */
export class ApiError extends VoiceAgentError {
  /** HTTP status. */
  readonly status: number;
  /** Machine-readable reason; branch on this, never on the message. */
  readonly code: string;
  /** Top-level `code` of the body: the status class (e.g. `CONFLICT`) or the reason itself. */
  readonly classCode: string | undefined;
  /** The server's sentence, redacted. */
  readonly detailMessage: string;
  /** The field the refusal names (`detail.param`), e.g. `voice.voice_id` or `If-Match`. */
  readonly param: string | undefined;
  /** Every problem of a 422 `validation_error`. Empty otherwise. */
  readonly errors: FieldError[];
  /** `detail.current_revision` of a 409 `revision_conflict`. */
  readonly currentRevision: number | undefined;
  /** `detail.candidates` (open draft versions) of a 409 `draft_ambiguous`. */
  readonly candidates: number[] | undefined;
  /** HTTP method of the failed request. */
  readonly method: string;
  /** Path of the failed request, without the query string. */
  readonly path: string;
  /** `X-Request-ID` of the answer. */
  readonly requestId: string | undefined;
  /** How long the server asked us to wait (`Retry-After`), for 429 and some 503s. */
  readonly retryAfterMs: number | undefined;
  /** How many retries preceded this answer. */
  readonly retries: number;
  /** The parsed response body, with credentials redacted. */
  readonly body: unknown;

  constructor(init: ApiErrorInit, ctx: RequestContext) {
    // Redact before anything is read: the server may echo a credential in any string.
    const parsed = parseErrorBody(init.status, redactDeep(init.body, ctx.secrets));
    const field = parsed.param ?? parsed.errors[0]?.field;
    // A 429 says how long the service asked to wait: a wait past the retry budget is why it failed.
    const sentence =
      init.status === 429 && init.retryAfterMs !== undefined
        ? `${parsed.message} (the service asked to wait ${Math.ceil(init.retryAfterMs / 1000)} s: Retry-After)`
        : parsed.message;
    const where = `${ctx.method} ${redactString(ctx.path, ctx.secrets)}`;
    const msg =
      // The service's sentences usually start with the field already; name it once.
      `${parsed.code}: ${field && !sentence.startsWith(field) ? `${field}: ` : ""}${sentence} ` +
      `(HTTP ${init.status}, ${where}${init.requestId ? `, request ${init.requestId}` : ""})`;
    super(redactString(msg, ctx.secrets));
    this.status = init.status;
    this.code = parsed.code;
    this.classCode = parsed.classCode;
    this.detailMessage = sentence;
    this.param = parsed.param;
    this.errors = parsed.errors;
    this.currentRevision = parsed.currentRevision;
    this.candidates = parsed.candidates;
    this.method = ctx.method;
    this.path = redactString(ctx.path, ctx.secrets);
    this.retryAfterMs = init.retryAfterMs;
    this.retries = init.retries ?? 0;
    this.body = redactDeep(init.body, ctx.secrets);
    this.requestId = init.requestId === undefined ? undefined : redactString(init.requestId, ctx.secrets);
    if (this.stack) this.stack = redactString(this.stack, ctx.secrets);
  }
}

/** 400: `invalid_request`, `document_invalid`, `voice_not_found`, `voice_config_invalid`, ... */
export class BadRequestError extends ApiError {}
/** 401 (missing, invalid or revoked key) and 403. */
export class AuthError extends ApiError {}
/** 404: unknown object (`version_not_found`, ...) or unknown path (`NOT_FOUND`). */
export class NotFoundError extends ApiError {}
/** 409: `revision_conflict` (see `currentRevision`), `draft_ambiguous` (see `candidates`), ... */
export class ConflictError extends ApiError {}
/** 422 `validation_error`; see `errors` for every field path. */
export class ValidationError extends ApiError {}
/** 429 `rate_limited` that outlasted the retry budget. */
export class RateLimitError extends ApiError {}
/** 5xx that outlasted the retry budget (or was not safe to retry). */
export class ServiceError extends ApiError {}

/** Build the error class matching `status`. */
export function apiErrorFor(init: ApiErrorInit, ctx: RequestContext): ApiError {
  const s = init.status;
  if (s === 400) return new BadRequestError(init, ctx);
  if (s === 401 || s === 403) return new AuthError(init, ctx);
  if (s === 404) return new NotFoundError(init, ctx);
  if (s === 409) return new ConflictError(init, ctx);
  if (s === 422) return new ValidationError(init, ctx);
  if (s === 429) return new RateLimitError(init, ctx);
  if (s >= 500) return new ServiceError(init, ctx);
  return new ApiError(init, ctx);
}

/**
 * The request got no HTTP answer: connection refused or reset, socket closed, or timed out.
 * `mayHaveCommitted` is true when the request may have reached the server (it was sent).
 */
export class ConnectionError extends VoiceAgentError {
  readonly method: string;
  readonly path: string;
  /** Low-level code, e.g. `ECONNRESET`, `UND_ERR_SOCKET`, `ETIMEDOUT`. */
  readonly code: string;
  /** True when the attempt ran out of `timeoutMs`. */
  readonly timedOut: boolean;
  /** False only when the request certainly never reached the server (e.g. connection refused). */
  readonly mayHaveCommitted: boolean;
  readonly retries: number;

  constructor(
    init: { code: string; message: string; timedOut: boolean; mayHaveCommitted: boolean; retries?: number },
    ctx: RequestContext,
    options?: ErrorOptions,
  ) {
    const where = `${ctx.method} ${redactString(ctx.path, ctx.secrets)}`;
    // Nothing there: the address is the whole story (which request found it out adds nothing).
    const nothingThere = ctx.baseUrl !== undefined && NOTHING_THERE.has(init.code);
    const said = noAnswerWords(init, ctx.baseUrl);
    super(redactString(nothingThere ? said : `${said} (${where}, no response)`, ctx.secrets), options);
    this.method = ctx.method;
    this.path = redactString(ctx.path, ctx.secrets);
    this.code = init.code;
    this.timedOut = init.timedOut;
    this.mayHaveCommitted = init.mayHaveCommitted;
    this.retries = init.retries ?? 0;
    if (this.stack) this.stack = redactString(this.stack, ctx.secrets);
  }
}

/** Codes that say no server is at the address (or the address leads nowhere). */
export const NOTHING_THERE: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

/**
 * Why no answer came, cause first, naming the address: "connection refused at
 * http://127.0.0.1:8788: is the service or the emulator running?".
 */
function noAnswerWords(
  init: { code: string; message: string; timedOut: boolean },
  at: string | undefined,
): string {
  if (at === undefined) return `${init.code}: ${init.message}`;
  switch (init.code) {
    case "ECONNREFUSED":
      return `connection refused at ${at}: is the service or the emulator running?`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `the host of ${at} was not found (${init.code}): is the address right?`;
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return `${at} cannot be reached (${init.code}): is the address right, and the network up?`;
    default:
      return init.timedOut
        ? `no answer from ${at} in time (the request timed out)`
        : `${init.code} from ${at}: ${init.message}`;
  }
}

/** A 2xx answer whose body does not match the shared schema (the service broke its contract). */
export class ResponseShapeError extends VoiceAgentError {
  readonly method: string;
  readonly path: string;
  readonly requestId: string | undefined;
  /** Paths and messages of the mismatches (never the values). */
  readonly issues: { path: string; message: string }[];

  constructor(
    issues: { path: string; message: string }[],
    requestId: string | undefined,
    ctx: RequestContext,
    options?: ErrorOptions,
  ) {
    const first = issues[0];
    super(
      redactString(
        `unexpected response shape${first ? ` at ${first.path || "(root)"}: ${first.message}` : ""} ` +
          `(${ctx.method} ${ctx.path}${requestId ? `, request ${requestId}` : ""})`,
        ctx.secrets,
      ),
      options,
    );
    this.method = ctx.method;
    this.path = redactString(ctx.path, ctx.secrets);
    this.requestId = requestId;
    this.issues = issues.map((i) => ({ path: i.path, message: redactString(i.message, ctx.secrets) }));
    if (this.stack) this.stack = redactString(this.stack, ctx.secrets);
  }
}

interface ParsedErrorBody {
  code: string;
  classCode: string | undefined;
  message: string;
  param: string | undefined;
  errors: FieldError[];
  currentRevision: number | undefined;
  candidates: number[] | undefined;
}

const STATUS_CLASS: Record<number, string> = {
  400: "BAD_REQUEST",
  401: "UNAUTHORIZED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  405: "METHOD_NOT_ALLOWED",
  409: "CONFLICT",
  422: "VALIDATION_ERROR",
  429: "rate_limited",
  503: "SERVICE_UNAVAILABLE",
};

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/**
 * Read an error body as the reference's Errors section describes. Tolerates any shape: a body
 * that is not the documented envelope still yields a status-derived code and a message.
 */
export function parseErrorBody(status: number, body: unknown): ParsedErrorBody {
  const top =
    body !== null && typeof body === "object" && !Array.isArray(body)
      ? (body as Record<string, unknown>)
      : {};
  const classCode = str(top.code);
  const detail = top.detail;
  const fallbackCode =
    classCode ?? STATUS_CLASS[status] ?? (status >= 500 ? "SERVICE_ERROR" : `HTTP_${status}`);
  if (detail !== null && typeof detail === "object" && !Array.isArray(detail)) {
    const d = detail as Record<string, unknown>;
    const errors: FieldError[] = Array.isArray(d.errors)
      ? d.errors
          .filter((e): e is Record<string, unknown> => e !== null && typeof e === "object")
          .map((e) => ({ field: str(e.field) ?? "", message: str(e.message) ?? "", type: str(e.type) ?? "" }))
      : [];
    const candidates = Array.isArray(d.candidates)
      ? d.candidates.filter((c): c is number => typeof c === "number")
      : undefined;
    return {
      code: str(d.code) ?? fallbackCode,
      classCode,
      message: str(d.message) ?? errors[0]?.message ?? `HTTP ${status}`,
      param: str(d.param),
      errors,
      currentRevision: typeof d.current_revision === "number" ? d.current_revision : undefined,
      candidates,
    };
  }
  let message = str(detail) ?? str(top.message);
  if (!message) {
    message = status === 429 ? "too many requests" : `HTTP ${status}`;
  }
  return {
    code: fallbackCode,
    classCode,
    message,
    param: undefined,
    errors: [],
    currentRevision: undefined,
    candidates: undefined,
  };
}

// Names live on the prototypes so that the stack header, captured by the Error constructor before
// any field initializer runs, already carries the right class name.
for (const cls of [
  VoiceAgentError,
  ClientConfigError,
  ApiError,
  BadRequestError,
  AuthError,
  NotFoundError,
  ConflictError,
  ValidationError,
  RateLimitError,
  ServiceError,
  ConnectionError,
  ResponseShapeError,
]) {
  Object.defineProperty(cls.prototype, "name", { value: cls.name, writable: true, configurable: true });
}
