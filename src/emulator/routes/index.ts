/** The `/v1` route table: method, path, query parameters each route takes, handler. */
import { CALL_LIST_QUERY, CHAT_LIST_QUERY } from "../../spec";
import type { Result, RouteContext } from "../context";
import { createAgent, listAgents, patchAgent, readAgent } from "./agents";
import { createGroup, deleteGroup, listGroups, readGroup, replaceGroup } from "./analysis";
import { listCalls, placeCallRoute, readCall, readRecording } from "./calls";
import {
  listLanguages,
  listMemorySubjects,
  listModels,
  listNumbers,
  listTranscribers,
  listVoices,
  listWhatsAppNumbers,
  listWhatsAppTemplates,
  memoryOfCall,
  ttsCapabilities,
} from "./catalogue";
import { listChats } from "./chats";
import { createKb, deleteKb, listKbs, readKb, replaceKb } from "./knowledgeBases";
import { createActivation, listActivations, listVersions, publishVersion, readVersion } from "./versions";
import { patchWidget, readWidget, rotateWidgetKey } from "./widget";

/** One route. */
export interface RouteDef {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  query?: readonly string[];
  handler: (ctx: RouteContext) => Result | Promise<Result>;
}

const PAGED = ["cursor", "limit"] as const;

/** Every `/v1` route of the emulator. */
export const ROUTES: RouteDef[] = [
  { method: "GET", path: "/v1/agents", query: PAGED, handler: listAgents },
  { method: "POST", path: "/v1/agents", handler: createAgent },
  { method: "GET", path: "/v1/agents/:agent_id", query: ["version"], handler: readAgent },
  { method: "PATCH", path: "/v1/agents/:agent_id", query: ["version"], handler: patchAgent },
  { method: "GET", path: "/v1/agents/:agent_id/versions", query: PAGED, handler: listVersions },
  { method: "GET", path: "/v1/agents/:agent_id/versions/:version", handler: readVersion },
  { method: "POST", path: "/v1/agents/:agent_id/versions/:version/publish", handler: publishVersion },
  { method: "GET", path: "/v1/agents/:agent_id/activations", query: PAGED, handler: listActivations },
  { method: "POST", path: "/v1/agents/:agent_id/activations", handler: createActivation },
  { method: "GET", path: "/v1/agents/:agent_id/widget", handler: readWidget },
  { method: "PATCH", path: "/v1/agents/:agent_id/widget", handler: patchWidget },
  { method: "POST", path: "/v1/agents/:agent_id/widget/rotate-key", handler: rotateWidgetKey },
  { method: "GET", path: "/v1/agents/:agent_id/memory/subjects", query: PAGED, handler: listMemorySubjects },
  { method: "GET", path: "/v1/agents/:agent_id/memory/calls/:call_id", handler: memoryOfCall },
  { method: "GET", path: "/v1/knowledge-bases", query: PAGED, handler: listKbs },
  { method: "POST", path: "/v1/knowledge-bases", handler: createKb },
  { method: "GET", path: "/v1/knowledge-bases/:kb_id", handler: readKb },
  { method: "PUT", path: "/v1/knowledge-bases/:kb_id", handler: replaceKb },
  { method: "DELETE", path: "/v1/knowledge-bases/:kb_id", handler: deleteKb },
  { method: "GET", path: "/v1/custom-analysis", query: PAGED, handler: listGroups },
  { method: "POST", path: "/v1/custom-analysis/groups", handler: createGroup },
  { method: "GET", path: "/v1/custom-analysis/groups/:group_id", handler: readGroup },
  { method: "PUT", path: "/v1/custom-analysis/groups/:group_id", handler: replaceGroup },
  { method: "DELETE", path: "/v1/custom-analysis/groups/:group_id", handler: deleteGroup },
  { method: "POST", path: "/v1/calls", handler: placeCallRoute },
  { method: "GET", path: "/v1/calls", query: CALL_LIST_QUERY, handler: listCalls },
  { method: "GET", path: "/v1/calls/:call_id", handler: readCall },
  { method: "GET", path: "/v1/calls/:call_id/recording", handler: readRecording },
  { method: "GET", path: "/v1/chats", query: CHAT_LIST_QUERY, handler: listChats },
  { method: "GET", path: "/v1/numbers", handler: listNumbers },
  { method: "GET", path: "/v1/whatsapp/numbers", handler: listWhatsAppNumbers },
  { method: "GET", path: "/v1/whatsapp/templates", handler: listWhatsAppTemplates },
  { method: "GET", path: "/v1/models", handler: listModels },
  { method: "GET", path: "/v1/voices", query: ["provider", "language"], handler: listVoices },
  { method: "GET", path: "/v1/transcribers", handler: listTranscribers },
  { method: "GET", path: "/v1/languages", handler: listLanguages },
  { method: "GET", path: "/v1/tts-capabilities", handler: ttsCapabilities },
];
