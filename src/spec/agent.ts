/**
 * The agent: request body (create and merge-patch), the effective configuration, the detail read
 * back at one version, summaries, version rows and deploy-history rows.
 *
 * Request schemas are strict (an unknown field is a 422 `extra_forbidden`) and every field is
 * optional (merge-patch); `AgentCreateBody` requires `name`. Response schemas strip unknown fields
 * (responses are additive within `/v1`).
 */
import { z } from "zod";
import { Id, Timestamp } from "./common";

/** The eleven values `voice.emotion` may take (one TTS provider only speaks them). */
export const EMOTIONS = [
  "neutral",
  "curious",
  "excited",
  "enthusiastic",
  "happy",
  "content",
  "calm",
  "confident",
  "sad",
  "apologetic",
  "frustrated",
] as const;

/** The only accepted `conversation.response_eagerness` values: Fast, Responsive, Balanced, Patient. */
export const RESPONSE_EAGERNESS_VALUES = [1, 0.75, 0.5, 0] as const;

/** Names of the built-in tools (a prompt arms one by naming it as `<name>`). */
export const BUILTIN_TOOL_NAMES = [
  "end_call",
  "hold_call",
  "transfer_call",
  "send_whatsapp_template",
] as const;

const name = z.string().min(1).max(255);
const systemPrompt = z.string().min(1).max(65536);
const speed = z.number().min(0.25).max(4);

// Each object is described once as a shape factory; the request variant is strict and partial, the
// response variant requires every field.
const req = <S extends z.ZodRawShape>(shape: S) => z.strictObject(shape).partial();

const messageShape = {
  mode: z.enum(["default", "custom"]),
  prompt: z.string(),
  text: z.string(),
};
/** A platform-spoken line `{mode, prompt, text}`. */
export const MessageObject = z.object(messageShape);
export type MessageObject = z.infer<typeof MessageObject>;
/** A message object in a request (merge: any subset of its fields). */
export const MessageObjectInput = req(messageShape);

const greetingShape = { message: z.string() };
export const Greeting = z.object({ message: z.string().optional() });
export const GreetingInput = req({ message: greetingShape.message.nullable() });

const languageShape = {
  default: z.string().min(1),
  additional: z.array(z.string().min(1)),
  switch_trigger: z.string().min(1),
};
export const Language = z.object(languageShape);
export const LanguageInput = req(languageShape);

// Transcriber and model fallbacks name only the model id; a provider sent there is ignored.
const engineFallbackShape = { provider: z.string().nullable(), model: z.string().min(1) };
export const EngineFallback = z.object(engineFallbackShape);
export const EngineFallbackInput = req(engineFallbackShape);

const transcriberShape = <F extends z.ZodType>(fallback: F) => ({
  provider: z.string().nullable(),
  model: z.string().min(1),
  keywords: z.array(z.string()),
  fallback: fallback.nullable(),
});
export const Transcriber = z.object(transcriberShape(EngineFallback));
export const TranscriberInput = req(transcriberShape(EngineFallbackInput));

const modelShape = <F extends z.ZodType>(fallback: F) => ({
  provider: z.string().nullable(),
  model: z.string().min(1),
  temperature: z.number().min(0).max(2),
  max_tokens: z.int().min(1),
  fallback: fallback.nullable(),
});
export const Model = z.object(modelShape(EngineFallback));
export const ModelInput = req(modelShape(EngineFallbackInput));

const voiceFallbackShape = {
  provider: z.string().min(1),
  model: z.string().nullable(),
  voice_id: z.string().min(1),
};
export const VoiceFallback = z.object(voiceFallbackShape);
export const VoiceFallbackInput = req(voiceFallbackShape);

const voiceShape = <F extends z.ZodType>(fallback: F) => ({
  provider: z.string().min(1),
  model: z.string().nullable(),
  voice_id: z.string().min(1),
  speed: speed.nullable(),
  emotion: z.string().nullable(),
  fallback: fallback.nullable(),
});
export const Voice = z.object(voiceShape(VoiceFallback));
export const VoiceInput = req(voiceShape(VoiceFallbackInput));

const noiseHandlingShape = { mode: z.string().min(1), level: z.int().min(0).max(100) };
const silenceReminderShape = <M extends z.ZodType>(message: M) => ({
  enabled: z.boolean(),
  seconds: z.int().min(1),
  message,
});
const conversationShape = <N extends z.ZodType, S extends z.ZodType>(noise: N, silence: S) => ({
  interruption_sensitivity: z.number().min(0).max(1),
  response_eagerness: z.literal(RESPONSE_EAGERNESS_VALUES),
  noise_handling: noise,
  silence_reminder: silence,
});
export const Conversation = z.object(
  conversationShape(z.object(noiseHandlingShape), z.object(silenceReminderShape(MessageObject))),
);
export const ConversationInput = req(
  conversationShape(req(noiseHandlingShape), req(silenceReminderShape(MessageObjectInput))),
);

const callShape = <M extends z.ZodType>(message: M) => ({
  max_duration_minutes: z.int().min(1),
  end_on_silence_seconds: z.int().min(1),
  recording_enabled: z.boolean(),
  custom_analysis_enabled: z.boolean(),
  max_duration_message: message,
  end_on_silence_message: message,
});
export const Call = z.object(callShape(MessageObject));
export const CallInput = req(callShape(MessageObjectInput));

const inboundShape = <M extends z.ZodType>(message: M) => ({
  business_hours_closed_message: message,
  fallback_message: message,
});
export const Inbound = z.object(inboundShape(MessageObject));
export const InboundInput = req(inboundShape(MessageObjectInput));

const transferNumberShape = {
  number: z.string().min(1),
  priority: z.int(),
  start_hour: z.int().min(0).max(24),
  end_hour: z.int().min(0).max(24),
  timezone: z.string().min(1),
  max_concurrent_calls: z.int().min(1),
};
/** One transfer target (read back with every field). */
export const TransferNumber = z.object(transferNumberShape);
export type TransferNumber = z.infer<typeof TransferNumber>;
/** A transfer target in a request: `number` is required, the rest default (see docs/emulator.md). */
export const TransferNumberInput = z.strictObject({
  ...transferNumberShape,
  priority: transferNumberShape.priority.optional(),
  start_hour: transferNumberShape.start_hour.optional(),
  end_hour: transferNumberShape.end_hour.optional(),
  timezone: transferNumberShape.timezone.optional(),
  max_concurrent_calls: transferNumberShape.max_concurrent_calls.optional(),
});

export const EndCallTool = z.object({ enabled: z.boolean(), message: MessageObject });
export const HoldCallTool = z.object({
  enabled: z.boolean(),
  max_seconds: z.int().min(1),
  follow_up_seconds: z.int().min(1),
  acknowledgement_message: MessageObject,
  follow_up_message: MessageObject,
  timeout_message: MessageObject,
});
export const TransferCallTool = z.object({
  enabled: z.boolean(),
  numbers: z.array(TransferNumber),
  busy_message: MessageObject,
  intro_message: MessageObject,
});
export const SendWhatsAppTemplateTool = z.object({
  enabled: z.boolean(),
  allowed_templates: z.array(z.string()),
  phone_number_id: z.string().nullable(),
});
export const BuiltinTools = z.object({
  end_call: EndCallTool,
  hold_call: HoldCallTool,
  transfer_call: TransferCallTool,
  send_whatsapp_template: SendWhatsAppTemplateTool,
});
export const BuiltinToolsInput = req({
  end_call: req({ enabled: z.boolean(), message: MessageObjectInput }),
  hold_call: req({
    enabled: z.boolean(),
    max_seconds: z.int().min(1),
    follow_up_seconds: z.int().min(1),
    acknowledgement_message: MessageObjectInput,
    follow_up_message: MessageObjectInput,
    timeout_message: MessageObjectInput,
  }),
  transfer_call: req({
    enabled: z.boolean(),
    numbers: z.array(TransferNumberInput),
    busy_message: MessageObjectInput,
    intro_message: MessageObjectInput,
  }),
  send_whatsapp_template: req({
    enabled: z.boolean(),
    allowed_templates: z.array(z.string().min(1)),
    phone_number_id: z.string().min(1).nullable(),
  }),
});

/** A prompt variable. System variables (`callee_name`, `callee_number`) are `system_defined` and not `deletable`. */
export const Variable = z.object({
  key: z.string(),
  default_value: z.string().nullable(),
  system_defined: z.boolean(),
  deletable: z.boolean(),
});
export type Variable = z.infer<typeof Variable>;
/** A variable in a request: `key` is required; `system_defined` and `deletable`, when sent, must equal what was read. */
export const VariableInput = z.strictObject({
  key: z.string().min(1).max(64),
  default_value: z.string().nullable().optional(),
  system_defined: z.boolean().optional(),
  deletable: z.boolean().optional(),
});

/** A remembered field of the caller. `enum_values` only on `type: 'string'`. */
export const MemoryField = z.object({
  key: z.string(),
  label: z.string().nullable(),
  type: z.string(),
  enum_values: z.array(z.string()).nullable(),
  description: z.string().nullable(),
  category: z.string().nullable(),
});
export type MemoryField = z.infer<typeof MemoryField>;
/** A memory field in a request: `key` is required; `type` defaults to `string`. */
export const MemoryFieldInput = z.strictObject({
  key: z.string().min(1).max(64),
  label: z.string().nullable().optional(),
  type: z.string().min(1).optional(),
  enum_values: z.array(z.string().min(1)).nullable().optional(),
  description: z.string().nullable().optional(),
  category: z.string().nullable().optional(),
});

const memoryShape = <F extends z.ZodType>(field: F) => ({
  enabled: z.boolean(),
  channels: z.array(z.string().min(1)),
  allow_ai_labels: z.boolean(),
  label_instructions: z.string().nullable(),
  max_facts: z.int().min(0),
  transcript_turns: z.int().min(0),
  fields: z.array(field),
});
export const Memory = z.object(memoryShape(MemoryField));
export const MemoryInput = req(memoryShape(MemoryFieldInput));

const numbersShape = { inbound_phone: z.string().nullable(), inbound_whatsapp: z.string().nullable() };
/** Numbers the agent answers on (E.164 on read-back). */
export const AgentNumbers = z.object(numbersShape);
export const AgentNumbersInput = req(numbersShape);

/**
 * The configuration fields of the agent body, each with its read-back schema and its request
 * schema, once for both (`configurationShape` picks one column).
 */
const CONFIGURATION = {
  system_prompt: [z.string(), systemPrompt],
  greeting: [Greeting, GreetingInput],
  language: [Language, LanguageInput],
  transcriber: [Transcriber, TranscriberInput],
  model: [Model, ModelInput],
  voice: [Voice, VoiceInput],
  conversation: [Conversation, ConversationInput],
  call: [Call, CallInput],
  inbound: [Inbound, InboundInput],
  builtin_tools: [BuiltinTools, BuiltinToolsInput],
  memory: [Memory, MemoryInput],
  numbers: [AgentNumbers, AgentNumbersInput],
} as const;
type Configuration = typeof CONFIGURATION;

/** Column 0: the read-back schemas; column 1: the request schemas. Every field nullable. */
function configurationShape<C extends 0 | 1>(
  column: C,
): { [K in keyof Configuration]: z.ZodNullable<Configuration[K][C]> } {
  return Object.fromEntries(
    Object.entries(CONFIGURATION).map(([k, pair]) => [k, pair[column].nullable()]),
  ) as { [K in keyof Configuration]: z.ZodNullable<Configuration[K][C]> };
}

/**
 * The agent request body (create and patch): every configuration field of the reference plus
 * `label` and `notes`, all optional. `null` on an object resets it to the platform default; on a
 * nullable scalar or a fallback it clears it (see `applyAgentPatch`).
 */
export const AgentBody = z
  .strictObject({
    name,
    ...configurationShape(1),
    variables: z.array(VariableInput),
    knowledge_base_ids: z.array(z.string()),
    analysis_group_ids: z.array(z.string()),
    label: z.string().nullable(),
    notes: z.string().nullable(),
  })
  .partial();
export type AgentBody = z.infer<typeof AgentBody>;

/** The create body: the agent body with `name` required. */
export const AgentCreateBody = AgentBody.required({ name: true });
export type AgentCreateBody = z.infer<typeof AgentCreateBody>;

/** Body fields that are version metadata rather than configuration (editable after publishing). */
export const METADATA_FIELDS = ["label", "notes"] as const;

const configShape = {
  name: z.string(),
  system_prompt: z.string().nullable(),
  greeting: Greeting,
  language: Language,
  transcriber: Transcriber,
  model: Model,
  voice: Voice,
  conversation: Conversation,
  call: Call,
  inbound: Inbound,
  builtin_tools: BuiltinTools,
  variables: z.array(Variable),
  knowledge_base_ids: z.array(z.string()),
  analysis_group_ids: z.array(z.string()),
  memory: Memory,
  numbers: AgentNumbers,
};

/**
 * The effective configuration of one version: every field present, no top-level null (a null
 * read-back means the platform default, see `effectiveConfig`). What the rules check.
 */
export const AgentConfig = z.object(configShape);
export type AgentConfig = z.infer<typeof AgentConfig>;

/** Agent detail: one agent at one version (response of every agent read, create and update). */
export const AgentDetail = z.object({
  id: Id,
  version: z.int(),
  version_id: Id,
  is_published: z.boolean(),
  is_live: z.boolean(),
  live_version: z.int().nullable(),
  latest_version: z.int(),
  document_revision: z.int(),
  label: z.string().nullable(),
  notes: z.string().nullable(),
  blocked_reasons: z.array(z.string()),
  created_at: Timestamp,
  updated_at: Timestamp,
  dashboard_url: z.string().nullable(),
  name: z.string(),
  ...configurationShape(0),
  variables: z.array(Variable),
  knowledge_base_ids: z.array(z.string()),
  analysis_group_ids: z.array(z.string()),
});
export type AgentDetail = z.infer<typeof AgentDetail>;

/** Items of `GET /v1/agents`. */
export const AgentSummary = z.object({
  id: Id,
  name: z.string(),
  is_live: z.boolean(),
  live_version: z.int().nullable(),
  latest_version: z.int(),
  inbound_phone: z.string().nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type AgentSummary = z.infer<typeof AgentSummary>;

/** Items of `GET /v1/agents/{id}/versions`, newest first. */
export const VersionRow = z.object({
  version: z.int(),
  version_id: Id,
  is_published: z.boolean(),
  is_live: z.boolean(),
  label: z.string().nullable(),
  notes: z.string().nullable(),
  document_revision: z.int(),
  blocked_reasons: z.array(z.string()),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type VersionRow = z.infer<typeof VersionRow>;

/** A deploy-history row (`POST`/`GET /v1/agents/{id}/activations`). */
export const ActivationRow = z.object({
  id: Id,
  agent_id: Id,
  action: z.enum(["activate", "rollback", "deactivate"]),
  version: z.int().nullable(),
  previous_version: z.int().nullable(),
  at: Timestamp,
});
export type ActivationRow = z.infer<typeof ActivationRow>;

/** Body of `POST /v1/agents/{id}/versions/{n}/publish` (optional). */
export const PublishBody = z.strictObject({
  label: z.string().nullable().optional(),
  notes: z.string().nullable().optional(),
});
export type PublishBody = z.infer<typeof PublishBody>;

/** Body of `POST /v1/agents/{id}/activations`: a version to put live, or null to take the agent off air. */
export const ActivationBody = z.strictObject({ version: z.int().min(0).nullable() });
export type ActivationBody = z.infer<typeof ActivationBody>;
