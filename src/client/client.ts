/**
 * The typed API client. All I/O goes through `send` (transport.ts); this file maps endpoints to
 * requests, parses answers with the shared schemas, and recovers from answers lost after the server
 * committed (see docs/client.md, "Lost answers").
 */
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { inspect } from "node:util";
import type { z } from "zod";
import { type AgentBody, type AgentCreateBody, AgentDetail, AgentSummary } from "../spec/agent";
import { Envelope } from "../spec/paging";
import { Widget, type WidgetPatch } from "../spec/widget";
import { type ClientConfig, DEFAULT_RETRY_BUDGET_MS, DEFAULT_TIMEOUT_MS, validateConfig } from "./config";
import {
  ConflictError,
  ConnectionError,
  NotFoundError,
  ResponseShapeError,
  type VoiceAgentError,
} from "./errors";
import { debugEnabled } from "./log";
import { type Page, PageIterator } from "./pagination";
import { newCreateMarker, reflects } from "./recovery";
import { redactString } from "./redact";
import {
  backoffMs,
  type HttpRequest,
  mayHaveCommitted,
  newOperation,
  type OperationState,
  send,
} from "./transport";
import {
  ActivationRow,
  type AnalysisGroup,
  type AnalysisGroupBody,
  AnalysisGroup as AnalysisGroupSchema,
  analysisRoutes,
  DRAFT_AMBIGUOUS,
  ifMatchHeader,
  type KnowledgeBase,
  type KnowledgeBaseBody,
  KnowledgeBase as KnowledgeBaseSchema,
  knowledgeBaseRoutes,
  LanguageRow,
  ModelRow,
  NumberRow,
  REVISION_CONFLICT,
  TranscriberRow,
  TtsCapabilities,
  VersionDetail,
  VersionRow,
  VoiceRow,
  versionRoutes,
  WhatsAppNumberRow,
  WhatsAppTemplateRow,
  WidgetKey,
} from "./undocumented";

/** Agent detail: one agent at one version. */
export type AgentDetailT = z.infer<typeof AgentDetail>;
/** Item of the agent list. */
export type AgentSummaryT = z.infer<typeof AgentSummary>;
/** Item of an agent's version list. */
export type VersionRowT = z.infer<typeof VersionRow>;
/** A deploy-history row. */
export type ActivationRowT = z.infer<typeof ActivationRow>;
/** The widget of an agent. */
export type WidgetT = z.infer<typeof Widget>;
/** The rotate-key answer: the only place the full public key is shown. */
export type WidgetKeyT = z.infer<typeof WidgetKey>;
/** Create body of an agent (`name` required). */
export type AgentCreateInput = z.input<typeof AgentCreateBody>;
/** Merge-patch body of an agent. */
export type AgentPatchInput = z.input<typeof AgentBody>;
/** Merge-patch body of a widget. */
export type WidgetPatchInput = z.input<typeof WidgetPatch>;

/** A version selector: a number, or `live`. */
export type VersionSelector = number | "live";

const AgentPage = Envelope(AgentSummary);
const VersionPage = Envelope(VersionRow);
const ActivationPage = Envelope(ActivationRow);
const KnowledgeBasePage = Envelope(KnowledgeBaseSchema);
const AnalysisGroupPage = Envelope(AnalysisGroupSchema);

const seg = (v: string | number): string => encodeURIComponent(String(v));

function debugNote(text: string, secrets: readonly string[]): void {
  if (debugEnabled()) process.stderr.write(`${redactString(`voice-agent ${text}`, secrets)}\n`);
}

/**
 * Typed client of the voice-agent REST API.
 *
 * The configuration (and so the key) is kept in a private field: it is not enumerable, not in
 * `JSON.stringify(client)` and not in `util.inspect(client)`.
 */
export class VoiceAgentClient {
  readonly #config: ClientConfig;

  /** @throws {ClientConfigError} for a missing key or a non-https, non-loopback base URL. */
  constructor(config: ClientConfig) {
    validateConfig(config);
    this.#config = Object.freeze({ ...config });
  }

  /** The base URL this client talks to. */
  get baseUrl(): string {
    return this.#config.baseUrl;
  }

  /** Serializes to the base URL only. */
  toJSON(): { baseUrl: string } {
    return { baseUrl: this.#config.baseUrl };
  }

  [inspect.custom](): string {
    return `VoiceAgentClient { baseUrl: ${JSON.stringify(this.#config.baseUrl)} }`;
  }

  // ------------------------------------------------------------------------------------------
  // Plumbing
  // ------------------------------------------------------------------------------------------

  private async call<S extends z.ZodType>(
    schema: S,
    req: HttpRequest,
    op?: OperationState,
  ): Promise<z.infer<S>> {
    const res = await send(this.#config, req, op);
    const parsed = schema.safeParse(res.body);
    if (!parsed.success) {
      throw new ResponseShapeError(
        parsed.error.issues.map((i) => ({ path: i.path.map(String).join("."), message: i.message })),
        res.requestId,
        { method: req.method, path: req.path, secrets: [this.#config.apiKey] },
      );
    }
    return parsed.data;
  }

  private get budgetMs(): number {
    return this.#config.retryBudgetMs ?? DEFAULT_RETRY_BUDGET_MS;
  }

  /**
   * Run a create that must not be repeated blindly. When an attempt fails in a way that may have
   * committed (no answer, or 5xx), look for objects carrying our marker first; adopt the oldest if
   * found, else try again after a backoff, inside the retry budget. After a timeout the look-up
   * waits a grace period first, in case the server is still working on the lost attempt. When a
   * later attempt succeeds after such a failure, any other object carrying the marker (a late
   * commit of the lost attempt) is handed to `removeExtra`.
   */
  private async createOnce<T extends { id: string; created_at: string }>(
    what: string,
    attempt: (op: OperationState) => Promise<T>,
    findMarked: () => Promise<T[]>,
    removeExtra: (extra: T) => Promise<void>,
  ): Promise<T> {
    const op = newOperation();
    const secrets = [this.#config.apiKey];
    let lostAnswers = 0;
    for (;;) {
      let created: T;
      try {
        created = await attempt(op);
      } catch (err) {
        if (!mayHaveCommitted(err)) throw err;
        lostAnswers++;
        op.deadline ??= performance.now() + this.budgetMs;
        if (err instanceof ConnectionError && err.timedOut) {
          const grace = Math.min(this.#config.timeoutMs ?? DEFAULT_TIMEOUT_MS, 5_000);
          await sleep(Math.max(0, Math.min(grace, op.deadline - performance.now())));
        }
        const found = (await findMarked()).sort((a, b) => a.created_at.localeCompare(b.created_at));
        if (found[0] !== undefined) {
          debugNote(
            `adopted ${what} ${found[0].id}: it was created by an attempt whose answer was lost`,
            secrets,
          );
          for (const extra of found.slice(1)) await removeExtra(extra);
          return found[0];
        }
        const wait = backoffMs(op.retries);
        if (performance.now() + wait > op.deadline) throw err;
        await sleep(wait);
        op.retries++;
        continue;
      }
      if (lostAnswers > 0) {
        for (const extra of (await findMarked()).filter((x) => x.id !== created.id)) await removeExtra(extra);
      }
      return created;
    }
  }

  // ------------------------------------------------------------------------------------------
  // Agents
  // ------------------------------------------------------------------------------------------

  /** One page of `GET /v1/agents`. */
  listAgentsPage(opts: { cursor?: string; limit?: number } = {}): Promise<Page<AgentSummaryT>> {
    return this.call(AgentPage, {
      method: "GET",
      path: "/v1/agents",
      query: { cursor: opts.cursor, limit: opts.limit },
      retry: "idempotent",
    });
  }

  /** Every agent, page by page (`for await`, or `.toArray()`). */
  listAgents(opts: { limit?: number } = {}): PageIterator<AgentSummaryT> {
    return new PageIterator((cursor) =>
      this.listAgentsPage(cursor === undefined ? { ...opts } : { ...opts, cursor }),
    );
  }

  /**
   * `POST /v1/agents`: create an agent (V0 draft).
   *
   * The create carries a unique marker in V0's `notes` until its answer is seen; if the answer is
   * lost, the agent carrying the marker is adopted instead of creating a second one. Afterwards the
   * caller's `notes` (or null) are written back to V0, unless `keepMarker` is set: then V0's notes
   * keep the marker (`pulumi-voice-agent:create:<uuid>`, which says where the agent came from) and
   * the create is one request. Publishing V0 with notes replaces it.
   */
  async createAgent(
    body: AgentCreateInput,
    opts: { marker?: string; keepMarker?: boolean } = {},
  ): Promise<AgentDetailT> {
    const marker = opts.marker ?? newCreateMarker();
    const created = await this.createOnce(
      `agent "${body.name}"`,
      (op) =>
        this.call(
          AgentDetail,
          { method: "POST", path: "/v1/agents", body: { ...body, notes: marker }, retry: "unsafe" },
          op,
        ),
      () => this.findAgentsByMarker(body.name, marker),
      async (extra) =>
        // Agents cannot be deleted; a duplicate stays an unpublished V0 draft, never on air.
        debugNote(`agent ${extra.id} duplicates ${body.name}: a lost create committed late`, [
          this.#config.apiKey,
        ]),
    );
    if (created.notes !== marker || (opts.keepMarker && body.notes === undefined)) return created;
    try {
      return await this.patchAgent(
        created.id,
        { notes: body.notes ?? null },
        { version: created.version, ifMatch: created.document_revision },
      );
    } catch (err) {
      // The agent exists: hand it back rather than orphan it; the marker is only version metadata.
      debugNote(`could not restore notes of agent ${created.id}: ${(err as Error).message}`, [
        this.#config.apiKey,
      ]);
      return created;
    }
  }

  /** The agents named `name` whose V0 carries `marker` in `notes` (V0 details). */
  private async findAgentsByMarker(name: string, marker: string): Promise<AgentDetailT[]> {
    const candidates: AgentSummaryT[] = [];
    for await (const a of this.listAgents({ limit: 100 })) if (a.name === name) candidates.push(a);
    const found: AgentDetailT[] = [];
    for (const c of candidates) {
      try {
        const v0 = await this.getVersion(c.id, 0);
        if (v0.notes === marker) found.push(v0);
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
      }
    }
    return found;
  }

  /** `GET /v1/agents/{id}`: the agent at a version (default: the latest, i.e. the open draft if any). */
  getAgent(id: string, opts: { version?: VersionSelector } = {}): Promise<AgentDetailT> {
    return this.call(AgentDetail, {
      method: "GET",
      path: `/v1/agents/${seg(id)}`,
      query: { version: opts.version },
      retry: "idempotent",
    });
  }

  /**
   * `PATCH /v1/agents/{id}` (merge-patch).
   *
   * With `ifMatch` the write is a compare-and-set and is retried on 5xx and connection failures.
   * If a retry meets `revision_conflict` with `current_revision === ifMatch + 1` after an attempt
   * whose answer was lost, the target is read back; when it holds everything sent, that read-back
   * is returned as the result (our lost write committed). Without `ifMatch` the patch is sent once
   * (only 429s and never-sent attempts are repeated), except a label/notes-only patch of an explicit
   * numbered version, which is repeatable.
   */
  async patchAgent(
    id: string,
    body: AgentPatchInput,
    opts: { version?: VersionSelector; ifMatch?: number } = {},
  ): Promise<AgentDetailT> {
    const op = newOperation();
    const guarded = opts.ifMatch !== undefined;
    // Renaming one explicit version (label/notes only) cannot branch a draft and sets the same
    // values however often it is sent, so it is as safe to repeat as a PUT.
    const metadataOnly =
      typeof opts.version === "number" && Object.keys(body).every((k) => k === "label" || k === "notes");
    try {
      return await this.call(
        AgentDetail,
        {
          method: "PATCH",
          path: `/v1/agents/${seg(id)}`,
          query: { version: opts.version },
          body,
          headers: guarded ? { "if-match": ifMatchHeader(opts.ifMatch as number) } : undefined,
          retry: guarded || metadataOnly ? "idempotent" : "unsafe",
        },
        op,
      );
    } catch (err) {
      if (
        guarded &&
        op.ambiguous &&
        err instanceof ConflictError &&
        err.code === REVISION_CONFLICT &&
        err.currentRevision === (opts.ifMatch as number) + 1
      ) {
        const current = await this.getAgent(id, opts.version === undefined ? {} : { version: opts.version });
        if (current.document_revision === (opts.ifMatch as number) + 1 && reflects(body, current)) {
          debugNote(`patch of agent ${id} had committed before its answer was lost`, [this.#config.apiKey]);
          return current;
        }
      }
      throw err;
    }
  }

  // ------------------------------------------------------------------------------------------
  // Versions and activations (assumptions in undocumented.ts)
  // ------------------------------------------------------------------------------------------

  /** Every version row of an agent, newest first. */
  listVersions(agentId: string): PageIterator<VersionRowT> {
    return new PageIterator((cursor) =>
      this.call(VersionPage, {
        method: "GET",
        path: versionRoutes.versions(agentId),
        query: { cursor },
        retry: "idempotent",
      }),
    );
  }

  /** Agent detail of version `n`. */
  getVersion(agentId: string, n: number): Promise<AgentDetailT> {
    return this.call(VersionDetail, {
      method: "GET",
      path: versionRoutes.version(agentId, n),
      retry: "idempotent",
    });
  }

  /**
   * Publish (freeze) version `n`, optionally naming it. Idempotent: publishing a published version
   * answers it unchanged, so it is retried. A retry refused with `revision_conflict` after a lost
   * answer succeeds when version `n` reads back published with the label/notes asked for.
   */
  async publishVersion(
    agentId: string,
    n: number,
    meta: { label?: string | null; notes?: string | null } = {},
    opts: { ifMatch?: number } = {},
  ): Promise<AgentDetailT> {
    const op = newOperation();
    try {
      return await this.call(
        VersionDetail,
        {
          method: "POST",
          path: versionRoutes.publish(agentId, n),
          body: meta,
          headers: opts.ifMatch === undefined ? undefined : { "if-match": ifMatchHeader(opts.ifMatch) },
          retry: "idempotent",
        },
        op,
      );
    } catch (err) {
      if (op.ambiguous && err instanceof ConflictError && err.code === REVISION_CONFLICT) {
        const v = await this.getVersion(agentId, n);
        if (v.is_published && reflects(meta, v)) return v;
      }
      throw err;
    }
  }

  /** Deploy history of an agent, newest first. */
  listActivations(agentId: string): PageIterator<ActivationRowT> {
    return new PageIterator((cursor) =>
      this.call(ActivationPage, {
        method: "GET",
        path: versionRoutes.activations(agentId),
        query: { cursor },
        retry: "idempotent",
      }),
    );
  }

  /**
   * Put `version` live, or take the agent off air with `null`. Safe to repeat: activating the live
   * version again answers 200 with the latest row.
   */
  activate(agentId: string, version: number | null): Promise<ActivationRowT> {
    return this.call(ActivationRow, {
      method: "POST",
      path: versionRoutes.activations(agentId),
      body: { version },
      retry: "idempotent",
    });
  }

  // ------------------------------------------------------------------------------------------
  // Widget
  // ------------------------------------------------------------------------------------------

  /** The agent's widget (prepared on first read; never 404 for an existing agent). */
  getWidget(agentId: string): Promise<WidgetT> {
    return this.call(Widget, {
      method: "GET",
      path: `/v1/agents/${seg(agentId)}/widget`,
      retry: "idempotent",
    });
  }

  /**
   * Merge-patch the widget. Retried like a PUT: the widget has no revision counter, so sending the
   * same merge twice leaves the same state.
   */
  patchWidget(agentId: string, body: WidgetPatchInput): Promise<WidgetT> {
    return this.call(Widget, {
      method: "PATCH",
      path: `/v1/agents/${seg(agentId)}/widget`,
      body,
      retry: "idempotent",
    });
  }

  /**
   * Rotate the widget's public key; the answer is the only place the full key is shown. Retried:
   * a rotation whose answer was lost left a key nobody saw, and the next rotation replaces it.
   */
  rotateWidgetKey(agentId: string): Promise<WidgetKeyT> {
    return this.call(WidgetKey, {
      method: "POST",
      path: `/v1/agents/${seg(agentId)}/widget/rotate-key`,
      retry: "idempotent",
    });
  }

  // ------------------------------------------------------------------------------------------
  // Knowledge bases (assumptions in undocumented.ts)
  // ------------------------------------------------------------------------------------------

  /** Every knowledge base of the workspace. */
  listKnowledgeBases(): PageIterator<KnowledgeBase> {
    return new PageIterator((cursor) =>
      this.call(KnowledgeBasePage, {
        method: "GET",
        path: knowledgeBaseRoutes.collection(),
        query: { cursor },
        retry: "idempotent",
      }),
    );
  }

  /** One knowledge base. */
  getKnowledgeBase(id: string): Promise<KnowledgeBase> {
    return this.call(KnowledgeBaseSchema, {
      method: "GET",
      path: knowledgeBaseRoutes.one(id),
      retry: "idempotent",
    });
  }

  /**
   * Create a knowledge base. Its `description` carries a unique marker until the answer is seen
   * (a lost answer adopts the marked object), then a replace restores the caller's description.
   */
  async createKnowledgeBase(body: KnowledgeBaseBody, opts: { marker?: string } = {}): Promise<KnowledgeBase> {
    const marker = opts.marker ?? newCreateMarker();
    const created = await this.createOnce(
      `knowledge base "${body.name}"`,
      (op) =>
        this.call(
          KnowledgeBaseSchema,
          {
            method: "POST",
            path: knowledgeBaseRoutes.collection(),
            body: { ...body, description: marker },
            retry: "unsafe",
          },
          op,
        ),
      async () =>
        (await this.listKnowledgeBases().toArray()).filter(
          (kb) => kb.name === body.name && kb.description === marker,
        ),
      (extra) => this.deleteKnowledgeBase(extra.id),
    );
    if (created.description !== marker) return created;
    try {
      return await this.replaceKnowledgeBase(created.id, {
        ...body,
        description: body.description ?? null,
        documents: body.documents ?? [],
      });
    } catch (err) {
      debugNote(`could not restore description of knowledge base ${created.id}: ${(err as Error).message}`, [
        this.#config.apiKey,
      ]);
      return created;
    }
  }

  /** Replace name, description and the whole document set (documents matched by name). */
  replaceKnowledgeBase(id: string, body: KnowledgeBaseBody): Promise<KnowledgeBase> {
    return this.call(KnowledgeBaseSchema, {
      method: "PUT",
      path: knowledgeBaseRoutes.one(id),
      body,
      retry: "idempotent",
    });
  }

  /** Delete a knowledge base. A retry that finds it already gone (404) counts as success. */
  async deleteKnowledgeBase(id: string): Promise<void> {
    await this.deleteIdempotently(knowledgeBaseRoutes.one(id));
  }

  private async deleteIdempotently(path: string): Promise<void> {
    const op = newOperation();
    try {
      await send(this.#config, { method: "DELETE", path, retry: "idempotent" }, op);
    } catch (err) {
      if (op.ambiguous && err instanceof NotFoundError) return;
      throw err;
    }
  }

  // ------------------------------------------------------------------------------------------
  // Custom analysis (assumptions in undocumented.ts)
  // ------------------------------------------------------------------------------------------

  /** Every analysis group of the workspace (the analysis library). */
  listAnalysisGroups(): PageIterator<AnalysisGroup> {
    return new PageIterator((cursor) =>
      this.call(AnalysisGroupPage, {
        method: "GET",
        path: analysisRoutes.library(),
        query: { cursor },
        retry: "idempotent",
      }),
    );
  }

  /** One analysis group, found in the library listing (there is no single-group read). */
  async getAnalysisGroup(id: string): Promise<AnalysisGroup | undefined> {
    return this.listAnalysisGroups().find((g) => g.id === id);
  }

  /**
   * Create an analysis group. Like knowledge bases, the `description` carries a unique marker until
   * the answer is seen, then a replace restores the caller's description (keeping item ids).
   */
  async createAnalysisGroup(body: AnalysisGroupBody, opts: { marker?: string } = {}): Promise<AnalysisGroup> {
    const marker = opts.marker ?? newCreateMarker();
    const created = await this.createOnce(
      `analysis group "${body.name}"`,
      (op) =>
        this.call(
          AnalysisGroupSchema,
          {
            method: "POST",
            path: analysisRoutes.groups(),
            body: { ...body, description: marker },
            retry: "unsafe",
          },
          op,
        ),
      async () =>
        (await this.listAnalysisGroups().toArray()).filter(
          (g) => g.name === body.name && g.description === marker,
        ),
      (extra) => this.deleteAnalysisGroup(extra.id),
    );
    if (created.description !== marker) return created;
    try {
      const items = (body.items ?? []).map((item, i) => ({ ...item, id: item.id ?? created.items[i]?.id }));
      return await this.replaceAnalysisGroup(created.id, {
        ...body,
        description: body.description ?? null,
        items: items.map(({ id, ...rest }) => (id === undefined ? rest : { id, ...rest })),
      });
    } catch (err) {
      debugNote(`could not restore description of analysis group ${created.id}: ${(err as Error).message}`, [
        this.#config.apiKey,
      ]);
      return created;
    }
  }

  /** Replace a group: items with an `id` are kept and updated, others created, missing ones removed. */
  replaceAnalysisGroup(id: string, body: AnalysisGroupBody): Promise<AnalysisGroup> {
    return this.call(AnalysisGroupSchema, {
      method: "PUT",
      path: analysisRoutes.group(id),
      body,
      retry: "idempotent",
    });
  }

  /** Delete a group (the Default Analysis group answers 409 `group_protected`). 404 on a retry is success. */
  async deleteAnalysisGroup(id: string): Promise<void> {
    await this.deleteIdempotently(analysisRoutes.group(id));
  }

  // ------------------------------------------------------------------------------------------
  // Catalogues and holdings (bare arrays)
  // ------------------------------------------------------------------------------------------

  private getList<S extends z.ZodType>(schema: S, path: string, query?: HttpRequest["query"]) {
    return this.call(schema, { method: "GET", path, query, retry: "idempotent" });
  }

  /** `GET /v1/models`. */
  listModels(): Promise<z.infer<typeof ModelRow>[]> {
    return this.getList(ModelRow.array(), "/v1/models");
  }
  /** `GET /v1/voices`, optionally filtered by provider and language. */
  listVoices(filter: { provider?: string; language?: string } = {}): Promise<z.infer<typeof VoiceRow>[]> {
    return this.getList(VoiceRow.array(), "/v1/voices", {
      provider: filter.provider,
      language: filter.language,
    });
  }
  /** `GET /v1/transcribers`. */
  listTranscribers(): Promise<z.infer<typeof TranscriberRow>[]> {
    return this.getList(TranscriberRow.array(), "/v1/transcribers");
  }
  /** `GET /v1/languages`. */
  listLanguages(): Promise<z.infer<typeof LanguageRow>[]> {
    return this.getList(LanguageRow.array(), "/v1/languages");
  }
  /** `GET /v1/tts-capabilities`: per provider, its model, languages, speed and emotion support. */
  getTtsCapabilities(): Promise<z.infer<typeof TtsCapabilities>> {
    return this.getList(TtsCapabilities, "/v1/tts-capabilities");
  }
  /** `GET /v1/numbers`: phone numbers the workspace holds. */
  listNumbers(): Promise<z.infer<typeof NumberRow>[]> {
    return this.getList(NumberRow.array(), "/v1/numbers");
  }
  /** `GET /v1/whatsapp/numbers`. */
  listWhatsAppNumbers(): Promise<z.infer<typeof WhatsAppNumberRow>[]> {
    return this.getList(WhatsAppNumberRow.array(), "/v1/whatsapp/numbers");
  }
  /** `GET /v1/whatsapp/templates`: approved templates. */
  listWhatsAppTemplates(): Promise<z.infer<typeof WhatsAppTemplateRow>[]> {
    return this.getList(WhatsAppTemplateRow.array(), "/v1/whatsapp/templates");
  }
}

/** Same as `new VoiceAgentClient(config)`. */
export function createClient(config: ClientConfig): VoiceAgentClient {
  return new VoiceAgentClient(config);
}

export type { VoiceAgentError };
export { DRAFT_AMBIGUOUS, REVISION_CONFLICT };
