/** Knowledge bases: CRUD; documents go `processing`, then `ready` or `failed`. */
import {
  checkKnowledgeBaseRules,
  type KnowledgeBase,
  type KnowledgeBaseDocument,
  type KnowledgeBaseDocumentInput,
  KnowledgeBaseInput,
  parseWith,
  unreachableUrlError,
} from "../../spec";
import { type Result, type RouteContext, refuseIf } from "../context";
import { apiError, limitOf, pageOf, validationError } from "../http";
import { type KbDocRecord, type KbRecord, newId, now, type State, type WorkspaceState } from "../state";
import { representativeVersion } from "./agents";

function docStatus(d: KbDocRecord, at: number): Pick<KnowledgeBaseDocument, "status" | "error"> {
  if (at < d.ready_at) return { status: "processing", error: null };
  return { status: d.final_status, error: d.final_error };
}

export function view(kb: KbRecord, forceProcessing: ReadonlySet<string> = new Set()): KnowledgeBase {
  const at = Date.now();
  return {
    id: kb.id,
    name: kb.name,
    description: kb.description,
    kb_type: "non_deterministic",
    documents: kb.documents.map((d) => ({
      id: d.id,
      name: d.name,
      source: d.source,
      url: d.url,
      ...(forceProcessing.has(d.id) ? { status: "processing" as const, error: null } : docStatus(d, at)),
      created_at: d.created_at,
    })),
    created_at: kb.created_at,
    updated_at: kb.updated_at,
  };
}

function newDoc(input: KnowledgeBaseDocumentInput, processingMs: number, keep?: KbDocRecord): KbDocRecord {
  const error = input.url !== undefined ? unreachableUrlError(input.url) : null;
  return {
    id: keep?.id ?? newId(),
    name: input.name,
    source: input.url !== undefined ? "url" : "text",
    url: input.url ?? null,
    text: input.text ?? null,
    created_at: keep?.created_at ?? now(),
    ready_at: Date.now() + processingMs,
    final_status: error ? "failed" : "ready",
    final_error: error,
  };
}

function findKb(ctx: RouteContext): KbRecord {
  const id = ctx.params.kb_id as string;
  const kb = ctx.ws.kbs.get(id);
  if (!kb)
    throw apiError(404, "knowledge_base_not_found", `kb_id: no knowledge base '${id}' in this workspace`, {
      param: "kb_id",
    });
  return kb;
}

async function parseInput(ctx: RouteContext): Promise<KnowledgeBaseInput> {
  return parseInputOf(await ctx.body());
}

function parseInputOf(body: unknown): KnowledgeBaseInput {
  const parsed = parseWith(KnowledgeBaseInput, body);
  if (!parsed.ok) throw validationError(parsed.issues);
  refuseIf(checkKnowledgeBaseRules(parsed.data));
  return parsed.data;
}

/** `GET /v1/knowledge-bases`: creation order. */
export function listKbs(ctx: RouteContext): Result {
  const issues: Parameters<typeof validationError>[0] = [];
  const limit = limitOf(ctx.query, issues);
  if (issues.length) throw validationError(issues);
  return {
    status: 200,
    body: pageOf(
      [...ctx.ws.kbs.values()],
      (k) => k.seq,
      (k) => view(k),
      {
        list: "knowledge-bases",
        cursor: ctx.query.get("cursor"),
        limit,
        desc: false,
      },
    ),
  };
}

/** `POST /v1/knowledge-bases` → 201. */
export async function createKb(ctx: RouteContext): Promise<Result> {
  const kb = createKbIn(ctx.state, ctx.ws, await ctx.body(), ctx.settings.kbProcessingMs);
  return { status: 201, body: view(kb, new Set(kb.documents.map((d) => d.id))) };
}

/**
 * Creates a knowledge base from a `POST /v1/knowledge-bases` body, its documents `processing` for
 * `processingMs` (the seed uses it too, with its own id).
 */
export function createKbIn(
  state: State,
  ws: WorkspaceState,
  body: unknown,
  processingMs: number,
  id = newId(),
): KbRecord {
  const input = parseInputOf(body);
  const at = now();
  const kb: KbRecord = {
    id,
    seq: state.nextSeq(),
    name: input.name,
    description: input.description ?? null,
    documents: (input.documents ?? []).map((d) => newDoc(d, processingMs)),
    created_at: at,
    updated_at: at,
  };
  ws.kbs.set(kb.id, kb);
  state.saveKb(ws, kb);
  return kb;
}

/** `GET /v1/knowledge-bases/{id}`. */
export function readKb(ctx: RouteContext): Result {
  return { status: 200, body: view(findKb(ctx)) };
}

/** `PUT /v1/knowledge-bases/{id}`: replaces name, description and documents (matched by name). */
export async function replaceKb(ctx: RouteContext): Promise<Result> {
  const kb = findKb(ctx);
  const input = await parseInput(ctx);
  const old = new Map(kb.documents.map((d) => [d.name, d]));
  const reprocessed = new Set<string>();
  kb.documents = (input.documents ?? []).map((d) => {
    const prev = old.get(d.name);
    const same =
      prev &&
      (d.url !== undefined
        ? prev.source === "url" && prev.url === d.url
        : prev.source === "text" && prev.text === d.text);
    if (prev && same) return prev;
    const doc = newDoc(d, ctx.settings.kbProcessingMs, prev);
    reprocessed.add(doc.id);
    return doc;
  });
  kb.name = input.name;
  kb.description = input.description ?? null;
  kb.updated_at = now();
  ctx.state.saveKb(ctx.ws, kb);
  return { status: 200, body: view(kb, reprocessed) };
}

/** Agents whose open draft or live version attaches a knowledge base or group. */
export function agentsUsing(
  ws: WorkspaceState,
  pick: (ids: { kb: string[]; groups: string[] }) => string[],
  id: string,
): string[] {
  const names: string[] = [];
  for (const agent of ws.agents.values()) {
    const relevant = agent.versions.filter((v) => !v.is_published || v.version === agent.live_version);
    if (
      relevant.some((v) =>
        pick({ kb: v.config.knowledge_base_ids, groups: v.config.analysis_group_ids }).includes(id),
      )
    ) {
      names.push(`'${representativeVersion(agent).config.name}' (${agent.id})`);
    }
  }
  return names;
}

/** `DELETE /v1/knowledge-bases/{id}` → 204, or 409 `knowledge_base_in_use`. */
export function deleteKb(ctx: RouteContext): Result {
  const kb = findKb(ctx);
  const users = agentsUsing(ctx.ws, (x) => x.kb, kb.id);
  if (users.length) {
    throw apiError(
      409,
      "knowledge_base_in_use",
      `kb_id: knowledge base '${kb.id}' is attached to the draft or live version of agent ${users.join(", ")}`,
      {
        param: "kb_id",
      },
    );
  }
  ctx.ws.kbs.delete(kb.id);
  ctx.state.deleteKb(ctx.ws, kb.id);
  return { status: 204 };
}
