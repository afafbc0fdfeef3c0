/** Catalogue rows (models, voices, transcribers, languages, TTS capabilities) and workspace holdings. */
import { z } from "zod";
import { Id, Timestamp } from "./common";

/** `GET /v1/models` row. */
export const ModelRow = z.object({
  id: z.string(),
  provider: z.string(),
  display_name: z.string(),
  supports_temperature: z.boolean(),
  rate_per_min: z.number(),
  retired: z.boolean(),
});
export type ModelRow = z.infer<typeof ModelRow>;

/** `GET /v1/voices` row. */
export const VoiceRow = z.object({
  provider: z.string(),
  voice_id: z.string(),
  name: z.string(),
  languages: z.array(z.string()),
  withdrawn: z.boolean(),
});
export type VoiceRow = z.infer<typeof VoiceRow>;

/** Seconds a transcriber waits before answering, per response-eagerness preset. */
export const ResponseSpeedSeconds = z.object({
  Fast: z.number(),
  Responsive: z.number(),
  Balanced: z.number(),
  Patient: z.number(),
});

/** `GET /v1/transcribers` row. */
export const TranscriberRow = z.object({
  id: z.string(),
  provider: z.string(),
  languages: z.array(z.string()),
  response_speed_seconds: ResponseSpeedSeconds.nullable(),
});
export type TranscriberRow = z.infer<typeof TranscriberRow>;

/** `GET /v1/languages` row. */
export const LanguageRow = z.object({ code: z.string(), name: z.string() });
export type LanguageRow = z.infer<typeof LanguageRow>;

/** One provider's entry in `GET /v1/tts-capabilities`. */
export const TtsProviderCapabilities = z.object({
  model: z.string(),
  languages: z.array(z.string()),
  supports_speed: z.boolean(),
  speed_range: z.tuple([z.number(), z.number()]).nullable(),
  supports_emotion: z.boolean(),
});
export type TtsProviderCapabilities = z.infer<typeof TtsProviderCapabilities>;

/** `GET /v1/tts-capabilities`: keyed by provider. */
export const TtsCapabilities = z.record(z.string(), TtsProviderCapabilities);
export type TtsCapabilities = z.infer<typeof TtsCapabilities>;

/** `GET /v1/numbers` row. A `released` number is no longer held. */
export const NumberRow = z.object({
  id: Id,
  number: z.string(),
  carrier_status: z.enum(["listed", "delisted"]),
  lifecycle_status: z.enum(["active", "grace_period", "released"]),
  agent_id: Id.nullable(),
});
export type NumberRow = z.infer<typeof NumberRow>;

/** `GET /v1/whatsapp/numbers` row. */
export const WhatsAppNumberRow = z.object({
  id: Id,
  number: z.string(),
  phone_number_id: z.string(),
  display_name: z.string(),
});
export type WhatsAppNumberRow = z.infer<typeof WhatsAppNumberRow>;

/** `GET /v1/whatsapp/templates` row. */
export const WhatsAppTemplateRow = z.object({
  name: z.string(),
  language: z.string(),
  status: z.literal("approved"),
});
export type WhatsAppTemplateRow = z.infer<typeof WhatsAppTemplateRow>;

/** A remembered caller (`GET /v1/agents/{id}/memory/subjects`). */
export const MemorySubject = z.object({
  id: Id,
  msisdn_full: z.string(),
  last_channel: z.enum(["voice", "whatsapp"]),
  facts: z.array(z.object({ key: z.string(), value: z.string(), source: z.string(), updated_at: Timestamp })),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type MemorySubject = z.infer<typeof MemorySubject>;

/** The service catalogue the catalogue rules check against (the five catalogue endpoints). */
export interface Catalogue {
  models: ModelRow[];
  voices: VoiceRow[];
  transcribers: TranscriberRow[];
  languages: LanguageRow[];
  ttsCapabilities: TtsCapabilities;
}

/**
 * What the workspace holds. Each member is optional: a check whose holding is not given is skipped
 * (custom tools, for instance, have no API and are known only to the service).
 */
export interface Holdings {
  /** Numbers as read back (the client reads their statuses leniently: any string). */
  numbers?: (Omit<NumberRow, "carrier_status" | "lifecycle_status"> & {
    carrier_status: string;
    lifecycle_status: string;
  })[];
  whatsappNumbers?: WhatsAppNumberRow[];
  /** Templates as read back (status read leniently). */
  whatsappTemplates?: (Omit<WhatsAppTemplateRow, "status"> & { status: string })[];
  knowledgeBaseIds?: string[];
  analysisGroupIds?: string[];
  customTools?: string[];
}
