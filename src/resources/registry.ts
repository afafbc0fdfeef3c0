/**
 * Every resource of this package, in one list: its kind and where its provider side lives. Adding
 * a resource adds its folder (with `kind.ts`, the module its states' `__provider` text requires)
 * and a line here. Each provider side is loaded on first use (in the provider process, from the
 * compiled package), so a process serving only agents never loads the widget code, and a program
 * loads none of them.
 *
 * Dependencies run one way: the resources' folders and this list use the provider core
 * (`src/provider/`), which knows nothing of them (`test/imports.test.ts`).
 */
import type { HandlerFactory } from "../provider/resource";
import { makeProvider } from "../provider/shim";

/** The resources, by kind: a `require` of the provider side, run at its first use. */
export const RESOURCES = {
  agent: () => (require("./agent/provider") as typeof import("./agent/provider")).agentProvider,
  agentVersion: () =>
    (require("./agentVersion/provider") as typeof import("./agentVersion/provider")).agentVersionProvider,
  widget: () => (require("./widget/provider") as typeof import("./widget/provider")).widgetProvider,
  knowledgeBase: () =>
    (require("./knowledgeBase/provider") as typeof import("./knowledgeBase/provider")).knowledgeBaseProvider,
  analysisGroup: () =>
    (require("./analysisGroup/provider") as typeof import("./analysisGroup/provider")).analysisGroupProvider,
} satisfies Record<string, () => HandlerFactory>;

/** The kinds of resource this package implements. */
export type ResourceKind = keyof typeof RESOURCES;

/**
 * The kinds whose dynamic resource keeps its state in a layout of its own around the same handlers
 * (the provider plugin and the GitOps tools call the handlers above): the AgentVersion carries its
 * outcome in one output, which its class registers instead of six (`agentVersion/layout.ts`).
 */
const DYNAMIC_FACES: { [K in ResourceKind]?: () => HandlerFactory } = {
  agentVersion: () =>
    (require("./agentVersion/provider") as typeof import("./agentVersion/provider"))
      .agentVersionDynamicProvider,
};

/** The provider object of `kind`: what its folder's `kind.ts` exports (see `providerText.ts`). */
export function providerOf(kind: ResourceKind) {
  return makeProvider(kind, DYNAMIC_FACES[kind] ?? RESOURCES[kind]);
}
