/** Error envelopes, query parameters, cursors and pages, as the service answers them. */
import type { IncomingMessage } from "node:http";
import { classCodeForStatus, type Issue, PAGE_LIMIT, type Page } from "../spec";

/** A refusal: thrown by handlers, turned into the error envelope by the server. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof body === "object" && body !== null ? JSON.stringify(body) : String(body));
  }
}

/** Extra members of an object `detail`. */
export interface DetailExtra {
  param?: string;
  errors?: { field: string; message: string; type: string }[];
  candidates?: number[];
  current_revision?: number;
}

/** `{detail: {code, message, ...}, code: <class>}`. */
export function apiError(status: number, code: string, message: string, extra: DetailExtra = {}): ApiError {
  return new ApiError(status, { detail: { code, message, ...extra }, code: classCodeForStatus(status) });
}

/** A malformed parameter: 400 whose top-level `code` is the reason itself. */
export function invalidRequest(message: string, param?: string): ApiError {
  return new ApiError(400, {
    detail: { code: "invalid_request", message, ...(param ? { param } : {}) },
    code: "invalid_request",
  });
}

/** 422 `validation_error` listing every problem; the message names the first. */
export function validationError(issues: Issue[]): ApiError {
  const first = issues[0];
  return new ApiError(422, {
    detail: {
      code: "validation_error",
      message: first ? first.message : "validation error",
      errors: issues.map((i) => ({ field: i.field, message: i.message, type: i.code })),
    },
    code: "VALIDATION_ERROR",
  });
}

/** A rule refusal: 422 if any issue is a validation type, else 400 with the first issue's reason and field. */
export function ruleError(issues: Issue[], validationType: (code: string) => boolean): ApiError {
  const schemaLike = issues.filter((i) => validationType(i.code));
  if (schemaLike.length) return validationError(schemaLike);
  const first = issues[0] as Issue;
  return apiError(400, first.code, first.message, {
    param: first.field,
    errors: issues.map((i) => ({ field: i.field, message: i.message, type: i.code })),
  });
}

/** Plain-string 404 of an unknown path. */
export const notFoundPath = (): ApiError => new ApiError(404, { detail: "Not Found", code: "NOT_FOUND" });

/** Plain-string 405 of a wrong method. */
export const methodNotAllowed = (allow: string[]): ApiError =>
  new ApiError(
    405,
    { detail: "Method Not Allowed", code: "METHOD_NOT_ALLOWED" },
    { Allow: allow.join(", ") },
  );

/** The 401 body. */
export const unauthorized = (): ApiError =>
  new ApiError(401, { detail: "Invalid API key", code: "UNAUTHORIZED" });

const MAX_BODY = 10 * 1024 * 1024;

/** Reads the raw body; `undefined` when there is none. Malformed JSON is a 400 `invalid_request`. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw invalidRequest("The request body is larger than 10 MiB.");
    chunks.push(chunk);
  }
  if (size === 0) return undefined;
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw invalidRequest("The request body is not valid JSON.", "body");
  }
}

/** Parsed query string: last value wins for a repeated name. */
export type Query = Map<string, string>;

/** Splits `?a=1&b=2` into a map. */
export function parseQuery(search: string): Query {
  const q: Query = new Map();
  if (!search) return q;
  for (const [k, v] of new URLSearchParams(search)) q.set(k, v);
  return q;
}

/** 422 `extra_forbidden` for every query parameter the route does not take. */
export function unknownQueryIssues(query: Query, allowed: readonly string[]): Issue[] {
  const issues: Issue[] = [];
  for (const name of query.keys()) {
    if (!allowed.includes(name)) {
      const field = `query.${name}`;
      issues.push({ field, code: "extra_forbidden", message: `${field}: Extra inputs are not permitted` });
    }
  }
  return issues;
}

/** `limit` (1 to 100, default 20) as issues or a value. */
export function limitOf(query: Query, issues: Issue[]): number {
  const raw = query.get("limit");
  if (raw === undefined) return PAGE_LIMIT.default;
  const field = "query.limit";
  if (!/^[+-]?\d+$/.test(raw.trim())) {
    issues.push({
      field,
      code: "int_parsing",
      message: `${field}: Input should be a valid integer, unable to parse string as an integer`,
    });
    return PAGE_LIMIT.default;
  }
  const n = Number(raw);
  if (n < PAGE_LIMIT.min) {
    issues.push({
      field,
      code: "greater_than_equal",
      message: `${field}: Input should be greater than or equal to ${PAGE_LIMIT.min}`,
    });
  } else if (n > PAGE_LIMIT.max) {
    issues.push({
      field,
      code: "less_than_equal",
      message: `${field}: Input should be less than or equal to ${PAGE_LIMIT.max}`,
    });
  }
  return n;
}

interface CursorDoc {
  l: string;
  s: number;
}

/** An opaque cursor for position `seq` in list `list`. */
export function encodeCursor(list: string, seq: number): string {
  return Buffer.from(JSON.stringify({ l: list, s: seq } satisfies CursorDoc)).toString("base64url");
}

/** Decodes a cursor of list `list`; anything else (other list, garbage) is 400 `invalid_cursor`. */
export function decodeCursor(cursor: string, list: string): number {
  const refuse = () =>
    apiError(
      400,
      "invalid_cursor",
      "cursor: this cursor does not come from this list (or its sort order); start again without a cursor",
      {
        param: "cursor",
      },
    );
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw refuse();
  }
  const d = doc as Partial<CursorDoc>;
  if (typeof d !== "object" || d === null || d.l !== list || typeof d.s !== "number") throw refuse();
  return d.s;
}

/**
 * One page of `items` (already in list order, each with an ordering number `seq` that falls in
 * `desc` or ascending order), after the cursor position.
 */
export function pageOf<T, R>(
  items: T[],
  seqOf: (t: T) => number,
  toRow: (t: T) => R,
  opts: { list: string; cursor: string | undefined; limit: number; desc: boolean },
): Page<R> {
  let start = 0;
  if (opts.cursor !== undefined) {
    const pos = decodeCursor(opts.cursor, opts.list);
    start = items.findIndex((t) => (opts.desc ? seqOf(t) < pos : seqOf(t) > pos));
    if (start < 0) start = items.length;
  }
  const slice = items.slice(start, start + opts.limit);
  const hasMore = start + opts.limit < items.length;
  const last = slice.at(-1);
  return {
    data: slice.map(toRow),
    has_more: hasMore,
    next_cursor: hasMore && last !== undefined ? encodeCursor(opts.list, seqOf(last)) : null,
  };
}

/**
 * One page, newest first, of `list` kept in ascending `seq` order (calls, agents): the same page
 * `pageOf` gives for the reversed, filtered list, at the cost of the page instead of the list. The
 * cursor (the `seq` of the last row a page showed) is found by binary search; the walk goes down
 * from it, keeping the rows `match` accepts, until one more than the page is found (`has_more`).
 * Rows added after the first page have higher `seq`s: a cursor never shows them, nor skips or
 * repeats a row it had not reached.
 */
export function pageNewestFirst<T, R>(
  list: readonly T[],
  seqOf: (t: T) => number,
  match: ((t: T) => boolean) | undefined,
  toRow: (t: T) => R,
  opts: { list: string; cursor: string | undefined; limit: number },
): Page<R> {
  let end = list.length;
  if (opts.cursor !== undefined) {
    const pos = decodeCursor(opts.cursor, opts.list);
    // First index whose seq is >= pos: the rows before it are the ones after the cursor.
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (seqOf(list[mid] as T) < pos) lo = mid + 1;
      else hi = mid;
    }
    end = lo;
  }
  const page: T[] = [];
  let hasMore = false;
  for (let i = end - 1; i >= 0; i--) {
    const t = list[i] as T;
    if (match && !match(t)) continue;
    if (page.length === opts.limit) {
      hasMore = true;
      break;
    }
    page.push(t);
  }
  const last = page.at(-1);
  return {
    data: page.map(toRow),
    has_more: hasMore,
    next_cursor: hasMore && last !== undefined ? encodeCursor(opts.list, seqOf(last)) : null,
  };
}
