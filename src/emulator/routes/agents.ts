/** Agents: list, create, read at a version, merge-patch with `?version=` and `If-Match`. */
import {
  type AgentConfig,
  type AgentDetail,
  type AgentSummary,
  blockedReasons,
  defaultAgentConfig,
  isValidationType,
  METADATA_FIELDS,
  planAgentWrite,
  type VersionRow,
  validateAgentBody,
} from "../../spec";
import { holdingsOf, type Result, type RouteContext } from "../context";
import { apiError, invalidRequest, limitOf, pageNewestFirst, ruleError, validationError } from "../http";
import { type AgentRecord, newId, now, type State, type VersionRecord, type WorkspaceState } from "../state";

/** Where the dashboard would show an agent. */
export const DASHBOARD_BASE = "https://dashboard.voice-agent.example";

/** The agent of the path, or 404 `agent_not_found` (another workspace's agent included). */
export function findAgent(ctx: RouteContext): AgentRecord {
  const id = ctx.params.agent_id as string;
  const agent = ctx.ws.agents.get(id);
  if (!agent)
    throw apiError(404, "agent_not_found", `agent_id: no agent '${id}' in this workspace`, {
      param: "agent_id",
    });
  return agent;
}

/**
 * 409 unless `v` can serve: a draft is `agent_not_published` (publish it before `before`), a
 * version with blocked reasons is `version_blocked` (it cannot `can`). Going live and placing a
 * call to a version check the same two things.
 */
export function assertCanServe(
  state: State,
  ws: WorkspaceState,
  v: VersionRecord,
  param: string,
  purpose: { before: string; can: string },
): void {
  if (!v.is_published)
    throw apiError(
      409,
      "agent_not_published",
      `${param}: version ${v.version} is a draft; publish it before ${purpose.before}`,
      { param },
    );
  const reasons = versionBlockedReasons(state, ws, v);
  if (reasons.length)
    throw apiError(
      409,
      "version_blocked",
      `${param}: version ${v.version} cannot ${purpose.can}: ${reasons.join("; ")}`,
      {
        param,
      },
    );
}

/** Why each version is blocked, from the current catalogue and knowledge bases. */
export function versionBlockedReasons(state: State, ws: WorkspaceState, v: VersionRecord): string[] {
  return blockedReasons(v.config, state.catalogue, new Set(ws.kbs.keys()));
}

/** Agent detail of one version (shares the stored objects: serialise it, never mutate it). */
export function agentDetail(
  state: State,
  ws: WorkspaceState,
  agent: AgentRecord,
  v: VersionRecord,
): AgentDetail {
  return {
    id: agent.id,
    version: v.version,
    version_id: v.version_id,
    is_published: v.is_published,
    is_live: agent.live_version === v.version,
    live_version: agent.live_version,
    latest_version: agent.versions.length - 1,
    document_revision: v.document_revision,
    label: v.label,
    notes: v.notes,
    blocked_reasons: versionBlockedReasons(state, ws, v),
    created_at: v.created_at,
    updated_at: v.updated_at,
    dashboard_url: `${DASHBOARD_BASE}/agents/${agent.id}?version=${v.version}`,
    ...v.config,
  };
}

/** The version an agent is known by: the live one, or the latest when off air. */
export function representativeVersion(agent: AgentRecord): VersionRecord {
  const live = agent.live_version === null ? undefined : agent.versions[agent.live_version];
  return live ?? (agent.versions.at(-1) as VersionRecord);
}

function agentUpdatedAt(agent: AgentRecord): string {
  let latest = agent.created_at;
  for (const v of agent.versions) if (v.updated_at > latest) latest = v.updated_at;
  for (const a of agent.activations) if (a.at > latest) latest = a.at;
  return latest;
}

function summary(agent: AgentRecord): AgentSummary {
  const latest = agent.versions.at(-1) as VersionRecord;
  return {
    id: agent.id,
    name: latest.config.name,
    is_live: agent.live_version !== null,
    live_version: agent.live_version,
    latest_version: agent.versions.length - 1,
    inbound_phone: representativeVersion(agent).config.numbers.inbound_phone,
    created_at: agent.created_at,
    updated_at: agentUpdatedAt(agent),
  };
}

/** Version row of `GET /versions`. */
export function versionRow(
  state: State,
  ws: WorkspaceState,
  agent: AgentRecord,
  v: VersionRecord,
): VersionRow {
  return {
    version: v.version,
    version_id: v.version_id,
    is_published: v.is_published,
    is_live: agent.live_version === v.version,
    label: v.label,
    notes: v.notes,
    document_revision: v.document_revision,
    blocked_reasons: versionBlockedReasons(state, ws, v),
    created_at: v.created_at,
    updated_at: v.updated_at,
  };
}

/** `?version=`: `live` or a non-negative integer; anything else is 400 `invalid_request`. */
export function parseVersionParam(raw: string | undefined): "live" | number | undefined {
  if (raw === undefined) return undefined;
  if (raw === "live") return "live";
  if (/^\d+$/.test(raw) && Number.isSafeInteger(Number(raw))) return Number(raw);
  throw invalidRequest(`version: '${raw}' is neither 'live' nor a version number`, "version");
}

/** The version a `?version=` names, or 404 `version_not_found`. */
export function resolveVersion(agent: AgentRecord, which: "live" | number): VersionRecord {
  if (which === "live") {
    const v = agent.live_version === null ? undefined : agent.versions[agent.live_version];
    if (!v)
      throw apiError(404, "version_not_found", "version: the agent is off air; it has no live version", {
        param: "version",
      });
    return v;
  }
  const v = agent.versions[which];
  if (!v)
    throw apiError(404, "version_not_found", `version: agent has no version ${which}`, { param: "version" });
  return v;
}

/** `If-Match`: a document_revision, bare or quoted; anything else is 400 `invalid_request`. */
export function parseIfMatch(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const m = /^\s*(?:W\/)?"?(\d{1,15})"?\s*$/.exec(raw);
  if (!m || (raw.includes('"') && !/"\d+"/.test(raw))) {
    throw invalidRequest(`If-Match: '${raw}' is not a document_revision`, "If-Match");
  }
  return Number(m[1]);
}

/** 409 `revision_conflict` when an `If-Match` revision is given and differs from the target's. */
export function checkRevision(expected: number | undefined, current: number): void {
  if (expected !== undefined && expected !== current) {
    throw apiError(
      409,
      "revision_conflict",
      `If-Match: revision ${expected} is stale; the current document_revision is ${current}`,
      {
        param: "If-Match",
        current_revision: current,
      },
    );
  }
}

function planOrRefuse(ctx: RouteContext, current: AgentConfig | null, body: unknown): AgentConfig {
  return planOrRefuseIn(ctx.state, ctx.ws, current, body);
}

/** The configuration a `POST /v1/agents` (or patch) body gives in `ws`, or the refusal the API answers. */
export function planOrRefuseIn(
  state: State,
  ws: WorkspaceState,
  current: AgentConfig | null,
  body: unknown,
): AgentConfig {
  const base = { ...defaultAgentConfig(), analysis_group_ids: [ws.default_group_id] };
  const plan = planAgentWrite(current, body, { catalogue: state.catalogue, holdings: holdingsOf(ws) }, base);
  if (!plan.ok) throw ruleError(plan.issues, isValidationType);
  return plan.config;
}

/** A new version record. */
export function newVersion(version: number, config: AgentConfig, revision: number): VersionRecord {
  const at = now();
  return {
    version,
    version_id: newId(),
    is_published: false,
    document_revision: revision,
    label: null,
    notes: null,
    config,
    created_at: at,
    updated_at: at,
  };
}

/** `GET /v1/agents`: newest first. */
export function listAgents(ctx: RouteContext): Result {
  const issues = [] as Parameters<typeof validationError>[0];
  const limit = limitOf(ctx.query, issues);
  if (issues.length) throw validationError(issues);
  // The map holds the agents in creation order (ascending seq; sorted again when loaded).
  const agents = [...ctx.ws.agents.values()];
  return {
    status: 200,
    body: pageNewestFirst(agents, (a) => a.seq, undefined, summary, {
      list: "agents",
      cursor: ctx.query.get("cursor"),
      limit,
    }),
  };
}

/** `POST /v1/agents`: 201, V0 draft. */
export async function createAgent(ctx: RouteContext): Promise<Result> {
  const agent = createAgentIn(ctx.state, ctx.ws, await ctx.body());
  return { status: 201, body: agentDetail(ctx.state, ctx.ws, agent, agent.versions[0] as VersionRecord) };
}

/** Creates an agent at its V0 draft from a `POST /v1/agents` body (the seed uses it too, with its own id). */
export function createAgentIn(state: State, ws: WorkspaceState, body: unknown, id = newId()): AgentRecord {
  const config = planOrRefuseIn(state, ws, null, body);
  const meta = body as { label?: string | null; notes?: string | null };
  const v0 = newVersion(0, config, 1);
  v0.label = meta.label ?? null;
  v0.notes = meta.notes ?? null;
  const agent: AgentRecord = {
    id,
    seq: state.nextSeq(),
    created_at: v0.created_at,
    versions: [v0],
    live_version: null,
    activations: [],
    widget: null,
  };
  ws.agents.set(agent.id, agent);
  state.saveAgent(ws, agent);
  return agent;
}

/** `GET /v1/agents/{id}`: the latest version, or `?version=live|n`. */
export function readAgent(ctx: RouteContext): Result {
  const agent = findAgent(ctx);
  const which = parseVersionParam(ctx.query.get("version"));
  const v = which === undefined ? (agent.versions.at(-1) as VersionRecord) : resolveVersion(agent, which);
  return { status: 200, body: agentDetail(ctx.state, ctx.ws, agent, v) };
}

/** `PATCH /v1/agents/{id}`: merge-patch onto the working draft or `?version=`. */
export async function patchAgent(ctx: RouteContext): Promise<Result> {
  const agent = findAgent(ctx);
  const which = parseVersionParam(ctx.query.get("version"));
  const expected = parseIfMatch(ctx.header("if-match"));
  const body = await ctx.body();
  const parsed = validateAgentBody(body, "patch");
  if (!parsed.ok) throw validationError(parsed.issues);
  const configKeys = Object.keys(parsed.data).filter(
    (k) => !(METADATA_FIELDS as readonly string[]).includes(k),
  );
  const metaOnly = configKeys.length === 0;

  let target: VersionRecord;
  let branchFrom: VersionRecord | null = null;
  if (which !== undefined) {
    target = resolveVersion(agent, which);
  } else {
    const drafts = agent.versions.filter((v) => !v.is_published);
    if (drafts.length > 1) {
      const candidates = drafts.map((d) => d.version);
      throw apiError(
        409,
        "draft_ambiguous",
        `version: several drafts are open (versions ${candidates.join(", ")}); name one with ?version=`,
        { param: "version", candidates },
      );
    }
    if (drafts.length === 1) {
      target = drafts[0] as VersionRecord;
    } else {
      branchFrom = representativeVersion(agent);
      target = branchFrom;
    }
  }

  if (!branchFrom && target.is_published && !metaOnly) {
    throw apiError(
      409,
      "version_immutable",
      `version: version ${target.version} is published and frozen; only label and notes can change (patch without ?version= to open a draft)`,
      { param: "version" },
    );
  }
  checkRevision(expected, target.document_revision);
  const config = metaOnly ? target.config : planOrRefuse(ctx, target.config, body);
  const meta = parsed.data;
  const at = now();
  let changed: VersionRecord;
  if (branchFrom) {
    changed = newVersion(agent.versions.length, structuredClone(config), branchFrom.document_revision + 1);
    agent.versions.push(changed);
  } else {
    changed = target;
    changed.config = config;
    changed.document_revision += 1;
    changed.updated_at = at;
  }
  if ("label" in meta) changed.label = meta.label ?? null;
  if ("notes" in meta) changed.notes = meta.notes ?? null;
  ctx.state.saveAgent(ctx.ws, agent);
  return { status: 200, body: agentDetail(ctx.state, ctx.ws, agent, changed) };
}
