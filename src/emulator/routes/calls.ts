/**
 * Calls: place (`POST /v1/calls`, idempotent), list (newest first, `direction` and `origin`
 * filters), read, and the recording (audio/wav). The call's clock and events: src/emulator/calls.ts.
 */
import {
  CALL_DIRECTIONS,
  IDEMPOTENT_REPLAY_HEADER,
  type Issue,
  PlaceCallBody,
  parseWith,
  placeCallIssues,
} from "../../spec";
import {
  type CallRuntime,
  callView,
  DEFAULT_INBOUND_CALLER,
  decideOutcome,
  durationOf,
  hasRecording,
  type OutcomeRule,
  stageAt,
  wavOf,
} from "../calls";
import type { EmulatorSettings, Result, RouteContext } from "../context";
import { apiError, invalidRequest, limitOf, pageOf, validationError } from "../http";
import {
  type AgentRecord,
  type CallRecord,
  newId,
  type State,
  type VersionRecord,
  type WorkspaceState,
} from "../state";
import { assertCanServe } from "./agents";

/** Longest accepted `Idempotency-Key`. */
const MAX_IDEMPOTENCY_KEY = 255;

/**
 * JSON with object keys sorted: the same request in any key order gives the same text. (The
 * provider's `canonicalJson` is the same idea; the emulator imports nothing of the provider.)
 */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}

/**
 * The version that answers: the pinned one (`version` or `agent_version_id`), else the live one.
 * Missing: 404 `version_not_found`; a draft, or no live version and no pin: 409
 * `agent_not_published`; a blocked version: 409 `version_blocked`.
 */
export function answeringVersion(
  state: State,
  ws: WorkspaceState,
  agent: AgentRecord,
  pin: { version?: number; agent_version_id?: string },
): VersionRecord {
  let v: VersionRecord | undefined;
  if (pin.version !== undefined) {
    v = agent.versions[pin.version];
    if (!v)
      throw apiError(404, "version_not_found", `version: agent ${agent.id} has no version ${pin.version}`, {
        param: "version",
      });
  } else if (pin.agent_version_id !== undefined) {
    v = agent.versions.find((x) => x.version_id === pin.agent_version_id);
    if (!v)
      throw apiError(
        404,
        "version_not_found",
        `agent_version_id: agent ${agent.id} has no version '${pin.agent_version_id}'`,
        { param: "agent_version_id" },
      );
  } else {
    v = agent.live_version === null ? undefined : agent.versions[agent.live_version];
    if (!v)
      throw apiError(
        409,
        "agent_not_published",
        `agent_id: agent ${agent.id} has no live version (it is off air); put a published version live, or pin the call to one with version or agent_version_id`,
        { param: "agent_id" },
      );
  }
  const param = pin.agent_version_id !== undefined ? "agent_version_id" : "version";
  assertCanServe(state, ws, v, param, { before: "placing a call to it", can: "take calls" });
  return v;
}

/** How a call arrives. */
interface CallArrival {
  agent_id: string;
  version?: number;
  agent_version_id?: string;
  metadata?: Record<string, unknown>;
  variables?: Record<string, string>;
  direction: "outbound" | "inbound" | "web";
  origin: string;
  /** Outbound: the callee. Inbound: the agent's number (default: its inbound number). */
  to_number?: string;
  /** Inbound: the caller. */
  from_number?: string;
  /** The outcome rule this call follows instead of the call-outcome rules in force (traffic's mix). */
  rule?: OutcomeRule;
}

/**
 * Places a call in `ws` (the agent must be in it) and starts its clock; nothing is stored until
 * every check passed. `idempotency` is stored with it for replays.
 */
export function placeCall(
  state: State,
  settings: EmulatorSettings,
  runtime: CallRuntime,
  ws: WorkspaceState,
  a: CallArrival,
  idempotency: { key: string; fingerprint: string } | null = null,
): CallRecord {
  const agent = ws.agents.get(a.agent_id);
  if (!agent)
    throw apiError(404, "agent_not_found", `agent_id: no agent '${a.agent_id}' in this workspace`, {
      param: "agent_id",
    });
  const v = answeringVersion(state, ws, agent, a);
  const agentNumber =
    v.config.numbers?.inbound_phone ??
    ws.numbers.find((n) => n.lifecycle_status === "active")?.number ??
    null;
  let from: string | null = null;
  let to: string | null = null;
  if (a.direction === "outbound") {
    from = agentNumber;
    to = a.to_number ?? null;
  } else if (a.direction === "inbound") {
    from = a.from_number ?? DEFAULT_INBOUND_CALLER;
    to = a.to_number ?? v.config.numbers?.inbound_phone ?? null;
  }
  const variables =
    a.direction === "inbound" && from !== null
      ? { caller_no: from, ...a.variables }
      : a.variables !== undefined
        ? { ...a.variables }
        : null;
  const model = v.config.model?.model;
  const id = newId();
  const call: CallRecord = {
    id,
    seq: state.nextSeq(),
    agent_id: agent.id,
    agent_version: v.version,
    direction: a.direction,
    origin: a.origin,
    from_number: from,
    to_number: to,
    metadata: a.metadata ?? null,
    variables,
    created_ms: Date.now(),
    call_ms: settings.callMs,
    outcome: decideOutcome(a.rule ? [a.rule] : runtime.rules, ws, v, {
      agent_id: agent.id,
      version: v.version,
      to_number: to,
    }),
    recording_enabled: v.config.call?.recording_enabled ?? false,
    custom_analysis_enabled: v.config.call?.custom_analysis_enabled ?? false,
    rate_per_min: state.catalogue.models.find((m) => m.id === model)?.rate_per_min ?? 0,
    webhook_url: agent.webhook_url ?? null,
    idempotency: idempotency ? { ...idempotency, response: placedAnswer(id) } : null,
  };
  state.addCall(ws, call);
  runtime.start(ws, call);
  return call;
}

/** The 202 answer text of a placed call (stored: a replay answers exactly these bytes). */
export function placedAnswer(callId: string): string {
  return JSON.stringify({ id: callId, status: "started" });
}

/**
 * `POST /v1/calls`: `Idempotency-Key` required; the same key and request replay the first answer
 * byte for byte with `Idempotent-Replay: true`; the same key with another request is 409
 * `idempotency_key_reused`.
 */
export async function placeCallRoute(ctx: RouteContext): Promise<Result> {
  const key = ctx.header("idempotency-key");
  if (key === undefined || key.trim() === "")
    throw invalidRequest(
      "Idempotency-Key: the header is required; send a fresh UUID for each distinct call, and the same one when retrying it",
      "Idempotency-Key",
    );
  if (key.length > MAX_IDEMPOTENCY_KEY)
    throw invalidRequest(
      `Idempotency-Key: at most ${MAX_IDEMPOTENCY_KEY} characters (a UUID is 36)`,
      "Idempotency-Key",
    );
  const parsed = parseWith(PlaceCallBody, await ctx.body());
  if (!parsed.ok) throw validationError(parsed.issues);
  const [both] = placeCallIssues(parsed.data);
  if (both) throw invalidRequest(both.message, both.field);
  const fingerprint = canonical(parsed.data);
  const priorId = ctx.ws.callKeys.get(key);
  const prior = priorId === undefined ? undefined : ctx.ws.calls.get(priorId);
  if (prior?.idempotency) {
    if (prior.idempotency.fingerprint !== fingerprint)
      throw apiError(
        409,
        "idempotency_key_reused",
        `Idempotency-Key: '${key}' already placed call ${prior.id} with a different request; use a fresh key for a different call`,
        { param: "Idempotency-Key" },
      );
    return {
      status: 202,
      raw: { contentType: "application/json", data: prior.idempotency.response },
      headers: { [IDEMPOTENT_REPLAY_HEADER]: "true" },
    };
  }
  const b = parsed.data;
  const call = placeCall(
    ctx.state,
    ctx.settings,
    ctx.calls,
    ctx.ws,
    {
      agent_id: b.agent_id,
      version: b.version,
      agent_version_id: b.agent_version_id,
      metadata: b.metadata,
      variables: b.variables,
      direction: "outbound",
      origin: "api",
      to_number: b.to_number,
    },
    { key, fingerprint },
  );
  return { status: 202, raw: { contentType: "application/json", data: placedAnswer(call.id) } };
}

function findCall(ctx: RouteContext): CallRecord {
  const id = ctx.params.call_id as string;
  const call = ctx.ws.calls.get(id);
  if (!call)
    throw apiError(404, "call_not_found", `call_id: no call '${id}' in this workspace`, { param: "call_id" });
  return call;
}

/** `GET /v1/calls`: newest first; `direction` (one value) and `origin` (comma-separated) filters. */
export function listCalls(ctx: RouteContext): Result {
  const issues: Issue[] = [];
  const limit = limitOf(ctx.query, issues);
  if (issues.length) throw validationError(issues);
  const direction = ctx.query.get("direction");
  if (direction !== undefined && !(CALL_DIRECTIONS as readonly string[]).includes(direction))
    throw apiError(
      400,
      "invalid_direction",
      `direction: '${direction}' is not a call direction (${CALL_DIRECTIONS.join(", ")})`,
      { param: "direction" },
    );
  const originRaw = ctx.query.get("origin");
  const origins =
    originRaw === undefined
      ? undefined
      : originRaw
          .split(",")
          .map((o) => o.trim())
          .filter((o) => o !== "");
  if (origins !== undefined && origins.length === 0)
    throw invalidRequest("origin: name at least one origin (comma-separated)", "origin");
  const calls = [...ctx.ws.calls.values()]
    .reverse()
    .filter(
      (c) =>
        (direction === undefined || c.direction === direction) &&
        (origins === undefined || (c.origin !== null && origins.includes(c.origin))),
    );
  const at = Date.now();
  return {
    status: 200,
    body: pageOf(
      calls,
      (c) => c.seq,
      (c) => callView(c, at, ctx.settings.baseUrl),
      { list: "calls", cursor: ctx.query.get("cursor"), limit, desc: true },
    ),
  };
}

/** `GET /v1/calls/{id}`. */
export function readCall(ctx: RouteContext): Result {
  return { status: 200, body: callView(findCall(ctx), Date.now(), ctx.settings.baseUrl) };
}

/** Why a call has no recording to download now, or null when it has one. */
function recordingProblem(call: CallRecord): { code: string; message: string } | null {
  if (!call.recording_enabled)
    return {
      code: "recording_not_found",
      message: `call_id: call ${call.id} was not recorded (recording is off on version ${call.agent_version})`,
    };
  if (!call.outcome.connected)
    return {
      code: "recording_not_found",
      message: `call_id: call ${call.id} never connected (${call.outcome.status}); there is nothing recorded`,
    };
  if (Date.now() < stageAt(call, "billed"))
    return {
      code: "recording_not_ready",
      message: `call_id: the recording of call ${call.id} is not ready yet; try again after call.recording.ready`,
    };
  return null;
}

/** `GET /v1/calls/{id}/recording`: the audio (`audio/wav`), or 404 until ready / when there is none. */
export function readRecording(ctx: RouteContext): Result {
  const call = findCall(ctx);
  const problem = recordingProblem(call);
  if (problem) throw apiError(404, problem.code, problem.message, { param: "call_id" });
  return { status: 200, raw: { contentType: "audio/wav", data: wavOf(durationOf(call)) } };
}

/** `GET /recordings/{id}.wav?expires=&signature=`: a presigned link of a webhook (no key). */
export function presignedRecording(
  deps: { state: State; calls: CallRuntime },
  path: string,
  search: string,
): Result {
  const m = /^\/recordings\/([0-9a-f-]{36})\.wav$/.exec(path);
  const q = new URLSearchParams(search);
  const id = m?.[1];
  if (!id || !deps.calls.checkPresigned(id, q.get("expires"), q.get("signature")))
    return {
      status: 403,
      body: {
        detail: { code: "link_invalid", message: "This recording link is invalid or has expired." },
        code: "FORBIDDEN",
      },
    };
  for (const ws of deps.state.workspaces.values()) {
    const call = ws.calls.get(id);
    if (call && hasRecording(call))
      return { status: 200, raw: { contentType: "audio/wav", data: wavOf(durationOf(call)) } };
  }
  return { status: 404, body: { detail: "Not Found", code: "NOT_FOUND" } };
}
