/** Versions (list, read, publish) and activations (deploy history, make live, roll back, off air). */
import { ActivationBody, type ActivationRow, PublishBody, parseWith } from "../../spec";
import type { Result, RouteContext } from "../context";
import { limitOf, pageOf, validationError } from "../http";
import { type AgentRecord, newId, now, type State, type VersionRecord, type WorkspaceState } from "../state";
import {
  agentDetail,
  assertCanServe,
  checkRevision,
  findAgent,
  parseIfMatch,
  resolveVersion,
  versionRow,
} from "./agents";

function versionOfPath(ctx: RouteContext): number {
  return Number(ctx.params.version);
}

/** `GET /v1/agents/{id}/versions`: newest first. */
export function listVersions(ctx: RouteContext): Result {
  const agent = findAgent(ctx);
  const issues: Parameters<typeof validationError>[0] = [];
  const limit = limitOf(ctx.query, issues);
  if (issues.length) throw validationError(issues);
  const versions = [...agent.versions].reverse();
  return {
    status: 200,
    body: pageOf(
      versions,
      (v) => v.version,
      (v) => versionRow(ctx.state, ctx.ws, agent, v),
      {
        list: `versions:${agent.id}`,
        cursor: ctx.query.get("cursor"),
        limit,
        desc: true,
      },
    ),
  };
}

/** `GET /v1/agents/{id}/versions/{n}`: agent detail of version n. */
export function readVersion(ctx: RouteContext): Result {
  const agent = findAgent(ctx);
  const v = resolveVersion(agent, versionOfPath(ctx));
  return { status: 200, body: agentDetail(ctx.state, ctx.ws, agent, v) };
}

/** `POST /v1/agents/{id}/versions/{n}/publish`: freezes version n (idempotent). */
export async function publishVersion(ctx: RouteContext): Promise<Result> {
  const agent = findAgent(ctx);
  const expected = parseIfMatch(ctx.header("if-match"));
  const raw = await ctx.body();
  const parsed = parseWith(PublishBody, raw === undefined ? {} : raw);
  if (!parsed.ok) throw validationError(parsed.issues);
  const v = resolveVersion(agent, versionOfPath(ctx));
  checkRevision(expected, v.document_revision);
  if (!v.is_published) {
    v.is_published = true;
    if (parsed.data.label !== undefined) v.label = parsed.data.label;
    if (parsed.data.notes !== undefined) v.notes = parsed.data.notes;
    v.updated_at = now();
    ctx.state.saveAgent(ctx.ws, agent);
  }
  return { status: 200, body: agentDetail(ctx.state, ctx.ws, agent, v) };
}

/** `GET /v1/agents/{id}/activations`: deploy history, newest first. */
export function listActivations(ctx: RouteContext): Result {
  const agent = findAgent(ctx);
  const issues: Parameters<typeof validationError>[0] = [];
  const limit = limitOf(ctx.query, issues);
  if (issues.length) throw validationError(issues);
  const rows = agent.activations.map((row, i) => ({ row, i })).reverse();
  return {
    status: 200,
    body: pageOf(
      rows,
      (r) => r.i,
      (r) => r.row,
      {
        list: `activations:${agent.id}`,
        cursor: ctx.query.get("cursor"),
        limit,
        desc: true,
      },
    ),
  };
}

/** `POST /v1/agents/{id}/activations` `{version}`: put a version live, or take the agent off air. */
export async function createActivation(ctx: RouteContext): Promise<Result> {
  const agent = findAgent(ctx);
  const parsed = parseWith(ActivationBody, await ctx.body());
  if (!parsed.ok) throw validationError(parsed.issues);
  const { row, created } = activate(ctx.state, ctx.ws, agent, parsed.data.version);
  return { status: created ? 201 : 200, body: row };
}

/**
 * Puts version `target` live (or with null takes the agent off air), recording a deploy-history
 * row; `created` is false when nothing changed and the latest row is the answer.
 */
export function activate(
  state: State,
  ws: WorkspaceState,
  agent: AgentRecord,
  target: number | null,
): { row: ActivationRow; created: boolean } {
  const previous = agent.live_version;
  const latestRow = agent.activations.at(-1);
  if (target === null) {
    if (previous === null && latestRow) return { row: latestRow, created: false };
  } else {
    const v: VersionRecord = resolveVersion(agent, target);
    assertCanServe(state, ws, v, "version", { before: "making it live", can: "go live" });
    if (previous === target && latestRow) return { row: latestRow, created: false };
  }
  const row: ActivationRow = {
    id: newId(),
    agent_id: agent.id,
    action: target === null ? "deactivate" : previous !== null && target < previous ? "rollback" : "activate",
    version: target,
    previous_version: previous,
    at: now(),
  };
  agent.activations.push(row);
  agent.live_version = target;
  state.saveAgent(ws, agent);
  return { row, created: true };
}
