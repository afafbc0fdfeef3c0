/**
 * Calls: the place-a-call request and answer, the call object (`GET /v1/calls/{id}`, the list, and
 * webhooks), and the list's filters (spec: "Place a call", "Call object", "Events").
 */
import { z } from "zod";
import { Id, isE164, Timestamp } from "./common";

/** Body of `POST /v1/calls` (header `Idempotency-Key` required). */
export const PlaceCallBody = z.strictObject({
  agent_id: Id,
  to_number: z.string().refine(isE164, "must be an E.164 number (+ and 7 to 15 digits)"),
  version: z.int().min(0).optional(),
  agent_version_id: Id.optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  variables: z.record(z.string(), z.unknown()).optional(),
});
export type PlaceCallBody = z.infer<typeof PlaceCallBody>;

/** Answer of `POST /v1/calls` (202). */
export const PlaceCallResponse = z.object({ id: Id, status: z.string() });
export type PlaceCallResponse = z.infer<typeof PlaceCallResponse>;

/** `cost` of a billed call. */
export const CallCost = z.object({ currency: z.string(), total: z.number(), rate_per_min: z.number() });

/** One line of a call's transcript. */
export const TranscriptTurn = z.object({ role: z.string(), text: z.string() });

/** The call object (same shape in `GET /v1/calls/{id}` and in webhooks). */
export const CallObject = z.object({
  id: Id,
  agent_id: Id.nullable(),
  agent_version: z.int(),
  status: z.string(),
  direction: z.string(),
  origin: z.string().nullable(),
  from_number: z.string().nullable(),
  to_number: z.string().nullable(),
  duration_seconds: z.int().nullable(),
  created_at: Timestamp,
  connected_at: Timestamp.nullable(),
  ended_at: Timestamp.nullable(),
  metadata: z.record(z.string(), z.unknown()).nullable(),
  variables: z.record(z.string(), z.unknown()).nullable(),
  cost: CallCost.nullable(),
  custom_analysis: z.record(z.string(), z.record(z.string(), z.unknown())).nullable(),
  transcript: z.unknown(),
  transfer: z
    .object({ state: z.string(), target: z.string().nullable(), reason: z.string().nullable() })
    .nullable(),
  recording_url: z.string().nullable(),
  dashboard_url: z.string(),
});
export type CallObject = z.infer<typeof CallObject>;

/** Mid-call statuses; any other status is a finished call (the set is open). */
export const CALL_IN_PROGRESS = ["started", "in_progress", "transferring", "transfer_answered"] as const;
