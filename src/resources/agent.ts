/**
 * Agent: the working configuration of a voice agent, kept equal to what the program declares.
 *
 * - `check` validates every documented rule at preview (the catalogue rules against the service
 *   when it is reachable) and computes `contentHash`, the hash of the normalized configuration, so
 *   an {@link AgentVersion} knows at preview that a new version is coming.
 * - `diff` compares the declared configuration with what the service read back, projected onto the
 *   fields the program sets: server defaults, derived providers, system variables and ordering never
 *   cause a change.
 * - `create` creates the agent (V0 draft), or with `adoptId` takes over an existing one.
 * - `update` sends one merge-patch of the changed fields (removed fields as `null`) guarded by
 *   `If-Match` with the revision in state: an edit made elsewhere is never overwritten.
 * - `read` (refresh) brings the service's values of the managed fields back into state and inputs,
 *   so the next preview shows the drift.
 * - `delete` takes the agent off air (the service has no delete) and leaves it in the dashboard.
 */
import * as pulumi from "@pulumi/pulumi";
import type { ApiError, VoiceAgentClient } from "../client";
import { client, warmUp } from "../provider/context";
import { unlessGone } from "../provider/gone";
import type { ResourceHandler } from "../provider/handlers";
import { specModule } from "../provider/lazy";
import {
  changedKeys,
  containsUnknown,
  contentHash,
  deepEqual,
  dropUndefined,
  e164,
  fromWire,
  isPlainObject,
  mergePatch,
  project,
  toWire,
} from "../provider/normalize";
import { withProvider } from "../provider/providerResource";
import { dynamicProvider } from "../provider/shim";
import { validateAgentInputs } from "../provider/validate";

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

/** The configuration fields of the agent body, in input spelling. */
export const MANAGED_FIELDS = [
  "name",
  "systemPrompt",
  "greeting",
  "language",
  "transcriber",
  "model",
  "voice",
  "conversation",
  "call",
  "inbound",
  "builtinTools",
  "variables",
  "knowledgeBaseIds",
  "analysisGroupIds",
  "memory",
  "numbers",
] as const;

/**
 * A voice agent. Its configuration is the working draft in the service; pair it with an
 * {@link AgentVersion} to publish that draft and put it live.
 */
export class Agent extends pulumi.dynamic.Resource {
  /** The agent's id in the service, stable across versions. */
  declare readonly agentId: pulumi.Output<string>;
  /** The version number holding the working configuration (the open draft, or the version it would branch from). */
  declare readonly draftVersion: pulumi.Output<number>;
  /** Edit counter of that version; sent as `If-Match` so edits made elsewhere are never overwritten. */
  declare readonly documentRevision: pulumi.Output<number>;
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
  declare readonly name: pulumi.Output<string>;
  declare readonly systemPrompt: pulumi.Output<string | undefined>;

  constructor(name: string, args: AgentArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      dynamicProvider("agent"),
      name,
      {
        ...args,
        agentId: undefined,
        draftVersion: undefined,
        documentRevision: undefined,
        liveVersion: undefined,
        latestVersion: undefined,
        dashboardUrl: undefined,
        contentHash: undefined,
        knownVersions: undefined,
      },
      withProvider(opts),
      "voice-agent",
      "Agent",
    );
    // The agent id is the resource id. Unlike an output, the id of an existing resource stays
    // known during a preview, so resources built on `agentId` (versions, widgets) are not shown
    // as replaced when only the agent's configuration changes.
    (this as { agentId: pulumi.Output<string> }).agentId = this.id;
  }
}

// ---------------------------------------------------------------------------------------------
// Provider side: runs in the dynamic-provider process.

type Config = Record<string, unknown>;
type AgentDetail = Record<string, any>;

/** The managed configuration in `inputs`, normalized for comparison and hashing. */
export function declaredConfig(inputs: Record<string, unknown>): Config {
  const out: Config = {};
  for (const key of MANAGED_FIELDS) {
    if (inputs[key] !== undefined) out[key] = inputs[key];
  }
  return normalizeConfig(out);
}

/** One spelling for values the service treats as equal: sets sorted, numbers in E.164, empty greeting as null. */
function normalizeConfig(config: Config): Config {
  const c: Record<string, any> = structuredClone(config);
  const settled = (v: unknown) => v !== undefined && !containsUnknown(v);
  if (isPlainObject(c.greeting) && c.greeting.message === undefined) c.greeting = null;
  for (const key of ["knowledgeBaseIds", "analysisGroupIds"]) {
    if (Array.isArray(c[key]) && settled(c[key])) c[key] = [...new Set(c[key] as string[])].sort();
  }
  if (Array.isArray(c.variables) && settled(c.variables)) {
    c.variables = c.variables
      .map((v: any) => ({ key: v.key, defaultValue: v.defaultValue ?? null }))
      .sort((a: any, b: any) => String(a.key).localeCompare(String(b.key)));
  }
  if (Array.isArray(c.memory?.fields) && settled(c.memory.fields)) {
    c.memory.fields = [...c.memory.fields].sort((a: any, b: any) =>
      String(a.key).localeCompare(String(b.key)),
    );
  }
  if (isPlainObject(c.numbers)) {
    for (const [k, v] of Object.entries(c.numbers)) {
      if (typeof v === "string" && settled(v)) c.numbers[k] = e164(v);
    }
  }
  const transfer = c.builtinTools?.transferCall;
  if (Array.isArray(transfer?.numbers) && settled(transfer.numbers)) {
    transfer.numbers = transfer.numbers.map((n: any) => ({ ...n, number: e164(String(n.number)) }));
  }
  return c;
}

/** What the service holds, in input spelling, restricted to the fields `declared` sets. */
export function observedConfig(detail: AgentDetail, declared: Config): Config {
  const camel = fromWire(detail) as Record<string, any>;
  if (Array.isArray(camel.variables)) {
    const declaredKeys = new Set(((declared.variables as any[]) ?? []).map((v) => v.key));
    camel.variables = camel.variables.filter((v: any) => !v.systemDefined || declaredKeys.has(v.key));
  }
  const normalized = normalizeConfig(
    Object.fromEntries(MANAGED_FIELDS.filter((k) => camel[k] !== undefined).map((k) => [k, camel[k]])),
  );
  return project(normalized, declared) as Config;
}

/** The wire body for `config`, with the system variables the service holds sent back exactly as read. */
function wireBody(config: Config, current?: AgentDetail): Record<string, any> {
  const body = toWire(config) as Record<string, any>;
  if (Array.isArray(body.variables)) {
    const system = ((current?.variables as any[]) ?? specModule.defaultAgentConfig().variables).filter(
      (v) => v.system_defined,
    );
    const byKey = new Map(system.map((v) => [v.key, v]));
    const custom = body.variables.filter((v: any) => !byKey.has(v.key));
    for (const v of body.variables) {
      const sys = byKey.get(v.key);
      if (sys) byKey.set(v.key, { ...sys, default_value: v.default_value ?? sys.default_value });
    }
    body.variables = [...custom, ...byKey.values()];
  }
  return body;
}

/** The outputs recorded in state for an agent read back as `detail`. */
function outputs(
  inputs: Record<string, unknown>,
  detail: AgentDetail,
  knownVersions: Record<string, number>,
): Record<string, unknown> {
  const observed = observedConfig(detail, declaredConfig(inputs));
  return dropUndefined({
    ...inputs,
    knownVersions,
    ...observed,
    agentId: detail.id,
    draftVersion: detail.version,
    documentRevision: detail.document_revision,
    liveVersion: detail.live_version ?? null,
    latestVersion: detail.latest_version,
    dashboardUrl: detail.dashboard_url ?? null,
    // The hash of what the service holds: after a refresh that found a change made elsewhere (or
    // by an interrupted up), the AgentVersion sees a new hash and publishes it on the next up.
    contentHash: contentHash(observed),
  });
}

/**
 * `known` with the version the stack last wrote, when `written` shows it was published since: a
 * patch lands on a new version number only when the one before was frozen. Its configuration is
 * the one `contentHash` describes (the AgentVersion publishes it under `If-Match`, and a refresh
 * updates the hash); the AgentVersion still compares the whole configuration before reusing it.
 */
function remember(
  known: Record<string, number> | undefined,
  last: { contentHash?: unknown; draftVersion?: unknown },
  written: AgentDetail,
): Record<string, number> {
  const next = { ...(known ?? {}) };
  if (typeof last.contentHash === "string" && typeof last.draftVersion === "number") {
    if (written.version !== last.draftVersion) next[last.contentHash] = last.draftVersion;
  }
  const newest = Object.entries(next).sort(([, a], [, b]) => b - a);
  return Object.fromEntries(newest.slice(0, 100));
}

/**
 * The version a configuration patch applies to: the open draft, else the live version (a patch
 * branches a draft from it), else the latest. One read in the usual case, two after a rollback.
 */
async function workingVersion(client: VoiceAgentClient, agentId: string): Promise<AgentDetail> {
  const latest = await client.getAgent(agentId);
  if (!latest.is_published || latest.live_version === null || latest.live_version === latest.version) {
    return latest;
  }
  return client.getAgent(agentId, { version: "live" });
}

/** Turns the service's refusals into messages that say what happened and what to do next. */
function explain(err: unknown, name: string, agentId: string, expectedRevision?: number): never {
  const e = err as ApiError;
  if (e?.code === "revision_conflict") {
    throw new Error(
      `Agent "${name}" (${agentId}) was changed outside Pulumi: its working draft is at revision ` +
        `${e.currentRevision ?? "?"}, but this stack last saw revision ${expectedRevision ?? "?"}. Nothing was written. ` +
        "Run `pulumi refresh` to bring the change into the stack (the next preview shows it as drift), " +
        `then \`pulumi up\` again. (request ${e.requestId ?? "unknown"})`,
    );
  }
  if (e?.code === "draft_ambiguous") {
    throw new Error(
      `Agent "${name}" (${agentId}) has several open drafts (versions ${(e.candidates ?? []).join(", ")}), ` +
        "so Pulumi cannot tell which one to write. Publish or discard the extra drafts in the dashboard, " +
        `then run \`pulumi refresh\` and \`pulumi up\`. (request ${e.requestId ?? "unknown"})`,
    );
  }
  throw err;
}

export const agentHandler: ResourceHandler = {
  async check(olds, news) {
    // The catalogue rules (voices, models, holdings) read the service: they run when the
    // configuration is new or changed, so a no-op preview or `up` makes no request at all.
    const changed = !deepEqual(declaredConfig(olds), declaredConfig(news));
    if (changed) warmUp();
    const failures = await validateAgentInputs(
      declaredConfig(news),
      changed ? () => client() : undefined,
      (known) => wireBody(known),
    );
    if (failures.length > 0 || containsUnknown(declaredConfig(news))) return { inputs: news, failures };
    return { inputs: { ...news, contentHash: contentHash(declaredConfig(news)) } };
  },

  async diff(_id, olds, news) {
    const declared = declaredConfig(news);
    const observed: Config = {};
    for (const key of Object.keys(declared)) observed[key] = olds[key] ?? null;
    const changes =
      changedKeys(observed, declared).length > 0 ||
      Object.keys(declaredConfig(olds)).some((k) => !(k in declared));
    return { changes };
  },

  async create(inputs) {
    const c = await client();
    const declared = declaredConfig(inputs);
    if (inputs.adoptId) {
      const current = await workingVersion(c, inputs.adoptId);
      const observed = observedConfig(current, declared);
      const patch = mergePatch(observed, declared);
      if (Object.keys(patch).length === 0) return { id: current.id, outs: outputs(inputs, current, {}) };
      const written = await c
        .patchAgent(current.id, wireBody(patch, current), { ifMatch: current.document_revision })
        .catch((err) => explain(err, String(inputs.name), current.id, current.document_revision));
      const last = { contentHash: contentHash(observed), draftVersion: current.version };
      return { id: written.id, outs: outputs(inputs, written, remember({}, last, written)) };
    }
    // V0's notes keep the create marker (a version's notes belong to the AgentVersion that
    // publishes it): one request per agent instead of two.
    const created = await c.createAgent(wireBody(declared) as any, { keepMarker: true });
    return { id: created.id, outs: outputs(inputs, created, {}) };
  },

  async read(id, props) {
    const c = await client();
    const detail = await unlessGone(workingVersion(c, id));
    // Gone from the service (another workspace or key): the resource leaves the state.
    if (!detail) return {};
    const outs = outputs(props, detail, props.knownVersions ?? {});
    const inputs: Record<string, unknown> = {};
    for (const key of [...MANAGED_FIELDS, "adoptId"] as string[]) {
      if (props[key] !== undefined) inputs[key] = outs[key];
    }
    return { id, props: outs, inputs };
  },

  async update(id, olds, news) {
    const c = await client();
    const declared = declaredConfig(news);
    const observed: Config = {};
    for (const key of new Set([...Object.keys(declared), ...Object.keys(declaredConfig(olds))])) {
      observed[key] = olds[key] ?? null;
    }
    const patch = mergePatch(observed, declared);
    const write = (current: AgentDetail | undefined, revision: number) =>
      c.patchAgent(id, wireBody(patch, current), { ifMatch: revision });
    const current = Array.isArray(patch.variables) ? await workingVersion(c, id) : undefined;
    try {
      const written = await write(current, olds.documentRevision);
      return { outs: outputs(news, written, remember(olds.knownVersions, olds, written)) };
    } catch (err) {
      if ((err as ApiError)?.code !== "revision_conflict") return explain(err, String(news.name), id);
      // The version moved on since the stack last saw it. When no field this stack manages changed
      // (a label or notes edit, or a field the program does not set), the patch overwrites nothing
      // of anyone's: write it at the current revision. Otherwise it is a conflict, and nothing is written.
      const lastSeen = declaredConfig(olds);
      const now = await workingVersion(c, id);
      if (!deepEqual(observedConfig(now, lastSeen), lastSeen)) {
        return explain(err, String(news.name), id, olds.documentRevision);
      }
      const written = await write(now, now.document_revision).catch((again) =>
        explain(again, String(news.name), id, now.document_revision),
      );
      return { outs: outputs(news, written, remember(olds.knownVersions, olds, written)) };
    }
  },

  async delete(id, props) {
    const c = await client();
    const detail = await unlessGone(c.getAgent(id));
    if (detail && detail.live_version !== null) await c.activate(id, null);
    // An open draft that still attaches this stack's knowledge bases or analysis groups would keep
    // them "in use" and block their deletion later in the same destroy: detach them from the draft.
    if (detail && !detail.is_published) {
      const detach: Record<string, string[]> = {};
      for (const [input, field] of [
        ["knowledgeBaseIds", "knowledge_base_ids"],
        ["analysisGroupIds", "analysis_group_ids"],
      ] as const) {
        const ours = new Set<string>(props[input] ?? []);
        const kept = (detail[field] as string[]).filter((x) => !ours.has(x));
        if (ours.size > 0 && kept.length !== detail[field].length) detach[field] = kept;
      }
      if (Object.keys(detach).length > 0) {
        await c.patchAgent(id, detach, { ifMatch: detail.document_revision }).catch(() => undefined);
      }
    }
    // The service has no delete: the agent stays in the dashboard, off air.
    console.error(
      `pulumi-voice-agent: agent "${props.name}" (${id}) is now off air and remains in the dashboard (the service has no delete).`,
    );
  },
};
