/**
 * Promotion with proof: an AgentVersion with `promote` publishes only what is live on a staging
 * agent (`promote.from`), compared independently of the environment (`../agent/projection.ts`),
 * and only once that version has proven itself there: live long enough (`soakMinutes`, from the
 * deploy history), on enough finished calls (`minCalls`, calls of the listed origins answered by
 * that version since it went live), with analysis shares within their bounds (`rates`).
 *
 * `check` (preview) reads staging and refuses a difference with what to do next; a shortfall of the
 * proof passes (proof accumulates between a pull request and the production deploy), recorded in
 * the checked inputs (`promoteProof`), which the program warns of at preview (`index.ts`) and the
 * pull-request report shows. `create` reads staging again and refuses a difference or a shortfall
 * before anything is published or put live.
 */
import type { ActivationRowT, AgentDetailT, VoiceAgentClient } from "../../client";
import { AuthError, NotFoundError } from "../../client/errors";
import { clientModule } from "../../provider/context";
import { ExpectedFailure } from "../../provider/failures";
import { observe } from "../../provider/managed";
import { isPlainObject, type Json, type JsonObject } from "../../provider/normalize";
import type { ProviderContext } from "../../provider/resource";
import { containsUnknown, UNKNOWN } from "../../provider/unknowns";
import { CALL_ORIGINS, isFinishedCallStatus } from "../../spec/calls";
import { namesOf } from "../agent/names";
import {
  AGENT_FIELDS,
  type AttachmentNames,
  attachedIds,
  configDigest,
  type Difference,
  declaredConfig,
  describeValue,
  differences,
  fullConfig,
  newAgentBase,
  overlay,
  parsePath,
  portableConfig,
  withoutPaths,
} from "../agent/projection";
import { workingVersion } from "../agent/provider";
import type { Promotion } from "./promoteArgs";
import { type Proof, proofLines } from "./proof";

export type { Proof };

/** A bound on the share of counted calls whose analysis holds a value. */
interface Rate {
  /** `<group>/<analysis>`, e.g. `Default Analysis/User Sentiment` (split at the first `/`). */
  analysis: string;
  value: string | number | boolean;
  /** The largest share allowed, 0 to 1. */
  atMost: number;
}

/** `promote` as the provider reads it (checked by {@link promoteFailures}). */
interface Promote {
  from: string;
  soakMinutes?: number;
  minCalls?: number;
  rates?: Rate[];
  origins?: string[];
  ignore?: string[];
  apiKey?: string;
  baseUrl?: string;
}

/** Origins counted when `promote.origins` is not set: every documented one but `api` (tests). */
const DEFAULT_ORIGINS: readonly string[] = CALL_ORIGINS.filter((o) => o !== "api");

const KEYS = ["from", "soakMinutes", "minCalls", "rates", "origins", "ignore", "apiKey", "baseUrl"];
const RATE_KEYS = ["analysis", "value", "atMost"];

const known = (v: unknown) => v !== undefined && !containsUnknown(v as Json);

/**
 * Why `promote` (the input as the program gives it; values unknown at preview are left alone) is
 * not valid: one message per field, naming it. Empty when valid.
 */
export function promoteFailures(promote: unknown, pinned: boolean): string[] {
  if (promote === undefined) return [];
  if (promote === UNKNOWN) return [];
  if (!isPlainObject(promote))
    return ["promote: must be an object { from, soakMinutes?, minCalls?, rates?, ... }"];
  const out: string[] = [];
  for (const k of Object.keys(promote))
    if (!KEYS.includes(k) && promote[k] !== undefined)
      out.push(`promote.${k}: not a field of promote (one of ${KEYS.join(", ")})`);
  if (pinned)
    out.push(
      "promote: a pinned version (`version`) publishes nothing, so there is nothing to promote: remove `promote`, or `version` to publish the agent's configuration",
    );
  const { from, soakMinutes, minCalls, rates, origins, ignore, apiKey, baseUrl } = promote;
  if (from === undefined)
    out.push("promote.from: required (the staging agent's id, e.g. a StackReference output)");
  else if (known(from) && (typeof from !== "string" || from.trim() === ""))
    out.push("promote.from: must be an agent id (a non-empty string)");
  if (known(soakMinutes) && (typeof soakMinutes !== "number" || !(soakMinutes >= 0)))
    out.push("promote.soakMinutes: must be a number of minutes >= 0 (fractions allowed)");
  if (known(minCalls) && (typeof minCalls !== "number" || !Number.isInteger(minCalls) || minCalls < 0))
    out.push("promote.minCalls: must be an integer >= 0");
  if (known(rates)) {
    if (!Array.isArray(rates)) out.push("promote.rates: must be a list of { analysis, value, atMost }");
    else
      rates.forEach((r, i) => {
        const at = `promote.rates[${i}]`;
        if (r === UNKNOWN) return;
        if (!isPlainObject(r)) {
          out.push(`${at}: must be { analysis, value, atMost }`);
          return;
        }
        for (const k of Object.keys(r))
          if (!RATE_KEYS.includes(k) && r[k] !== undefined)
            out.push(`${at}.${k}: not a field of a rate (one of ${RATE_KEYS.join(", ")})`);
        if (known(r.analysis) && (typeof r.analysis !== "string" || !/^[^/]+\/.+$/.test(r.analysis)))
          out.push(`${at}.analysis: must be "<group>/<analysis>", e.g. "Default Analysis/User Sentiment"`);
        if (r.analysis === undefined) out.push(`${at}.analysis: required`);
        if (r.value === undefined) out.push(`${at}.value: required`);
        else if (known(r.value) && !["string", "number", "boolean"].includes(typeof r.value))
          out.push(`${at}.value: must be a string, a number or a boolean`);
        if (r.atMost === undefined) out.push(`${at}.atMost: required`);
        else if (known(r.atMost) && (typeof r.atMost !== "number" || !(r.atMost >= 0 && r.atMost <= 1)))
          out.push(`${at}.atMost: must be a share from 0 to 1 (0.1 is 10%)`);
      });
  }
  if (known(origins)) {
    if (!Array.isArray(origins) || origins.length === 0)
      out.push(
        `promote.origins: must be a non-empty list of call origins (e.g. ${DEFAULT_ORIGINS.join(", ")})`,
      );
    else
      origins.forEach((o, i) => {
        if (known(o) && (typeof o !== "string" || !/^[a-z_]+$/.test(o)))
          out.push(`promote.origins[${i}]: must be a call origin (e.g. ${DEFAULT_ORIGINS.join(", ")})`);
      });
  }
  if (known(ignore)) {
    if (!Array.isArray(ignore)) out.push("promote.ignore: must be a list of paths (e.g. name, voice.speed)");
    else
      ignore.forEach((p, i) => {
        if (known(p) && (typeof p !== "string" || !parsePath(p)))
          out.push(
            `promote.ignore[${i}]: ${JSON.stringify(p)} is not a path of the agent's configuration in the program's ` +
              `spelling (e.g. name, voice.speed, variables[callee_region].defaultValue; it starts with one of ${AGENT_FIELDS.managed.join(", ")})`,
          );
      });
  }
  if (apiKey !== undefined && known(apiKey) && (typeof apiKey !== "string" || apiKey.trim() === ""))
    out.push("promote.apiKey: must be a non-empty string (staging's workspace API key, a secret)");
  if (known(baseUrl)) {
    if (typeof baseUrl !== "string") out.push("promote.baseUrl: must be a URL");
    else if (apiKey === undefined)
      out.push("promote.baseUrl: needs promote.apiKey too (staging's key for that service)");
  }
  return out;
}

/** The client of staging's workspace: from `apiKey`/`baseUrl`, else this stack's. */
async function stagingClient(ctx: ProviderContext, promote: Promote): Promise<VoiceAgentClient> {
  const own = await ctx.client();
  if (promote.apiKey === undefined) return own;
  const { VoiceAgentClient: Client } = await clientModule();
  try {
    return new Client({ baseUrl: promote.baseUrl ?? own.baseUrl, apiKey: promote.apiKey });
  } catch (err) {
    // The configuration error names voice-agent:* keys and never the key's value.
    throw new ExpectedFailure(`promote.baseUrl / promote.apiKey: ${(err as Error).message}`, { cause: err });
  }
}

/** What staging holds: its live version, and since when it is live. */
interface Staging {
  live: AgentDetailT;
  liveSince: string | undefined;
  /** Its configuration (program spelling, ids of staging's workspace). */
  config: JsonObject;
}

/** A refusal the user acts on from its message. */
class PromotionRefused extends ExpectedFailure {
  constructor(message: string) {
    super(message);
    this.name = "PromotionRefused";
  }
}

/** The deploy-history row that put `version` live most recently (newest first). */
async function wentLive(c: VoiceAgentClient, agentId: string, version: number): Promise<string | undefined> {
  let rows = 0;
  for await (const row of c.versions.activations(agentId) as AsyncIterable<ActivationRowT>) {
    if (row.version === version && row.action !== "deactivate") return row.at;
    if (++rows >= 500) break;
  }
  return undefined;
}

/** Reads staging's live version, when it went live, and its environment-independent configuration. */
async function readStaging(c: VoiceAgentClient, promote: Promote): Promise<Staging> {
  let live: AgentDetailT;
  try {
    live = await c.agents.get(promote.from, { version: "live" });
  } catch (err) {
    if (err instanceof NotFoundError && err.code === "version_not_found")
      throw new PromotionRefused(
        `promote: staging agent ${promote.from} has no live version, so nothing has proven itself there. ` +
          "Deploy staging first (`pulumi up` on the staging stack puts a version live), let it take calls, then promote.",
      );
    if (err instanceof AuthError)
      throw new PromotionRefused(
        `promote: staging's service (${c.baseUrl}) refused the key${promote.apiKey === undefined ? " of this stack" : " in promote.apiKey"} ` +
          `(HTTP ${err.status}). Give staging's workspace key in promote.apiKey (a secret), and its URL in promote.baseUrl when it is another service.`,
      );
    if (err instanceof NotFoundError)
      throw new PromotionRefused(
        `promote.from: staging's workspace (${c.baseUrl}) has no agent ${promote.from}. ` +
          "Check promote.from (the staging stack's agent id), and promote.apiKey / promote.baseUrl when staging is another workspace.",
      );
    throw err;
  }
  const liveSince = await wentLive(c, promote.from, live.version);
  return { live, liveSince, config: fullConfig(live) };
}

/** Counts the calls and the analysis values of staging's live version since it went live. */
async function measure(
  c: VoiceAgentClient,
  promote: Promote,
  staging: Staging,
  digest: string,
): Promise<Proof> {
  const origins = promote.origins ?? [...DEFAULT_ORIGINS];
  const since = staging.liveSince ? Date.parse(staging.liveSince) : undefined;
  const rates = (promote.rates ?? []).map((r) => ({ ...r, matching: 0, share: null as number | null }));
  let calls = 0;
  // Calls are listed only when the proof counts them.
  if (since !== undefined && ((promote.minCalls ?? 0) > 0 || rates.length > 0)) {
    for await (const call of c.calls.list({ origin: origins })) {
      if (Date.parse(call.created_at) < since) break; // newest first: the rest is older
      if (call.agent_id !== promote.from || call.agent_version !== staging.live.version) continue;
      if (!isFinishedCallStatus(call.status)) continue;
      calls++;
      for (const r of rates) {
        const cut = r.analysis.indexOf("/");
        const group = call.custom_analysis?.[r.analysis.slice(0, cut)];
        const value = isPlainObject(group) ? group[r.analysis.slice(cut + 1)] : undefined;
        if (value === r.value) r.matching++;
      }
    }
  }
  for (const r of rates) r.share = calls > 0 ? r.matching / calls : null;
  return {
    fromAgentId: promote.from,
    fromVersion: staging.live.version,
    liveSince: staging.liveSince ?? null,
    minutesLive: since === undefined ? null : (Date.now() - since) / 60_000,
    calls,
    rates,
    origins,
    soakMinutes: promote.soakMinutes ?? 0,
    minCalls: promote.minCalls ?? 0,
    configDigest: digest,
  };
}

/** The message of a configuration that differs from staging's live one. */
function differenceMessage(p: Promote, staging: Staging, found: Difference[], atUp: boolean): string {
  const since = staging.liveSince ? `, live since ${staging.liveSince}` : "";
  const lines = found.map((d) => {
    const byName = d.path === "knowledgeBaseIds" || d.path === "analysisGroupIds" ? " (by name)" : "";
    return `  - ${d.path}${byName}: staging ${describeValue(d.left, d.right)}, production ${describeValue(d.right, d.left)}`;
  });
  return (
    `promote: production's configuration differs from staging's live version ${staging.live.version} of agent ${p.from}${since}, in ${found.length} field${found.length === 1 ? "" : "s"}:\n` +
    `${lines.join("\n")}\n` +
    `${atUp ? "Nothing was published or put live. " : ""}Next: make the program declare what staging runs (change staging first and let it prove ` +
    "itself there, then promote), or list a field that is meant to differ between environments in promote.ignore."
  );
}

/** The message of a proof that falls short. */
function shortfallMessage(p: Proof, lines: { met: string[]; missing: string[] }, atUp: boolean): string {
  return (
    `promote: staging's live version ${p.fromVersion} of agent ${p.fromAgentId} has not proven itself yet: ${lines.missing.join("; ")}.` +
    `${lines.met.length ? ` Met: ${lines.met.join("; ")}.` : ""} ` +
    `${atUp ? "Nothing was published or put live: what is live stays live (the agent's draft may hold the change; callers never hear a draft). " : ""}` +
    "Next: let staging take more traffic (and time), then run `pulumi up` again; " +
    "or lower promote.soakMinutes / minCalls / rates if the bar is wrong."
  );
}

/** The outcome of a promotion check. */
interface Evaluation {
  /** Why production is refused at preview and at `up` (a difference, no live version); empty when it is not. */
  refusals: string[];
  /** Why `up` refuses while preview passes: the proof falls short; unset when it holds. */
  shortfall?: string;
  /** What staging has shown, when it could be measured. */
  proof?: Proof;
}

/**
 * Compares production's configuration (`production`: program spelling, ids of production's
 * workspace; `complete`: every field, else only what it sets is compared) with staging's live one,
 * and measures the proof. `atUp`: the messages say nothing was published.
 */
async function evaluate(
  ctx: ProviderContext,
  promote: Promote,
  production: JsonObject,
  complete: boolean,
  atUp: boolean,
): Promise<Evaluation> {
  const own = await ctx.client();
  const c = await stagingClient(ctx, promote);
  let staging: Staging;
  try {
    staging = await readStaging(c, promote);
  } catch (err) {
    if (err instanceof PromotionRefused) return { refusals: [err.message] };
    throw err;
  }
  const ignore = promote.ignore ?? [];
  // Names of knowledge bases and analysis groups: one listing per kind when both are one workspace.
  const [stagingIds, prodIds] = [attachedIds(staging.config), attachedIds(production)];
  const [stagingNames, prodNames] =
    c === own
      ? await namesOf(own, {
          knowledgeBases: [...stagingIds.knowledgeBases, ...prodIds.knowledgeBases],
          analysisGroups: [...stagingIds.analysisGroups, ...prodIds.analysisGroups],
        }).then((names): [AttachmentNames, AttachmentNames] => [names, names])
      : await Promise.all([namesOf(c, stagingIds), namesOf(own, prodIds)]);
  const prod = withoutPaths(portableConfig(production, prodNames), ignore);
  const full = withoutPaths(portableConfig(staging.config, stagingNames), ignore);
  const compared = complete ? full : (observe(AGENT_FIELDS, full, prod) as JsonObject);
  const found = differences(compared, prod);
  const proof = await measure(c, promote, staging, configDigest(full));
  if (found.length > 0) return { refusals: [differenceMessage(promote, staging, found, atUp)], proof };
  const lines = proofLines(proof);
  if (lines.missing.length > 0)
    return { refusals: [], shortfall: shortfallMessage(proof, lines, atUp), proof };
  return { refusals: [], proof };
}

/**
 * At preview: production's configuration as the draft will hold it: the Agent's declared
 * configuration written over what its working version holds now (every field), or, for an agent
 * still to be created, over what the service documents of a new agent (no knowledge base, the two
 * system variables): then only those fields and the ones the program declares are compared at
 * preview, and every field at `up`.
 */
async function previewConfig(
  ctx: ProviderContext,
  agentId: unknown,
  agentConfig: Record<string, unknown>,
): Promise<{ config: JsonObject; complete: boolean }> {
  const declared = declaredConfig(agentConfig);
  if (typeof agentId !== "string" || agentId === UNKNOWN)
    return { config: overlay(newAgentBase(), declared), complete: false };
  const working = await workingVersion(await ctx.client(), agentId);
  return { config: overlay(fullConfig(working), declared), complete: true };
}

/** At `up`: the configuration of the draft about to be published. */
async function draftConfig(c: VoiceAgentClient, agentId: string, version: number): Promise<JsonObject> {
  return fullConfig(await c.agents.get(agentId, { version }));
}

/** The version's notes when the program gives none: where it came from. */
export function promotedNotes(p: Proof): string {
  return (
    `Promoted from agent ${p.fromAgentId} version ${p.fromVersion}` +
    `${p.liveSince ? ` (live since ${p.liveSince}` : " ("}${p.liveSince ? ", " : ""}${p.calls} call${p.calls === 1 ? "" : "s"})` +
    `; configuration ${p.configDigest}`
  );
}

/** The `promotion` output: what was promoted. */
export function promotionRecord(p: Proof): Promotion {
  return {
    fromAgentId: p.fromAgentId,
    fromVersion: p.fromVersion,
    liveSince: p.liveSince,
    calls: p.calls,
    rates: p.rates.map((r) => ({ analysis: r.analysis, value: r.value, share: r.share, atMost: r.atMost })),
    configDigest: p.configDigest,
  };
}

/** Whether this AgentVersion will publish the agent's draft in this deploy (a new one, or a changed configuration). */
function publishing(olds: Record<string, unknown>, news: Record<string, unknown>): boolean {
  if (news.pinnedVersion !== undefined) return false;
  return (
    olds.contentHash === undefined || olds.contentHash !== news.contentHash || olds.agentId !== news.agentId
  );
}

/**
 * The AgentVersion's `check` for `promote`: the input's own failures, then (when this deploy
 * publishes and `from` is known) the comparison with staging, a difference failing the preview.
 * A proof that falls short does not: `proof` (met or not) is what the preview's warning and the
 * pull-request report show, and `create` refuses while it falls short.
 */
export async function checkPromotion(
  ctx: ProviderContext,
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
): Promise<{ failures: string[]; proof?: Proof }> {
  const failures = promoteFailures(news.promote, news.pinnedVersion !== undefined);
  if (failures.length > 0 || news.promote === undefined || !publishing(olds, news)) return { failures };
  const promote = news.promote as Record<string, unknown>;
  // Known at preview usually (a StackReference output); an unknown is never reported missing.
  if (containsUnknown(promote as Json)) return { failures: [] };
  const config = isPlainObject(news.promoteConfig) ? news.promoteConfig : {};
  const { config: production, complete } = await previewConfig(ctx, news.agentId, config);
  const { refusals, proof } = await evaluate(ctx, promote as unknown as Promote, production, complete, false);
  return proof ? { failures: refusals, proof } : { failures: refusals };
}

/**
 * The AgentVersion's `create` for `promote`: staging read again and the draft about to be published
 * compared with it; refuses (nothing published, nothing put live) when it differs or the proof
 * falls short. Undefined when there is no `promote`.
 */
export async function enforcePromotion(
  ctx: ProviderContext,
  args: { promote?: unknown; agentId: string; draftVersion: number },
): Promise<Proof | undefined> {
  if (args.promote === undefined) return undefined;
  const production = await draftConfig(await ctx.client(), args.agentId, args.draftVersion);
  const { refusals, shortfall, proof } = await evaluate(ctx, args.promote as Promote, production, true, true);
  if (refusals.length > 0 || shortfall !== undefined || !proof)
    throw new PromotionRefused([...refusals, ...(shortfall !== undefined ? [shortfall] : [])].join("\n"));
  return proof;
}
