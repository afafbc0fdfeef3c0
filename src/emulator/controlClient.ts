/**
 * The typed client of the emulator's control API (`/_emulator/`, docs/emulator.md "Control API"):
 * one method per route. `startEmulator()` returns one as `emu.control`; for an emulator started
 * elsewhere (the command, a vitest `globalSetup`), `new EmulatorControl(url)`. Each method throws a
 * `ControlError` (status and body) when the emulator refuses; `request` returns any answer as it is.
 * The control API needs no key.
 */
import type { z } from "zod";
import type {
  AgentDetail,
  CallOrigin,
  ChatObject,
  ModelRow,
  NumberRow,
  PlaceCallResponse,
  VoiceRow,
} from "../spec";
import type { BulkAgent, BulkAgentsBody } from "./bulkAgents";
import type { ControlCallBody, OutcomeRule } from "./calls";
import type { EmulatorSnapshot } from "./control";
import type { FaultConfig } from "./faults";
import type { LogEntry } from "./requestLog";
import type { TrafficBody } from "./traffic";

/** An answer of the control API. */
export interface ControlAnswer {
  status: number;
  /** The parsed JSON body (`undefined` when empty, the text when not JSON). */
  body: unknown;
  headers: Headers;
}

/** A control request the emulator refused (or did not understand). */
export class ControlError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`${method} ${path}: ${status} ${JSON.stringify(body)}`);
    this.name = "ControlError";
  }
}

/** An approved WhatsApp template in a workspace. */
export interface WhatsappTemplate {
  name: string;
  language: string;
  status: "approved";
}

/** `GET /_emulator/health`. */
export interface EmulatorHealth {
  status: "ok";
  /** The workspaces it serves, by name. */
  workspaces: string[];
}

/**
 * `POST /_emulator/traffic` body: `count` calls (1 to 1,000,000) to `agent_id`, spread over
 * `agent_ids`, or over every live agent of `workspace`; `mix` the share of them that finish with
 * each outcome (the rest as any other call), `seed` a seeded draw per call (outcome, agent, times)
 * instead of exact proportions and turns; `spread_seconds` places them over that many past seconds
 * instead of now; `call_seconds` and `analysis_delay_seconds` (`{min, max}`) draw each call's length
 * and how late it is analysed; `list_calls: false` answers only the count.
 */
export type TrafficRequest = TrafficBody;

/** `POST /_emulator/traffic` answer: the calls placed, in order. */
export interface TrafficAnswer {
  count: number;
  calls: PlaceCallResponse[];
}

/** `POST /_emulator/workspaces/{name}/agents` body (agents at volume). */
export type BulkAgentsRequest = z.input<typeof BulkAgentsBody>;

/** `POST /_emulator/workspaces/{name}/agents` answer: the agents made, in creation order. */
export interface BulkAgentsAnswer {
  count: number;
  agents: BulkAgent[];
}

/** `POST /_emulator/chats` body: a chat with the agent's live version, from the widget by default. */
export interface ChatRequest {
  /** The agent, in whichever workspace holds it. */
  agent_id: string;
  /** Where the chat comes from (default `widget`). */
  origin?: CallOrigin;
  /** A published version to chat with instead of the live one. */
  version?: number;
}

const seg = encodeURIComponent;

/** The control API of one emulator. */
export class EmulatorControl {
  /** `url`: the emulator's base address (`emu.url`, or the command's `http://HOST:PORT`). */
  constructor(readonly url: string) {
    this.url = url.replace(/\/+$/, "");
  }

  /** Sends one control request and returns the answer, whatever its status. */
  async request(method: string, path: string, body?: unknown): Promise<ControlAnswer> {
    if (!path.startsWith("/_emulator/")) throw new Error(`not a control path: ${path}`);
    const res = await fetch(`${this.url}${path}`, {
      method,
      ...(body === undefined
        ? {}
        : {
            headers: { "content-type": "application/json" },
            body: typeof body === "string" ? body : JSON.stringify(body),
          }),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // Not JSON: the text as it is.
    }
    return { status: res.status, body: parsed, headers: res.headers };
  }

  private async ok<T>(method: string, path: string, body?: unknown): Promise<T> {
    const a = await this.request(method, path, body);
    if (a.status < 200 || a.status >= 300) throw new ControlError(method, path, a.status, a.body);
    return a.body as T;
  }

  /** Whether it answers (`GET /_emulator/health`); throws when it does not. */
  health(): Promise<EmulatorHealth> {
    return this.ok("GET", "/_emulator/health");
  }

  /** What each workspace holds now, as JSON (`GET /_emulator/state`). */
  state(): Promise<EmulatorSnapshot> {
    return this.ok("GET", "/_emulator/state");
  }

  /**
   * Back to the seed (the built-in one and the `seed` option's): data, faults, call-outcome rules,
   * rate-limit windows and request log (`POST /_emulator/reset`).
   */
  async reset(): Promise<void> {
    await this.ok("POST", "/_emulator/reset");
  }

  /** Empties every key's rate-limit window (a fresh minute), leaving the state, faults and log alone. */
  async clearRateLimit(): Promise<void> {
    await this.ok("POST", "/_emulator/rate-limit/clear");
  }

  /** Sets the fault injection (missing members are 0, so `{}` turns faults off); returns what is in force. */
  setFaults(faults: Partial<FaultConfig>): Promise<FaultConfig> {
    return this.ok("PUT", "/_emulator/faults", faults);
  }

  /** The fault injection in force. */
  faults(): Promise<FaultConfig> {
    return this.ok("GET", "/_emulator/faults");
  }

  /** The `/v1` requests the emulator saw, oldest first. */
  requests(): Promise<LogEntry[]> {
    return this.ok("GET", "/_emulator/requests");
  }

  /** Empties the request log. */
  async clearRequests(): Promise<void> {
    await this.ok("DELETE", "/_emulator/requests");
  }

  /** Retires a catalogue model (as the service does when a vendor drops one); returns its row. */
  retireModel(modelId: string): Promise<ModelRow> {
    return this.ok("POST", `/_emulator/models/${seg(modelId)}/retire`);
  }

  /** Withdraws a catalogue voice; returns its row. */
  withdrawVoice(provider: string, voiceId: string): Promise<VoiceRow> {
    return this.ok("POST", `/_emulator/voices/${seg(provider)}/${seg(voiceId)}/withdraw`);
  }

  /** Revokes an API key: every later request with it is answered 401. */
  async revokeKey(key: string): Promise<void> {
    await this.ok("POST", `/_emulator/keys/${seg(key)}/revoke`);
  }

  /** Buys a phone number for a workspace (the dashboard's part); returns its row. */
  addNumber(workspace: string, number: string): Promise<NumberRow> {
    return this.ok("POST", `/_emulator/workspaces/${seg(workspace)}/numbers`, { number });
  }

  /** Adds an approved WhatsApp template to a workspace. */
  addWhatsappTemplate(
    workspace: string,
    template: { name: string; language: string },
  ): Promise<WhatsappTemplate> {
    return this.ok("POST", `/_emulator/workspaces/${seg(workspace)}/whatsapp-templates`, template);
  }

  /** Registers a custom tool in a workspace. */
  addCustomTool(workspace: string, name: string): Promise<{ name: string; workspace: string }> {
    return this.ok("POST", `/_emulator/workspaces/${seg(workspace)}/custom-tools`, { name });
  }

  /** Opens another draft on an agent, as a dashboard user would; returns the agent with it. */
  openDraft(agentId: string): Promise<AgentDetail> {
    return this.ok("POST", `/_emulator/agents/${seg(agentId)}/drafts`);
  }

  /**
   * Replaces the call-outcome rules (`PUT /_emulator/call-outcomes`): the first rule whose `match`
   * fits a new call decides its status, duration, analysis values and transcript.
   */
  async setCallOutcomes(rules: OutcomeRule[]): Promise<void> {
    await this.ok("PUT", "/_emulator/call-outcomes", { rules });
  }

  /** The call-outcome rules in force. */
  async callOutcomes(): Promise<OutcomeRule[]> {
    return (await this.ok<{ rules: OutcomeRule[] }>("GET", "/_emulator/call-outcomes")).rules;
  }

  /** Sets (or with `null` removes) an agent's webhook, the dashboard's setting. */
  async setAgentWebhook(agentId: string, url: string | null): Promise<void> {
    await this.ok("PUT", `/_emulator/agents/${seg(agentId)}/webhook`, { url });
  }

  /** Real traffic: one inbound or widget call to an agent (`POST /_emulator/calls`). */
  call(call: ControlCallBody): Promise<PlaceCallResponse> {
    return this.ok("POST", "/_emulator/calls", call);
  }

  /**
   * Traffic at volume: `count` calls at once with an outcome mix, to one agent or spread over many,
   * now or over a past period (`POST /_emulator/traffic`). With `list_calls: false` the answer is
   * only the count.
   */
  traffic(body: TrafficRequest & { list_calls: false }): Promise<{ count: number }>;
  traffic(body: TrafficRequest): Promise<TrafficAnswer>;
  traffic(body: TrafficRequest): Promise<TrafficAnswer | { count: number }> {
    return this.ok("POST", "/_emulator/traffic", body);
  }

  /**
   * Agents at volume in a workspace (`POST /_emulator/workspaces/{name}/agents`): `count` agents,
   * each with `versions` published versions and a deploy history that put `live_version` live,
   * made `since_seconds` ago.
   */
  createAgents(workspace: string, body: BulkAgentsRequest): Promise<BulkAgentsAnswer> {
    return this.ok("POST", `/_emulator/workspaces/${seg(workspace)}/agents`, body);
  }

  /** Starts a chat with an agent, as a widget visitor would (`POST /_emulator/chats`). */
  startChat(chat: ChatRequest): Promise<ChatObject> {
    return this.ok("POST", "/_emulator/chats", chat);
  }

  /** Completes a chat (the visitor closed it). */
  endChat(chatId: string): Promise<ChatObject> {
    return this.ok("POST", `/_emulator/chats/${seg(chatId)}/end`);
  }
}
