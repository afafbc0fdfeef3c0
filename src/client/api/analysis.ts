/** `client.analysis`: the custom-analysis library (assumptions in undocumented.ts). */
import type { z } from "zod";
import { Envelope } from "../../spec/paging";
import type { ClientCore } from "../core";
import { PageIterator } from "../pagination";
import { type AnalysisGroupBody, AnalysisGroupResponse, analysisRoutes } from "../undocumented";
import type { MarkedCreateOptions } from "./knowledgeBases";

/** An analysis group as the service reads it back. */
export type AnalysisGroup = z.infer<typeof AnalysisGroupResponse>;
/** One of its items. */
export type AnalysisItem = AnalysisGroup["items"][number];

const AnalysisGroupPage = Envelope(AnalysisGroupResponse);

/** Analysis groups: `/v1/custom-analysis`. */
export class Analysis {
  constructor(private readonly core: ClientCore) {}

  /** Every analysis group of the workspace (the analysis library). */
  list(): PageIterator<AnalysisGroup> {
    return new PageIterator((cursor) =>
      this.core.call(AnalysisGroupPage, {
        method: "GET",
        path: analysisRoutes.library(),
        query: { cursor },
        retry: "idempotent",
      }),
    );
  }

  /** One analysis group, found in the library listing (there is no single-group read). */
  get(id: string): Promise<AnalysisGroup | undefined> {
    return this.list().find((g) => g.id === id);
  }

  /**
   * Create an analysis group. Like knowledge bases, the `description` carries the create marker
   * until the answer is seen, then a replace restores the caller's description (keeping item ids).
   */
  create(body: AnalysisGroupBody, opts: MarkedCreateOptions = {}): Promise<AnalysisGroup> {
    return this.core.createDescribed<AnalysisGroup>({
      what: `analysis group "${body.name}"`,
      opts,
      schema: AnalysisGroupResponse,
      path: analysisRoutes.groups(),
      body,
      list: () => this.list().toArray(),
      putBack: (created) => {
        // Items are sent with the ids the create gave them, so they keep their identity.
        const items = (body.items ?? []).map((item, i) => ({ ...item, id: item.id ?? created.items[i]?.id }));
        return this.replace(created.id, {
          ...body,
          description: body.description ?? null,
          items: items.map(({ id, ...rest }) => (id === undefined ? rest : { id, ...rest })),
        });
      },
      remove: (id) => this.delete(id),
    });
  }

  /** Replace a group: items with an `id` are kept and updated, others created, missing ones removed. */
  replace(id: string, body: AnalysisGroupBody): Promise<AnalysisGroup> {
    return this.core.call(AnalysisGroupResponse, {
      method: "PUT",
      path: analysisRoutes.group(id),
      body,
      retry: "idempotent",
    });
  }

  /** Delete a group (the Default Analysis group answers 409 `group_protected`). 404 on a retry is success. */
  async delete(id: string): Promise<void> {
    await this.core.deleteIdempotently(analysisRoutes.group(id));
  }
}
