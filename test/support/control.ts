/**
 * The emulator's control API (`/_emulator/`, docs/emulator.md), for tests and benchmarks: one
 * function per operation. Each throws a `ControlError` (status and body) when the emulator refuses;
 * `controlCall` returns any answer as it is, for tests of the control API itself.
 */
import type { ControlCallBody, FaultConfig, LogEntry, OutcomeRule } from "../../src/emulator";
import type { AgentDetail, ModelRow, NumberRow, PlaceCallResponse, VoiceRow } from "../../src/spec";

/** Where an emulator listens: a `RunningEmulator`, or anything with its `url`. */
export interface EmulatorAddress {
  url: string;
}

/** An answer of the control API. */
export interface ControlAnswer {
  status: number;
  /** The parsed JSON body (`undefined` when empty, the text when not JSON). */
  body: any;
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

/** Sends one control request and returns the answer, whatever its status. */
export async function controlCall(
  emu: EmulatorAddress,
  method: string,
  path: string,
  body?: unknown,
): Promise<ControlAnswer> {
  if (!path.startsWith("/_emulator/")) throw new Error(`not a control path: ${path}`);
  const res = await fetch(`${emu.url}${path}`, {
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

async function ok<T>(emu: EmulatorAddress, method: string, path: string, body?: unknown): Promise<T> {
  const a = await controlCall(emu, method, path, body);
  if (a.status < 200 || a.status >= 300) throw new ControlError(method, path, a.status, a.body);
  return a.body as T;
}

const seg = encodeURIComponent;

/** Back to the seeded state: data, faults, rate-limit windows and request log (`POST /_emulator/reset`). */
export async function resetEmulator(emu: EmulatorAddress): Promise<void> {
  await ok(emu, "POST", "/_emulator/reset");
}

/** Empties every key's rate-limit window (a fresh minute), leaving the state, faults and log alone. */
export async function clearRateLimit(emu: EmulatorAddress): Promise<void> {
  await ok(emu, "POST", "/_emulator/rate-limit/clear");
}

/** Sets the fault injection (missing members are 0, so `{}` turns faults off); returns what is in force. */
export function setFaults(emu: EmulatorAddress, faults: Partial<FaultConfig>): Promise<FaultConfig> {
  return ok(emu, "PUT", "/_emulator/faults", faults);
}

/** The fault injection in force. */
export function getFaults(emu: EmulatorAddress): Promise<FaultConfig> {
  return ok(emu, "GET", "/_emulator/faults");
}

/** The `/v1` requests the emulator saw, oldest first. */
export function requestLog(emu: EmulatorAddress): Promise<LogEntry[]> {
  return ok(emu, "GET", "/_emulator/requests");
}

/** Empties the request log. */
export async function clearRequestLog(emu: EmulatorAddress): Promise<void> {
  await ok(emu, "DELETE", "/_emulator/requests");
}

/** Retires a catalogue model (as the service does when a vendor drops one); returns its row. */
export function retireModel(emu: EmulatorAddress, modelId: string): Promise<ModelRow> {
  return ok(emu, "POST", `/_emulator/models/${seg(modelId)}/retire`);
}

/** Withdraws a catalogue voice; returns its row. */
export function withdrawVoice(emu: EmulatorAddress, provider: string, voiceId: string): Promise<VoiceRow> {
  return ok(emu, "POST", `/_emulator/voices/${seg(provider)}/${seg(voiceId)}/withdraw`);
}

/** Revokes an API key: every later request with it is answered 401. */
export async function revokeKey(emu: EmulatorAddress, key: string): Promise<void> {
  await ok(emu, "POST", `/_emulator/keys/${seg(key)}/revoke`);
}

/** Buys a phone number for a workspace (the dashboard's part); returns its row. */
export function addNumber(emu: EmulatorAddress, workspace: string, number: string): Promise<NumberRow> {
  return ok(emu, "POST", `/_emulator/workspaces/${seg(workspace)}/numbers`, { number });
}

/** An approved WhatsApp template in a workspace. */
export interface WhatsappTemplate {
  name: string;
  language: string;
  status: "approved";
}

/** Adds an approved WhatsApp template to a workspace. */
export function addWhatsappTemplate(
  emu: EmulatorAddress,
  workspace: string,
  template: { name: string; language: string },
): Promise<WhatsappTemplate> {
  return ok(emu, "POST", `/_emulator/workspaces/${seg(workspace)}/whatsapp-templates`, template);
}

/** Registers a custom tool in a workspace. */
export function addCustomTool(
  emu: EmulatorAddress,
  workspace: string,
  name: string,
): Promise<{ name: string; workspace: string }> {
  return ok(emu, "POST", `/_emulator/workspaces/${seg(workspace)}/custom-tools`, { name });
}

/** Opens another draft on an agent, as a dashboard user would; returns the agent with it. */
export function openDraft(emu: EmulatorAddress, agentId: string): Promise<AgentDetail> {
  return ok(emu, "POST", `/_emulator/agents/${seg(agentId)}/drafts`);
}

/**
 * Replaces the call-outcome rules (`PUT /_emulator/call-outcomes`): the first rule whose `match`
 * fits a new call decides its status, duration, analysis values and transcript.
 */
export async function setCallOutcomes(emu: EmulatorAddress, rules: OutcomeRule[]): Promise<void> {
  await ok(emu, "PUT", "/_emulator/call-outcomes", { rules });
}

/** Sets (or with `null` removes) an agent's webhook, the dashboard's setting. */
export async function setAgentWebhook(
  emu: EmulatorAddress,
  agentId: string,
  url: string | null,
): Promise<void> {
  await ok(emu, "PUT", `/_emulator/agents/${seg(agentId)}/webhook`, { url });
}

/** Real traffic: an inbound or widget call to an agent (`POST /_emulator/calls`, no key). */
export function trafficCall(emu: EmulatorAddress, call: ControlCallBody): Promise<PlaceCallResponse> {
  return ok(emu, "POST", "/_emulator/calls", call);
}
