/**
 * Agent: the working configuration of a voice agent, kept equal to what the program declares.
 * This file is the program side (the resource class and its inputs); the provider side is in
 * `provider.ts`, its rules in `rules.ts`, and the comparison of configurations in `projection.ts`.
 */
import type * as pulumi from "@pulumi/pulumi";
import { attachedNames } from "../attachmentNames";
import { createMarker } from "../createMarker";
import { ServiceResource } from "../serviceResource";

/** A line the platform speaks. */
export interface MessageArgs {
  /** `default` lets the platform generate the line from `prompt`; `custom` speaks `text` as written. */
  mode?: pulumi.Input<"default" | "custom">;
  /** Instruction used to generate the line. */
  prompt?: pulumi.Input<string>;
  /** The fixed text (used when `mode` is `custom`). */
  text?: pulumi.Input<string>;
}

/** Languages the agent speaks. Platform default: `hi-IN` with `en-IN` alongside. */
export interface LanguageArgs {
  /** Opening language code, e.g. `en-IN`. */
  default?: pulumi.Input<string>;
  /** Other language codes the agent may switch to. */
  additional?: pulumi.Input<pulumi.Input<string>[]>;
  /** What triggers a switch; the service reads back `requested_or_auto`. */
  switchTrigger?: pulumi.Input<string>;
}

/** Speech-to-text engine. Its provider is derived from `model` by the service. */
export interface TranscriberArgs {
  /** Transcriber model id (see `getTranscribers`). */
  model?: pulumi.Input<string>;
  /** Words to bias recognition towards. */
  keywords?: pulumi.Input<pulumi.Input<string>[]>;
  /** A second transcriber from another provider, used if the first stops responding; `null` removes it. */
  fallback?: pulumi.Input<{ model: pulumi.Input<string> } | null>;
}

/** Language model. Its provider is derived from `model` by the service. */
export interface ModelArgs {
  /** Model id (see `getModels`); a retired model is refused at preview. */
  model?: pulumi.Input<string>;
  /** Sampling temperature; honoured only by models with `supportsTemperature` (0 is honoured as 0). */
  temperature?: pulumi.Input<number>;
  /** Maximum tokens per reply. The service reads back 128 on a new agent. */
  maxTokens?: pulumi.Input<number>;
  /** A second model from another provider; `null` removes it. */
  fallback?: pulumi.Input<{ model: pulumi.Input<string> } | null>;
}

/** Text-to-speech voice. Its `model` is filled by the service from `provider`. */
export interface VoiceArgs {
  /** TTS provider (see `getTtsCapabilities`). */
  provider?: pulumi.Input<string>;
  /** Voice id offered by `provider` for the agent's languages (see `getVoices`). */
  voiceId?: pulumi.Input<string>;
  /** Pace, 0.25 to 4 (1.0 natural); refused for a provider that does not support speed. */
  speed?: pulumi.Input<number>;
  /** One of the documented emotions; only the provider that supports emotion takes it. `null` clears it. */
  emotion?: pulumi.Input<string | null>;
  /** A voice from another provider, used if the first stops responding; `null` removes it. */
  fallback?: pulumi.Input<{ provider: pulumi.Input<string>; voiceId: pulumi.Input<string> } | null>;
}

/** Turn-taking behaviour. */
export interface ConversationArgs {
  /** 0 to 1; the service reads back 0.5 on a new agent. */
  interruptionSensitivity?: pulumi.Input<number>;
  /** Exactly one of 1 (Fast), 0.75 (Responsive), 0.5 (Balanced, default), 0 (Patient). */
  responseEagerness?: pulumi.Input<1 | 0.75 | 0.5 | 0>;
  /** Background noise handling; new agents read back mode `standard`, level 50. */
  noiseHandling?: pulumi.Input<{ mode?: pulumi.Input<string>; level?: pulumi.Input<number> }>;
  /** Reminder after silence; new agents read back enabled, 15 seconds. */
  silenceReminder?: pulumi.Input<{
    enabled?: pulumi.Input<boolean>;
    seconds?: pulumi.Input<number>;
    message?: pulumi.Input<MessageArgs>;
  }>;
}

/** Call limits and recording. */
export interface CallArgs {
  /** Longest call in minutes. */
  maxDurationMinutes?: pulumi.Input<number>;
  /** Hang up after this many seconds of silence (new agents: 25). */
  endOnSilenceSeconds?: pulumi.Input<number>;
  /** Record calls (new agents: true). */
  recordingEnabled?: pulumi.Input<boolean>;
  /** Run custom analysis after calls (new agents: true). */
  customAnalysisEnabled?: pulumi.Input<boolean>;
  /** The "call limit" line. */
  maxDurationMessage?: pulumi.Input<MessageArgs>;
  /** The "silence timeout" line. */
  endOnSilenceMessage?: pulumi.Input<MessageArgs>;
}

/** Lines for inbound calls that cannot be handled normally. */
export interface InboundArgs {
  /** The "business hours closed" line. */
  businessHoursClosedMessage?: pulumi.Input<MessageArgs>;
  /** The "inbound fallback" line. */
  fallbackMessage?: pulumi.Input<MessageArgs>;
}

/** A human to transfer calls to. */
export interface TransferNumberArgs {
  /** E.164 number, e.g. `+919800000001`. */
  number: pulumi.Input<string>;
  /** Lower numbers are tried first. */
  priority?: pulumi.Input<number>;
  /** Start of the hour window (0 to 24); with `endHour`, must form a non-empty window. */
  startHour?: pulumi.Input<number>;
  /** End of the hour window (0 to 24). */
  endHour?: pulumi.Input<number>;
  /** IANA zone name of the window, e.g. `Asia/Kolkata`. */
  timezone?: pulumi.Input<string>;
  /** Concurrent transferred calls this number takes. */
  maxConcurrentCalls?: pulumi.Input<number>;
}

/** Platform tools. Each must also be armed by naming it in the prompt as `<tool_name>`. */
export interface BuiltinToolsArgs {
  /** Ending the call, with the goodbye line. */
  endCall?: pulumi.Input<{ enabled?: pulumi.Input<boolean>; message?: pulumi.Input<MessageArgs> }>;
  /** Putting the caller on hold; `followUpSeconds` must be lower than `maxSeconds`. */
  holdCall?: pulumi.Input<{
    enabled?: pulumi.Input<boolean>;
    maxSeconds?: pulumi.Input<number>;
    followUpSeconds?: pulumi.Input<number>;
    acknowledgementMessage?: pulumi.Input<MessageArgs>;
    followUpMessage?: pulumi.Input<MessageArgs>;
    timeoutMessage?: pulumi.Input<MessageArgs>;
  }>;
  /** Transferring to a human; `numbers` replaces the whole list. */
  transferCall?: pulumi.Input<{
    enabled?: pulumi.Input<boolean>;
    numbers?: pulumi.Input<pulumi.Input<TransferNumberArgs>[]>;
    busyMessage?: pulumi.Input<MessageArgs>;
    introMessage?: pulumi.Input<MessageArgs>;
  }>;
  /** Sending approved WhatsApp templates (names from `getWhatsAppTemplates`). */
  sendWhatsappTemplate?: pulumi.Input<{
    enabled?: pulumi.Input<boolean>;
    allowedTemplates?: pulumi.Input<pulumi.Input<string>[]>;
    phoneNumberId?: pulumi.Input<string | null>;
  }>;
}

/** A custom prompt variable, referenced in prompts as `{{custom.<key>}}`. */
export interface VariableArgs {
  /** The variable's key, kept exactly as written. The system variables `callee_name` and `callee_number` always exist. */
  key: pulumi.Input<string>;
  /** Value used when a call does not set it. */
  defaultValue?: pulumi.Input<string | null>;
}

/** What the agent remembers about callers. */
export interface MemoryArgs {
  /** Turn memory on. */
  enabled?: pulumi.Input<boolean>;
  /** Channels recorded, e.g. `outbound`, `whatsapp` (widget conversations never are). */
  channels?: pulumi.Input<pulumi.Input<string>[]>;
  /** Let the AI record extra labelled facts. */
  allowAiLabels?: pulumi.Input<boolean>;
  /** Free text guiding which extra facts are recorded. */
  labelInstructions?: pulumi.Input<string | null>;
  /** Most facts kept per caller. */
  maxFacts?: pulumi.Input<number>;
  /** Transcript turns kept. */
  transcriptTurns?: pulumi.Input<number>;
  /** Declared fields; keys must be unique; `enumValues` only on `type: "string"`. Compared by key, in any order. */
  fields?: pulumi.Input<
    pulumi.Input<{
      key: pulumi.Input<string>;
      label?: pulumi.Input<string | null>;
      type?: pulumi.Input<string>;
      enumValues?: pulumi.Input<pulumi.Input<string>[] | null>;
      description?: pulumi.Input<string | null>;
      category?: pulumi.Input<string | null>;
    }>[]
  >;
}

/** The agent's configuration. Every field but `name` is optional: what is not set is not managed. */
export interface AgentArgs {
  /** Display name, 1 to 255 characters; never spoken to a caller. */
  name: pulumi.Input<string>;
  /** The prompt, 1 to 65536 characters, structured by `## Agent Purpose`, `## Response Style`, `## Call Flow`. Tools it names as `<tool>` must exist. */
  systemPrompt?: pulumi.Input<string>;
  /** What the agent says first; `null` removes it. */
  greeting?: pulumi.Input<{ message: pulumi.Input<string> } | null>;
  /** Languages. */
  language?: pulumi.Input<LanguageArgs>;
  /** Speech-to-text engine. */
  transcriber?: pulumi.Input<TranscriberArgs>;
  /** Language model. */
  model?: pulumi.Input<ModelArgs>;
  /** Text-to-speech voice, checked against the catalogue for the agent's languages. */
  voice?: pulumi.Input<VoiceArgs>;
  /** Turn-taking behaviour. */
  conversation?: pulumi.Input<ConversationArgs>;
  /** Call limits and recording. */
  call?: pulumi.Input<CallArgs>;
  /** Inbound call lines. */
  inbound?: pulumi.Input<InboundArgs>;
  /** Platform tools. */
  builtinTools?: pulumi.Input<BuiltinToolsArgs>;
  /** Custom variables (the whole set; system variables are kept as the service holds them). */
  variables?: pulumi.Input<pulumi.Input<VariableArgs>[]>;
  /** Knowledge bases attached (the whole set, in any order). */
  knowledgeBaseIds?: pulumi.Input<pulumi.Input<string>[]>;
  /** Custom-analysis groups run after each call (the whole set; new agents have the Default Analysis group). */
  analysisGroupIds?: pulumi.Input<pulumi.Input<string>[]>;
  /** Caller memory. */
  memory?: pulumi.Input<MemoryArgs>;
  /** Numbers the agent answers on; each must be held by the workspace. */
  numbers?: pulumi.Input<{
    inboundPhone?: pulumi.Input<string | null>;
    inboundWhatsapp?: pulumi.Input<string | null>;
  }>;
  /**
   * Id of an existing agent to take over instead of creating one, from a TypeScript program (its
   * resources are dynamic: `pulumi import` cannot adopt them; with the provider plugin, from YAML,
   * Go or Python, `pulumi import voice-agent:index:Agent NAME ID` does). Its working draft is
   * overwritten with this configuration on create.
   * Changing it later has no effect.
   */
  adoptId?: pulumi.Input<string>;
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
        // updates the agent's configDigest in the same deployment (attachmentNames.ts). Registered
        // only when there are some: a registered property costs the program memory even undefined.
        ...attached(attachedNames(args.knowledgeBaseIds, args.analysisGroupIds)),
        // Every registered property costs the program a promise and a stack trace
        // (docs/performance.md): `agentId` is not one, it is the id (below).
        ...Object.fromEntries(AGENT_OUTPUTS.filter((k) => k !== "agentId").map((k) => [k, undefined])),
        // The checked configuration hash, which an AgentVersion reads (known in a preview of this
        // agent's change, unlike `contentHash`); a `__` name, never displayed in a diff.
        __contentHash: undefined,
      },
      opts,
    );
    // The agent id is the resource id. Unlike an output, the id of an existing resource stays
    // known during a preview, so resources built on `agentId` (versions, widgets) are not shown
    // as replaced when only the agent's configuration changes.
    (this as { agentId: pulumi.Output<string> }).agentId = this.id;
  }
}

/** `{ attachedNames }` when the agent attaches some of the program's knowledge bases or groups, else nothing. */
function attached(names: pulumi.Output<string[]> | undefined): { attachedNames?: pulumi.Output<string[]> } {
  return names === undefined ? {} : { attachedNames: names };
}
