/** `client.widget`: an agent's one widget (read, merge-patch, rotate its public key). */
import type { z } from "zod";
import type { WidgetPatch } from "../../spec/widget";
import { type ClientCore, seg } from "../core";
import { WidgetKey, WidgetResponse } from "../undocumented";

/** The widget of an agent. */
export type WidgetT = z.infer<typeof WidgetResponse>;
/** The rotate-key answer: the only place the full public key is shown. */
export type WidgetKeyT = z.infer<typeof WidgetKey>;
/** Merge-patch body of a widget. */
export type WidgetPatchInput = z.input<typeof WidgetPatch>;

/** The widget: `/v1/agents/{id}/widget`. */
export class WidgetApi {
  constructor(private readonly core: ClientCore) {}

  /** The agent's widget (prepared on first read; never 404 for an existing agent). */
  get(agentId: string): Promise<WidgetT> {
    return this.core.call(WidgetResponse, {
      method: "GET",
      path: `/v1/agents/${seg(agentId)}/widget`,
      retry: "idempotent",
    });
  }

  /**
   * Merge-patch the widget. Retried like a PUT: the widget has no revision counter, so sending the
   * same merge twice leaves the same state.
   */
  patch(agentId: string, body: WidgetPatchInput): Promise<WidgetT> {
    return this.core.call(WidgetResponse, {
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
  rotateKey(agentId: string): Promise<WidgetKeyT> {
    return this.core.call(WidgetKey, {
      method: "POST",
      path: `/v1/agents/${seg(agentId)}/widget/rotate-key`,
      retry: "idempotent",
    });
  }
}
