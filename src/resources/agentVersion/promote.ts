/**
 * Promotion with proof: an AgentVersion with `promote` publishes or puts live only what is live on
 * a staging agent (`promote.from`), compared independently of the environment
 * (`../agent/projection.ts`), and only once that version has proven itself there, as the evidence
 * module judges it (`src/evidence/`): live long enough (`soakMinutes`, from the deploy history), on
 * enough answered calls (`minCalls`, default 1: calls of the listed origins answered by that
 * version since it went live that became a conversation and were analysed), with analysis shares
 * within their bounds (`rates`, each over the calls carrying a value; a rate no call measures is
 * not met). Missing evidence is never a pass.
 *
 * `check` (preview) reads staging and refuses, by field, a difference and a rate naming an analysis
 * staging does not produce; a proof that falls short passes (proof accumulates between a pull
 * request and the production deploy), recorded in the checked inputs (`promoteProof`), which the
 * program warns of at preview (`index.ts`) and the pull-request report shows. A publish and a late
 * `live: true` are checked alike. At `up`, {@link enforcePromotion} reads staging again before
 * anything is published or put live, and once more right before the activation when test calls
 * ran in between (refusing if staging moved or the proof no longer holds).
 */
import type { ActivationRowT, AgentDetailT, VoiceAgentClient } from "../../client";
import { AuthError, NotFoundError } from "../../client/errors";
import { errorFinding, type Judgement, judgementOf, judgeSample, type Requirement } from "../../evidence";
import { CALLER_ORIGINS } from "../../evidence/calls";
import { tallyKey } from "../../evidence/requirements";
import { emptySample, sampleCalls } from "../../evidence/sample";
import { clientModule } from "../../provider/context";
import { ExpectedFailure } from "../../provider/failures";
import { editDistance, observe } from "../../provider/managed";
import { isPlainObject, type Json, type JsonObject } from "../../provider/normalize";
import type { ProviderContext } from "../../provider/resource";
import { containsUnknown, UNKNOWN } from "../../provider/unknowns";
import { DEFAULT_ANALYSIS_GROUP_NAME } from "../../spec/analysis";
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
import { type AnalysisShape, analysisLibrary, valueProblem } from "./values";
import { reinstates } from "./watch";

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
  confidence?: number;
  origins?: string[];
  ignore?: string[];
  apiKey?: string;
  baseUrl?: string;
}

/** `promote.minCalls` when the program does not set it: a promotion needs one answered call. */
const DEFAULT_MIN_CALLS = 1;

/** A check failure: the field it names, and why. */
export interface Refusal {
  property: string;
  reason: string;
}

/** Origins counted when `promote.origins` is not set: `widget`, `batch`, `inbound` (not the tests' `api`, `dashboard`, `demo`). */
const DEFAULT_ORIGINS = CALLER_ORIGINS;

const KEYS = [
  "from",
  "soakMinutes",
  "minCalls",
  "rates",
  "confidence",
  "origins",
  "ignore",
  "apiKey",
  "baseUrl",
];
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
  const { from, soakMinutes, minCalls, rates, confidence, origins, ignore, apiKey, baseUrl } = promote;
  if (from === undefined)
    out.push("promote.from: required (the staging agent's id, e.g. a StackReference output)");
  else if (known(from) && (typeof from !== "string" || from.trim() === ""))
    out.push("promote.from: must be an agent id (a non-empty string)");
  if (known(soakMinutes) && (typeof soakMinutes !== "number" || !(soakMinutes >= 0)))
    out.push("promote.soakMinutes: must be a number of minutes >= 0 (fractions allowed)");
  if (known(minCalls) && (typeof minCalls !== "number" || !Number.isInteger(minCalls) || minCalls < 0))
    out.push("promote.minCalls: must be an integer >= 0");
  if (known(confidence) && (typeof confidence !== "number" || !(confidence > 0.5 && confidence < 1)))
    out.push("promote.confidence: must be a number between 0.5 and 1 (e.g. 0.95), both excluded");
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

/**
 * The requirements of `promote` for the evidence module: soak, minCalls (default 1), rates, each
 * judged only over at least `minCalls` calls that carry its value (the observed share, or with
 * `confidence` the top of its Wilson interval).
 */
export function promoteRequirements(promote: Omit<Promote, "from">): Requirement[] {
  const minCalls = promote.minCalls ?? DEFAULT_MIN_CALLS;
  return [
    ...((promote.soakMinutes ?? 0) > 0 ? [{ soakMinutes: promote.soakMinutes ?? 0 }] : []),
    ...(minCalls > 0 ? [{ minCalls }] : []),
    ...(promote.rates ?? []).map((r) => ({
      analysis: r.analysis,
      value: r.value,
      atMost: r.atMost,
      ...(minCalls > 0 ? { minMeasured: minCalls } : {}),
      ...(promote.confidence !== undefined ? { confidence: promote.confidence } : {}),
    })),
  ];
}

/**
 * Samples and judges the calls of staging's live version since it went live (`src/evidence/`):
 * only analysed conversations count, a rate's share is over the calls carrying a value, and
 * missing evidence is never met. A listing that fails is an `error` verdict, not a pass.
 */
async function measure(
  c: VoiceAgentClient,
  promote: Promote,
  staging: Staging,
  digest: string,
): Promise<Proof> {
  const origins = promote.origins ?? [...DEFAULT_ORIGINS];
  const requirements = promoteRequirements(promote);
  const scope = {
    agentId: promote.from,
    version: staging.live.version,
    origins,
    since: staging.liveSince ?? null,
  };
  const now = Date.now();
  let sample = emptySample(scope, requirements, new Date(now).toISOString());
  let judgement: Judgement;
  try {
    // Calls are listed only when the proof counts them.
    if (requirements.some((r) => !("soakMinutes" in r))) sample = await sampleCalls(c, scope, requirements);
    judgement = judgeSample(sample, requirements, now);
  } catch (err) {
    judgement = judgementOf([errorFinding(`calls of staging's version ${staging.live.version}`, err)]);
  }
  const since = staging.liveSince ? Date.parse(staging.liveSince) : undefined;
  return {
    fromAgentId: promote.from,
    fromVersion: staging.live.version,
    liveSince: staging.liveSince ?? null,
    minutesLive: since === undefined ? null : (now - since) / 60_000,
    calls: sample.analysed,
    notCounted:
      sample.neverConnected +
      sample.voicemail +
      sample.awaitingAnalysis +
      sample.running +
      sample.unknownStatus,
    rates: (promote.rates ?? []).map((r) => {
      const t = sample.tallies[tallyKey(r)] ?? { measured: 0, matching: 0 };
      return {
        analysis: r.analysis,
        value: r.value,
        atMost: r.atMost,
        matching: t.matching,
        measured: t.measured,
        share: t.measured > 0 ? t.matching / t.measured : null,
      };
    }),
    origins,
    soakMinutes: promote.soakMinutes ?? 0,
    minCalls: promote.minCalls ?? DEFAULT_MIN_CALLS,
    configDigest: digest,
    verdict: judgement.verdict,
    findings: judgement.findings,
  };
}

/**
 * The analyses staging's live version produces, as calls key them (`"Group/Name"`): every enabled
 * analysis of every enabled group it attaches; only the Default Analysis group's when its custom
 * analysis is off (docs/service-decisions.md, "Calls").
 */
async function producedAnalyses(
  c: VoiceAgentClient,
  live: AgentDetailT,
): Promise<Map<string, AnalysisShape>> {
  const attached = new Set(live.analysis_group_ids);
  const customOn = live.call?.custom_analysis_enabled !== false;
  const library = await analysisLibrary(c);
  const out = new Map<string, AnalysisShape>();
  for (const [analysis, shape] of library.analyses) {
    const group = [...attached]
      .map((id) => library.groupNames.get(id))
      .find((g) => analysis.startsWith(`${g}/`));
    if (group === undefined) continue;
    if (!customOn && group !== DEFAULT_ANALYSIS_GROUP_NAME) continue;
    out.set(analysis, shape);
  }
  return out;
}

/**
 * Why each rate names an analysis staging's live version does not produce (names compared exactly),
 * or a value that analysis never takes (`values.ts`).
 */
function rateAnalysisFailures(
  promote: Promote,
  staging: Staging,
  shapes: ReadonlyMap<string, AnalysisShape>,
): Refusal[] {
  const out: Refusal[] = [];
  const produced = [...shapes.keys()];
  (promote.rates ?? []).forEach((r, i) => {
    const shape = shapes.get(r.analysis);
    const problem = shape && valueProblem(r.analysis, shape, r.value);
    if (problem) {
      const property = `promote.rates[${i}].value`;
      out.push({
        property,
        reason: `${property}: ${problem}: the rate could never fire. Nothing was written.`,
      });
    }
    if (shape) return;
    const property = `promote.rates[${i}].analysis`;
    const closest = [...produced].sort(
      (a, b) =>
        editDistance(a.toLowerCase(), r.analysis.toLowerCase()) -
        editDistance(b.toLowerCase(), r.analysis.toLowerCase()),
    )[0];
    out.push({
      property,
      reason:
        `${property}: staging's live version ${staging.live.version} of agent ${promote.from} produces no analysis ` +
        `${JSON.stringify(r.analysis)} (no attached, enabled group with that enabled analysis; names are compared exactly)` +
        `${closest ? `; the closest it has is ${JSON.stringify(closest)}` : "; it produces none"}. ` +
        "Nothing was written. Next: spell the rate as staging's calls key it, or attach and enable that analysis on staging first.",
    });
  });
  return out;
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

/** What a refusal at `up` says was left as it was. */
const UNTOUCHED = {
  /** Refused before publishing. */
  publish:
    "Nothing was published or put live: what is live stays live (the agent's draft may hold the change; callers never hear a draft). ",
  /** Refused right before the activation: the version may be published already. */
  activate: "Nothing was put live: what is live stays live (the version stays published, not live). ",
} as const;

/** Where a promotion is checked: at preview, before publishing, or right before the activation. */
type Stage = "preview" | keyof typeof UNTOUCHED;

/** The message of a proof that falls short. */
function shortfallMessage(p: Proof, lines: { met: string[]; missing: string[] }, stage: Stage): string {
  return (
    `promote: staging's live version ${p.fromVersion} of agent ${p.fromAgentId} has not proven itself yet: ${lines.missing.join("; ")}.` +
    `${lines.met.length ? ` Met: ${lines.met.join("; ")}.` : ""} ` +
    `${stage === "preview" ? "" : UNTOUCHED[stage]}` +
    "Next: let staging take more traffic (and time), then run `pulumi up` again; " +
    "or lower promote.soakMinutes / minCalls / rates if the bar is wrong."
  );
}

/** The outcome of a promotion check. */
interface Evaluation {
  /** Why production is refused at preview and at `up` (a difference, no live version, a rate's unknown analysis); empty when it is not. */
  refusals: Refusal[];
  /** Why `up` refuses while preview passes: the proof falls short; unset when it holds. */
  shortfall?: string;
  /** What staging has shown, when it could be measured. */
  proof?: Proof;
}

/**
 * Compares production's configuration (`production`: program spelling, ids of production's
 * workspace; `complete`: every field, else only what it sets is compared) with staging's live one,
 * checks that each rate names an analysis staging produces, and measures the proof. `stage`: what
 * the messages say was left as it was.
 */
async function evaluate(
  ctx: ProviderContext,
  promote: Promote,
  production: JsonObject,
  complete: boolean,
  stage: Stage,
): Promise<Evaluation> {
  const own = await ctx.client();
  const c = await stagingClient(ctx, promote);
  let staging: Staging;
  try {
    staging = await readStaging(c, promote);
  } catch (err) {
    if (err instanceof PromotionRefused) return { refusals: [{ property: "promote", reason: err.message }] };
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
  const refusals: Refusal[] = [];
  if (found.length > 0)
    refusals.push({
      property: "promote",
      reason: differenceMessage(promote, staging, found, stage !== "preview"),
    });
  if ((promote.rates ?? []).length > 0)
    refusals.push(...rateAnalysisFailures(promote, staging, await producedAnalyses(c, staging.live)));
  const proof = await measure(c, promote, staging, configDigest(full));
  if (refusals.length > 0) return { refusals, proof };
  if (proof.verdict !== "pass")
    return { refusals: [], shortfall: shortfallMessage(proof, proofLines(proof), stage), proof };
  return { refusals: [], proof };
}

/**
 * At preview: production's configuration as the draft will hold it: the Agent's declared
 * configuration written over what its working version holds now (every field), or, for an agent
 * still to be created, over what the service documents of a new agent (no knowledge base, the two
 * system variables): then only those fields and the ones the program declares are compared at
 * preview, and every field at `up`. A value unknown at preview (a knowledge base created
 * alongside) stays unknown: `differences` leaves it out alone and compares every known field.
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

/** At `up`: the configuration of the version about to be published or put live. */
async function versionConfig(c: VoiceAgentClient, agentId: string, version: number): Promise<JsonObject> {
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
    rates: p.rates.map((r) => ({
      analysis: r.analysis,
      value: r.value,
      share: r.share,
      measured: r.measured,
      atMost: r.atMost,
    })),
    configDigest: p.configDigest,
  };
}

/**
 * Whether this AgentVersion may publish or put a version live in this deploy: a new one, a changed
 * configuration, or `live` becoming true on a version not live (a late `live: true`): each is
 * checked alike. An unknown `live` is counted as going live.
 */
function promoting(olds: Record<string, unknown>, news: Record<string, unknown>): boolean {
  if (news.pinnedVersion !== undefined) return false;
  if (
    olds.contentHash === undefined ||
    olds.contentHash !== news.contentHash ||
    olds.agentId !== news.agentId
  )
    return true;
  // `olds` are the last inputs: `live` false there (as declared, or as a refresh found it) going
  // true, or a raised `reinstate` (the version taken off air asked back live).
  return news.live !== false && (olds.live === false || reinstates(olds, news));
}

/**
 * The AgentVersion's `check` for `promote`: the input's own failures, then (when this deploy
 * publishes or goes live and `from` is known) the comparison with staging and the analyses its
 * rates name, a difference or an unknown analysis failing the preview by field. A proof that falls
 * short does not: `proof` (met or not) is what the preview's warning and the pull-request report
 * show, and `create` / `update` refuse while it falls short.
 */
export async function checkPromotion(
  ctx: ProviderContext,
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
): Promise<{ failures: Refusal[]; proof?: Proof }> {
  const failures = promoteFailures(news.promote, news.pinnedVersion !== undefined).map((reason) => ({
    property: "promote",
    reason,
  }));
  if (failures.length > 0 || news.promote === undefined || !promoting(olds, news)) return { failures };
  const promote = news.promote as Record<string, unknown>;
  // Known at preview usually (a StackReference output); an unknown is never reported missing.
  if (containsUnknown(promote as Json)) return { failures: [] };
  // The Agent's configuration as one unknown value: every field unknown, none reported different.
  const config =
    news.promoteConfig === UNKNOWN
      ? Object.fromEntries(AGENT_FIELDS.managed.map((k) => [k, UNKNOWN]))
      : isPlainObject(news.promoteConfig)
        ? news.promoteConfig
        : {};
  const { config: production, complete } = await previewConfig(ctx, news.agentId, config);
  const { refusals, proof } = await evaluate(
    ctx,
    promote as unknown as Promote,
    production,
    complete,
    "preview",
  );
  return proof ? { failures: refusals, proof } : { failures: refusals };
}

/**
 * At `up`, with `promote`: staging read again and `version`'s configuration (the draft about to be
 * published, or the version about to go live) compared with staging's live one; refuses when it
 * differs, a rate names an analysis staging does not produce, or the proof falls short, and, with
 * `checked` (the proof read before the test calls), when staging's live version moved since.
 * `stage` says what was left as it was. Undefined when there is no `promote`.
 */
export async function enforcePromotion(
  ctx: ProviderContext,
  args: { promote?: unknown; agentId: string },
  version: number,
  stage: "publish" | "activate",
  checked?: Proof,
): Promise<Proof | undefined> {
  if (args.promote === undefined) return undefined;
  const production = await versionConfig(await ctx.client(), args.agentId, version);
  const { refusals, shortfall, proof } = await evaluate(
    ctx,
    args.promote as Promote,
    production,
    true,
    stage,
  );
  const reasons = [...refusals.map((r) => r.reason), ...(shortfall !== undefined ? [shortfall] : [])];
  if (checked && proof && proof.fromVersion !== checked.fromVersion)
    reasons.unshift(
      `promote: staging's live version of agent ${checked.fromAgentId} moved from ${checked.fromVersion} to ` +
        `${proof.fromVersion} while this deploy ran (after it was checked, before version ${version} went live). ` +
        `${UNTOUCHED.activate}Next: run \`pulumi up\` again to compare with staging's version ${proof.fromVersion} and its proof.`,
    );
  if (reasons.length > 0 || !proof) throw new PromotionRefused(reasons.join("\n"));
  return proof;
}
