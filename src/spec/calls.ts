/**
 * Calls: the place-a-call request and answer, the call object (same shape in `GET /v1/calls/{id}`
 * and in webhooks), the call list, and the webhook event envelope with its kinds.
 *
 * Requests are strict (unknown keys refused); answers are read leniently: `status`, `direction` and
 * `origin` are open sets (any string), and fields the service may add are dropped, not refused.
 */
import { z } from "zod";
import { type Issue, isE164, normalizeE164, Timestamp } from "./common";
import { Envelope } from "./paging";

/** `api_version` of webhook payloads (and of the call object they carry). */
export const API_VERSION = "2026-08-01";

/** Request header that makes a place-a-call request safe to retry (required for API-key callers). */
export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";
/** Response header set (`true`) when a place-a-call answer replays an earlier call. */
export const IDEMPOTENT_REPLAY_HEADER = "Idempotent-Replay";

/** Call statuses while the call runs. Open set: other values may appear. */
export const CALL_STATUSES_ACTIVE = ["started", "in_progress", "transferring", "transfer_answered"] as const;
/** Call statuses of a finished call. Open set: other values may appear. */
export const CALL_STATUSES_FINISHED = [
  "completed",
  "voicemail",
  "no_answer",
  "busy",
  "declined",
  "failed",
  "transfer_completed",
  "transfer_failed",
] as const;
/** Every documented call status. */
export const CALL_STATUSES = [...CALL_STATUSES_ACTIVE, ...CALL_STATUSES_FINISHED] as const;
export type KnownCallStatus = (typeof CALL_STATUSES)[number];
export type FinishedCallStatus = (typeof CALL_STATUSES_FINISHED)[number];

/** Call directions (`web` is a call in a browser). Open set. The only values `?direction=` takes. */
export const CALL_DIRECTIONS = ["inbound", "outbound", "web"] as const;
export type CallDirection = (typeof CALL_DIRECTIONS)[number];

/** Where a call came from; separates real traffic from tests. Open set. */
export const CALL_ORIGINS = ["widget", "dashboard", "api", "batch", "inbound", "demo"] as const;
export type CallOrigin = (typeof CALL_ORIGINS)[number];

/** Values of `custom_analysis['Default Analysis']['User Sentiment']`. */
export const USER_SENTIMENTS = ["positive", "neutral", "negative"] as const;

/** Transfer states: in-call (`call.transfer.status`) and outcomes (`call.ended`). */
export const TRANSFER_STATES = ["transferring", "answered", "failed", "completed"] as const;

/** Custom variables of a call: name to value. */
export const CallVariables = z.record(z.string(), z.string());
export type CallVariables = z.infer<typeof CallVariables>;

/** Passthrough JSON of a call (`metadata`). */
export const CallMetadata = z.record(z.string(), z.unknown());
export type CallMetadata = z.infer<typeof CallMetadata>;

/** A phone number in E.164 (the message suggests the E.164 form of a number written otherwise). */
export const E164Number = z.string().superRefine((value, ctx) => {
  if (isE164(value)) return;
  const fixed = normalizeE164(value);
  ctx.addIssue({
    code: "custom",
    message: fixed
      ? `'${value}' is not in E.164; write it as '${fixed}'`
      : `'${value}' is not an E.164 number (a '+', the country code and the number, no spaces)`,
  });
});

/**
 * `POST /v1/calls` body. `version` or `agent_version_id` pins the call to a published version
 * (which need not be live); neither means the live version answers; both is 400
 * `invalid_request` (see `placeCallIssues`).
 */
export const PlaceCallBody = z.strictObject({
  /** The agent to run. */
  agent_id: z.guid(),
  /** Destination number, E.164. */
  to_number: E164Number,
  /** Version number of the agent that answers (pins the call). */
  version: z.int().min(0).optional(),
  /** Uuid of the version that answers (the agent detail's `version_id`); alternative to `version`. */
  agent_version_id: z.guid().optional(),
  /** Passthrough JSON, returned on the call and in events. */
  metadata: CallMetadata.optional(),
  /** Custom variables for the call. */
  variables: CallVariables.optional(),
});
export type PlaceCallBody = z.infer<typeof PlaceCallBody>;

/**
 * Rules of a place-a-call body beyond the schema: both version fields at once is 400
 * `invalid_request` (field `agent_version_id`).
 */
export function placeCallIssues(body: Pick<PlaceCallBody, "version" | "agent_version_id">): Issue[] {
  if (body.version !== undefined && body.agent_version_id !== undefined) {
    return [
      {
        field: "agent_version_id",
        code: "invalid_request",
        message: "agent_version_id: send either version or agent_version_id, not both",
      },
    ];
  }
  return [];
}

/** `POST /v1/calls` answer (202). */
export const PlaceCallResponse = z.object({ id: z.string(), status: z.string() });
export type PlaceCallResponse = z.infer<typeof PlaceCallResponse>;

/** `cost` of a billed call. */
export const CallCost = z.object({
  currency: z.literal("USD"),
  /** Total in USD. */
  total: z.number(),
  /** USD per minute the call was billed at. */
  rate_per_min: z.number(),
});
export type CallCost = z.infer<typeof CallCost>;

/** One value an analysis extracted (text, a number, a yes/no, an enum value; null when not found). */
export const AnalysisValue = z.union([z.string(), z.number(), z.boolean(), z.null()]);
export type AnalysisValue = z.infer<typeof AnalysisValue>;

/** `custom_analysis`: group name, then analysis name, to the extracted value. */
export const CustomAnalysis = z.record(z.string(), z.record(z.string(), AnalysisValue));
export type CustomAnalysis = z.infer<typeof CustomAnalysis>;

/** One turn of the conversation (`role` is `agent` or `user`). */
export const TranscriptTurn = z.object({ role: z.string(), text: z.string() });
export type TranscriptTurn = z.infer<typeof TranscriptTurn>;

/** `transcript`: the conversation's turns in order (empty until the call ends). */
export const Transcript = z.object({ turns: z.array(TranscriptTurn) });
export type Transcript = z.infer<typeof Transcript>;

/** `transfer`: present only when a transfer happened; persists onto later events. */
export const CallTransfer = z.object({
  state: z.string(),
  target: z.string().nullable(),
  reason: z.string().nullable(),
});
export type CallTransfer = z.infer<typeof CallTransfer>;

/** The call object: `GET /v1/calls/{id}`, list items, and `data.call` of every event. */
export const CallObject = z.object({
  id: z.string(),
  agent_id: z.string().nullable(),
  /** Version that answered. */
  agent_version: z.int(),
  /** Open set: see `CALL_STATUSES`. */
  status: z.string(),
  /** Open set: see `CALL_DIRECTIONS`. */
  direction: z.string(),
  /** Open set: see `CALL_ORIGINS`; null on older conversations. */
  origin: z.string().nullable(),
  from_number: z.string().nullable(),
  to_number: z.string().nullable(),
  /** Connected duration. */
  duration_seconds: z.int().nullable(),
  created_at: Timestamp,
  connected_at: Timestamp.nullable(),
  ended_at: Timestamp.nullable(),
  metadata: CallMetadata.nullable(),
  variables: z.record(z.string(), z.unknown()).nullable(),
  /** Null until billed. */
  cost: CallCost.nullable(),
  /** Null until analysed. */
  custom_analysis: CustomAnalysis.nullable(),
  transcript: Transcript,
  transfer: CallTransfer.nullable(),
  /** Stable recording address; null until ready (and on a call that is not recorded). */
  recording_url: z.string().nullable(),
  dashboard_url: z.string(),
});
export type CallObject = z.infer<typeof CallObject>;

/** `GET /v1/calls` answer. */
export const CallList = Envelope(CallObject);
export type CallList = z.infer<typeof CallList>;

/** Query parameters of `GET /v1/calls`. */
export const CALL_LIST_QUERY = ["cursor", "limit", "direction", "origin"] as const;

/** Webhook event kinds, in the order one call delivers them. */
export const CALL_EVENT_TYPES = [
  "call.started",
  "call.transfer.status",
  "call.ended",
  "call.recording.ready",
  "call.analysis.completed",
  "call.custom_analysis.completed",
  "call.processing.completed",
] as const;
export type CallEventType = (typeof CALL_EVENT_TYPES)[number];

/**
 * `recording_status` on `call.processing.completed`: `available`, `disabled` (recording is off on
 * the version that answered), `none` (the call never connected: nothing to record) or `failed`.
 */
export const RECORDING_STATUSES = ["available", "disabled", "none", "failed"] as const;
/** `analysis_status` on `call.processing.completed`. */
export const ANALYSIS_STATUSES = ["completed", "failed"] as const;

/**
 * The call as an event carries it: the call object, plus on `call.recording.ready` and
 * `call.processing.completed` an expiring download link (minted per delivery; do not cache), and on
 * `call.processing.completed` explicit status fields, so that a null reads as "not produced"
 * rather than "not ready".
 */
export const EventCall = CallObject.extend({
  recording_presigned_url: z.string().nullable().optional(),
  recording_url_expires_at: Timestamp.nullable().optional(),
  /** `call.processing.completed` only: see `RECORDING_STATUSES`. Open set. */
  recording_status: z.string().optional(),
  /** `call.processing.completed` only: see `ANALYSIS_STATUSES`. Open set. */
  analysis_status: z.string().optional(),
});
export type EventCall = z.infer<typeof EventCall>;

/** A webhook delivery: one event about one call. */
export const CallEvent = z.object({
  /** `evt_` then hex. */
  event_id: z.string().regex(/^evt_[0-9a-f]+$/),
  /** Open set: see `CALL_EVENT_TYPES`. */
  event_type: z.string(),
  api_version: z.string(),
  occurred_at: Timestamp,
  workspace_id: z.string(),
  org_id: z.string(),
  /** Rises by one with every event of the same call, from 1 (see docs/service-decisions.md). */
  sequence: z.int(),
  data: z.object({ object: z.literal("call"), call: EventCall }),
});
export type CallEvent = z.infer<typeof CallEvent>;
