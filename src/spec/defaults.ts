/**
 * What a new agent reads back, and the pure merge-patch that turns a stored configuration plus a
 * request body into the next configuration. Shared by the emulator (to store) and the provider (to
 * predict the read-back at preview).
 */
import type { AgentBody, AgentConfig, MemoryField, MessageObject, TransferNumber, Variable } from "./agent";
import type { AnalysisItem } from "./analysis";
import { normalizeE164 } from "./common";
import type { WidgetTheme } from "./widget";

/** Keys of the system variables every agent carries (`system_defined` true, `deletable` false). */
export const SYSTEM_VARIABLE_KEYS = ["callee_name", "callee_number"] as const;

/** The platform engines a new agent reads back (present in the emulator's seeded catalogue). */
export const PLATFORM_DEFAULTS = {
  language: "hi-IN",
  additionalLanguages: ["en-IN"],
  switchTrigger: "requested_or_auto",
  transcriberProvider: "sarvam",
  transcriberModel: "saarika:v2",
  modelProvider: "openai",
  model: "gpt-4o-mini",
  temperature: 0.7,
  maxTokens: 128,
  voiceProvider: "sarvam",
  voiceModel: "bulbul:v2",
  voiceId: "meera",
} as const;

const line = (prompt: string): MessageObject => ({ mode: "default", prompt, text: "" });

/** Default values of a transfer target's optional fields. */
export const TRANSFER_NUMBER_DEFAULTS = {
  priority: 1,
  start_hour: 0,
  end_hour: 24,
  timezone: "Asia/Kolkata",
  max_concurrent_calls: 1,
} as const;

/** The configuration a new agent reads back before its create body is applied (name aside). */
export function defaultAgentConfig(): AgentConfig {
  return {
    name: "",
    system_prompt: null,
    greeting: {},
    language: {
      default: PLATFORM_DEFAULTS.language,
      additional: [...PLATFORM_DEFAULTS.additionalLanguages],
      switch_trigger: PLATFORM_DEFAULTS.switchTrigger,
    },
    transcriber: {
      provider: PLATFORM_DEFAULTS.transcriberProvider,
      model: PLATFORM_DEFAULTS.transcriberModel,
      keywords: [],
      fallback: null,
    },
    model: {
      provider: PLATFORM_DEFAULTS.modelProvider,
      model: PLATFORM_DEFAULTS.model,
      temperature: PLATFORM_DEFAULTS.temperature,
      max_tokens: PLATFORM_DEFAULTS.maxTokens,
      fallback: null,
    },
    voice: {
      provider: PLATFORM_DEFAULTS.voiceProvider,
      model: PLATFORM_DEFAULTS.voiceModel,
      voice_id: PLATFORM_DEFAULTS.voiceId,
      speed: 1,
      emotion: null,
      fallback: null,
    },
    conversation: {
      interruption_sensitivity: 0.5,
      response_eagerness: 0.5,
      noise_handling: { mode: "standard", level: 50 },
      silence_reminder: {
        enabled: true,
        seconds: 15,
        message: line("Ask the caller, briefly, whether they are still on the line."),
      },
    },
    call: {
      max_duration_minutes: 10,
      end_on_silence_seconds: 25,
      recording_enabled: true,
      custom_analysis_enabled: true,
      max_duration_message: line("Tell the caller the call has reached its time limit and say goodbye."),
      end_on_silence_message: line("Tell the caller you cannot hear them and that you will end the call."),
    },
    inbound: {
      business_hours_closed_message: line("Tell the caller the office is closed and when it opens again."),
      fallback_message: line(
        "Apologise that the call cannot be handled right now and ask them to call later.",
      ),
    },
    builtin_tools: {
      end_call: { enabled: true, message: line("Thank the caller and say goodbye.") },
      hold_call: {
        enabled: false,
        max_seconds: 60,
        follow_up_seconds: 20,
        acknowledgement_message: line("Tell the caller you are checking and ask them to hold on."),
        follow_up_message: line("Tell the caller you are still working on it and thank them for waiting."),
        timeout_message: line("Apologise that it is taking too long and offer to follow up later."),
      },
      transfer_call: {
        enabled: false,
        numbers: [],
        busy_message: line("Apologise that nobody is available to take the call right now."),
        intro_message: line("Tell the caller you are connecting them to a colleague."),
      },
      send_whatsapp_template: { enabled: false, allowed_templates: [], phone_number_id: null },
    },
    variables: SYSTEM_VARIABLE_KEYS.map((key) => ({
      key,
      default_value: null,
      system_defined: true,
      deletable: false,
    })),
    knowledge_base_ids: [],
    analysis_group_ids: [],
    memory: {
      enabled: false,
      channels: [],
      allow_ai_labels: false,
      label_instructions: null,
      max_facts: 20,
      transcript_turns: 10,
      fields: [],
    },
    numbers: { inbound_phone: null, inbound_whatsapp: null },
  };
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const clone = <T>(v: T): T => structuredClone(v);

/**
 * Read-only members of the agent body, by dotted path: derived by the service from the catalogue; a
 * request may carry them, and they are ignored.
 */
export const READ_ONLY_PATHS: ReadonlySet<string> = new Set([
  "transcriber.provider",
  "transcriber.fallback.provider",
  "model.provider",
  "model.fallback.provider",
  "voice.model",
  "voice.fallback.model",
]);

function defaultAt(path: string[]): unknown {
  let node: unknown = defaultAgentConfig();
  for (const seg of path) {
    if (!isPlainObject(node)) return undefined;
    node = node[seg];
  }
  return node;
}

function mergeInto(target: unknown, patch: unknown, path: string[]): unknown {
  if (patch === null) {
    const d = defaultAt(path);
    return d === undefined ? undefined : clone(d);
  }
  if (Array.isArray(patch)) return clone(patch);
  if (!isPlainObject(patch)) return patch;
  const base: Record<string, unknown> = isPlainObject(target) ? target : {};
  for (const [key, value] of Object.entries(patch)) {
    const childPath = [...path, key];
    if (READ_ONLY_PATHS.has(childPath.join("."))) continue;
    if (value === undefined) continue;
    const merged = mergeInto(base[key], value, childPath);
    if (merged === undefined) delete base[key];
    else base[key] = merged;
  }
  return base;
}

function normalizeMessage(m: unknown): void {
  if (isPlainObject(m) && m.mode === "default") m.text = "";
}

/** Fills the defaults of list items and platform lines; keeps the order that was sent. */
function normalize(config: AgentConfig): AgentConfig {
  const c = config;
  c.variables = (c.variables as Partial<Variable>[]).map((v) => {
    const system = (SYSTEM_VARIABLE_KEYS as readonly string[]).includes(v.key ?? "");
    return {
      key: v.key ?? "",
      default_value: v.default_value ?? null,
      system_defined: v.system_defined ?? system,
      deletable: v.deletable ?? !system,
    };
  });
  c.memory.fields = (c.memory.fields as Partial<MemoryField>[]).map((f) => ({
    key: f.key ?? "",
    label: f.label ?? null,
    type: f.type ?? "string",
    enum_values: f.enum_values ?? null,
    description: f.description ?? null,
    category: f.category ?? null,
  }));
  const tc = c.builtin_tools.transfer_call;
  tc.numbers = (tc.numbers as Partial<TransferNumber>[]).map((n) => ({
    number: n.number ?? "",
    priority: n.priority ?? TRANSFER_NUMBER_DEFAULTS.priority,
    start_hour: n.start_hour ?? TRANSFER_NUMBER_DEFAULTS.start_hour,
    end_hour: n.end_hour ?? TRANSFER_NUMBER_DEFAULTS.end_hour,
    timezone: n.timezone ?? TRANSFER_NUMBER_DEFAULTS.timezone,
    max_concurrent_calls: n.max_concurrent_calls ?? TRANSFER_NUMBER_DEFAULTS.max_concurrent_calls,
  }));
  if (c.transcriber.fallback) c.transcriber.fallback.provider ??= null;
  if (c.model.fallback) c.model.fallback.provider ??= null;
  if (c.voice.fallback) c.voice.fallback.model ??= null;
  const bt = c.builtin_tools;
  for (const m of [
    bt.end_call.message,
    bt.hold_call.acknowledgement_message,
    bt.hold_call.follow_up_message,
    bt.hold_call.timeout_message,
    bt.transfer_call.busy_message,
    bt.transfer_call.intro_message,
    c.conversation.silence_reminder.message,
    c.call.end_on_silence_message,
    c.call.max_duration_message,
    c.inbound.business_hours_closed_message,
    c.inbound.fallback_message,
  ]) {
    normalizeMessage(m);
  }
  return c;
}

/**
 * Applies a merge-patch body to a configuration and returns the next configuration (the input is
 * not modified). Objects merge, lists replace whole, `null` resets a member to what a new agent
 * reads back (or removes it when a new agent has none: fallbacks, `emotion`, `greeting.message`).
 * Read-only members (`transcriber.provider`, `model.provider`, fallback providers of those two,
 * `voice.model`, `voice.fallback.model`) are ignored. `label` and `notes` are not configuration
 * and are ignored here.
 *
 * Voice fallback exception: changing `voice.fallback.provider` without a `voice_id` drops the old
 * `voice_id`, so the rules refuse the result until one is given. Changing the main model or
 * transcriber model clears its derived provider until `deriveReadOnly` fills it again.
 */
export function applyAgentPatch(current: AgentConfig, body: AgentBody): AgentConfig {
  const next = clone(current) as unknown as Record<string, unknown>;
  const patch = { ...body } as Record<string, unknown>;
  delete patch.label;
  delete patch.notes;
  const voicePatch = patch.voice;
  const previousFallbackProvider = current.voice.fallback?.provider;
  mergeInto(next, patch as Json, []);
  const config = next as unknown as AgentConfig;
  if (isPlainObject(voicePatch) && isPlainObject(voicePatch.fallback)) {
    const fb = voicePatch.fallback;
    if (
      typeof fb.provider === "string" &&
      fb.provider !== previousFallbackProvider &&
      !("voice_id" in fb) &&
      config.voice.fallback
    ) {
      delete (config.voice.fallback as Partial<typeof config.voice.fallback>).voice_id;
    }
  }
  const tp = body.transcriber;
  if (tp && typeof tp.model === "string" && tp.model !== current.transcriber.model) {
    config.transcriber.provider = null;
  }
  const mp = body.model;
  if (mp && typeof mp.model === "string" && mp.model !== current.model.model) config.model.provider = null;
  return normalize(config);
}

/** The configuration of a new agent created with `body` (label and notes are version metadata). */
export function newAgentConfig(body: AgentBody): AgentConfig {
  return applyAgentPatch(defaultAgentConfig(), body);
}

/**
 * The configuration a read-back stands for: a top-level object read back as `null` is the platform
 * default. Accepts an agent detail (extra read-only fields are dropped).
 */
export function effectiveConfig(detail: Partial<Record<keyof AgentConfig, unknown>>): AgentConfig {
  const d = defaultAgentConfig() as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(d)) {
    const v = (detail as Record<string, unknown>)[key];
    out[key] = v === null || v === undefined ? d[key] : clone(v);
  }
  return out as unknown as AgentConfig;
}

/**
 * Read-back normalisation done after the rules passed: memory fields ordered by key, numbers in
 * E.164. (Derived providers and voice models are filled by `deriveReadOnly`.)
 */
export function finalizeAgentConfig(config: AgentConfig): AgentConfig {
  const c = clone(config);
  c.memory.fields.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  if (c.numbers.inbound_phone) c.numbers.inbound_phone = normalizeE164(c.numbers.inbound_phone);
  if (c.numbers.inbound_whatsapp) c.numbers.inbound_whatsapp = normalizeE164(c.numbers.inbound_whatsapp);
  return c;
}

/** Theme of a freshly prepared widget (the service prepares a widget on the agent's first read). */
export const DEFAULT_WIDGET_THEME: Readonly<WidgetTheme> = Object.freeze({
  title: "Talk to us",
  subtitle: "We answer right away",
  welcome_message: "Hi! How can I help you today?",
  logo_url: null,
  accent_color: "#4F46E5",
  launcher_text_color: "#FFFFFF",
  user_message_color: "#4F46E5",
  user_message_text_color: "#FFFFFF",
  assistant_message_color: "#F3F4F6",
  assistant_message_text_color: "#111827",
  position: "bottom-right",
  launcher_label: "Talk to us",
  button_shape: "rounded",
  panel_radius: 16,
  message_radius: 12,
  launcher_radius: 24,
  icon_radius: 12,
  dock_icon_size: 56,
  launcher_padding_x: 16,
  launcher_padding_y: 10,
  widget_width: 380,
  widget_height: 600,
  show_inbound_number: false,
});

/**
 * What a freshly prepared widget holds besides its theme: the agent's name (at the time it was
 * prepared), no allowed origins (so no page can use it), both modes on, no default variables, active.
 */
export const DEFAULT_WIDGET = Object.freeze({
  allowed_origins: [] as readonly string[],
  enabled_modes: Object.freeze({ chat: true, talk: true }),
  default_variables: Object.freeze({}) as Readonly<Record<string, string>>,
  status: "active" as const,
});

/** The Default Analysis group every workspace starts with (its name is `DEFAULT_ANALYSIS_GROUP_NAME`). */
export const DEFAULT_ANALYSIS_GROUP = Object.freeze({
  description: "Sentiment, outcome and language of every call.",
  enabled: true,
  /** Its items, in creation order, each enabled. */
  items: [
    {
      name: "User Sentiment",
      description: "How the caller felt over the call.",
      type: "enum",
      enum_values: ["positive", "neutral", "negative"],
    },
    {
      name: "Outcome",
      description: "What the call achieved, in one sentence.",
      type: "text",
      enum_values: null,
    },
    {
      name: "Language",
      description: "The language the caller mostly spoke.",
      type: "text",
      enum_values: null,
    },
  ] as readonly Pick<AnalysisItem, "name" | "description" | "type" | "enum_values">[],
});
