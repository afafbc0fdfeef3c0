/** Custom analysis: groups (list, create, replace, delete) with their items; Default Analysis protected. */
import {
  type AnalysisGroup,
  AnalysisGroupInput,
  checkAnalysisGroupRules,
  type Issue,
  parseWith,
} from "../../spec";
import { type Result, type RouteContext, refuseIf } from "../context";
import { apiError, limitOf, pageOf, validationError } from "../http";
import {
  type GroupItemRecord,
  type GroupRecord,
  newId,
  now,
  type State,
  type WorkspaceState,
} from "../state";
import { agentsUsing } from "./knowledgeBases";

export function view(g: GroupRecord): AnalysisGroup {
  return {
    id: g.id,
    name: g.name,
    description: g.description,
    enabled: g.enabled,
    items: [...g.items]
      .sort((a, b) => a.seq - b.seq)
      .map((it) => ({
        id: it.id,
        name: it.name,
        description: it.description,
        type: it.type,
        enum_values: it.enum_values,
        enabled: it.enabled,
        created_at: it.created_at,
      })),
    created_at: g.created_at,
    updated_at: g.updated_at,
  };
}

function findGroup(ctx: RouteContext): GroupRecord {
  const id = ctx.params.group_id as string;
  const g = ctx.ws.groups.get(id);
  if (!g)
    throw apiError(404, "group_not_found", `group_id: no analysis group '${id}' in this workspace`, {
      param: "group_id",
    });
  return g;
}

function nameTaken(ws: WorkspaceState, name: string, except?: string): Issue[] {
  for (const g of ws.groups.values()) {
    if (g.id !== except && g.name === name) {
      return [
        { field: "name", code: "document_invalid", message: `name: a group named '${name}' already exists` },
      ];
    }
  }
  return [];
}

async function parseInput(ctx: RouteContext): Promise<AnalysisGroupInput> {
  return parseInputOf(await ctx.body());
}

function parseInputOf(body: unknown): AnalysisGroupInput {
  const parsed = parseWith(AnalysisGroupInput, body);
  if (!parsed.ok) throw validationError(parsed.issues);
  refuseIf(checkAnalysisGroupRules(parsed.data));
  return parsed.data;
}

/** `GET /v1/custom-analysis`: groups in creation order. */
export function listGroups(ctx: RouteContext): Result {
  const issues: Issue[] = [];
  const limit = limitOf(ctx.query, issues);
  if (issues.length) throw validationError(issues);
  return {
    status: 200,
    body: pageOf(
      [...ctx.ws.groups.values()].sort((a, b) => a.seq - b.seq),
      (g) => g.seq,
      view,
      {
        list: "custom-analysis",
        cursor: ctx.query.get("cursor"),
        limit,
        desc: false,
      },
    ),
  };
}

/** `GET /v1/custom-analysis/groups/{id}` (an emulator convenience; see docs/emulator.md). */
export function readGroup(ctx: RouteContext): Result {
  return { status: 200, body: view(findGroup(ctx)) };
}

/** `POST /v1/custom-analysis/groups` → 201. */
export async function createGroup(ctx: RouteContext): Promise<Result> {
  return { status: 201, body: view(createGroupIn(ctx.state, ctx.ws, await ctx.body())) };
}

/** Creates an analysis group from a `POST /v1/custom-analysis/groups` body (the seed uses it too, with its own id). */
export function createGroupIn(state: State, ws: WorkspaceState, body: unknown, id = newId()): GroupRecord {
  const input = parseInputOf(body);
  const itemsWithId = (input.items ?? []).findIndex((it) => it.id !== undefined);
  if (itemsWithId >= 0) {
    refuseIf([
      {
        field: `items[${itemsWithId}].id`,
        code: "document_invalid",
        message: `items[${itemsWithId}].id: a new group has no items to keep`,
      },
    ]);
  }
  refuseIf(nameTaken(ws, input.name));
  const at = now();
  const g: GroupRecord = {
    id,
    seq: state.nextSeq(),
    name: input.name,
    description: input.description ?? null,
    enabled: input.enabled ?? true,
    protected: false,
    items: (input.items ?? []).map((it) => ({
      id: newId(),
      seq: state.nextSeq(),
      name: it.name,
      description: it.description ?? null,
      type: it.type,
      enum_values: it.enum_values ?? null,
      enabled: it.enabled ?? true,
      created_at: at,
    })),
    created_at: at,
    updated_at: at,
  };
  ws.groups.set(g.id, g);
  state.saveGroup(ws, g);
  return g;
}

/** `PUT /v1/custom-analysis/groups/{id}`: items with an id kept and updated, others created, missing removed. */
export async function replaceGroup(ctx: RouteContext): Promise<Result> {
  const g = findGroup(ctx);
  const input = await parseInput(ctx);
  const byId = new Map(g.items.map((it) => [it.id, it]));
  const issues: Issue[] = [];
  (input.items ?? []).forEach((it, i) => {
    if (it.id !== undefined && !byId.has(it.id)) {
      issues.push({
        field: `items[${i}].id`,
        code: "document_invalid",
        message: `items[${i}].id: '${it.id}' is not an item of this group`,
      });
    }
  });
  refuseIf([...issues, ...nameTaken(ctx.ws, input.name, g.id)]);
  const at = now();
  g.items = (input.items ?? []).map((it): GroupItemRecord => {
    const prev = it.id !== undefined ? byId.get(it.id) : undefined;
    return {
      id: prev?.id ?? newId(),
      seq: prev?.seq ?? ctx.state.nextSeq(),
      name: it.name,
      description: it.description ?? null,
      type: it.type,
      enum_values: it.enum_values ?? null,
      enabled: it.enabled ?? true,
      created_at: prev?.created_at ?? at,
    };
  });
  g.name = input.name;
  g.description = input.description ?? null;
  g.enabled = input.enabled ?? true;
  g.updated_at = at;
  ctx.state.saveGroup(ctx.ws, g);
  return { status: 200, body: view(g) };
}

/** `DELETE /v1/custom-analysis/groups/{id}` → 204; 409 `group_protected` for Default Analysis, `group_in_use` when attached. */
export function deleteGroup(ctx: RouteContext): Result {
  const g = findGroup(ctx);
  if (g.protected) {
    throw apiError(
      409,
      "group_protected",
      `group_id: '${g.name}' exists in every workspace and cannot be deleted`,
      { param: "group_id" },
    );
  }
  const users = agentsUsing(ctx.ws, (x) => x.groups, g.id);
  if (users.length) {
    throw apiError(
      409,
      "group_in_use",
      `group_id: group '${g.name}' is attached to the draft or live version of agent ${users.join(", ")}`,
      {
        param: "group_id",
      },
    );
  }
  ctx.ws.groups.delete(g.id);
  ctx.state.deleteGroup(ctx.ws, g.id);
  return { status: 204 };
}
