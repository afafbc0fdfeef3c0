/**
 * What every endpoint group shares: the configuration (and so the key, in a private field), the
 * call that sends a request and parses its answer, and the one create-with-marker flow.
 */
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import type { z } from "zod";
import { type ClientConfig, DEFAULT_RETRY_BUDGET_MS, DEFAULT_TIMEOUT_MS } from "./config";
import { ConnectionError, NotFoundError, ResponseShapeError } from "./errors";
import { debugEnabled } from "./log";
import { newCreateMarker } from "./recovery";
import { redactString } from "./redact";
import {
  backoffMs,
  type HttpRequest,
  type HttpResponse,
  mayHaveCommitted,
  newOperation,
  type OperationState,
  send,
} from "./transport";

/** How long the creates of one deployment share a listing of the workspace (see {@link ClientCore.shared}). */
export const SHARED_LISTING_MS = 60_000;

/** Percent-encodes one path segment. */
export const seg = (v: string | number): string => encodeURIComponent(String(v));

/** How a create that carries a marker is made, found again, restored and deduplicated. */
export interface MarkedCreate<T> {
  /** What is created, for messages: `agent "Support"`. */
  what: string;
  /** The marker to carry: a stable one (the same object of the same stack), or a fresh one. */
  marker?: string;
  /** Look for an object carrying the marker before the first attempt (an earlier process's create). */
  adoptExisting?: boolean;
  /** One attempt of the create, with the marker in the object. */
  attempt(marker: string, op: OperationState): Promise<T>;
  /** The objects carrying the marker. */
  findMarked(marker: string): Promise<T[]>;
  /**
   * The objects carrying the marker before the first attempt (with `adoptExisting`): may answer
   * from a listing shared by the creates of one deployment (see {@link ClientCore.shared}), since
   * only objects made before this process started are looked for. Default: `findMarked`.
   */
  findEarlier?(marker: string): Promise<T[]>;
  /** Puts the caller's own value back where the marker was, when it should not stay. */
  restore?(created: T, marker: string): Promise<T>;
  /** What to do with a second object carrying the marker (a lost attempt that committed late). */
  removeExtra(extra: T): Promise<void>;
}

/** The configuration, the call and the flows every endpoint group uses. */
export class ClientCore {
  readonly #config: ClientConfig;
  readonly #shared = new Map<string, { until: number; value: Promise<unknown> }>();

  constructor(config: ClientConfig) {
    this.#config = config;
  }

  get config(): ClientConfig {
    return this.#config;
  }

  /** Values that must never appear in a message (the key). */
  get secrets(): readonly string[] {
    return [this.#config.apiKey];
  }

  /** Writes a note under VOICE_AGENT_DEBUG, with the key redacted. */
  debug(text: string): void {
    if (debugEnabled()) process.stderr.write(`${redactString(`voice-agent ${text}`, this.secrets)}\n`);
  }

  /** Tells the user something they must act on (always printed, the key redacted). */
  warn(text: string): void {
    process.stderr.write(`${redactString(`pulumi-voice-agent: warning: ${text}`, this.secrets)}\n`);
  }

  /**
   * A value loaded once and shared for `ttlMs` by every caller asking for `key` (a failed load is
   * forgotten). The creates of one deployment share one listing of the workspace to look for
   * objects an earlier, interrupted deployment made: one request per deployment, not per create.
   */
  shared<V>(key: string, ttlMs: number, load: () => Promise<V>): Promise<V> {
    const now = performance.now();
    const hit = this.#shared.get(key);
    if (hit && hit.until > now) return hit.value as Promise<V>;
    const value = load();
    this.#shared.set(key, { until: now + ttlMs, value });
    value.catch(() => this.#shared.delete(key));
    return value;
  }

  /** Sends `req` and parses the answer with `schema`. */
  async call<S extends z.ZodType>(schema: S, req: HttpRequest, op?: OperationState): Promise<z.infer<S>> {
    return (await this.exchange(schema, req, op)).data;
  }

  /** Sends `req` and parses the answer with `schema`, keeping the answer's headers. */
  async exchange<S extends z.ZodType>(
    schema: S,
    req: HttpRequest,
    op?: OperationState,
  ): Promise<{ data: z.infer<S>; headers: HttpResponse["headers"] }> {
    const res = await send(this.#config, req, op);
    const parsed = schema.safeParse(res.body);
    if (!parsed.success) {
      throw new ResponseShapeError(
        parsed.error.issues.map((i) => ({ path: i.path.map(String).join("."), message: i.message })),
        res.requestId,
        { method: req.method, path: req.path, secrets: this.secrets },
        { cause: parsed.error },
      );
    }
    return { data: parsed.data, headers: res.headers };
  }

  /** A DELETE that counts a 404 after a lost answer as done. */
  async deleteIdempotently(path: string): Promise<void> {
    const op = newOperation();
    try {
      await send(this.#config, { method: "DELETE", path, retry: "idempotent" }, op);
    } catch (err) {
      if (op.ambiguous && err instanceof NotFoundError) return;
      throw err;
    }
  }

  /**
   * The one create-with-marker flow. The object carries a marker until its answer is seen. With
   * `adoptExisting`, an object already carrying the marker (made by an earlier attempt, even by
   * a process that was killed) is adopted instead of creating another. When an attempt fails in a
   * way that may have committed (no answer, or 5xx), the marked objects are looked for first and
   * the oldest adopted; else the create is tried again after a backoff, inside the retry budget.
   * After a timeout the look-up waits a grace period first, in case the server is still working on
   * the lost attempt. Any second marked object (a late commit) goes to `removeExtra`.
   */
  async createMarked<T extends { id: string; created_at: string }>(flow: MarkedCreate<T>): Promise<T> {
    const marker = flow.marker ?? newCreateMarker();
    const oldestFirst = (found: T[]) => [...found].sort((a, b) => a.created_at.localeCompare(b.created_at));
    const adopt = async (found: T[], why: string): Promise<T | undefined> => {
      const [first, ...extra] = oldestFirst(found);
      if (!first) return undefined;
      this.debug(`adopted ${flow.what} ${first.id}: ${why}`);
      for (const e of extra) await flow.removeExtra(e);
      return first;
    };
    const finish = (created: T) => (flow.restore ? flow.restore(created, marker) : Promise.resolve(created));

    if (flow.adoptExisting) {
      const earlier = await adopt(
        await (flow.findEarlier ?? flow.findMarked)(marker),
        "an earlier attempt created it",
      );
      if (earlier) return finish(earlier);
    }
    const op = newOperation();
    const budgetMs = this.#config.retryBudgetMs ?? DEFAULT_RETRY_BUDGET_MS;
    let lostAnswers = 0;
    for (;;) {
      let created: T;
      try {
        created = await flow.attempt(marker, op);
      } catch (err) {
        if (!mayHaveCommitted(err)) throw err;
        lostAnswers++;
        op.deadline ??= performance.now() + budgetMs;
        if (err instanceof ConnectionError && err.timedOut) {
          const grace = Math.min(this.#config.timeoutMs ?? DEFAULT_TIMEOUT_MS, 5_000);
          await sleep(Math.max(0, Math.min(grace, op.deadline - performance.now())));
        }
        const found = await adopt(
          await flow.findMarked(marker),
          "the answer of the attempt that created it was lost",
        );
        if (found) return finish(found);
        const wait = backoffMs(op.retries);
        if (performance.now() + wait > op.deadline) throw err;
        await sleep(wait);
        op.retries++;
        continue;
      }
      if (lostAnswers > 0) {
        for (const extra of (await flow.findMarked(marker)).filter((x) => x.id !== created.id)) {
          await flow.removeExtra(extra);
        }
      }
      return finish(created);
    }
  }

  /**
   * The create flow of objects without metadata fields (knowledge bases, analysis groups): their
   * `description` carries the marker, and `putBack` (an idempotent replace) restores the caller's
   * description once the create is seen.
   */
  createDescribed<T extends { id: string; created_at: string; name: string; description: string | null }>(d: {
    what: string;
    opts: { marker?: string; adoptExisting?: boolean; keepMarker?: boolean };
    schema: z.ZodType<T>;
    path: string;
    body: { name: string; description?: string | null };
    list(): Promise<T[]>;
    putBack(created: T): Promise<T>;
    remove(id: string): Promise<void>;
  }): Promise<T> {
    const { keepMarker, ...opts } = d.opts;
    const marked = (found: T[], marker: string) =>
      found.filter((x) => x.name === d.body.name && x.description === marker);
    return this.createMarked<T>({
      what: d.what,
      ...opts,
      attempt: (marker, op) =>
        this.call(
          d.schema,
          { method: "POST", path: d.path, body: { ...d.body, description: marker }, retry: "unsafe" },
          op,
        ),
      findMarked: async (marker) => marked(await d.list(), marker),
      findEarlier: async (marker) =>
        marked(await this.shared(`list ${d.path}`, SHARED_LISTING_MS, d.list), marker),
      restore: async (created, marker) => {
        // Without a description of the caller's, `keepMarker` leaves the marker where it is: the
        // object stays recognisable if Pulumi never learns of it (a deploy killed right after).
        if (created.description !== marker || (keepMarker && d.body.description === undefined))
          return created;
        try {
          return await d.putBack(created);
        } catch (err) {
          this.debug(
            `could not restore the description of ${d.what} ${created.id}: ${(err as Error).message}`,
          );
          return created;
        }
      },
      removeExtra: (extra) => d.remove(extra.id),
    });
  }
}
