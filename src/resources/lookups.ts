/**
 * Catalogue and holdings lookups, for programs: which voices, models, transcribers and languages
 * the service offers, what each TTS provider can do, and which phone numbers, WhatsApp numbers and
 * templates the workspace holds. So a program can pick a voice offered for its language instead of
 * hard-coding one:
 *
 * ```ts
 * const voice = va.getVoicesOutput({ provider: "sarvam", language: "ta-IN" }).apply((v) => v[0].voiceId);
 * ```
 *
 * Each lookup has a promise form (`getVoices`) and an Output form (`getVoicesOutput`, taking
 * Inputs), like Pulumi's generated SDKs. They run in the program process, at preview as well as at
 * `up`, and read the same configuration as the resources: `voice-agent:baseUrl` and the secret
 * `voice-agent:apiKey` of the stack (or the namespace given in `opts`), falling back to
 * `VOICE_AGENT_BASE_URL` and `VOICE_AGENT_API_KEY` for the default namespace. The key is only ever
 * sent as the request's bearer token; it never appears in results, errors or logs.
 * Results are camelCase.
 */
import * as pulumi from "@pulumi/pulumi";
import type { VoiceAgentClient } from "../client";
import { clientModule } from "../provider/context";
import { fromWire } from "../provider/normalize";

/** Where a lookup reads its settings. */
export interface LookupOptions {
  /**
   * Configuration namespace holding `baseUrl` and the secret `apiKey`, as given to a `Provider`.
   * Default `voice-agent`.
   */
  namespace?: string;
}

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

/** {@link GetVoicesArgs} as Inputs. */
export interface GetVoicesOutputArgs {
  provider?: pulumi.Input<string>;
  language?: pulumi.Input<string>;
  includeWithdrawn?: pulumi.Input<boolean>;
}

/** Filters of {@link getModels}. */
export interface GetModelsArgs {
  /** Also list retired models. Default `false`. */
  includeRetired?: boolean;
}

/** {@link GetModelsArgs} as Inputs. */
export interface GetModelsOutputArgs {
  includeRetired?: pulumi.Input<boolean>;
}

/**
 * A client for `namespace`, from the stack configuration. Clients are cheap: connections and the
 * request pacing are shared by every client of the same base URL and key.
 */
async function lookupClient(opts: LookupOptions = {}): Promise<VoiceAgentClient> {
  const namespace = opts.namespace ?? "voice-agent";
  // `configFromPulumi` asks for `voice-agent:<key>`, then `<key>`; the namespace answers the short
  // form. The values are read from the program's configuration as they are: the secret API key
  // goes into the client only, never into an output, a log or an error.
  const source = {
    get: (key: string) => (key.includes(":") ? undefined : pulumi.runtime.getConfig(`${namespace}:${key}`)),
  };
  const { ClientConfigError, configFromPulumi, VoiceAgentClient } = await clientModule();
  if (namespace === "voice-agent") return new VoiceAgentClient(configFromPulumi(source, process.env));
  try {
    return new VoiceAgentClient(configFromPulumi(source, {}));
  } catch (err) {
    // Name the namespace's keys; the environment fallbacks apply to the default namespace only.
    if (!(err instanceof ClientConfigError)) throw err;
    throw new ClientConfigError(
      err.message
        .replaceAll("voice-agent:", `${namespace}:`)
        .replace(/ or the VOICE_AGENT_\w+ environment variable| \(or VOICE_AGENT_\w+\)/g, ""),
      { cause: err },
    );
  }
}

const camel = <T>(rows: unknown): T => fromWire(rows) as T;

/** Voices of the catalogue, optionally for one provider and one language; withdrawn voices left out. */
export async function getVoices(args: GetVoicesArgs = {}, opts?: LookupOptions): Promise<Voice[]> {
  const rows = await (await lookupClient(opts)).catalogue.voices({
    provider: args.provider,
    language: args.language,
  });
  return camel<Voice[]>(rows).filter((v) => args.includeWithdrawn || !v.withdrawn);
}

/** Output form of {@link getVoices}. */
export function getVoicesOutput(
  args: GetVoicesOutputArgs = {},
  opts?: LookupOptions,
): pulumi.Output<Voice[]> {
  return pulumi.output(args).apply((a) => getVoices(a as GetVoicesArgs, opts));
}

/** Language models of the catalogue; retired models left out. */
export async function getModels(args: GetModelsArgs = {}, opts?: LookupOptions): Promise<Model[]> {
  const rows = camel<Model[]>(await (await lookupClient(opts)).catalogue.models());
  return rows.filter((m) => args.includeRetired || !m.retired);
}

/** Output form of {@link getModels}. */
export function getModelsOutput(
  args: GetModelsOutputArgs = {},
  opts?: LookupOptions,
): pulumi.Output<Model[]> {
  return pulumi.output(args).apply((a) => getModels(a as GetModelsArgs, opts));
}

/** Speech-to-text engines of the catalogue. */
export async function getTranscribers(opts?: LookupOptions): Promise<Transcriber[]> {
  return camel<Transcriber[]>(await (await lookupClient(opts)).catalogue.transcribers());
}

/** Output form of {@link getTranscribers}. */
export function getTranscribersOutput(opts?: LookupOptions): pulumi.Output<Transcriber[]> {
  return pulumi.output(getTranscribers(opts));
}

/** Languages the service speaks. */
export async function getLanguages(opts?: LookupOptions): Promise<Language[]> {
  return camel<Language[]>(await (await lookupClient(opts)).catalogue.languages());
}

/** Output form of {@link getLanguages}. */
export function getLanguagesOutput(opts?: LookupOptions): pulumi.Output<Language[]> {
  return pulumi.output(getLanguages(opts));
}

/** What each TTS provider can do (model, languages, speed, emotion), keyed by provider. */
export async function getTtsCapabilities(opts?: LookupOptions): Promise<TtsCapabilities> {
  const raw = await (await lookupClient(opts)).catalogue.ttsCapabilities();
  // Provider names are data: they keep their spelling.
  return Object.fromEntries(Object.entries(raw).map(([provider, caps]) => [provider, camel(caps)]));
}

/** Output form of {@link getTtsCapabilities}. */
export function getTtsCapabilitiesOutput(opts?: LookupOptions): pulumi.Output<TtsCapabilities> {
  return pulumi.output(getTtsCapabilities(opts));
}

/** Phone numbers the workspace rents (bought in the dashboard). */
export async function getNumbers(opts?: LookupOptions): Promise<PhoneNumber[]> {
  return camel<PhoneNumber[]>(await (await lookupClient(opts)).catalogue.numbers());
}

/** Output form of {@link getNumbers}. */
export function getNumbersOutput(opts?: LookupOptions): pulumi.Output<PhoneNumber[]> {
  return pulumi.output(getNumbers(opts));
}

/** WhatsApp numbers connected to the workspace. */
export async function getWhatsAppNumbers(opts?: LookupOptions): Promise<WhatsAppNumber[]> {
  return camel<WhatsAppNumber[]>(await (await lookupClient(opts)).catalogue.whatsappNumbers());
}

/** Output form of {@link getWhatsAppNumbers}. */
export function getWhatsAppNumbersOutput(opts?: LookupOptions): pulumi.Output<WhatsAppNumber[]> {
  return pulumi.output(getWhatsAppNumbers(opts));
}

/** Approved WhatsApp templates of the workspace. */
export async function getWhatsAppTemplates(opts?: LookupOptions): Promise<WhatsAppTemplate[]> {
  return camel<WhatsAppTemplate[]>(await (await lookupClient(opts)).catalogue.whatsappTemplates());
}

/** Output form of {@link getWhatsAppTemplates}. */
export function getWhatsAppTemplatesOutput(opts?: LookupOptions): pulumi.Output<WhatsAppTemplate[]> {
  return pulumi.output(getWhatsAppTemplates(opts));
}
