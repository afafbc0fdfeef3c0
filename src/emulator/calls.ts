/**
 * Calls on the emulator's clock: what a placed call's answer will be (the call-outcome rules), how
 * it moves through its stages, what it looks like at any moment, and the webhook events it
 * delivers (see docs/emulator.md, "Calls").
 *
 * A call's whole life takes `call_ms` (the `--call-seconds` setting). Its stages sit at fixed
 * fractions of it (`STAGE`); what `GET /v1/calls/{id}` shows is derived from the clock, so nothing
 * needs a timer except webhook delivery.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { Agent, request } from "undici";
import { z } from "zod";
import {
  type AnalysisValue,
  API_VERSION,
  CALL_ORIGINS,
  CALL_STATUSES_FINISHED,
  type CallEvent,
  type CallEventType,
  CallMetadata,
  type CallObject,
  CallVariables,
  CustomAnalysis,
  E164Number,
  type EventCall,
  type TranscriptTurn,
} from "../spec";
import { stableUuid } from "./seed";
import { type CallOutcome, type CallRecord, ORG, type VersionRecord, type WorkspaceState } from "./state";

/** Where the dashboard would show a call. */
export const CALL_DASHBOARD_BASE = "https://dashboard.voice-agent.example/calls";

/** Default length of a call's whole life on the clock, in seconds. */
export const DEFAULT_CALL_SECONDS = 1;

/** Longest accepted `callSeconds` (one hour); also the longest call `traffic` draws. */
export const MAX_CALL_SECONDS = 3600;

/** When each stage is reached, as a fraction of the call's life. */
const STAGE = {
  placed: 0,
  connected: 0.2,
  transferBegins: 0.35,
  transferResult: 0.5,
  ended: 0.6,
  /** Billed; the recording is ready. */
  billed: 0.7,
  analysed: 0.85,
  processed: 1,
} as const;

/** Terminal statuses reached after the line connected (a person or a voicemail answered). */
const CONNECTED = new Set(["completed", "voicemail", "transfer_completed", "transfer_failed"]);

/** Caller id of an inbound control call that names no `from_number`. */
export const DEFAULT_INBOUND_CALLER = "+14155550100";

/** Delays before the retries of a failed webhook delivery (ms): 4 attempts in all. */
const WEBHOOK_RETRY_DELAYS_MS = [100, 300, 900] as const;
/** How long one webhook delivery may take before it counts as failed. */
const WEBHOOK_TIMEOUT_MS = 5_000;
/** Lifetime of a presigned recording link. */
const PRESIGNED_TTL_SECONDS = 3600;

/** One rule of `PUT /_emulator/call-outcomes`. */
export const OutcomeRule = z.strictObject({
  match: z
    .strictObject({
      to_number: E164Number.optional(),
      agent_id: z.guid().optional(),
      version: z.int().min(0).optional(),
    })
    .optional(),
  status: z.enum(CALL_STATUSES_FINISHED).optional(),
  duration_seconds: z.int().min(0).max(86_400).optional(),
  analysis: CustomAnalysis.optional(),
  transcript: z
    .array(z.strictObject({ role: z.enum(["agent", "user"]), text: z.string() }))
    .max(500)
    .optional(),
});
export type OutcomeRule = z.infer<typeof OutcomeRule>;

/** `PUT /_emulator/call-outcomes` body: replaces every rule. */
export const CallOutcomesBody = z.strictObject({ rules: z.array(OutcomeRule).max(1000) });

/** `PUT /_emulator/agents/{agent_id}/webhook` body. */
export const WebhookBody = z.strictObject({ url: z.url({ protocol: /^https?$/ }).nullable() });

/** `POST /_emulator/calls` body: a place-a-call body plus how the call arrives. */
export const ControlCallBody = z.strictObject({
  agent_id: z.guid(),
  direction: z.enum(["inbound", "web"]),
  origin: z.enum(CALL_ORIGINS).optional(),
  from_number: E164Number.optional(),
  to_number: E164Number.optional(),
  version: z.int().min(0).optional(),
  agent_version_id: z.guid().optional(),
  metadata: CallMetadata.optional(),
  variables: CallVariables.optional(),
});
export type ControlCallBody = z.infer<typeof ControlCallBody>;

/** What decides a call's outcome. */
interface CallFacts {
  agent_id: string;
  version: number;
  to_number: string | null;
}

function matches(rule: OutcomeRule, f: CallFacts): boolean {
  const m = rule.match ?? {};
  return (
    (m.to_number === undefined || m.to_number === f.to_number) &&
    (m.agent_id === undefined || m.agent_id === f.agent_id) &&
    (m.version === undefined || m.version === f.version)
  );
}

const OUTCOME_TEXT: Record<string, string> = {
  completed: "The caller's request was handled.",
  voicemail: "Reached voicemail and left a message.",
  no_answer: "Nobody answered.",
  busy: "The line was busy.",
  declined: "The callee declined the call.",
  failed: "The call could not be connected.",
  transfer_completed: "The caller was transferred to a human.",
  transfer_failed: "The transfer to a human failed.",
};

function defaultTranscript(v: VersionRecord, status: string): TranscriptTurn[] {
  const greeting = v.config.greeting?.message || "Hello! How can I help you today?";
  if (status === "voicemail")
    return [{ role: "agent", text: `${greeting} Sorry we missed you; please call us back.` }];
  const turns: TranscriptTurn[] = [
    { role: "agent", text: greeting },
    { role: "user", text: "Hi, I have a quick question about my account." },
    { role: "agent", text: "Of course. I can help with that." },
  ];
  if (status.startsWith("transfer_")) {
    turns.push({ role: "user", text: "Can I speak to a person, please?" });
    turns.push({ role: "agent", text: "Sure, I am transferring you now." });
  } else {
    turns.push({ role: "user", text: "That answers it, thank you." });
    turns.push({ role: "agent", text: "You're welcome. Goodbye!" });
  }
  return turns;
}

const defaultItemIdCache = new Map<string, { sentiment: string; outcome: string; language: string }>();

/** The stable ids of a workspace's Default Analysis items (computed once per workspace name). */
function defaultItemIdsOf(workspace: string): { sentiment: string; outcome: string; language: string } {
  let ids = defaultItemIdCache.get(workspace);
  if (!ids) {
    ids = {
      sentiment: stableUuid(`ws:${workspace}:group:default:User Sentiment`),
      outcome: stableUuid(`ws:${workspace}:group:default:Outcome`),
      language: stableUuid(`ws:${workspace}:group:default:Language`),
    };
    defaultItemIdCache.set(workspace, ids);
  }
  return ids;
}

/**
 * `custom_analysis` of a call: a key for every enabled analysis of every enabled group the version
 * has attached (only the Default Analysis group when the version's custom analysis is off). A value
 * a rule names wins (a rule's `null` is a value nobody extracted); otherwise, on a call that
 * connected, the Default Analysis items give a neutral sentiment, an outcome sentence and the
 * agent's opening language, and other items null (nothing extracted). A call that never connected
 * has nothing to analyse: every key, each null (docs/service-decisions.md, "Calls as evidence").
 */
function analysisOf(
  ws: WorkspaceState,
  v: VersionRecord,
  status: string,
  given: OutcomeRule["analysis"],
  connected: boolean,
): CustomAnalysis {
  const ids = defaultItemIdsOf(ws.name);
  const defaultItemIds = new Map([
    [ids.sentiment, "neutral"],
    [ids.outcome, OUTCOME_TEXT[status] ?? `The call ended: ${status}.`],
    [ids.language, v.config.language?.default ?? "hi-IN"],
  ]);
  const out: CustomAnalysis = {};
  for (const id of v.config.analysis_group_ids) {
    const g = ws.groups.get(id);
    if (!g?.enabled) continue;
    if (!g.protected && !v.config.call?.custom_analysis_enabled) continue;
    const values: Record<string, AnalysisValue> = {};
    for (const it of [...g.items].sort((a, b) => a.seq - b.seq)) {
      if (!it.enabled) continue;
      const named = given?.[g.name];
      values[it.name] =
        named && Object.hasOwn(named, it.name)
          ? (named[it.name] as AnalysisValue)
          : g.protected && connected
            ? (defaultItemIds.get(it.id) ?? null)
            : null;
    }
    out[g.name] = values;
  }
  return out;
}

/** What the call will turn out to be: the first matching rule, defaults for what it leaves out. */
export function decideOutcome(
  rules: readonly OutcomeRule[],
  ws: WorkspaceState,
  v: VersionRecord,
  facts: CallFacts,
): CallOutcome {
  const rule = rules.find((r) => matches(r, facts));
  const status = rule?.status ?? "completed";
  const connected = CONNECTED.has(status);
  const transfer = status.startsWith("transfer_")
    ? {
        target: v.config.builtin_tools?.transfer_call?.numbers?.[0]?.number ?? null,
        outcome: status === "transfer_completed" ? ("completed" as const) : ("failed" as const),
      }
    : null;
  return {
    status,
    connected,
    duration_seconds: connected ? (rule?.duration_seconds ?? null) : 0,
    transcript: connected ? (rule?.transcript ?? defaultTranscript(v, status)) : [],
    custom_analysis: analysisOf(ws, v, status, rule?.analysis, connected),
    transfer,
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Epoch ms at which `call` reaches a stage (analysis and processing later by its analysis delay). */
export function stageAt(call: CallRecord, stage: keyof typeof STAGE): number {
  const at = call.created_ms + Math.round(STAGE[stage] * call.call_ms);
  return call.analysis_delay_ms && (stage === "analysed" || stage === "processed")
    ? at + call.analysis_delay_ms
    : at;
}

/** Whether the call produces a recording. */
export function hasRecording(call: CallRecord): boolean {
  return call.recording_enabled && call.outcome.connected;
}

/** Connected duration: what the rule said, else the connected time on the clock (at least 1 s). */
export function durationOf(call: CallRecord): number {
  if (!call.outcome.connected) return 0;
  if (call.outcome.duration_seconds !== null) return call.outcome.duration_seconds;
  const ms = stageAt(call, "ended") - stageAt(call, "connected");
  return Math.max(1, Math.ceil(ms / 1000));
}

/** The call object as it is at `at` (epoch ms). `baseUrl` roots the stable recording address. */
export function callView(call: CallRecord, at: number, baseUrl: string): CallObject {
  const reached = (s: keyof typeof STAGE) => at >= stageAt(call, s);
  const o = call.outcome;
  const ended = reached("ended");
  let status = "started";
  if (ended) status = o.status;
  else if (o.connected && reached("connected")) {
    if (o.transfer && reached("transferBegins"))
      status =
        reached("transferResult") && o.transfer.outcome === "completed"
          ? "transfer_answered"
          : "transferring";
    else status = "in_progress";
  }
  let transfer: CallObject["transfer"] = null;
  if (o.transfer && reached("transferBegins")) {
    const result = reached("transferResult");
    const state = ended
      ? o.transfer.outcome
      : result
        ? o.transfer.outcome === "completed"
          ? "answered"
          : "failed"
        : "transferring";
    transfer = {
      state,
      target: o.transfer.target,
      reason: result && o.transfer.outcome === "failed" ? "no_answer" : null,
    };
  }
  const duration = ended ? durationOf(call) : null;
  const billed = reached("billed");
  return {
    id: call.id,
    agent_id: call.agent_id,
    agent_version: call.agent_version,
    status,
    direction: call.direction,
    origin: call.origin,
    from_number: call.from_number,
    to_number: call.to_number,
    duration_seconds: duration,
    created_at: iso(call.created_ms),
    connected_at: o.connected && reached("connected") ? iso(stageAt(call, "connected")) : null,
    ended_at: ended ? iso(stageAt(call, "ended")) : null,
    metadata: call.metadata,
    variables: call.variables,
    cost: billed
      ? {
          currency: "USD",
          total: Math.round(((call.rate_per_min * durationOf(call)) / 60) * 1e6) / 1e6,
          rate_per_min: call.rate_per_min,
        }
      : null,
    custom_analysis: reached("analysed") ? o.custom_analysis : null,
    transcript: { turns: ended ? o.transcript : [] },
    transfer,
    recording_url: billed && hasRecording(call) ? `${baseUrl}/v1/calls/${call.id}/recording` : null,
    dashboard_url: `${CALL_DASHBOARD_BASE}/${call.id}`,
  };
}

/** Whether the call is still on the line at `at` (it counts against the concurrency pool). */
function isActive(call: CallRecord, at: number): boolean {
  return at < stageAt(call, "ended");
}

/** The events a call delivers, in order, with the stage each one belongs to. */
function eventPlan(call: CallRecord): { type: CallEventType; stage: keyof typeof STAGE }[] {
  const plan: { type: CallEventType; stage: keyof typeof STAGE }[] = [
    { type: "call.started", stage: "placed" },
  ];
  if (call.outcome.transfer) {
    plan.push({ type: "call.transfer.status", stage: "transferBegins" });
    plan.push({ type: "call.transfer.status", stage: "transferResult" });
  }
  plan.push({ type: "call.ended", stage: "ended" });
  if (hasRecording(call)) plan.push({ type: "call.recording.ready", stage: "billed" });
  plan.push({ type: "call.analysis.completed", stage: "analysed" });
  if (call.custom_analysis_enabled) plan.push({ type: "call.custom_analysis.completed", stage: "analysed" });
  plan.push({ type: "call.processing.completed", stage: "processed" });
  return plan;
}

/** Longest recording the emulator produces, in seconds (a longer call's audio is cut there). */
const MAX_RECORDING_SECONDS = 600;

/** A 16-bit mono 8 kHz WAV of `seconds` (a quiet 440 Hz tone): the emulator's recording. */
export function wavOf(seconds: number): Buffer {
  const rate = 8000;
  const samples = Math.max(1, Math.round(Math.min(seconds, MAX_RECORDING_SECONDS) * rate));
  const data = samples * 2;
  const buf = Buffer.alloc(44 + data);
  buf.write("RIFF", 0, "ascii");
  buf.writeUInt32LE(36 + data, 4);
  buf.write("WAVE", 8, "ascii");
  buf.write("fmt ", 12, "ascii");
  buf.writeUInt32LE(16, 16);
  buf.writeUInt16LE(1, 20);
  buf.writeUInt16LE(1, 22);
  buf.writeUInt32LE(rate, 24);
  buf.writeUInt32LE(rate * 2, 28);
  buf.writeUInt16LE(2, 32);
  buf.writeUInt16LE(16, 34);
  buf.write("data", 36, "ascii");
  buf.writeUInt32LE(data, 40);
  for (let i = 0; i < samples; i++)
    buf.writeInt16LE(Math.round(1000 * Math.sin((2 * Math.PI * 440 * i) / rate)), 44 + i * 2);
  return buf;
}

/**
 * The running part of calls: the call-outcome rules, presigned recording links, and webhook
 * delivery (one chain per call: each event is sent once its stage is reached and the previous
 * event was delivered or given up on). Every timer is unref'd and cleared by `reset` and `close`.
 */
export class CallRuntime {
  rules: OutcomeRule[] = [];
  private readonly secret = randomBytes(16);
  private readonly sleepers = new Map<NodeJS.Timeout, (go: boolean) => void>();
  private readonly inFlight = new Set<AbortController>();
  private generation = 0;
  private closed = false;
  private readonly dispatcher = new Agent({ keepAliveTimeout: 1_000 });
  /** Calls that may still be on the line. */
  private onLine: CallRecord[] = [];

  constructor(private readonly baseUrl: () => string) {}

  /** Starts delivering the call's events when it has a webhook, and counts it while it is on the line. */
  start(ws: WorkspaceState, call: CallRecord): void {
    if (isActive(call, Date.now())) this.onLine.push(call);
    if (call.webhook_url && !this.closed) void this.deliverAll(ws, call, call.webhook_url, this.generation);
  }

  /** Calls placed by this process that have not ended (the organisation's concurrency pool in use). */
  activeCalls(at = Date.now()): number {
    if (this.onLine.length) this.onLine = this.onLine.filter((c) => isActive(c, at));
    return this.onLine.length;
  }

  /** A presigned download link of the call's recording, valid for `PRESIGNED_TTL_SECONDS`. */
  presign(callId: string, at = Date.now()): { url: string; expires_at: string } {
    const expires = Math.floor(at / 1000) + PRESIGNED_TTL_SECONDS;
    const sig = this.sign(callId, expires);
    return {
      url: `${this.baseUrl()}/recordings/${callId}.wav?expires=${expires}&signature=${sig}`,
      expires_at: iso(expires * 1000),
    };
  }

  /** Whether a presigned link's parameters are genuine and not expired. */
  checkPresigned(callId: string, expires: string | null, signature: string | null): boolean {
    if (!expires || !signature || !/^\d+$/.test(expires)) return false;
    if (Number(expires) * 1000 < Date.now()) return false;
    const want = Buffer.from(this.sign(callId, Number(expires)));
    const got = Buffer.from(signature);
    return want.length === got.length && timingSafeEqual(want, got);
  }

  /** Drops the rules and stops every delivery (`POST /_emulator/reset`). */
  reset(): void {
    this.rules = [];
    this.cancelAll();
    this.onLine = [];
  }

  /** Stops every delivery and timer for good. */
  async close(): Promise<void> {
    this.closed = true;
    this.cancelAll();
    await this.dispatcher.destroy();
  }

  private cancelAll(): void {
    this.generation += 1;
    for (const [t, wake] of this.sleepers) {
      clearTimeout(t);
      wake(false);
    }
    this.sleepers.clear();
    for (const c of this.inFlight) c.abort();
    this.inFlight.clear();
  }

  private sign(callId: string, expires: number): string {
    return createHmac("sha256", this.secret).update(`${callId}:${expires}`).digest("hex");
  }

  /** Resolves true after `ms`, or false when cancelled first. */
  private sleep(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const t = setTimeout(
        () => {
          this.sleepers.delete(t);
          resolve(true);
        },
        Math.max(0, ms),
      );
      t.unref();
      this.sleepers.set(t, resolve);
    });
  }

  private event(
    ws: WorkspaceState,
    call: CallRecord,
    type: CallEventType,
    stage: keyof typeof STAGE,
    seq: number,
  ): CallEvent {
    const at = stageAt(call, stage);
    const view: EventCall = callView(call, at, this.baseUrl());
    if (type === "call.processing.completed") {
      view.recording_status = hasRecording(call) ? "available" : call.recording_enabled ? "none" : "disabled";
      view.analysis_status = "completed";
    }
    return {
      event_id: `evt_${randomBytes(12).toString("hex")}`,
      event_type: type,
      api_version: API_VERSION,
      occurred_at: iso(at),
      workspace_id: ws.id,
      org_id: ORG.id,
      sequence: seq,
      data: { object: "call", call: view },
    };
  }

  private async deliverAll(ws: WorkspaceState, call: CallRecord, url: string, gen: number): Promise<void> {
    let seq = 0;
    for (const step of eventPlan(call)) {
      if (!(await this.sleep(stageAt(call, step.stage) - Date.now())) || gen !== this.generation) return;
      seq += 1;
      const ev = this.event(ws, call, step.type, step.stage, seq);
      for (let attempt = 0; ; attempt++) {
        if (gen !== this.generation) return;
        if (step.type === "call.recording.ready" || step.type === "call.processing.completed") {
          // The download link is minted fresh for each delivery.
          const link = hasRecording(call) ? this.presign(call.id) : null;
          ev.data.call.recording_presigned_url = link?.url ?? null;
          ev.data.call.recording_url_expires_at = link?.expires_at ?? null;
        }
        if (await this.post(url, ev)) break;
        const delay = WEBHOOK_RETRY_DELAYS_MS[attempt];
        if (delay === undefined) break; // given up: the next event follows
        if (!(await this.sleep(delay))) return;
      }
    }
  }

  private async post(url: string, ev: CallEvent): Promise<boolean> {
    const ctl = new AbortController();
    this.inFlight.add(ctl);
    const timer = setTimeout(() => ctl.abort(), WEBHOOK_TIMEOUT_MS);
    timer.unref();
    try {
      const res = await request(url, {
        method: "POST",
        dispatcher: this.dispatcher,
        signal: ctl.signal,
        headers: { "content-type": "application/json", "user-agent": "voice-agent-emulator" },
        body: JSON.stringify(ev),
      });
      await res.body.dump();
      return res.statusCode >= 200 && res.statusCode < 300;
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
      this.inFlight.delete(ctl);
    }
  }
}
