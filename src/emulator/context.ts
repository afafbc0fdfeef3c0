/** What a route handler sees, and what it answers. */
import type { IncomingMessage } from "node:http";
import { type Holdings, type Issue, isValidationType } from "../spec";
import type { CallRuntime } from "./calls";
import { type Query, ruleError } from "./http";
import type { State, WorkspaceState } from "./state";

/** Tunables of a running emulator. */
export interface EmulatorSettings {
  /** How long a new or changed knowledge-base document stays `processing`. */
  kbProcessingMs: number;
  /** Requests per minute per key (moving window); 0 disables the limit. */
  rateLimitPerMinute: number;
  /** Base URL the server listens on (for links). */
  baseUrl: string;
  /** How long a placed call's whole life takes (ringing to processing completed), in ms. */
  callMs: number;
}

/** A handler's answer. */
export interface Result {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** A body sent as it is instead of `body` as JSON (a replayed answer, audio). */
  raw?: { contentType: string; data: string | Buffer };
}

/** The request as a handler sees it: authenticated workspace, validated path parameters, query. */
export interface RouteContext {
  state: State;
  settings: EmulatorSettings;
  /** Call-outcome rules and webhook delivery. */
  calls: CallRuntime;
  ws: WorkspaceState;
  params: Record<string, string>;
  query: Query;
  req: IncomingMessage;
  /** The JSON body (`undefined` when empty); read once. */
  body(): Promise<unknown>;
  header(name: string): string | undefined;
}

/** What the rules may know about a workspace. */
export function holdingsOf(ws: WorkspaceState): Holdings {
  return {
    numbers: ws.numbers.map((n) => ({ ...n, agent_id: null })),
    whatsappNumbers: ws.whatsapp_numbers,
    whatsappTemplates: ws.templates,
    knowledgeBaseIds: [...ws.kbs.keys()],
    analysisGroupIds: [...ws.groups.keys()],
    customTools: ws.custom_tools,
  };
}

/** Throws the service's refusal when `issues` is not empty. */
export function refuseIf(issues: Issue[]): void {
  if (issues.length) throw ruleError(issues, isValidationType);
}
