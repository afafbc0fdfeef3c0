/** `client.agents`: the agent list, create, read and merge-patch. */
import type { z } from "zod";
import { type AgentBody, type AgentCreateBody, AgentDetail, AgentSummary } from "../../spec/agent";
import { Envelope } from "../../spec/paging";
import { type ClientCore, SHARED_LISTING_MS, seg } from "../core";
import { ConflictError, NotFoundError } from "../errors";
import { type Page, PageIterator } from "../pagination";
import { reflects } from "../recovery";
import { newOperation } from "../transport";
import { ifMatchHeader, REVISION_CONFLICT, VersionDetail, versionRoutes } from "../undocumented";

/** Agent detail: one agent at one version. */
export type AgentDetailT = z.infer<typeof AgentDetail>;
/** Item of the agent list. */
export type AgentSummaryT = z.infer<typeof AgentSummary>;
/** Create body of an agent (`name` required). */
export type AgentCreateInput = z.input<typeof AgentCreateBody>;
/** Merge-patch body of an agent. */
export type AgentPatchInput = z.input<typeof AgentBody>;
/** A version selector: a number, or `live`. */
export type VersionSelector = number | "live";

const AgentPage = Envelope(AgentSummary);

/** Options of a create: see {@link Agents.create}. */
export interface AgentCreateOptions {
  /** The marker V0's notes carry: a stable one recognises an earlier attempt of the same create. */
  marker?: string;
  /** Adopt an agent already carrying `marker` (an earlier, interrupted create) instead of creating one. */
  adoptExisting?: boolean;
  /** Leave the marker in V0's notes (one request instead of two). */
  keepMarker?: boolean;
}

/** Agents: `/v1/agents`. */
export class Agents {
  constructor(private readonly core: ClientCore) {}

  /** One page of `GET /v1/agents`. */
  listPage(opts: { cursor?: string; limit?: number } = {}): Promise<Page<AgentSummaryT>> {
    return this.core.call(AgentPage, {
      method: "GET",
      path: "/v1/agents",
      query: { cursor: opts.cursor, limit: opts.limit },
      retry: "idempotent",
    });
  }

  /** Every agent, page by page (`for await`, or `.toArray()`). */
  list(opts: { limit?: number } = {}): PageIterator<AgentSummaryT> {
    return new PageIterator((cursor) =>
      this.listPage(cursor === undefined ? { ...opts } : { ...opts, cursor }),
    );
  }

  /**
   * `POST /v1/agents`: create an agent (V0 draft). V0's notes carry a marker until the answer is
   * seen (see `ClientCore.createMarked`); then the caller's notes (or null) are written back, unless
   * `keepMarker`: V0's notes then keep it (it says where the agent came from, and publishing V0 with
   * notes replaces it). Agents cannot be deleted: a duplicate left by a lost create that committed
   * late is reported, with its id, so it can be removed in the dashboard.
   */
  create(body: AgentCreateInput, opts: AgentCreateOptions = {}): Promise<AgentDetailT> {
    return this.core.createMarked<AgentDetailT>({
      what: `agent "${body.name}"`,
      ...(opts.marker !== undefined ? { marker: opts.marker } : {}),
      ...(opts.adoptExisting !== undefined ? { adoptExisting: opts.adoptExisting } : {}),
      attempt: (marker, op) =>
        this.core.call(
          AgentDetail,
          { method: "POST", path: "/v1/agents", body: { ...body, notes: marker }, retry: "unsafe" },
          op,
        ),
      findMarked: async (marker) => this.findByMarker(await this.named(body.name), marker),
      findEarlier: async (marker) =>
        this.findByMarker(
          (
            await this.core.shared("list /v1/agents", SHARED_LISTING_MS, () =>
              this.list({ limit: 100 }).toArray(),
            )
          ).filter((a) => a.name === body.name),
          marker,
        ),
      restore: async (created, marker) => {
        if (created.notes !== marker || (opts.keepMarker && body.notes === undefined)) return created;
        try {
          return await this.patch(
            created.id,
            { notes: body.notes ?? null },
            { version: created.version, ifMatch: created.document_revision },
          );
        } catch (err) {
          // The agent exists: hand it back rather than orphan it; the marker is only version metadata.
          this.core.debug(`could not restore notes of agent ${created.id}: ${(err as Error).message}`);
          return created;
        }
      },
      removeExtra: async (extra) =>
        this.core.warn(
          `agent ${extra.id} duplicates "${body.name}": a create whose answer was lost committed late. ` +
            "It is an unpublished V0 draft, never on air; the service cannot delete agents: remove it in the dashboard.",
        ),
    });
  }

  /** The agents named `name`. */
  private async named(name: string): Promise<AgentSummaryT[]> {
    const candidates: AgentSummaryT[] = [];
    for await (const a of this.list({ limit: 100 })) if (a.name === name) candidates.push(a);
    return candidates;
  }

  /** Those of `candidates` whose V0 carries `marker` in `notes` (V0 details). */
  private async findByMarker(candidates: AgentSummaryT[], marker: string): Promise<AgentDetailT[]> {
    const found: AgentDetailT[] = [];
    for (const c of candidates) {
      try {
        const v0 = await this.core.call(VersionDetail, {
          method: "GET",
          path: versionRoutes.version(c.id, 0),
          retry: "idempotent",
        });
        if (v0.notes === marker) found.push(v0);
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
      }
    }
    return found;
  }

  /** `GET /v1/agents/{id}`: the agent at a version (default: the latest, i.e. the open draft if any). */
  get(id: string, opts: { version?: VersionSelector } = {}): Promise<AgentDetailT> {
    return this.core.call(AgentDetail, {
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
  async patch(
    id: string,
    body: AgentPatchInput,
    opts: { version?: VersionSelector; ifMatch?: number } = {},
  ): Promise<AgentDetailT> {
    const op = newOperation();
    const ifMatch = opts.ifMatch;
    // Renaming one explicit version (label/notes only) cannot branch a draft and sets the same
    // values however often it is sent, so it is as safe to repeat as a PUT.
    const metadataOnly =
      typeof opts.version === "number" && Object.keys(body).every((k) => k === "label" || k === "notes");
    try {
      return await this.core.call(
        AgentDetail,
        {
          method: "PATCH",
          path: `/v1/agents/${seg(id)}`,
          query: { version: opts.version },
          body,
          headers: ifMatch !== undefined ? { "if-match": ifMatchHeader(ifMatch) } : undefined,
          retry: ifMatch !== undefined || metadataOnly ? "idempotent" : "unsafe",
        },
        op,
      );
    } catch (err) {
      if (
        ifMatch !== undefined &&
        op.ambiguous &&
        err instanceof ConflictError &&
        err.code === REVISION_CONFLICT &&
        err.currentRevision === ifMatch + 1
      ) {
        const current = await this.get(id, opts.version === undefined ? {} : { version: opts.version });
        if (current.document_revision === ifMatch + 1 && reflects(body, current)) {
          this.core.debug(`patch of agent ${id} had committed before its answer was lost`);
          return current;
        }
      }
      throw err;
    }
  }
}
