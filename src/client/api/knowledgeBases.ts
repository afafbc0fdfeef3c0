/** `client.knowledgeBases`: the workspace's knowledge bases (assumptions in undocumented.ts). */
import type { z } from "zod";
import { Envelope } from "../../spec/paging";
import type { ClientCore } from "../core";
import { PageIterator } from "../pagination";
import { type KnowledgeBaseBody, KnowledgeBaseResponse, knowledgeBaseRoutes } from "../undocumented";

/** A knowledge base as the service reads it back. */
export type KnowledgeBase = z.infer<typeof KnowledgeBaseResponse>;
/** One of its documents. */
export type KnowledgeBaseDocument = KnowledgeBase["documents"][number];

const KnowledgeBasePage = Envelope(KnowledgeBaseResponse);

/** Options of a create: a stable marker recognises an earlier, interrupted attempt. */
export interface MarkedCreateOptions {
  /** The marker the description carries until the answer is seen (default: a fresh one). */
  marker?: string;
  /** Adopt an object already carrying `marker` instead of creating another. */
  adoptExisting?: boolean;
  /**
   * When the body has no description, leave the marker in it (one request instead of two, and the
   * object stays recognisable should the deploy be killed before Pulumi records it).
   */
  keepMarker?: boolean;
}

/** Knowledge bases: `/v1/knowledge-bases`. */
export class KnowledgeBases {
  constructor(private readonly core: ClientCore) {}

  /** Every knowledge base of the workspace. */
  list(): PageIterator<KnowledgeBase> {
    return new PageIterator((cursor) =>
      this.core.call(KnowledgeBasePage, {
        method: "GET",
        path: knowledgeBaseRoutes.collection(),
        query: { cursor },
        retry: "idempotent",
      }),
    );
  }

  /** One knowledge base. */
  get(id: string): Promise<KnowledgeBase> {
    return this.core.call(KnowledgeBaseResponse, {
      method: "GET",
      path: knowledgeBaseRoutes.one(id),
      retry: "idempotent",
    });
  }

  /**
   * Create a knowledge base. Its `description` carries the create marker until the answer is seen
   * (see `ClientCore.createMarked`), then a replace restores the caller's description.
   */
  create(body: KnowledgeBaseBody, opts: MarkedCreateOptions = {}): Promise<KnowledgeBase> {
    return this.core.createDescribed<KnowledgeBase>({
      what: `knowledge base "${body.name}"`,
      opts,
      schema: KnowledgeBaseResponse,
      path: knowledgeBaseRoutes.collection(),
      body,
      list: () => this.list().toArray(),
      putBack: (created) =>
        this.replace(created.id, {
          ...body,
          description: body.description ?? null,
          documents: body.documents ?? [],
        }),
      remove: (id) => this.delete(id),
    });
  }

  /** Replace name, description and the whole document set (documents matched by name). */
  replace(id: string, body: KnowledgeBaseBody): Promise<KnowledgeBase> {
    return this.core.call(KnowledgeBaseResponse, {
      method: "PUT",
      path: knowledgeBaseRoutes.one(id),
      body,
      retry: "idempotent",
    });
  }

  /** Delete a knowledge base. A retry that finds it already gone (404) counts as success. */
  async delete(id: string): Promise<void> {
    await this.core.deleteIdempotently(knowledgeBaseRoutes.one(id));
  }
}
