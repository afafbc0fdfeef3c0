/**
 * The seeded catalogue and what each workspace holds at start (documented in docs/emulator.md).
 * Every id here is stable: tests and examples refer to them.
 */
import { createHash } from "node:crypto";
import {
  type Catalogue,
  DEFAULT_ANALYSIS_GROUP,
  type LanguageRow,
  type ModelRow,
  type TranscriberRow,
  type TtsCapabilities,
  type VoiceRow,
  type WhatsAppTemplateRow,
} from "../spec";

const LANGUAGES: LanguageRow[] = [
  { code: "hi-IN", name: "Hindi (India)" },
  { code: "en-IN", name: "English (India)" },
  { code: "en-US", name: "English (United States)" },
  { code: "ta-IN", name: "Tamil (India)" },
  { code: "te-IN", name: "Telugu (India)" },
  { code: "bn-IN", name: "Bengali (India)" },
  { code: "mr-IN", name: "Marathi (India)" },
  { code: "kn-IN", name: "Kannada (India)" },
  { code: "es-ES", name: "Spanish (Spain)" },
  { code: "fr-FR", name: "French (France)" },
  { code: "de-DE", name: "German (Germany)" },
];

const TTS: TtsCapabilities = {
  sarvam: {
    model: "bulbul:v2",
    languages: ["hi-IN", "en-IN", "ta-IN", "te-IN", "bn-IN", "mr-IN", "kn-IN"],
    supports_speed: true,
    speed_range: [0.5, 2],
    supports_emotion: false,
  },
  elevenlabs: {
    model: "eleven_multilingual_v2",
    languages: ["en-IN", "en-US", "es-ES", "fr-FR", "de-DE"],
    supports_speed: true,
    speed_range: [0.7, 1.2],
    supports_emotion: false,
  },
  cartesia: {
    model: "sonic-2",
    languages: ["hi-IN", "en-IN", "en-US", "es-ES", "fr-FR", "de-DE"],
    supports_speed: true,
    speed_range: [0.6, 1.5],
    supports_emotion: true,
  },
  deepgram: {
    model: "aura-2",
    languages: ["hi-IN", "en-IN", "en-US", "es-ES"],
    supports_speed: false,
    speed_range: null,
    supports_emotion: false,
  },
};

const voice = (provider: string, voice_id: string, name: string, languages: string[]): VoiceRow => ({
  provider,
  voice_id,
  name,
  languages,
  withdrawn: false,
});

const VOICES: VoiceRow[] = [
  voice("sarvam", "meera", "Meera", ["hi-IN", "en-IN", "ta-IN", "te-IN", "mr-IN"]),
  voice("sarvam", "arvind", "Arvind", ["hi-IN", "en-IN", "kn-IN"]),
  voice("sarvam", "anushka", "Anushka", ["hi-IN", "en-IN", "bn-IN"]),
  voice("sarvam", "vidya", "Vidya", ["ta-IN", "te-IN"]),
  voice("elevenlabs", "rachel", "Rachel", ["en-US", "en-IN", "es-ES"]),
  voice("elevenlabs", "adam", "Adam", ["en-US", "en-IN"]),
  voice("elevenlabs", "charlotte", "Charlotte", ["en-US", "fr-FR", "de-DE"]),
  voice("cartesia", "asha", "Asha", ["hi-IN", "en-IN", "en-US"]),
  voice("cartesia", "james", "James", ["en-US", "en-IN"]),
  voice("cartesia", "sofia", "Sofia", ["es-ES", "en-US", "fr-FR"]),
  voice("deepgram", "thalia", "Thalia", ["hi-IN", "en-IN", "en-US"]),
  voice("deepgram", "kavya", "Kavya", ["hi-IN"]),
  voice("deepgram", "orion", "Orion", ["en-US", "es-ES"]),
];

const model = (
  id: string,
  provider: string,
  display_name: string,
  t: boolean,
  rate: number,
  retired = false,
): ModelRow => ({
  id,
  provider,
  display_name,
  supports_temperature: t,
  rate_per_min: rate,
  retired,
});

const MODELS: ModelRow[] = [
  model("gpt-4o-mini", "openai", "GPT-4o mini", true, 0.02),
  model("gpt-4o", "openai", "GPT-4o", true, 0.06),
  model("o3-mini", "openai", "o3-mini", false, 0.05),
  model("gpt-3.5-turbo", "openai", "GPT-3.5 Turbo", true, 0.01, true),
  model("claude-3-5-haiku", "anthropic", "Claude 3.5 Haiku", true, 0.03),
  model("claude-sonnet-4", "anthropic", "Claude Sonnet 4", true, 0.08),
  model("gemini-2.0-flash", "google", "Gemini 2.0 Flash", true, 0.015),
  model("gemini-1.5-flash", "google", "Gemini 1.5 Flash", true, 0.01),
  model("sarvam-m", "sarvam", "Sarvam-M", false, 0.01),
];

const TRANSCRIBERS: TranscriberRow[] = [
  {
    id: "saarika:v2",
    provider: "sarvam",
    languages: ["hi-IN", "en-IN", "ta-IN", "te-IN", "bn-IN", "mr-IN", "kn-IN"],
    response_speed_seconds: { Fast: 0.4, Responsive: 0.7, Balanced: 1.0, Patient: 1.6 },
  },
  {
    id: "nova-3",
    provider: "deepgram",
    languages: ["en-US", "en-IN", "hi-IN", "es-ES", "fr-FR", "de-DE"],
    response_speed_seconds: { Fast: 0.3, Responsive: 0.6, Balanced: 0.9, Patient: 1.5 },
  },
  {
    id: "chirp-2",
    provider: "google",
    languages: ["en-US", "en-IN", "hi-IN", "ta-IN", "es-ES"],
    response_speed_seconds: null,
  },
];

/** A fresh copy of the seeded catalogue. */
export function seedCatalogue(): Catalogue {
  return structuredClone({
    models: MODELS,
    voices: VOICES,
    transcribers: TRANSCRIBERS,
    languages: LANGUAGES,
    ttsCapabilities: TTS,
  });
}

/** A deterministic UUID (v5 layout) from a text, so seeded ids survive restarts and resets. */
export function stableUuid(text: string): string {
  const h = createHash("sha1").update(`voice-agent-emulator:${text}`).digest("hex");
  const variant = ((Number.parseInt(h.slice(16, 18), 16) & 0x3f) | 0x80).toString(16).padStart(2, "0");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(18, 20)}-${h.slice(20, 32)}`;
}

/** The organisation every workspace belongs to (`X-Service-Org` agrees with its id or name). */
export const ORG = { id: stableUuid("org"), name: "emulator" } as const;

/** Seed of the numbers of the workspace at `index` (0-based, in `--workspace` order). */
export function seedNumbers(index: number): {
  numbers: {
    number: string;
    lifecycle_status: "active" | "grace_period" | "released";
    carrier_status: "listed" | "delisted";
  }[];
  whatsappNumbers: { number: string; phone_number_id: string; display_name: string }[];
  templates: WhatsAppTemplateRow[];
} {
  const ws = String(index + 1).padStart(2, "0");
  return {
    numbers: [
      { number: `+91806555${ws}01`, lifecycle_status: "active", carrier_status: "listed" },
      { number: `+91806555${ws}02`, lifecycle_status: "active", carrier_status: "listed" },
      { number: `+91806555${ws}03`, lifecycle_status: "grace_period", carrier_status: "delisted" },
      { number: `+91806555${ws}04`, lifecycle_status: "released", carrier_status: "delisted" },
    ],
    whatsappNumbers: [
      { number: `+91806556${ws}01`, phone_number_id: `wa-pnid-${ws}01`, display_name: "Support" },
      { number: `+91806556${ws}02`, phone_number_id: `wa-pnid-${ws}02`, display_name: "Sales" },
    ],
    templates: [
      { name: "order_update", language: "en-IN", status: "approved" },
      { name: "appointment_reminder", language: "hi-IN", status: "approved" },
      { name: "payment_due", language: "en-IN", status: "approved" },
    ],
  };
}

/** Items of the Default Analysis group, in creation order (the spec's, `DEFAULT_ANALYSIS_GROUP`). */
export const DEFAULT_ANALYSIS_ITEMS = DEFAULT_ANALYSIS_GROUP.items.map((it) => ({
  ...it,
  enum_values: it.enum_values ? [...it.enum_values] : null,
}));
