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
import {
  type GetModelsArgs,
  type GetVoicesArgs,
  type Language,
  LOOKUPS,
  type Model,
  type PhoneNumber,
  type Transcriber,
  type TtsCapabilities,
  type Voice,
  type WhatsAppNumber,
  type WhatsAppTemplate,
} from "./catalogueLookups";

export type {
  GetModelsArgs,
  GetVoicesArgs,
  Language,
  Model,
  PhoneNumber,
  Transcriber,
  TtsCapabilities,
  TtsProviderCapabilities,
  Voice,
  WhatsAppNumber,
  WhatsAppTemplate,
} from "./catalogueLookups";

/** Where a lookup reads its settings. */
export interface LookupOptions {
  /**
   * Configuration namespace holding `baseUrl` and the secret `apiKey`, as given to a `Provider`.
   * Default `voice-agent`.
   */
  namespace?: string;
}

/** {@link GetVoicesArgs} as Inputs. */
export interface GetVoicesOutputArgs {
  provider?: pulumi.Input<string>;
  language?: pulumi.Input<string>;
  includeWithdrawn?: pulumi.Input<boolean>;
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

/** Voices of the catalogue, optionally for one provider and one language; withdrawn voices left out. */
export async function getVoices(args: GetVoicesArgs = {}, opts?: LookupOptions): Promise<Voice[]> {
  return LOOKUPS.getVoices(await lookupClient(opts), args);
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
  return LOOKUPS.getModels(await lookupClient(opts), args);
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
  return LOOKUPS.getTranscribers(await lookupClient(opts));
}

/** Output form of {@link getTranscribers}. */
export function getTranscribersOutput(opts?: LookupOptions): pulumi.Output<Transcriber[]> {
  return pulumi.output(getTranscribers(opts));
}

/** Languages the service speaks. */
export async function getLanguages(opts?: LookupOptions): Promise<Language[]> {
  return LOOKUPS.getLanguages(await lookupClient(opts));
}

/** Output form of {@link getLanguages}. */
export function getLanguagesOutput(opts?: LookupOptions): pulumi.Output<Language[]> {
  return pulumi.output(getLanguages(opts));
}

/** What each TTS provider can do (model, languages, speed, emotion), keyed by provider. */
export async function getTtsCapabilities(opts?: LookupOptions): Promise<TtsCapabilities> {
  return LOOKUPS.getTtsCapabilities(await lookupClient(opts));
}

/** Output form of {@link getTtsCapabilities}. */
export function getTtsCapabilitiesOutput(opts?: LookupOptions): pulumi.Output<TtsCapabilities> {
  return pulumi.output(getTtsCapabilities(opts));
}

/** Phone numbers the workspace rents (bought in the dashboard). */
export async function getNumbers(opts?: LookupOptions): Promise<PhoneNumber[]> {
  return LOOKUPS.getNumbers(await lookupClient(opts));
}

/** Output form of {@link getNumbers}. */
export function getNumbersOutput(opts?: LookupOptions): pulumi.Output<PhoneNumber[]> {
  return pulumi.output(getNumbers(opts));
}

/** WhatsApp numbers connected to the workspace. */
export async function getWhatsAppNumbers(opts?: LookupOptions): Promise<WhatsAppNumber[]> {
  return LOOKUPS.getWhatsAppNumbers(await lookupClient(opts));
}

/** Output form of {@link getWhatsAppNumbers}. */
export function getWhatsAppNumbersOutput(opts?: LookupOptions): pulumi.Output<WhatsAppNumber[]> {
  return pulumi.output(getWhatsAppNumbers(opts));
}

/** Approved WhatsApp templates of the workspace. */
export async function getWhatsAppTemplates(opts?: LookupOptions): Promise<WhatsAppTemplate[]> {
  return LOOKUPS.getWhatsAppTemplates(await lookupClient(opts));
}

/** Output form of {@link getWhatsAppTemplates}. */
export function getWhatsAppTemplatesOutput(opts?: LookupOptions): pulumi.Output<WhatsAppTemplate[]> {
  return pulumi.output(getWhatsAppTemplates(opts));
}
