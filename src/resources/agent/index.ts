/**
 * Agent: the working configuration of a voice agent, kept equal to what the program declares.
 * This file is the program side (the resource class and its inputs); the provider side is in
 * `provider.ts`, its rules in `rules.ts`, and the comparison of configurations in `projection.ts`.
 */
import type * as pulumi from "@pulumi/pulumi";
import { attachedNames } from "../attachmentNames";
import { createMarker } from "../createMarker";
import { ServiceResource } from "../serviceResource";

type In<T> = pulumi.Input<T>;

/** A line the platform speaks. */
export interface MessageArgs {
  /** `default` lets the platform generate the line from `prompt`; `custom` speaks `text` as written. */
  mode?: In<"default" | "custom">;
  /** Instruction used to generate the line. */
  prompt?: In<string>;
  /** The fixed text (used when `mode` is `custom`). */
  text?: In<string>;
}

/** Languages the agent speaks. Platform default: `hi-IN` with `en-IN` alongside. */
export interface LanguageArgs {
  /** Opening language code, e.g. `en-IN`. */
  default?: In<string>;
  /** Other language codes the agent may switch to. */
  additional?: In<In<string>[]>;
  /** What triggers a switch; the service reads back `requested_or_auto`. */
  switchTrigger?: In<string>;
}

/** Speech-to-text engine. Its provider is derived from `model` by the service. */
export interface TranscriberArgs {
  /** Transcriber model id (see `getTranscribers`). */
  model?: In<string>;
  /** Words to bias recognition towards. */
  keywords?: In<In<string>[]>;
  /** A second transcriber from another provider, used if the first stops responding; `null` removes it. */
  fallback?: In<{ model: In<string> } | null>;
}

/** Language model. Its provider is derived from `model` by the service. */
export interface ModelArgs {
  /** Model id (see `getModels`); a retired model is refused at preview. */
  model?: In<string>;
  /** Sampling temperature; honoured only by models with `supportsTemperature` (0 is honoured as 0). */
  temperature?: In<number>;
  /** Maximum tokens per reply. The service reads back 128 on a new agent. */
  maxTokens?: In<number>;
  /** A second model from another provider; `null` removes it. */
  fallback?: In<{ model: In<string> } | null>;
}

/** Text-to-speech voice. Its `model` is filled by the service from `provider`. */
export interface VoiceArgs {
  /** TTS provider (see `getTtsCapabilities`). */
  provider?: In<string>;
  /** Voice id offered by `provider` for the agent's languages (see `getVoices`). */
  voiceId?: In<string>;
  /** Pace, 0.25 to 4 (1.0 natural); refused for a provider that does not support speed. */
  speed?: In<number>;
  /** One of the documented emotions; only the provider that supports emotion takes it. `null` clears it. */
  emotion?: In<string | null>;
  /** A voice from another provider, used if the first stops responding; `null` removes it. */
  fallback?: In<{ provider: In<string>; voiceId: In<string> } | null>;
}

/** Turn-taking behaviour. */
export interface ConversationArgs {
  /** 0 to 1; the service reads back 0.5 on a new agent. */
  interruptionSensitivity?: In<number>;
  /** Exactly one of 1 (Fast), 0.75 (Responsive), 0.5 (Balanced, default), 0 (Patient). */
  responseEagerness?: In<1 | 0.75 | 0.5 | 0>;
  /** Background noise handling; new agents read back mode `standard`, level 50. */
  noiseHandling?: In<{ mode?: In<string>; level?: In<number> }>;
  /** Reminder after silence; new agents read back enabled, 15 seconds. */
  silenceReminder?: In<{ enabled?: In<boolean>; seconds?: In<number>; message?: In<MessageArgs> }>;
}

/** Call limits and recording. */
export interface CallArgs {
  /** Longest call in minutes. */
  maxDurationMinutes?: In<number>;
  /** Hang up after this many seconds of silence (new agents: 25). */
  endOnSilenceSeconds?: In<number>;
  /** Record calls (new agents: true). */
  recordingEnabled?: In<boolean>;
  /** Run custom analysis after calls (new agents: true). */
  customAnalysisEnabled?: In<boolean>;
  /** The "call limit" line. */
  maxDurationMessage?: In<MessageArgs>;
  /** The "silence timeout" line. */
  endOnSilenceMessage?: In<MessageArgs>;
}

/** Lines for inbound calls that cannot be handled normally. */
export interface InboundArgs {
  /** The "business hours closed" line. */
  businessHoursClosedMessage?: In<MessageArgs>;
  /** The "inbound fallback" line. */
  fallbackMessage?: In<MessageArgs>;
}

/** A human to transfer calls to. */
export interface TransferNumberArgs {
  /** E.164 number, e.g. `+919800000001`. */
  number: In<string>;
  /** Lower numbers are tried first. */
  priority?: In<number>;
  /** Start of the hour window (0 to 24); with `endHour`, must form a non-empty window. */
  startHour?: In<number>;
  /** End of the hour window (0 to 24). */
  endHour?: In<number>;
  /** IANA zone name of the window, e.g. `Asia/Kolkata`. */
  timezone?: In<string>;
  /** Concurrent transferred calls this number takes. */
  maxConcurrentCalls?: In<number>;
}

/** Platform tools. Each must also be armed by naming it in the prompt as `<tool_name>`. */
export interface BuiltinToolsArgs {
  /** Ending the call, with the goodbye line. */
  endCall?: In<{ enabled?: In<boolean>; message?: In<MessageArgs> }>;
  /** Putting the caller on hold; `followUpSeconds` must be lower than `maxSeconds`. */
  holdCall?: In<{
    enabled?: In<boolean>;
    maxSeconds?: In<number>;
    followUpSeconds?: In<number>;
    acknowledgementMessage?: In<MessageArgs>;
    followUpMessage?: In<MessageArgs>;
    timeoutMessage?: In<MessageArgs>;
  }>;
  /** Transferring to a human; `numbers` replaces the whole list. */
  transferCall?: In<{
    enabled?: In<boolean>;
    numbers?: In<In<TransferNumberArgs>[]>;
    busyMessage?: In<MessageArgs>;
    introMessage?: In<MessageArgs>;
  }>;
  /** Sending approved WhatsApp templates (names from `getWhatsAppTemplates`). */
  sendWhatsappTemplate?: In<{
    enabled?: In<boolean>;
    allowedTemplates?: In<In<string>[]>;
    phoneNumberId?: In<string | null>;
  }>;
}

/** A custom prompt variable, referenced in prompts as `{{custom.<key>}}`. */
export interface VariableArgs {
  /** The variable's key, kept exactly as written. The system variables `callee_name` and `callee_number` always exist. */
  key: In<string>;
  /** Value used when a call does not set it. */
  defaultValue?: In<string | null>;
}

/** What the agent remembers about callers. */
export interface MemoryArgs {
  /** Turn memory on. */
  enabled?: In<boolean>;
  /** Channels recorded, e.g. `outbound`, `whatsapp` (widget conversations never are). */
  channels?: In<In<string>[]>;
  /** Let the AI record extra labelled facts. */
  allowAiLabels?: In<boolean>;
  /** Free text guiding which extra facts are recorded. */
  labelInstructions?: In<string | null>;
  /** Most facts kept per caller. */
  maxFacts?: In<number>;
  /** Transcript turns kept. */
  transcriptTurns?: In<number>;
  /** Declared fields; keys must be unique; `enumValues` only on `type: "string"`. Compared by key, in any order. */
  fields?: In<
    In<{
      key: In<string>;
      label?: In<string | null>;
      type?: In<string>;
      enumValues?: In<In<string>[] | null>;
      description?: In<string | null>;
      category?: In<string | null>;
    }>[]
  >;
}

/** The agent's configuration. Every field but `name` is optional: what is not set is not managed. */
export interface AgentArgs {
  /** Display name, 1 to 255 characters; never spoken to a caller. */
  name: In<string>;
  /** The prompt, 1 to 65536 characters, structured by `## Agent Purpose`, `## Response Style`, `## Call Flow`. Tools it names as `<tool>` must exist. */
  systemPrompt?: In<string>;
  /** What the agent says first; `null` removes it. */
  greeting?: In<{ message: In<string> } | null>;
  /** Languages. */
  language?: In<LanguageArgs>;
  /** Speech-to-text engine. */
  transcriber?: In<TranscriberArgs>;
  /** Language model. */
  model?: In<ModelArgs>;
  /** Text-to-speech voice, checked against the catalogue for the agent's languages. */
  voice?: In<VoiceArgs>;
  /** Turn-taking behaviour. */
  conversation?: In<ConversationArgs>;
  /** Call limits and recording. */
  call?: In<CallArgs>;
  /** Inbound call lines. */
  inbound?: In<InboundArgs>;
  /** Platform tools. */
  builtinTools?: In<BuiltinToolsArgs>;
  /** Custom variables (the whole set; system variables are kept as the service holds them). */
  variables?: In<In<VariableArgs>[]>;
  /** Knowledge bases attached (the whole set, in any order). */
  knowledgeBaseIds?: In<In<string>[]>;
  /** Custom-analysis groups run after each call (the whole set; new agents have the Default Analysis group). */
  analysisGroupIds?: In<In<string>[]>;
  /** Caller memory. */
  memory?: In<MemoryArgs>;
  /** Numbers the agent answers on; each must be held by the workspace. */
  numbers?: In<{ inboundPhone?: In<string | null>; inboundWhatsapp?: In<string | null> }>;
  /**
   * Id of an existing agent to take over instead of creating one (dynamic providers cannot be
   * `pulumi import`ed). Its working draft is overwritten with this configuration on create.
   * Changing it later has no effect.
   */
  adoptId?: In<string>;
}

/**
 * The Agent's outputs beyond its inputs. Here, not beside the field table: the program side must not
 * load the provider's modules (zod among them), see test/program.test.ts.
 */
const AGENT_OUTPUTS = [
  "agentId",
  "draftVersion",
  "documentRevision",
  "draftPublished",
  "draftHash",
  "liveVersion",
  "latestVersion",
  "dashboardUrl",
  "contentHash",
  "knownVersions",
  "configDigest",
] as const;

/**
 * A voice agent. Its configuration is the working draft in the service; pair it with an
 * {@link AgentVersion} to publish that draft and put it live.
 */
export class Agent extends ServiceResource {
  /** The agent's id in the service, stable across versions. */
  declare readonly agentId: pulumi.Output<string>;
  /** The version number holding the working configuration (the open draft, or the version it would branch from). */
  declare readonly draftVersion: pulumi.Output<number>;
  /** Edit counter of that version; sent as `If-Match` so edits made elsewhere are never overwritten. */
  declare readonly documentRevision: pulumi.Output<number>;
  /** Whether `draftVersion` is already published (no draft open: the next change branches one). */
  declare readonly draftPublished: pulumi.Output<boolean>;
  /**
   * Hash of the whole configuration `draftVersion` holds (every field, managed or not), as last
   * written or read: an {@link AgentVersion} compares published versions with it without reading the draft.
   */
  declare readonly draftHash: pulumi.Output<string>;
  /** The version answering calls, or `null` when off air. */
  declare readonly liveVersion: pulumi.Output<number | null>;
  /** Highest version number. */
  declare readonly latestVersion: pulumi.Output<number>;
  /** Deep link to the agent in the dashboard. */
  declare readonly dashboardUrl: pulumi.Output<string | null>;
  /** Hash of the normalized managed configuration; changes exactly when the configuration does. */
  declare readonly contentHash: pulumi.Output<string>;
  /**
   * The published versions this stack has seen, by `contentHash` (the newest 100): how an
   * {@link AgentVersion} finds the version a revert brings back without reading the agent's history.
   */
  declare readonly knownVersions: pulumi.Output<Record<string, number>>;
  /**
   * The environment-independent digest of the whole configuration the working version holds
   * (every managed field, knowledge bases and analysis groups by name, derived fields left out):
   * the same in two stacks or workspaces whose agents hold the same configuration, whatever their
   * ids. Known after the agent's create or update (unknown in the preview of a change).
   */
  declare readonly configDigest: pulumi.Output<string>;
  declare readonly name: pulumi.Output<string>;
  declare readonly systemPrompt: pulumi.Output<string | undefined>;

  constructor(name: string, args: AgentArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      "agent",
      "Agent",
      name,
      {
        ...args,
        createMarker: createMarker("voice-agent:Agent", name, opts),
        // The names of the program's knowledge bases and analysis groups it attaches: a rename
        // updates the agent's configDigest in the same deployment (attachmentNames.ts).
        attachedNames: attachedNames(args.knowledgeBaseIds, args.analysisGroupIds),
        // Every registered property costs the program a promise and a stack trace
        // (docs/performance.md): `agentId` is not one, it is the id (below).
        ...Object.fromEntries(AGENT_OUTPUTS.filter((k) => k !== "agentId").map((k) => [k, undefined])),
      },
      opts,
    );
    // The agent id is the resource id. Unlike an output, the id of an existing resource stays
    // known during a preview, so resources built on `agentId` (versions, widgets) are not shown
    // as replaced when only the agent's configuration changes.
    (this as { agentId: pulumi.Output<string> }).agentId = this.id;
  }
}
