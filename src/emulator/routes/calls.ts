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
import { apiError, invalidRequest, limitOf, pageNewestFirst, validationError } from "../http";
import {
  type AgentRecord,
  type CallOutcome,
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
export interface CallArrival {
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
 * Everything a call to one agent through one arrival shares, resolved and checked once: the
 * answering version (refusals as `answeringVersion`), the numbers, the variables and the billing
 * rate. Traffic at volume prepares once per agent and places many calls from it.
 */
export interface PreparedCall {
  agent: AgentRecord;
  version: VersionRecord;
  arrival: CallArrival;
  from_number: string | null;
  to_number: string | null;
  variables: Record<string, string> | null;
  rate_per_min: number;
}

/** Resolves and checks a call's agent and version in `ws`; nothing is stored. */
export function prepareCall(state: State, ws: WorkspaceState, a: CallArrival): PreparedCall {
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
  return {
    agent,
    version: v,
    arrival: a,
    from_number: from,
    to_number: to,
    variables,
    rate_per_min: state.catalogue.models.find((m) => m.id === model)?.rate_per_min ?? 0,
  };
}

/** The outcome a prepared call finishes with: its own rule (traffic's mix), else the rules in force. */
export function outcomeOf(runtime: CallRuntime, ws: WorkspaceState, p: PreparedCall): CallOutcome {
  return decideOutcome(p.arrival.rule ? [p.arrival.rule] : runtime.rules, ws, p.version, {
    agent_id: p.agent.id,
    version: p.version.version,
    to_number: p.to_number,
  });
}

/** What traffic at volume sets per call instead of the defaults (now, the `--call-seconds` clock). */
export interface CallTiming {
  id?: string;
  created_ms?: number;
  call_ms?: number;
  analysis_delay_ms?: number;
  /** Shared by the calls of one prepared call and rule (never mutated). */
  outcome?: CallOutcome;
}

/**
 * Stores a prepared call and starts its clock. The call's `variables` object is the prepared
 * one's: calls placed from one preparation share it (nothing mutates it).
 */
export function placePrepared(
  state: State,
  settings: EmulatorSettings,
  runtime: CallRuntime,
  ws: WorkspaceState,
  p: PreparedCall,
  idempotency: { key: string; fingerprint: string } | null = null,
  timing: CallTiming = {},
): CallRecord {
  const v = p.version;
  const id = timing.id ?? newId();
  const call: CallRecord = {
    id,
    seq: state.nextSeq(),
    agent_id: p.agent.id,
    agent_version: v.version,
    direction: p.arrival.direction,
    origin: p.arrival.origin,
    from_number: p.from_number,
    to_number: p.to_number,
    metadata: p.arrival.metadata ?? null,
    variables: p.variables,
    created_ms: timing.created_ms ?? Date.now(),
    call_ms: timing.call_ms ?? settings.callMs,
    outcome: timing.outcome ?? outcomeOf(runtime, ws, p),
    recording_enabled: v.config.call?.recording_enabled ?? false,
    custom_analysis_enabled: v.config.call?.custom_analysis_enabled ?? false,
    rate_per_min: p.rate_per_min,
    webhook_url: p.agent.webhook_url ?? null,
    idempotency: idempotency ? { ...idempotency, response: placedAnswer(id) } : null,
  };
  if (timing.analysis_delay_ms) call.analysis_delay_ms = timing.analysis_delay_ms;
  state.addCall(ws, call);
  runtime.start(ws, call);
  return call;
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
  return placePrepared(state, settings, runtime, ws, prepareCall(state, ws, a), idempotency);
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
  const match =
    direction === undefined && origins === undefined
      ? undefined
      : (c: CallRecord) =>
          (direction === undefined || c.direction === direction) &&
          (origins === undefined || (c.origin !== null && origins.includes(c.origin)));
  const at = Date.now();
  return {
    status: 200,
    body: pageNewestFirst(
      ctx.ws.callList,
      (c) => c.seq,
      match,
      (c) => callView(c, at, ctx.settings.baseUrl),
      { list: "calls", cursor: ctx.query.get("cursor"), limit },
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
