/**
 * The HTTP pipeline: request id and concurrency headers on every answer; for `/v1`: faults, route
 * match (plain 404/405), auth (401), workspace headers (403), rate limit (429), path and query
 * checks (422 or per family), handler, request log.
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { CallRuntime } from "./calls";
import type { EmulatorSettings, Result, RouteContext } from "./context";
import { handleControl } from "./control";
import type { Faults } from "./faults";
import {
  ApiError,
  apiError,
  parseQuery,
  readJson,
  unauthorized,
  unknownQueryIssues,
  validationError,
} from "./http";
import type { RateLimiter } from "./rateLimit";
import type { RequestLog } from "./requestLog";
import { pathParamIssues, Router } from "./router";
import { ROUTES, type RouteDef } from "./routes";
import { presignedRecording } from "./routes/calls";
import { ORG, type State, type WorkspaceState } from "./state";

/** Everything the pipeline uses. */
export interface ServerDeps {
  state: State;
  settings: EmulatorSettings;
  faults: Faults;
  log: RequestLog;
  limiter: RateLimiter;
  calls: CallRuntime;
}

/** Pool size announced in `X-Voice-Concurrency-Limit` (in use: calls of the organisation still on the line). */
export const VOICE_CONCURRENCY_LIMIT = 10;

const BOOT = randomBytes(4).toString("hex");
let counter = 0;
const nextRequestId = () => {
  counter += 1;
  return `req_${BOOT}${counter.toString(16).padStart(8, "0")}`;
};

const v1 = new Router<RouteDef>();
for (const r of ROUTES) v1.add(r.method, r.path, r);

function send(res: ServerResponse, r: Result): void {
  if (res.headersSent || res.destroyed) return;
  const headers: Record<string, string> = { ...r.headers };
  if (r.raw) {
    headers["Content-Type"] = r.raw.contentType;
    headers["Content-Length"] = String(Buffer.byteLength(r.raw.data));
    res.writeHead(r.status, headers);
    res.end(r.raw.data);
    return;
  }
  if (r.status === 204 || r.body === undefined) {
    res.writeHead(r.status, headers);
    res.end();
    return;
  }
  const text = JSON.stringify(r.body);
  headers["Content-Type"] = "application/json";
  headers["Content-Length"] = String(Buffer.byteLength(text));
  res.writeHead(r.status, headers);
  res.end(text);
}

function fromError(err: unknown): Result {
  if (err instanceof ApiError) return { status: err.status, body: err.body, headers: err.headers };
  const message = err instanceof Error ? err.message : String(err);
  return {
    status: 500,
    body: {
      detail: { code: "internal_error", message: `emulator error: ${message}` },
      code: "INTERNAL_ERROR",
    },
  };
}

function bearer(req: IncomingMessage): string | undefined {
  const h = req.headers.authorization;
  if (!h) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m?.[1];
}

function checkWorkspaceHeaders(req: IncomingMessage, ws: WorkspaceState): void {
  const wsHeader = req.headers["x-service-workspace"];
  if (typeof wsHeader === "string" && wsHeader !== ws.id && wsHeader !== ws.name) {
    throw apiError(
      403,
      "workspace_mismatch",
      "X-Service-Workspace: does not match the workspace of the API key",
      {
        param: "X-Service-Workspace",
      },
    );
  }
  const orgHeader = req.headers["x-service-org"];
  if (typeof orgHeader === "string" && orgHeader !== ORG.id && orgHeader !== ORG.name) {
    throw apiError(403, "org_mismatch", "X-Service-Org: does not match the organization of the API key", {
      param: "X-Service-Org",
    });
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The request listener. */
export function createListener(deps: ServerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    void handle(deps, req, res);
  };
}

async function handle(deps: ServerDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const requestId = nextRequestId();
  res.setHeader("X-Request-ID", requestId);
  res.setHeader("X-Voice-Concurrency-Limit", String(VOICE_CONCURRENCY_LIMIT));
  res.setHeader("X-Voice-Concurrency-In-Use", String(deps.calls.activeCalls()));
  const method = req.method ?? "GET";
  const rawUrl = req.url ?? "/";
  const q = rawUrl.indexOf("?");
  const path = q < 0 ? rawUrl : rawUrl.slice(0, q);
  const search = q < 0 ? "" : rawUrl.slice(q + 1);

  if (path.startsWith("/recordings/") && (method === "GET" || method === "HEAD")) {
    send(res, presignedRecording(deps, path, search));
    return;
  }

  if (path === "/_emulator" || path.startsWith("/_emulator/")) {
    try {
      const body = method === "GET" || method === "HEAD" ? undefined : await readJson(req);
      send(res, handleControl(deps, method, path, body));
    } catch (err) {
      send(res, fromError(err));
    }
    return;
  }

  let workspace: string | null = null;
  const logEntry = (status: number, dropped?: "reset" | "after_commit" | "held") =>
    deps.log.add({
      at: new Date().toISOString(),
      method,
      path: rawUrl,
      status,
      request_id: requestId,
      workspace,
      user_agent: req.headers["user-agent"] ?? null,
      ...(dropped ? { dropped } : {}),
    });

  const isV1 = path === "/v1" || path.startsWith("/v1/");
  const draw = isV1 ? deps.faults.draw() : undefined;
  if (draw?.reset) {
    logEntry(0, "reset");
    req.socket.destroy();
    return;
  }
  if (draw?.latencyMs) await sleep(draw.latencyMs);

  let result: Result;
  let committedWrite = false;
  try {
    if (draw?.error) {
      throw apiError(
        503,
        "service_unavailable",
        "The service is temporarily unavailable (injected fault); retry later.",
      );
    }
    const match = v1.match(method, path);
    const key = bearer(req);
    const ws = key === undefined ? undefined : deps.state.workspaceForKey(key);
    if (!ws || key === undefined) throw unauthorized();
    workspace = ws.name;
    checkWorkspaceHeaders(req, ws);
    const decision = deps.limiter.hit(key);
    const rateHeaders: Record<string, string> = decision
      ? {
          "X-RateLimit-Limit": String(decision.limit),
          "X-RateLimit-Remaining": String(decision.remaining),
          "X-RateLimit-Reset": String(decision.resetSeconds),
        }
      : {};
    for (const [k, v] of Object.entries(rateHeaders)) res.setHeader(k, v);
    if (decision && !decision.allowed) {
      throw new ApiError(429, { code: "rate_limited" }, { "Retry-After": String(decision.resetSeconds) });
    }
    const route = match.value;
    const query = parseQuery(search);
    const issues = [...pathParamIssues(match.params), ...unknownQueryIssues(query, route.query ?? [])];
    if (issues.length) throw validationError(issues);
    // The body is read before the handler runs, so a handler never yields to another request
    // between reading the state and committing its write.
    const body = method === "GET" || method === "HEAD" ? undefined : await readJson(req);
    const ctx: RouteContext = {
      state: deps.state,
      settings: deps.settings,
      calls: deps.calls,
      ws,
      params: match.params,
      query,
      req,
      body: () => Promise.resolve(body),
      header: (name) => {
        const v = req.headers[name.toLowerCase()];
        return Array.isArray(v) ? v.join(", ") : v;
      },
    };
    result = await route.handler(ctx);
    committedWrite = method !== "GET" && method !== "HEAD" && result.status < 400;
  } catch (err) {
    result = fromError(err);
  }
  if (committedWrite && draw?.dropAfterCommit) {
    logEntry(0, "after_commit");
    req.socket.destroy();
    return;
  }
  if (committedWrite && deps.faults.holds(method, path)) {
    // Committed; the answer never comes: the client waits until it gives up or is killed.
    logEntry(0, "held");
    return;
  }
  send(res, result);
  logEntry(result.status);
}
