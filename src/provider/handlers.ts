/**
 * Entry point of the provider process: the serialized provider (`shim.ts`) requires this module and
 * calls `configure` once, then `handler(kind)` for every operation. Resource modules are loaded on
 * first use, so a process serving only agents never loads the widget code.
 */
import type * as pulumi from "@pulumi/pulumi";
import type { ResourceKind } from "./shim";

export { configure } from "./context";

/** What each resource module exports for the provider process. */
export type ResourceHandler = Required<Omit<pulumi.dynamic.ResourceProvider, "configure" | "read">> & {
  read(id: string, props: any): Promise<pulumi.dynamic.ReadResult>;
};

export function handler(kind: ResourceKind): ResourceHandler {
  switch (kind) {
    case "agent":
      return require("../resources/agent").agentHandler;
    case "agentVersion":
      return require("../resources/agentVersion").agentVersionHandler;
    case "widget":
      return require("../resources/widget").widgetHandler;
    case "knowledgeBase":
      return require("../resources/knowledgeBase").knowledgeBaseHandler;
    case "analysisGroup":
      return require("../resources/analysisGroup").analysisGroupHandler;
  }
}
