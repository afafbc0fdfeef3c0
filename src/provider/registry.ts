/**
 * Every resource of this package, in one list: its kind and where its provider side lives. Adding
 * a resource adds a line here (and its serializable provider object in `kinds/`). Each provider
 * side is imported on first use, so a process serving only agents never loads the widget code.
 */
import type { HandlerFactory } from "./resource";

type Loader = () => Promise<HandlerFactory>;

/** The resources, by kind. */
export const RESOURCES = {
  agent: () => import("../resources/agent/provider").then((m) => m.agentProvider),
  agentVersion: () => import("../resources/agentVersion/provider").then((m) => m.agentVersionProvider),
  widget: () => import("../resources/widget/provider").then((m) => m.widgetProvider),
  knowledgeBase: () => import("../resources/knowledgeBase/provider").then((m) => m.knowledgeBaseProvider),
  analysisGroup: () => import("../resources/analysisGroup/provider").then((m) => m.analysisGroupProvider),
} satisfies Record<string, Loader>;

/** The kinds of resource this package implements. */
export type ResourceKind = keyof typeof RESOURCES;
