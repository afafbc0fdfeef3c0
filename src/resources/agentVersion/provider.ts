/**
 * The AgentVersion's provider side: runs in the dynamic-provider process.
 *
 * - `check` refuses inputs it does not have, and reads a pinned version when the pin is new or
 *   changed (it must exist, be published, and be able to go live): a no-op preview reads nothing.
 * - `diff` replaces the resource only when its agent changes. A new configuration hash or a new
 *   pin updates it in place: one engine step per change (a replacement was two, create then
 *   delete, each followed by a whole checkpoint of the state).
 * - `create`, and `update` when the hash or the pin changed, choose the version: the pinned one,
 *   or the draft the Agent wrote, published (under `If-Match`) or reused when a published version
 *   already holds it; then put it live unless it already is.
 * - `update` otherwise changes label and notes in place, and moves the live pointer back when asked.
 * - With `verify`, a version goes live only after its test calls pass (`verify.ts`): the hook sits
 *   where `create` and `update` put a version live; a failure fails the step before the live
 *   pointer moves. A change of `verify` alone is recorded without a request to the calls.
 * - `read` (refresh) reads the version the state records (`version`), not the id: the id,
 *   `<agentId>/<version>`, names the version chosen at create and stays when an update chooses
 *   another.
 * - Rollback-aware (`rollback.ts`): a version this stack put live that was taken off air since (a
 *   rollback by the watch or in the dashboard, another activation, a deactivation) stays off air.
 *   `read`, and an `update` that finds it so, record the deploy-history row that did it (and the
 *   watch's reason) as `rolledBack`; `diff` then sees no change in `live`, so no deploy puts it back
 *   live, until the program chooses another version or raises `reinstate`.
 * - `delete` removes nothing: history stays in the service.
 * - With `promote`, `check` compares the configuration with staging's live one (a difference
 *   fails) and records its proof (`promoteProof`; a shortfall passes, the program warns of it),
 *   and the version is chosen only once `promote.ts` has read staging again and both hold.
 */
import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import type { AgentDetailT, VoiceAgentClient } from "../../client";
import { ApiError } from "../../client/errors";
import { unlessGone } from "../../provider/gone";
import { unknownInputs } from "../../provider/managed";
import { deepEqual, dropUndefined, type Json } from "../../provider/normalize";
import type { HandlerFactory, Props, ProviderContext } from "../../provider/resource";
import { parseProps } from "../../provider/state";
import { containsUnknown, UNKNOWN } from "../../provider/unknowns";
import { agentAsLastSeen, remember, workingVersion } from "../agent/provider";
import { completedById } from "./byId";
import { DRAFT_FIELDS, flatDraft, flatOutcome, foldedDraft, foldedOutcome, withContentHash } from "./layout";
import { PLAN_KEY, type Plan } from "./plan";
import { checkPromotion, enforcePromotion, promotedNotes, promotionRecord } from "./promote";
import type { Promotion } from "./promoteArgs";
import type { Proof } from "./proof";
import { configurationDigest, reuseCandidates } from "./reuse";
import {
  type RolledBack,
  recordedOffAir,
  rolledBackInHistory,
  rowThatTookOff,
  takenOffAir,
} from "./rollback";
import type { AnalysisLibrary } from "./values";
import { Verification, VerifySpec, verifyBeforeLive, verifyFailures, verifyValueFailures } from "./verify";
import { reinstateFailures, reinstates, watchAnalysisFailures, watchFailures } from "./watch";

/** The AgentVersion's inputs, as the program sends them (see the class in `index.ts`). */
const OWN_INPUTS = [
  "agentId",
  ...DRAFT_FIELDS,
  "label",
  "notes",
  "live",
  "pinnedVersion",
  "promote",
  "promoteConfig",
  "verify",
  "watch",
  "attachedGroupIds",
  "reinstate",
  "offAir",
] as const;

/** The inputs after `check`. */
const VersionInputs = z.looseObject({
  agentId: z.string(),
  contentHash: z.string().optional(),
  knownVersion: z.number().int().optional(),
  knownUpTo: z.number().int().optional(),
  draftVersion: z.number().int(),
  documentRevision: z.number().int(),
  // What the Agent's last write (or read) told of the draft; absent when its state is older.
  draftPublished: z.boolean().optional(),
  draftHash: z.string().optional(),
  latestVersion: z.number().int().optional(),
  label: z.string().optional(),
  notes: z.string().optional(),
  live: z.boolean().default(true),
  pinnedVersion: z.number().int().min(0).optional(),
  // Checked by promote.ts (`promoteFailures`); the Agent's declared configuration beside it.
  promote: z.unknown().optional(),
  promoteConfig: z.record(z.string(), z.unknown()).optional(),
  verify: VerifySpec.optional(),
  // Checked by watch.ts; read by `voice-agent-diff --watch` from the state.
  watch: z.unknown().optional(),
  reinstate: z.number().int().min(0).optional(),
  // Kept by the provider (never the program's): the configurations (by content hash) whose version
  // was taken off air while this resource held it live (any row: a rollback, an activation, a
  // deactivation), so that a preview names the version a revert-then-re-apply would bring back, and
  // so that neither a reuse by content nor the watch puts it back (`rollback.ts`, `offAirBy`); a
  // deploy that puts it live on the program's word (a pin, `reinstate`) drops it (`offAirAfter`).
  offAir: z.record(z.string(), z.number().int()).optional(),
});
type VersionInputs = z.infer<typeof VersionInputs>;

/** The output `rolledBack` (`rollback.ts`). */
const RolledBackRecord = z.object({
  at: z.string().nullable(),
  action: z.string(),
  to: z.number().int().nullable(),
  reason: z.string().optional(),
  recorded: z.boolean().optional(),
});

const Origin = z.enum(["published", "reused", "pinned"]);
type Origin = z.infer<typeof Origin>;

/** The state: the inputs, and the version chosen. */
const VersionState = VersionInputs.extend({
  version: z.number().int(),
  versionId: z.string(),
  isLive: z.boolean(),
  origin: Origin,
  activation: z.string(),
  blockedReasons: z.array(z.string()).default([]),
  promotion: z.unknown().optional(),
  verification: Verification.optional(),
  rolledBack: RolledBackRecord.optional(),
});

const inputs = (props: Props) => parseProps(VersionInputs, props, "AgentVersion inputs");
const state = (props: Props) => parseProps(VersionState, props, "AgentVersion state");
/**
 * What `read` and `delete` accept: the state, or only the inputs (a resource adopted into the
 * state by `pulumi import` or a recovery has no outputs yet).
 * Made once: zod compiles a schema at its first parse (a schema made per call is compiled per
 * call).
 */
const StoredVersionState = VersionState.partial();
const stored = (props: Props) => parseProps(StoredVersionState, props, "AgentVersion state");

/** The draft to publish, as the Agent's last write (or read) told it, or as read. */
interface Draft {
  version: number;
  latestVersion: number;
  /** {@link configurationDigest} of its configuration. */
  hash: string;
}

/**
 * Publishes the draft, or finds the published version that already holds its configuration.
 *
 * The Agent's outputs tell the draft's version, revision, latest version, whether it is published
 * and the hash of its configuration, as the Agent's patch answered them: a change publishes with
 * no read. The draft is read when it is published already (a change made and published elsewhere,
 * brought in by a refresh: reused as it is), or when the Agent's state predates these outputs.
 * Anything that touched the draft since the Agent wrote it is caught by the publish's `If-Match`;
 * a draft published since (by an `up` killed after its publish, or in the dashboard) publishes
 * again as the same version, unchanged.
 */
async function publishOrReuse(
  c: VoiceAgentClient,
  args: VersionInputs,
  defaultNotes?: string,
): Promise<{ detail: AgentDetailT; origin: Origin }> {
  let draft: Draft;
  if (args.draftPublished === false && args.draftHash !== undefined && args.latestVersion !== undefined) {
    draft = { version: args.draftVersion, latestVersion: args.latestVersion, hash: args.draftHash };
  } else {
    const read = await c.agents.get(args.agentId, { version: args.draftVersion });
    if (read.is_published) return { detail: read, origin: "reused" };
    draft = { version: read.version, latestVersion: read.latest_version, hash: configurationDigest(read) };
  }
  for (const version of await draftCandidates(c, args, draft)) {
    const candidate = await c.agents.get(args.agentId, { version });
    if (candidate.is_published && configurationDigest(candidate) === draft.hash) {
      return { detail: candidate, origin: "reused" };
    }
  }
  try {
    const published = await c.versions.publish(
      args.agentId,
      draft.version,
      { label: args.label ?? null, notes: args.notes ?? defaultNotes ?? null },
      { ifMatch: args.documentRevision },
    );
    return { detail: published, origin: "published" };
  } catch (err) {
    if (err instanceof ApiError && err.code === "revision_conflict") {
      // Published since with this very configuration, then renamed (label or notes) elsewhere:
      // nothing of the draft was overwritten, and the version holds what this stack declares.
      const now = await c.agents.get(args.agentId, { version: draft.version }).catch(() => undefined);
      if (now?.is_published && configurationDigest(now) === draft.hash)
        return { detail: now, origin: "reused" };
      throw new Error(
        `Version ${draft.version} of agent ${args.agentId} was edited outside Pulumi after this stack wrote it ` +
          `(revision ${err.currentRevision ?? "?"}, expected ${args.documentRevision}); nothing was published. ` +
          `Run \`pulumi refresh\`, review the drift in the next preview, then \`pulumi up\`. (request ${err.requestId ?? "unknown"})`,
        { cause: err },
      );
    }
    throw err;
  }
}

/**
 * The published versions that may already hold the draft's configuration: the one the Agent
 * recorded for its content hash, then every published version newer than the newest it recorded
 * (published outside this stack's sight: in the dashboard, or by an `up` interrupted before it
 * saved its state). Listing is skipped when the draft directly follows the newest recorded version
 * and is the latest, so a change in steady state reads nothing. A stack without a record
 * (created by an older release) compares every published version once.
 */
async function draftCandidates(c: VoiceAgentClient, args: VersionInputs, draft: Draft): Promise<number[]> {
  const recorded = args.knownVersion;
  const upTo = args.knownUpTo ?? -1;
  if (draft.version === upTo + 1 && draft.latestVersion === draft.version) {
    return recorded === undefined ? [] : [recorded];
  }
  return reuseCandidates(c, args.agentId, recorded, upTo, draft.version);
}

/** Puts `version` live; a blocked version fails with its reasons. */
async function goLive(c: VoiceAgentClient, agentId: string, version: number): Promise<string> {
  try {
    const row = await c.versions.activate(agentId, version);
    return row.action;
  } catch (err) {
    if (err instanceof ApiError && (err.code === "version_blocked" || err.code === "agent_not_published")) {
      throw new Error(`Version ${version} of agent ${agentId} cannot go live: ${err.message}`, {
        cause: err,
      });
    }
    throw err;
  }
}

/**
 * With `promote`, right before `version` goes live: when test calls ran since `checked` was read
 * (they take up to `verify.timeoutSeconds`), staging and its proof are read again, and the
 * activation is refused if staging moved or the proof no longer holds. Otherwise `checked` stands.
 */
async function promotionBeforeLive(
  ctx: ProviderContext,
  args: VersionInputs,
  version: number,
  checked: Proof | undefined,
  verification: Verification | undefined,
): Promise<Proof | undefined> {
  if (!checked || !verification) return checked;
  return enforcePromotion(ctx, args, version, "activate", checked);
}

/** Label and notes, when the program sets them and the version holds something else. */
async function syncMetadata(
  c: VoiceAgentClient,
  args: VersionInputs,
  detail: AgentDetailT,
): Promise<AgentDetailT> {
  const patch: { label?: string; notes?: string } = {};
  if (args.label !== undefined && args.label !== detail.label) patch.label = args.label;
  if (args.notes !== undefined && args.notes !== detail.notes) patch.notes = args.notes;
  if (Object.keys(patch).length === 0) return detail;
  return c.agents.patch(args.agentId, patch, { version: detail.version });
}

function outputs(
  props: Props,
  detail: AgentDetailT,
  origin: Origin,
  activation: string,
  verification: Verification | undefined,
  rolledBack?: RolledBack,
): Props {
  return dropUndefined({
    ...props,
    verification,
    rolledBack,
    version: detail.version,
    versionId: detail.version_id,
    isLive: detail.is_live,
    // The agent's live version: this one once it is live, else whichever the service has live.
    liveVersion: detail.is_live ? detail.version : (detail.live_version ?? null),
    label: detail.label ?? undefined,
    notes: detail.notes ?? undefined,
    origin,
    activation,
    blockedReasons: detail.blocked_reasons ?? [],
  });
}

/** Why a pinned version cannot be used, or nothing. */
async function pinProblem(c: VoiceAgentClient, agentId: string, pinned: number, live: boolean) {
  const detail = await c.agents.get(agentId, { version: pinned }).catch((e: unknown) => e);
  if (detail instanceof ApiError && detail.code === "version_not_found")
    return `version ${pinned} does not exist`;
  if (detail instanceof Error)
    throw new Error(`version: could not read version ${pinned}: ${detail.message}`, { cause: detail });
  const d = detail as AgentDetailT;
  if (!d.is_published) return `version ${pinned} is a draft: only a published version can be pinned`;
  if (live && d.blocked_reasons.length > 0)
    return `version ${pinned} cannot go live: ${d.blocked_reasons.join("; ")}`;
  return undefined;
}

/**
 * Whether `news` asks for another version than the one `olds` recorded: a new or removed pin, or,
 * without a pin, a new configuration hash of the agent (unknown at preview when the Agent changes).
 */
function choosesAnew(olds: Props, news: Props): boolean {
  if ((olds.pinnedVersion ?? null) !== (news.pinnedVersion ?? null)) return true;
  return news.pinnedVersion === undefined && olds.contentHash !== news.contentHash;
}

/**
 * The version `args` asks for, its label and notes set, and put live when asked (unless it already
 * is: activating it again would write to the service for nothing): what `create` does, and `update`
 * when the pin or the configuration changed. The version's detail comes with the publish (or the
 * comparison that found it): no read again.
 */
async function choose(
  ctx: ProviderContext,
  c: VoiceAgentClient,
  args: VersionInputs,
  back: { reinstated: boolean; republish: boolean },
): Promise<{
  detail: AgentDetailT;
  origin: Origin;
  activation: string;
  verification: Verification | undefined;
  promotion?: Promotion;
  rolledBack?: RolledBack;
}> {
  // Promotion: staging read again, and refused before anything is published or put live.
  const checked =
    args.pinnedVersion === undefined
      ? await enforcePromotion(ctx, args, args.draftVersion, "publish")
      : undefined;
  let proof = checked;
  const { detail: chosen, origin } =
    args.pinnedVersion !== undefined
      ? {
          detail: await c.agents.get(args.agentId, { version: args.pinnedVersion }),
          origin: "pinned" as const,
        }
      : await publishOrReuse(c, args, checked && promotedNotes(checked));
  let detail = await syncMetadata(c, args, chosen);
  let activation = "none";
  let verification: Verification | undefined;
  // A version found by its configuration (a revert then a re-apply, a new AgentVersion for the
  // same agent) that a rollback took off air stays off air unless `reinstate` is raised: the
  // deploy history says so (one page), whatever this resource's state. A version this deploy's
  // Agent wrote and published now was never live; but when a pin is removed, the publish of the
  // draft the Agent wrote earlier may answer a version published (and put live) since. A pin is the
  // program asking by name.
  const rolledBack =
    args.live &&
    !chosen.is_live &&
    (origin === "reused" || (origin === "published" && back.republish)) &&
    !back.reinstated
      ? candidateOf(args) === chosen.version
        ? offAirAtCheck(args) // `check` read the history for this very version a moment ago
        : await rolledBackInHistory(c, args.agentId, chosen.version, recordedOffAir(args.offAir))
      : undefined;
  if (rolledBack) return { detail, origin, activation, verification, rolledBack };
  if (args.live && !chosen.is_live) {
    // With `verify`, test calls pinned to the version decide whether it goes live (verify.ts).
    verification = await verifyBeforeLive(c, args.agentId, args.verify, chosen, { signal: ctx.signal });
    proof = await promotionBeforeLive(ctx, args, chosen.version, checked, verification);
    activation = await goLive(c, args.agentId, chosen.version);
    detail = { ...detail, is_live: true };
  }
  return {
    detail,
    origin,
    activation,
    verification,
    ...(proof ? { promotion: promotionRecord(proof) } : {}),
  };
}

/**
 * The outputs an update that publishes nothing (label, notes, `live`, `verify`) keeps, found for
 * the checked inputs: the engine previews a dynamic resource's update with its checked inputs as
 * its outputs, and `check` is given the old inputs only, so without these what uses `version` or
 * `versionId` would see an unknown (a spurious change), and the program's blocked-version warning
 * would not run. Nothing (no request) when nothing changes, when the version is chosen anew (a new
 * configuration or pin: unknown until published) or at create. Otherwise one or two reads: the
 * pinned version, else the live version when it holds the agent's configuration, else the draft
 * the Agent last wrote, published since.
 */
async function keptAtPreview(c: () => Promise<VoiceAgentClient>, olds: Props, news: Props): Promise<Props> {
  if (olds.agentId === undefined || olds.agentId !== news.agentId || choosesAnew(olds, news)) return {};
  const touched =
    unrecorded(olds) ||
    ["label", "notes", "live", "verify", "watch", "reinstate"].some(
      (k) => !deepEqual(olds[k] ?? null, news[k] ?? null),
    );
  if (!touched || containsUnknown(news as Json)) return {};
  const args = inputs(news);
  const client = await c();
  // A rollback a refresh found: the version the state records, as its `offAir` remembers it (neither
  // live nor, once a draft is open again, the Agent's draft).
  const recordedOff =
    unrecorded(olds) && typeof olds.contentHash === "string"
      ? (olds.offAir as Record<string, number> | undefined)?.[olds.contentHash]
      : undefined;
  const candidates: (number | "live")[] =
    args.pinnedVersion !== undefined
      ? [args.pinnedVersion]
      : recordedOff !== undefined
        ? [recordedOff]
        : ["live", args.draftVersion];
  for (const version of candidates) {
    const detail = await unlessGone(client.agents.get(args.agentId, { version })).catch(() => undefined);
    if (!detail?.is_published) continue;
    const byHash = args.pinnedVersion === undefined && recordedOff === undefined;
    if (byHash && configurationDigest(detail) !== args.draftHash) continue;
    // A version this stack put live that is off air now, not asked back: what took it off air, so
    // that the preview still says it stays off air (one read of the deploy history).
    const offAir = !detail.is_live && olds.live !== false && !reinstates(olds, news);
    const row = offAir ? await rowThatTookOff(client, args.agentId, detail.version) : undefined;
    const rolledBack = row
      ? await takenOffAir(client, args.agentId, detail.version, detail.live_version)
      : undefined;
    return dropUndefined({
      rolledBack,
      version: detail.version,
      versionId: detail.version_id,
      blockedReasons: detail.blocked_reasons,
      // Live as it is, unless the program now asks for it (`live` from false to true, a raised
      // `reinstate`): then it goes live, or the update fails. A version taken off air since this
      // stack put it live stays off air (rollback-aware deploys).
      isLive: detail.is_live || (args.live && (olds.live === false || reinstates(olds, news))),
    });
  }
  return {};
}

/**
 * At preview, for a deploy that chooses the version anew by configuration (a revert then a
 * re-apply, a new AgentVersion): the version that holds it, when the deploy history says a rollback
 * took it off air, so that the preview says it stays off air. The version is the one the Agent's
 * outputs name ({@link candidateOf}), or this resource's own record (`offAir`) while the Agent's are
 * unknown (the Agent changes in the same preview). One read of the deploy history (and of the
 * version put live instead, for the watch's reason); nothing when the configuration is unchanged.
 */
async function offAirAtPreview(
  c: () => Promise<VoiceAgentClient>,
  olds: Props,
  news: Props,
  plan?: Plan,
): Promise<Props> {
  const fresh = olds.agentId === undefined;
  if (!fresh && !choosesAnew(olds, news)) return {};
  if (news.pinnedVersion !== undefined || news.live === false) return {};
  if (reinstates(olds, news)) return {};
  const { agentId, contentHash } = news;
  if (typeof agentId !== "string" || typeof contentHash !== "string") return {};
  const version =
    candidateOf(news) ??
    (plan?.kind === "reuse" ? plan.version : undefined) ??
    (news.offAir as Record<string, number> | undefined)?.[contentHash];
  if (version === undefined) return {};
  const rolledBack = await rolledBackInHistory(await c(), agentId, version, recordedOffAir(news.offAir));
  return rolledBack ? { rolledBack, version, isLive: false } : {};
}

/**
 * What a deploy that chooses the version anew (created, or a new configuration or pin) will do, for
 * the preview's one line (`plan.ts`): the pinned version; the published version that already holds
 * the configuration (a revert), as the stack recorded it; or the number the draft is published as.
 * A number is said only when it is certain, as `publishOrReuse` will find it.
 *
 * - The Agent's change still to come (`agentWrites`: the program knows only its checked hash, the
 *   preview of its change): one listing of the agent's versions, newest first. Its patch lands on
 *   the open draft, else on a draft branched as `latest_version + 1`; the versions the stack has
 *   seen are the Agent's state as its `diff` saw it, with the version it last wrote when the patch
 *   branches a new one (`remember`, as the Agent's `update` records it). A version published
 *   outside the stack's sight may hold the configuration (`up` compares those first): no number.
 * - Otherwise (the Agent's outputs are known: a new AgentVersion, a removed pin, and `up` itself):
 *   from the Agent's outputs alone, as `publishOrReuse` decides without reading; no request.
 *
 * Nothing when the version is not chosen anew; writes nothing.
 */
async function planAtPreview(
  c: () => Promise<VoiceAgentClient>,
  olds: Props,
  news: Props,
  agentWrites: boolean,
): Promise<Plan | undefined> {
  if (olds.agentId !== undefined && !choosesAnew(olds, news)) return undefined;
  if (news.live !== undefined && typeof news.live !== "boolean") return undefined;
  const live = news.live !== false;
  const pinned = news.pinnedVersion;
  if (pinned !== undefined)
    return typeof pinned === "number" ? { kind: "pin", version: pinned, live } : undefined;
  const { agentId, contentHash } = news;
  const unknown = (why: string): Plan => ({ kind: "publish", version: null, why, live });
  if (typeof agentId !== "string" || containsUnknown(agentId))
    return unknown("the agent is created in this deploy");
  if (typeof contentHash !== "string" || containsUnknown(contentHash))
    return unknown("the agent's configuration is known only then");
  if (!agentWrites) {
    const n = (k: string) => (typeof news[k] === "number" ? (news[k] as number) : undefined);
    const [recorded, draft, latest, upTo] = [
      n("knownVersion"),
      n("draftVersion"),
      n("latestVersion"),
      n("knownUpTo"),
    ];
    if (recorded !== undefined) return { kind: "reuse", version: recorded, live };
    if (draft !== undefined && news.draftPublished === true) return { kind: "reuse", version: draft, live };
    if (
      draft !== undefined &&
      news.draftPublished === false &&
      draft === latest &&
      draft === (upTo ?? -1) + 1
    )
      return { kind: "publish", version: draft, live };
    return unknown("`up` first compares the versions published outside this stack's sight with the draft");
  }
  const seen = agentAsLastSeen(agentId);
  if (!seen) return unknown("this stack has no record of the agent's versions");
  const rows: { version: number; is_published: boolean }[] = [];
  let landing = -1;
  let known: Record<string, number> = {};
  let upTo = -1;
  for await (const row of (await c()).versions.list(agentId)) {
    if (rows.length === 0) {
      // The patch lands on the open draft, else on a draft branched as latest + 1.
      landing = row.is_published ? row.version + 1 : row.version;
      known = remember(seen.knownVersions, seen, { version: landing } as AgentDetailT);
      upTo = Math.max(-1, ...Object.values(known));
    }
    if (row.version <= upTo || rows.length >= 100) break;
    rows.push(row);
  }
  const recorded = known[contentHash];
  if (recorded !== undefined) return { kind: "reuse", version: recorded, live, revert: true };
  if (rows.filter((r) => !r.is_published).length > 1)
    return unknown("several drafts are open, and the agent's change will be refused until one is left");
  const elsewhere = rows.filter((r) => r.is_published).map((r) => r.version);
  if (elsewhere.length > 0)
    return unknown(
      `\`up\` first compares the version${elsewhere.length > 1 ? "s" : ""} published outside this stack (${elsewhere.join(", ")}) with the draft`,
    );
  return { kind: "publish", version: landing, live };
}

/**
 * The published version the Agent's outputs name for the configuration: the one it recorded for
 * its hash, or its working version when that is published already (a refresh after a rollback).
 */
function candidateOf(args: Props): number | undefined {
  if (typeof args.knownVersion === "number") return args.knownVersion;
  return args.draftPublished === true && typeof args.draftVersion === "number"
    ? args.draftVersion
    : undefined;
}

/** What `check` found in the deploy history for the version the Agent named (`offAirAtPreview`). */
function offAirAtCheck(args: VersionInputs): RolledBack | undefined {
  const found = RolledBackRecord.safeParse(args.rolledBack);
  return found.success ? found.data : undefined;
}

/**
 * What a refresh found took the version off air (`found`), against what the state recorded
 * (`before`): the same row keeps whether a deploy recorded it; a row no deploy has recorded is
 * `recorded: false`, which the diff shows until the next `up` records it.
 */
function asRead(found: RolledBack | undefined, before: RolledBack | undefined): RolledBack | undefined {
  if (!found) return undefined;
  const { recorded: _recorded, ...row } = found;
  const same =
    before !== undefined && before.at === row.at && before.to === row.to && before.action === row.action;
  if (!same) return { ...row, recorded: false };
  return before.recorded === undefined ? row : { ...row, recorded: before.recorded };
}

/** A rollback this deploy records (its outputs: seen by a deploy, never shown again by a refresh). */
function asRecorded(rolledBack: RolledBack | undefined): RolledBack | undefined {
  return rolledBack && { ...rolledBack, recorded: true };
}

/** A rollback a refresh found that no deploy of this stack has recorded yet. */
function unrecorded(props: Props): boolean {
  const r = props.rolledBack;
  return r !== null && typeof r === "object" && (r as { recorded?: unknown }).recorded === false;
}

/** `offAir` with `hash` (the configuration of `version`) added: the newest 20. */
function withOffAir(offAir: Record<string, number> | undefined, hash: string | undefined, version: number) {
  if (hash === undefined) return offAir;
  const next = Object.entries({ ...(offAir ?? {}), [hash]: version }).sort(([, a], [, b]) => b - a);
  return Object.fromEntries(next.slice(0, 20));
}

/**
 * `offAir` after a deploy that chose `version`: with it when it stays off air (`rolledBack`: taken
 * off air while this stack had it live, whatever the row's label), without it when the deploy put
 * it live (`wentLive`: a pin, a raised `reinstate`, the program's word); the watch and a later
 * reuse by content read this record (`recordedOffAir`).
 */
function offAirAfter(
  args: VersionInputs,
  version: number,
  rolledBack: RolledBack | undefined,
  wentLive: boolean,
): Record<string, number> | undefined {
  if (rolledBack) return withOffAir(args.offAir, args.contentHash ?? `version ${version}`, version);
  if (!wentLive || args.offAir === undefined) return args.offAir;
  return Object.fromEntries(Object.entries(args.offAir).filter(([, v]) => v !== version));
}

/**
 * Whether the version the state records stays off air in this deploy: it was taken off air since
 * this stack put it live (`rolledBack` recorded by a refresh), and the program keeps it (the same
 * version) without raising `reinstate`.
 */
function staysOffAir(olds: Props, news: Props): boolean {
  return olds.rolledBack !== undefined && !choosesAnew(olds, news) && !reinstates(olds, news);
}

/**
 * At `update`, for a version the program wants live that is not: whether it was taken off air since
 * this stack put it live (the state recorded it live, or already rolled back), rather than asked
 * live anew (`live` false before) or again (`reinstate` raised).
 */
function wasTakenOffAir(
  before: { live: boolean; isLive: boolean; rolledBack?: RolledBack },
  olds: Props,
  news: Props,
): boolean {
  if (reinstates(olds, news)) return false;
  return before.live && (before.isLive || before.rolledBack !== undefined);
}

/**
 * The names of the analysis groups the version will attach, when known at preview: the groups the
 * Agent declares (`attachedGroupIds`, set with `watch`), else those its working version attaches
 * (the Agent writes only what it declares); unknown for a pinned version, an agent still to be
 * created, or ids unknown at preview (a group created alongside).
 */
async function attachedGroups(
  c: VoiceAgentClient,
  news: Props,
  library: AnalysisLibrary,
): Promise<string[] | undefined> {
  if (news.pinnedVersion !== undefined) return undefined;
  let ids = news.attachedGroupIds;
  if (ids === undefined) {
    if (typeof news.agentId !== "string" || containsUnknown(news.agentId)) return undefined;
    // An agent that is gone tells nothing here: its own check (the Agent's) says so.
    ids = (await unlessGone(workingVersion(c, news.agentId)))?.analysis_group_ids;
  }
  if (!Array.isArray(ids) || containsUnknown(ids)) return undefined;
  const names = ids.map((id) => (typeof id === "string" ? library.groupNames.get(id) : undefined));
  return names.every((n) => n !== undefined) ? (names as string[]) : undefined;
}

/**
 * `check` on the inputs with the bookkeeping at the top level; `agentWrites` when the Agent's write
 * is still to come (the program has its checked hash only: `withDraftLayout`).
 */
async function checkVersion(
  ctx: ProviderContext,
  olds: Props,
  news: Props,
  agentWrites: boolean,
): Promise<pulumi.dynamic.CheckResult> {
  const failures: pulumi.dynamic.CheckFailure[] = unknownInputs(
    { managed: [] },
    news,
    OWN_INPUTS,
    "AgentVersion",
  );
  const pinned = news.pinnedVersion;
  if (pinned !== undefined && !containsUnknown(pinned)) {
    if (typeof pinned !== "number" || !Number.isInteger(pinned) || pinned < 0) {
      failures.push({
        property: "version",
        reason: "version: must be a published version number (an integer >= 0)",
      });
    } else if (typeof news.agentId === "string" && !containsUnknown(news.agentId)) {
      // The pinned version is read when the pin is new or changed: a no-op preview reads nothing.
      const pinChanged =
        olds.pinnedVersion !== pinned || olds.agentId !== news.agentId || olds.live !== news.live;
      const problem = pinChanged
        ? await pinProblem(await ctx.client(), news.agentId, pinned, news.live !== false)
        : undefined;
      if (problem) failures.push({ property: "version", reason: `version: ${problem}` });
    }
  }
  for (const key of ["label", "notes"] as const) {
    const v = news[key];
    if (v !== undefined && typeof v !== "string")
      failures.push({ property: key, reason: `${key}: must be a string` });
  }
  if (news.live !== undefined && typeof news.live !== "boolean" && !containsUnknown(news.live)) {
    failures.push({ property: "live", reason: "live: must be a boolean" });
  }
  failures.push(...verifyFailures(news.verify));
  failures.push(...watchFailures(news.watch), ...reinstateFailures(news.reinstate));
  // A new or changed `watch` names analyses the workspace has, values they take, on groups the
  // version attaches (one listing; a no-op preview reads nothing).
  if (
    news.watch !== undefined &&
    !containsUnknown(news.watch) &&
    !deepEqual(olds.watch ?? null, news.watch)
  ) {
    const c = await ctx.client();
    failures.push(
      ...(await watchAnalysisFailures(c, news.watch, (library) => attachedGroups(c, news, library))),
    );
  }
  // So does a new or changed `verify`'s expected analysis values.
  if (news.verify !== undefined && !deepEqual(olds.verify ?? null, news.verify))
    failures.push(...(await verifyValueFailures(await ctx.client(), news.verify)));
  const promotion = await checkPromotion(ctx, olds, news);
  failures.push(...promotion.failures);
  // What staging has shown, for the pull-request report (voice-agent-diff's Promotion line).
  const checked = promotion.proof ? { ...news, promoteProof: promotion.proof } : news;
  // The provider's record of configurations taken off air, carried from the state.
  const carried =
    olds.offAir !== undefined && news.offAir === undefined ? { ...checked, offAir: olds.offAir } : checked;
  // What the deploy will do to the agent's versions, for the preview's one line (plan.ts).
  const plan =
    failures.length === 0 ? await planAtPreview(() => ctx.client(), olds, carried, agentWrites) : undefined;
  const kept =
    failures.length === 0
      ? {
          ...(await keptAtPreview(() => ctx.client(), olds, carried)),
          ...(await offAirAtPreview(() => ctx.client(), olds, carried, plan)),
        }
      : {};
  // A version that stays off air is the line instead.
  const planned = plan && kept.rolledBack === undefined ? { [PLAN_KEY]: plan } : {};
  return { inputs: { ...carried, ...kept, ...planned }, failures };
}

/** The handlers, on the inputs with the bookkeeping at the top level (see `withDraftLayout`). */
const handlers: HandlerFactory = (ctx) => ({
  check: (olds, news) => checkVersion(ctx, olds, news, false),

  async diff(_id, olds, news) {
    // Only another agent replaces: a new hash or pin chooses another version of the same agent in
    // place, so that the engine takes one step per changed agent instead of two.
    const replaces = olds.agentId !== news.agentId ? ["agentId"] : [];
    const changes =
      replaces.length > 0 ||
      choosesAnew(olds, news) ||
      (news.label !== undefined && news.label !== olds.label) ||
      (news.notes !== undefined && news.notes !== olds.notes) ||
      (news.live === true && olds.isLive !== true && !staysOffAir(olds, news)) ||
      // A rollback made elsewhere that only a refresh has seen: shown (by the refresh too) until an
      // `up` records it, writing nothing to the service.
      (news.live !== false && unrecorded(olds) && staysOffAir(olds, news)) ||
      // A new `verify` alone is recorded: it places no call on a version that is live already.
      !deepEqual(olds.verify ?? null, news.verify ?? null) ||
      // So is a new `watch`, and a new `reinstate` (which puts a version taken off air back live).
      !deepEqual(olds.watch ?? null, news.watch ?? null) ||
      (olds.reinstate ?? 0) !== (news.reinstate ?? 0);
    return { changes, replaces };
  },

  async create(props) {
    const c = await ctx.client();
    const args = inputs(props);
    const chosen = await choose(ctx, c, args, { reinstated: (args.reinstate ?? 0) > 0, republish: false });
    const { detail, origin, activation, verification, promotion, rolledBack } = chosen;
    const promoted = promotion ? { ...props, promotion } : props;
    const offAir = offAirAfter(args, detail.version, rolledBack, activation !== "none");
    return {
      id: `${args.agentId}/${detail.version}`,
      outs: outputs(
        offAir ? { ...promoted, offAir } : promoted,
        detail,
        origin,
        activation,
        verification,
        asRecorded(rolledBack),
      ),
    };
  },

  async read(id, props) {
    const c = await ctx.client();
    const recorded = stored(props);
    // The state's `version` is the version now (an update that chose another keeps the id); the id,
    // `<agentId>/<version>`, is all a read has when the state holds no outputs yet (an import).
    const [idAgent, idVersion] = [
      id.slice(0, id.lastIndexOf("/")),
      Number(id.slice(id.lastIndexOf("/") + 1)),
    ];
    const agentId = recorded.agentId ?? idAgent;
    const version = recorded.version ?? idVersion;
    if (!agentId || !Number.isInteger(version)) {
      throw new Error(`AgentVersion: the id "${id}" is not <agentId>/<version>, and the state names neither`);
    }
    const detail = await unlessGone(c.agents.get(agentId, { version }));
    if (!detail) return {};
    // A version this stack put live that was taken off air since: what did it, and why.
    const putLive =
      recorded.live !== false && (recorded.isLive === true || recorded.rolledBack !== undefined);
    const rolledBack =
      putLive && !detail.is_live
        ? asRead(
            await takenOffAir(c, agentId, version, detail.live_version, recorded.rolledBack),
            recorded.rolledBack,
          )
        : undefined;
    // Taken off air while this stack had it live, whatever the row's label: remembered (for a later
    // preview, a reuse by content and the watch's choice of a version to put back).
    const offAir = rolledBack
      ? withOffAir(recorded.offAir, recorded.contentHash ?? `version ${version}`, version)
      : recorded.offAir;
    const outs = outputs(
      { ...props, agentId, ...(offAir ? { offAir } : {}) },
      detail,
      recorded.origin ?? "pinned",
      recorded.activation ?? "none",
      recorded.verification,
      rolledBack,
    );
    const inputs: Props = {};
    for (const key of OWN_INPUTS) if (props[key] !== undefined) inputs[key] = props[key];
    if (offAir) inputs.offAir = offAir;
    // A rollback no deploy has recorded: the next `check` reads what the preview says of it.
    if (rolledBack?.recorded === false) inputs.rolledBack = rolledBack;
    if (props.label !== undefined) inputs.label = outs.label;
    if (props.notes !== undefined) inputs.notes = outs.notes;
    // `live` stays what the program asked: a version taken off air is recorded as `rolledBack`
    // (its `isLive` false), which the next deploy respects instead of putting it back live.
    return { id, props: outs, inputs };
  },

  async update(_id, olds, news) {
    const c = await ctx.client();
    const before = state(olds);
    const args = inputs(news);
    if (choosesAnew(olds, news)) {
      // The id keeps naming the version chosen at create; the state's `version` is the one now.
      const chosen = await choose(ctx, c, args, {
        reinstated: reinstates(olds, news),
        republish: olds.pinnedVersion !== undefined,
      });
      const { detail, origin, activation, verification, promotion, rolledBack } = chosen;
      const kept = promotion ? { ...news, promotion } : news;
      const offAir = offAirAfter(args, detail.version, rolledBack, activation !== "none");
      return {
        outs: outputs(
          offAir ? { ...kept, offAir } : kept,
          detail,
          origin,
          activation,
          verification,
          asRecorded(rolledBack),
        ),
      };
    }
    let detail = await c.agents.get(args.agentId, { version: before.version });
    detail = await syncMetadata(c, args, detail);
    let activation = before.activation;
    let verification = before.verification;
    let rolledBack: RolledBack | undefined;
    let promotion: Promotion | undefined;
    let wentLive = false;
    if (args.live && !detail.is_live) {
      // Taken off air since this stack put it live: it stays off air (the program asks again with
      // a new configuration, another pin, or a raised `reinstate`). A version the program had
      // parked (`live: false`) is asked live anew.
      if (wasTakenOffAir(before, olds, news))
        rolledBack = await takenOffAir(
          c,
          args.agentId,
          before.version,
          detail.live_version,
          before.rolledBack,
        );
      else {
        // A late `live: true` is promoted like a publish: checked before its test calls, and again
        // right before the activation when they ran.
        const checked = await enforcePromotion(ctx, args, before.version, "activate");
        verification = await verifyBeforeLive(c, args.agentId, args.verify, detail, { signal: ctx.signal });
        const proof = await promotionBeforeLive(ctx, args, before.version, checked, verification);
        activation = await goLive(c, args.agentId, before.version);
        detail = { ...detail, is_live: true };
        wentLive = true;
        if (proof) promotion = promotionRecord(proof);
      }
    }
    // What was promoted stays on record: a label or notes change publishes nothing.
    const kept =
      promotion !== undefined
        ? { ...news, promotion }
        : olds.promotion !== undefined
          ? { ...news, promotion: olds.promotion }
          : news;
    const offAir = offAirAfter(args, before.version, rolledBack, wentLive);
    return {
      outs: outputs(
        offAir ? { ...kept, offAir } : kept,
        detail,
        before.origin,
        activation,
        verification,
        asRecorded(rolledBack),
      ),
    };
  },

  async delete() {
    // Removing an AgentVersion never deletes history: the version stays published in the service.
  },
});

/**
 * The AgentVersion's handlers as the engine calls them: every property map read with the
 * bookkeeping at the top level (either layout, `layout.ts`), and the inputs handed back (`check`,
 * `read`) with it under `__draft`, which the engine does not display.
 */
function withDraftLayout(ctx: ProviderContext, h: ReturnType<HandlerFactory>): ReturnType<HandlerFactory> {
  return {
    check: async (olds, news) => {
      // A checked input fed back (the plan) is recomputed, not refused.
      const before = withoutPlan(flatDraft(olds));
      // An agent named by id: what the class takes from the Agent, from the one this process served.
      const byId = completedById(before, withoutPlan(flatDraft(news)));
      if (byId.problem) return { inputs: news, failures: [{ property: "agentId", reason: byId.problem }] };
      const flat = byId.inputs;
      const given = withContentHash(flat, UNKNOWN);
      // Only the Agent's checked hash is known: the preview of its change, its write to come.
      const agentWrites = given.contentHash !== flat.contentHash;
      const r = await checkVersion(ctx, before, given, agentWrites);
      return r.inputs ? { ...r, inputs: foldedDraft(r.inputs) } : r;
    },
    diff: (id, olds, news) => h.diff(id, flatDraft(olds), withoutPlan(flatDraft(news))),
    create: async (props) => {
      const r = await h.create(withoutPlan(flatDraft(props)));
      return { ...r, outs: r.outs && withoutPlan(r.outs) };
    },
    read: async (id, props) => {
      const r = await h.read(id, withoutPlan(flatDraft(props)));
      return r.inputs ? { ...r, inputs: foldedDraft(r.inputs) } : r;
    },
    update: async (id, olds, news) => {
      const r = await h.update(id, withoutPlan(flatDraft(olds)), withoutPlan(flatDraft(news)));
      return { ...r, outs: r.outs && withoutPlan(r.outs) };
    },
    delete: (id, props) => h.delete(id, withoutPlan(flatDraft(props))),
  };
}

/**
 * `props` without the preview's plan (`plan.ts`): said at the preview of the step that computes it,
 * never kept as an output (a later preview would say it again).
 */
function withoutPlan(props: Props): Props {
  if (!(PLAN_KEY in props)) return props;
  const { [PLAN_KEY]: _plan, ...rest } = props;
  return rest;
}

export const agentVersionProvider: HandlerFactory = (ctx) => withDraftLayout(ctx, handlers(ctx));

/**
 * The handlers as the dynamic resource's state holds them: the outcome (how the version was
 * chosen, its activation, verification, promotion, blocked reasons, a rollback since) under one
 * output, `__outcome` (`layout.ts`), which the class registers instead of six properties. Every
 * property map is read in either layout; the handlers, the plugin and the GitOps tools see the
 * fields at the top level.
 */
function withOutcomeLayout(h: ReturnType<HandlerFactory>): ReturnType<HandlerFactory> {
  const folded = <R extends { outs?: Props }>(r: R): R =>
    r.outs ? { ...r, outs: foldedOutcome(r.outs) } : r;
  return {
    check: async (olds, news) => {
      const r = await h.check(flatOutcome(olds), flatOutcome(news));
      return r.inputs ? { ...r, inputs: foldedOutcome(r.inputs) } : r;
    },
    diff: (id, olds, news) => h.diff(id, flatOutcome(olds), flatOutcome(news)),
    create: async (props) => folded(await h.create(flatOutcome(props))),
    read: async (id, props) => {
      const r = await h.read(id, flatOutcome(props));
      return {
        ...r,
        ...(r.props ? { props: foldedOutcome(r.props) } : {}),
        ...(r.inputs ? { inputs: foldedOutcome(r.inputs) } : {}),
      };
    },
    update: async (id, olds, news) => folded(await h.update(id, flatOutcome(olds), flatOutcome(news))),
    delete: (id, props) => h.delete(id, flatOutcome(props)),
  };
}

/** The AgentVersion's provider side as the dynamic resource calls it (`registry.ts`). */
export const agentVersionDynamicProvider: HandlerFactory = (ctx) =>
  withOutcomeLayout(agentVersionProvider(ctx));
