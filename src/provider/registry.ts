/**
 * Every resource of this package, in one list: its kind and where its provider side lives. Adding
 * a resource adds a line here (and its serializable provider object in `kinds/`). Each provider
 * side is loaded on first use (in the provider process, from the compiled package), so a process
 * serving only agents never loads the widget code, and a program loads none of them.
 */
import type { HandlerFactory } from "./resource";

type Loader = () => Promise<HandlerFactory>;

/** The resources, by kind. */
export const RESOURCES = {
  agent: async () => load<typeof import("../resources/agent/provider")>("agent").agentProvider,
  agentVersion: async () =>
    load<typeof import("../resources/agentVersion/provider")>("agentVersion").agentVersionProvider,
  widget: async () => load<typeof import("../resources/widget/provider")>("widget").widgetProvider,
  knowledgeBase: async () =>
    load<typeof import("../resources/knowledgeBase/provider")>("knowledgeBase").knowledgeBaseProvider,
  analysisGroup: async () =>
    load<typeof import("../resources/analysisGroup/provider")>("analysisGroup").analysisGroupProvider,
} satisfies Record<string, Loader>;

/** The provider side of a resource folder, typed by the caller (CommonJS `require`, cached by Node). */
function load<M>(folder: string): M {
  return require(`../resources/${folder}/provider`) as M;
}

/** The kinds of resource this package implements. */
export type ResourceKind = keyof typeof RESOURCES;
