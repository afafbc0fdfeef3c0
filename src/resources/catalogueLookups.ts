/**
 * The catalogue and holdings lookups over a client: what each lookup returns, in one place, for
 * the program's lookups (`lookups.ts`, which read the stack's settings in the program) and the
 * provider plugin's functions (`src/plugin/`, its `Invoke`). Loads no Pulumi SDK.
 */
import type { VoiceAgentClient } from "../client";
import { fromWire } from "../provider/normalize";

/** A voice of the catalogue. */
export interface Voice {
  /** TTS provider, e.g. `sarvam`. */
  provider: string;
  /** The id to put in an agent's `voice.voiceId`. */
  voiceId: string;
  /** Display name. */
  name: string;
  /** Language codes the voice is certified for. */
  languages: string[];
  /** A withdrawn voice can no longer be chosen (listed only with `includeWithdrawn`). */
  withdrawn: boolean;
}

/** A language model of the catalogue. */
export interface Model {
  /** The id to put in an agent's `model.model`. */
  id: string;
  provider: string;
  displayName: string;
  /** Whether `model.temperature` is honoured. */
  supportsTemperature: boolean;
  /** Price per call minute. */
  ratePerMin: number;
  /** A retired model can no longer be chosen (listed only with `includeRetired`). */
  retired: boolean;
}

/** A speech-to-text engine of the catalogue. */
export interface Transcriber {
  /** The id to put in an agent's `transcriber.model`. */
  id: string;
  provider: string;
  languages: string[];
  /** Seconds it waits before answering, per response-eagerness preset, or `null`. */
  responseSpeedSeconds: { Fast: number; Responsive: number; Balanced: number; Patient: number } | null;
}

/** A language the service speaks. */
export interface Language {
  /** e.g. `hi-IN`. */
  code: string;
  name: string;
}

/** What one TTS provider can do. */
export interface TtsProviderCapabilities {
  /** The TTS model the service fills in for this provider. */
  model: string;
  languages: string[];
  /** Whether `voice.speed` is accepted. */
  supportsSpeed: boolean;
  /** The provider's own speed range, or `null`. */
  speedRange: [number, number] | null;
  /** Whether `voice.emotion` is accepted. */
  supportsEmotion: boolean;
}

/** Per TTS provider (keyed by provider name, as the service spells it). */
export type TtsCapabilities = Record<string, TtsProviderCapabilities>;

/** A phone number the workspace rents. */
export interface PhoneNumber {
  id: string;
  /** E.164. */
  number: string;
  /** Whether the carrier still lists it. */
  carrierStatus: "listed" | "delisted";
  /** Where it is in its rental life; a `released` number is no longer held. */
  lifecycleStatus: "active" | "grace_period" | "released";
  /** The agent answering on it, or `null`. */
  agentId: string | null;
}

/** A WhatsApp number connected in the dashboard. */
export interface WhatsAppNumber {
  id: string;
  number: string;
  /** The id to put in `builtinTools.sendWhatsappTemplate.phoneNumberId`. */
  phoneNumberId: string;
  displayName: string;
}

/** An approved WhatsApp template. */
export interface WhatsAppTemplate {
  /** The name to list in `builtinTools.sendWhatsappTemplate.allowedTemplates`. */
  name: string;
  language: string;
  status: "approved";
}

/** Filters of {@link getVoices}. */
export interface GetVoicesArgs {
  /** Only this TTS provider's voices. */
  provider?: string;
  /** Only voices certified for this language code, e.g. `ta-IN`. */
  language?: string;
  /** Also list withdrawn voices. Default `false`. */
  includeWithdrawn?: boolean;
}

/** Filters of {@link getModels}. */
export interface GetModelsArgs {
  /** Also list retired models. Default `false`. */
  includeRetired?: boolean;
}

const camel = <T>(rows: unknown): T => fromWire(rows) as T;

/** Each lookup over a client, by its name. */
export const LOOKUPS = {
  /** Voices of the catalogue, optionally for one provider and one language; withdrawn voices left out. */
  async getVoices(c: VoiceAgentClient, args: GetVoicesArgs = {}): Promise<Voice[]> {
    const rows = await c.catalogue.voices({ provider: args.provider, language: args.language });
    return camel<Voice[]>(rows).filter((v) => args.includeWithdrawn || !v.withdrawn);
  },
  /** Language models of the catalogue; retired models left out. */
  async getModels(c: VoiceAgentClient, args: GetModelsArgs = {}): Promise<Model[]> {
    return camel<Model[]>(await c.catalogue.models()).filter((m) => args.includeRetired || !m.retired);
  },
  /** Speech-to-text engines of the catalogue. */
  async getTranscribers(c: VoiceAgentClient): Promise<Transcriber[]> {
    return camel<Transcriber[]>(await c.catalogue.transcribers());
  },
  /** Languages the service speaks. */
  async getLanguages(c: VoiceAgentClient): Promise<Language[]> {
    return camel<Language[]>(await c.catalogue.languages());
  },
  /** What each TTS provider can do (model, languages, speed, emotion), keyed by provider. */
  async getTtsCapabilities(c: VoiceAgentClient): Promise<TtsCapabilities> {
    const raw = await c.catalogue.ttsCapabilities();
    // Provider names are data: they keep their spelling.
    return Object.fromEntries(Object.entries(raw).map(([provider, caps]) => [provider, camel(caps)]));
  },
  /** Phone numbers the workspace rents (bought in the dashboard). */
  async getNumbers(c: VoiceAgentClient): Promise<PhoneNumber[]> {
    return camel<PhoneNumber[]>(await c.catalogue.numbers());
  },
  /** WhatsApp numbers connected to the workspace. */
  async getWhatsAppNumbers(c: VoiceAgentClient): Promise<WhatsAppNumber[]> {
    return camel<WhatsAppNumber[]>(await c.catalogue.whatsappNumbers());
  },
  /** Approved WhatsApp templates of the workspace. */
  async getWhatsAppTemplates(c: VoiceAgentClient): Promise<WhatsAppTemplate[]> {
    return camel<WhatsAppTemplate[]>(await c.catalogue.whatsappTemplates());
  },
};

/** The lookups' names. */
export type LookupName = keyof typeof LOOKUPS;
