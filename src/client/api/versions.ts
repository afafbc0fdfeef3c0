/** `client.versions`: an agent's versions, publishing, and the live pointer (assumptions in undocumented.ts). */
import type { z } from "zod";
import { Envelope } from "../../spec/paging";
import type { ClientCore } from "../core";
import { ConflictError } from "../errors";
import { PageIterator } from "../pagination";
import { reflects } from "../recovery";
import { newOperation } from "../transport";
import {
  ActivationRow,
  ifMatchHeader,
  REVISION_CONFLICT,
  VersionDetail,
  VersionRow,
  versionRoutes,
} from "../undocumented";
import type { AgentDetailT } from "./agents";

/** Item of an agent's version list. */
export type VersionRowT = z.infer<typeof VersionRow>;
/** A deploy-history row. */
export type ActivationRowT = z.infer<typeof ActivationRow>;

const VersionPage = Envelope(VersionRow);
const ActivationPage = Envelope(ActivationRow);

/** Versions: `/v1/agents/{id}/versions` and `/activations`. */
export class Versions {
  constructor(private readonly core: ClientCore) {}

  /** Every version row of an agent, newest first. */
  list(agentId: string): PageIterator<VersionRowT> {
    return new PageIterator((cursor) =>
      this.core.call(VersionPage, {
        method: "GET",
        path: versionRoutes.versions(agentId),
        query: { cursor },
        retry: "idempotent",
      }),
    );
  }

  /** Agent detail of version `n`. */
  get(agentId: string, n: number): Promise<AgentDetailT> {
    return this.core.call(VersionDetail, {
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
  async publish(
    agentId: string,
    n: number,
    meta: { label?: string | null; notes?: string | null } = {},
    opts: { ifMatch?: number } = {},
  ): Promise<AgentDetailT> {
    const op = newOperation();
    try {
      return await this.core.call(
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
        const v = await this.get(agentId, n);
        if (v.is_published && reflects(meta, v)) return v;
      }
      throw err;
    }
  }

  /** Deploy history of an agent, newest first. */
  activations(agentId: string): PageIterator<ActivationRowT> {
    return new PageIterator((cursor) =>
      this.core.call(ActivationPage, {
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
    return this.core.call(ActivationRow, {
      method: "POST",
      path: versionRoutes.activations(agentId),
      body: { version },
      retry: "idempotent",
    });
  }
}
