/**
 * The Agent's provider side: runs in the dynamic-provider process.
 *
 * - `check` refuses inputs the Agent does not have, validates every documented rule at preview
 *   (`rules.ts`; the catalogue rules only for a new or changed configuration, so a no-op preview
 *   makes no request) and computes `contentHash`, so an AgentVersion knows at preview that a new
 *   version is coming.
 * - `diff` compares what the state last saw of the service with the declaration, field by field
 *   (`projection.ts`): server defaults, derived providers, system variables and ordering never
 *   cause a change.
 * - `create` creates the agent (V0 draft), or with `adoptId` takes over an existing one.
 * - `update` sends one merge-patch of the changed fields (removed fields as `null`) guarded by
 *   `If-Match` with the revision in state: an edit made elsewhere is never overwritten. It knows
 *   which version the patch lands on from a read of the agent, or in a change of many agents from
 *   the agent list (`summaries.ts`), and checks where the patch landed.
 * - `read` (refresh) brings the service's values of the managed fields back into state and inputs,
 *   so the next preview shows the drift. After a rollback took off air the version this stack last
 *   wrote, it reads that version: a rollback is not drift of the configuration (the AgentVersion
 *   says the version stays off air), and the next deploy writes no draft.
 * - `delete` takes the agent off air (the service has no delete) and leaves it in the dashboard.
 *
 * Every write and read also records `configDigest`, the environment-independent digest of the
 * configuration (`projection.ts`), with the names of the knowledge bases and analysis groups it
 * attaches (`attachmentNames`, from the listings `names.ts` reads once per deployment).
 */
import { z } from "zod";
import type { AgentDetailT, AgentSummaryT, VoiceAgentClient } from "../../client";
import { ApiError } from "../../client/errors";
import { unlessGone } from "../../provider/gone";
import { pickWritten, refreshedInputs, unknownInputs } from "../../provider/managed";
import { deepEqual, dropUndefined, type JsonObject, mergePatch, toWire } from "../../provider/normalize";
import type { HandlerFactory, Props } from "../../provider/resource";
import { parseProps } from "../../provider/state";
import { containsUnknown, UNKNOWN } from "../../provider/unknowns";
import { AgentBody, AgentCreateBody, defaultAgentConfig, parseWith } from "../../spec";
import { configurationDigest } from "../agentVersion/reuse";
import { rowThatTookOff } from "../agentVersion/rollback";
import { namesOf } from "./names";
import {
  AGENT_FIELDS,
  AGENT_OWN_INPUTS,
  type AttachmentNames,
  agentChanges,
  attachedIds,
  CONTENT_HASH_INPUT,
  configDigest,
  configurationHash,
  declaredConfig,
  fullConfig,
  observedConfig,
  portableConfig,
} from "./projection";
import { agentFailures, catalogueReader } from "./rules";
import { listedSummary } from "./summaries";

/** The Agent's inputs after `check`: its configuration (checked against the spec) and its own inputs. */
const AgentInputs = z.looseObject({
  name: z.string(),
  adoptId: z.string().optional(),
  createMarker: z.string().optional(),
  contentHash: z.string().optional(),
});

/** The Agent's state: its inputs, what the service holds of its managed fields, and these outputs. */
const AgentState = z.looseObject({
  name: z.string(),
  adoptId: z.string().optional(),
  agentId: z.string(),
  draftVersion: z.number().int(),
  documentRevision: z.number().int(),
  // Absent from states written by earlier releases: the AgentVersion then reads the draft.
  draftPublished: z.boolean().optional(),
  draftHash: z.string().optional(),
  liveVersion: z.number().int().nullable(),
  latestVersion: z.number().int(),
  dashboardUrl: z.string().nullable().optional(),
  contentHash: z.string(),
  knownVersions: z.record(z.string(), z.number().int()).optional(),
  // Absent from states written by earlier releases.
  configDigest: z.string().optional(),
  attachmentNames: z
    .object({
      knowledgeBases: z.record(z.string(), z.string()),
      analysisGroups: z.record(z.string(), z.string()),
    })
    .optional(),
});
type AgentState = z.infer<typeof AgentState>;

const inputs = (props: Props) => parseProps(AgentInputs, props, "Agent inputs");
const state = (props: Props) => parseProps(AgentState, props, "Agent state");
/**
 * What `read` and `delete` accept: the state, or only the inputs (a resource adopted into the
 * state by `pulumi import` or a recovery has no outputs yet).
 * Made once: zod compiles a schema at its first parse (a schema made per call is compiled per
 * call).
 */
const StoredAgentState = AgentState.partial();
const stored = (props: Props) => parseProps(StoredAgentState, props, "Agent state");

/** The wire body for `config`, with the system variables the service holds sent back exactly as read. */
function wireBody(config: JsonObject, current?: AgentDetailT): JsonObject {
  const body = toWire(config) as JsonObject;
  if (Array.isArray(body.variables)) {
    const held = current?.variables ?? defaultAgentConfig().variables;
    const system = new Map(held.filter((v) => v.system_defined).map((v) => [v.key, { ...v }]));
    const custom: JsonObject[] = [];
    for (const v of body.variables) {
      if (typeof v !== "object" || v === null || Array.isArray(v)) continue;
      const sys = typeof v.key === "string" ? system.get(v.key) : undefined;
      if (!sys) custom.push(v);
      else if (typeof v.default_value === "string" || v.default_value === null)
        sys.default_value = v.default_value;
    }
    body.variables = [...custom, ...[...system.values()].map((v) => ({ ...v }))];
  }
  return body;
}

/** `body` as the typed patch the client sends (the check validated it; this re-validates cheaply). */
function patchBody(body: JsonObject) {
  const parsed = parseWith(AgentBody, body);
  if (!parsed.ok) throw new Error(`Agent: invalid patch: ${parsed.issues.map((i) => i.message).join("; ")}`);
  return parsed.data;
}

/**
 * The names of the knowledge bases and analysis groups `detail` attaches, as the workspace names
 * them now: from the process's listings (one per kind per deployment, forgotten when a
 * KnowledgeBase or AnalysisGroup writes), never from names recorded earlier, so a rename reaches
 * `configDigest` at the agent's next write or read.
 */
async function attachmentNames(c: VoiceAgentClient, detail: AgentDetailT) {
  return namesOf(c, attachedIds(fullConfig(detail)));
}

/** The outputs recorded in state for an agent read back as `detail`. */
function outputs(
  props: Props,
  detail: AgentDetailT,
  knownVersions: Record<string, number>,
  names: AttachmentNames,
): Record<string, unknown> {
  const observed = observedConfig(detail, declaredConfig(props));
  return dropUndefined({
    ...props,
    knownVersions,
    // The environment-independent digest: equal in two stacks (two workspaces) holding the same
    // configuration, whatever the ids of their knowledge bases and analysis groups.
    configDigest: configDigest(portableConfig(fullConfig(detail), names)),
    attachmentNames: names,
    ...observed,
    agentId: detail.id,
    draftVersion: detail.version,
    documentRevision: detail.document_revision,
    // What the AgentVersion needs to publish this version without reading it first.
    draftPublished: detail.is_published,
    draftHash: configurationDigest(detail),
    liveVersion: detail.live_version ?? null,
    latestVersion: detail.latest_version,
    dashboardUrl: detail.dashboard_url ?? null,
    // The hash of what the service holds: after a refresh that found a change made elsewhere (or
    // by an interrupted up), the AgentVersion sees a new hash and publishes it on the next up.
    contentHash: configurationHash(observed),
  });
}

/**
 * `known` with the version the stack last wrote, when `written` shows it was published since: a
 * patch lands on a new version number only when the one before was frozen. Its configuration is
 * the one `contentHash` describes (the AgentVersion publishes it under `If-Match`, and a refresh
 * updates the hash); the AgentVersion still compares the whole configuration before reusing it.
 */
export function remember(
  known: Record<string, number> | undefined,
  last: { contentHash: string; draftVersion: number },
  written: AgentDetailT,
): Record<string, number> {
  const next = { ...(known ?? {}) };
  if (written.version !== last.draftVersion) next[last.contentHash] = last.draftVersion;
  const newest = Object.entries(next).sort(([, a], [, b]) => b - a);
  return Object.fromEntries(newest.slice(0, 100));
}

/**
 * The version a configuration patch applies to: the open draft, else the live version (a patch
 * branches a draft from it), else the latest. One read in the usual case, two after a rollback.
 */
export async function workingVersion(client: VoiceAgentClient, agentId: string): Promise<AgentDetailT> {
  const latest = await client.agents.get(agentId);
  if (!latest.is_published || latest.live_version === null || latest.live_version === latest.version) {
    return latest;
  }
  return client.agents.get(agentId, { version: "live" });
}

/**
 * After a rollback took off air the version this stack last wrote (`own`: no draft is open, and the
 * live version is older), that version: the configuration the program declares is still the one it
 * holds, so a refresh brings in no change and the next deploy writes nothing (the AgentVersion says
 * the version stays off air). Undefined otherwise (a draft is open, or the version was never live:
 * a failed verification, `live: false`). Two reads, only when the live version is older than `own`.
 */
async function rolledBackOwn(
  c: VoiceAgentClient,
  working: AgentDetailT,
  own: number | undefined,
): Promise<AgentDetailT | undefined> {
  if (own === undefined || !working.is_published || working.version >= own) return undefined;
  const mine = await unlessGone(c.agents.get(working.id, { version: own }));
  if (!mine?.is_published || mine.is_live) return undefined;
  return (await rowThatTookOff(c, working.id, own))?.action === "rollback" ? mine : undefined;
}

/**
 * The refusal of a write that would overwrite a change made outside Pulumi: the working draft is at
 * revision `current`, the stack last saw `expected`. Nothing was written.
 */
function changedOutside(
  name: string,
  agentId: string,
  current: number | undefined,
  expected: number | undefined,
  cause?: ApiError,
): Error {
  return new Error(
    `Agent "${name}" (${agentId}) was changed outside Pulumi: its working draft is at revision ` +
      `${current ?? "?"}, but this stack last saw revision ${expected ?? "?"}. Nothing was written. ` +
      "Run `pulumi refresh` to bring the change into the stack (the next preview shows it as drift), " +
      `then \`pulumi up\` again.${cause ? ` (request ${cause.requestId ?? "unknown"})` : ""}`,
    cause ? { cause } : undefined,
  );
}

/** Turns the service's refusals into messages that say what happened and what to do next. */
function explain(err: unknown, name: string, agentId: string, expectedRevision?: number): never {
  if (!(err instanceof ApiError)) throw err;
  const request = `(request ${err.requestId ?? "unknown"})`;
  if (err.code === "revision_conflict")
    throw changedOutside(name, agentId, err.currentRevision, expectedRevision, err);
  if (err.code === "draft_ambiguous") {
    throw new Error(
      `Agent "${name}" (${agentId}) has several open drafts (versions ${(err.candidates ?? []).join(", ")}), ` +
        "so Pulumi cannot tell which one to write. Publish or discard the extra drafts in the dashboard, " +
        `then run \`pulumi refresh\` and \`pulumi up\`. ${request}`,
      { cause: err },
    );
  }
  throw err;
}

/**
 * The fields in which the draft a patch landed on (`written`) differs from what was declared over
 * the version read before the write (`read`): none, unless the patch landed on another draft than
 * the one read or branched from it. Revisions count per version, so a draft opened elsewhere from
 * another version between the read and the write can carry the very revision the `If-Match` names,
 * and the patch then lands on a mix nobody declared. The declared fields must read back as
 * declared; every other field as the version read held it (but those `patch` resets to the default).
 */
export function landingDifferences(
  read: AgentDetailT,
  written: AgentDetailT,
  declared: JsonObject,
  patch: JsonObject,
): string[] {
  const wrote = observedConfig(written, declared);
  const [before, after] = [fullConfig(read), fullConfig(written)];
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  const differs = (k: string) =>
    k in declared
      ? !deepEqual(wrote[k] ?? null, declared[k] ?? null)
      : // A field the program stopped declaring was reset by the patch (`null`): the service's default.
        !(k in patch) && !deepEqual(before[k] ?? null, after[k] ?? null);
  return [...keys].filter(differs).sort();
}

/**
 * The refusal of a patch that landed on a draft holding another configuration than the version it
 * was read from (see {@link landingDifferences}): nothing is published or put live, since the
 * AgentVersion depends on this write.
 */
function landedElsewhere(name: string, read: AgentDetailT, written: AgentDetailT, fields: string[]): Error {
  return new Error(
    `Agent "${name}" (${read.id}): the change was written onto draft version ${written.version}, which does not hold ` +
      `version ${read.version}'s configuration (it differs in ${fields.join(", ")}): a draft was opened from another ` +
      "version outside Pulumi between this deploy's read and its write. Nothing was published or put live. " +
      `Discard draft version ${written.version} in the dashboard (or publish it there if it is wanted), then run ` +
      "`pulumi refresh` and `pulumi up` again.",
  );
}

/** Writes `patch` onto the draft of `now` under `If-Match`, and checks where it landed. */
async function patchAndCheck(
  c: VoiceAgentClient,
  name: string,
  now: AgentDetailT,
  patch: JsonObject,
  declared: JsonObject,
): Promise<AgentDetailT> {
  const written = await c.agents
    .patch(now.id, patchBody(wireBody(patch, now)), { ifMatch: now.document_revision })
    .catch((err) => explain(err, name, now.id, now.document_revision));
  const differs = landingDifferences(now, written, declared, patch);
  if (differs.length > 0) throw landedElsewhere(name, now, written, differs);
  return written;
}

/**
 * The patch written without reading the agent first, when its summary in the agent list (`listed`,
 * `summaries.ts`) shows the version this stack last wrote (`own`) both live and latest: no draft is
 * open, so the patch branches one from `own`, which is frozen and holds what the stack last saw,
 * and the `If-Match` names own's revision as the stack last saw it. Undefined, with nothing
 * written, when the summary shows anything else or when the revision moved (a label or notes
 * edit, or a draft opened since the listing): the update then reads the agent, as in every other
 * case.
 *
 * The answer must show the draft the patch opened from `own`: the next version number, the
 * revision one past own's, `own` still live, the declared fields as declared. Anything else (the
 * listing is up to a minute old: a version put live and a draft opened from it elsewhere since can
 * carry the same revision) reads `own` and compares, as {@link patchAndCheck} does with the version
 * it read: nothing is published or put live on a mix nobody declared.
 */
async function patchOverOwnLive(
  c: VoiceAgentClient,
  name: string,
  before: AgentState,
  listed: AgentSummaryT,
  patch: JsonObject,
  declared: JsonObject,
): Promise<AgentDetailT | undefined> {
  const own = before.draftVersion;
  if (listed.live_version !== own || listed.latest_version !== own) return undefined;
  let written: AgentDetailT;
  try {
    written = await c.agents.patch(before.agentId, patchBody(wireBody(patch)), {
      ifMatch: before.documentRevision,
    });
  } catch (err) {
    if (err instanceof ApiError && err.code === "revision_conflict") return undefined;
    return explain(err, name, before.agentId, before.documentRevision);
  }
  const opened =
    written.version === own + 1 &&
    !written.is_published &&
    written.document_revision === before.documentRevision + 1 &&
    written.live_version === own &&
    deepEqual(observedConfig(written, declared), declared);
  if (opened) return written;
  const parent = await c.agents.get(before.agentId, { version: own });
  const differs = landingDifferences(parent, written, declared, patch);
  if (differs.length > 0) throw landedElsewhere(name, parent, written, differs);
  return written;
}

/** The managed fields the state last saw (olds) and those the program declares (news), as a patch base. */
function lastSeen(olds: AgentState, declared: JsonObject): JsonObject {
  const seen: JsonObject = {};
  for (const key of new Set([...Object.keys(declared), ...Object.keys(declaredConfig(olds))])) {
    seen[key] = (olds[key] as JsonObject[string] | undefined) ?? null;
  }
  return seen;
}

/**
 * Whether version `version` (the one this stack last wrote) was published holding what the stack
 * last saw (`seen`): the stack's own version, frozen, whatever is live now.
 */
async function heldBack(
  c: VoiceAgentClient,
  agentId: string,
  version: number,
  seen: JsonObject,
): Promise<boolean> {
  const own = await unlessGone(c.agents.get(agentId, { version }));
  return own?.is_published === true && deepEqual(observedConfig(own, seen), seen);
}

/** What an AgentVersion's preview reads of its agent's state (`agentAsLastSeen`). */
type SeenAgent = { contentHash: string; draftVersion: number; knownVersions?: Record<string, number> };

/**
 * What this provider process saw of each agent whose configuration changes (by agent id), copied
 * from the state its `diff` is handed (the engine calls it before the AgentVersions that read the
 * agent are checked), and forgotten at its write: in the preview of the agent's change its outputs
 * are unknown to the program (the engine plans a dynamic resource's update as its inputs), so an
 * AgentVersion's `check` reads here the versions the stack has seen, to say which version the
 * deploy brings back (`plan.ts`). A no-op keeps nothing.
 */
const changing = new Map<string, SeenAgent>();

/** What `diff` recorded of the agent whose change is previewed, or undefined. */
export function agentAsLastSeen(agentId: string): SeenAgent | undefined {
  return changing.get(agentId);
}

/** A copy of what an AgentVersion's preview reads of `olds` (the state), or undefined. */
function seenOf(olds: Props): SeenAgent | undefined {
  const { contentHash, draftVersion, knownVersions } = olds;
  if (typeof contentHash !== "string" || typeof draftVersion !== "number") return undefined;
  const known =
    knownVersions !== null && typeof knownVersions === "object"
      ? Object.fromEntries(
          Object.entries(knownVersions).filter((e): e is [string, number] => typeof e[1] === "number"),
        )
      : undefined;
  return { contentHash, draftVersion, ...(known ? { knownVersions: known } : {}) };
}

/** The Agent's outputs an AgentVersion takes from it (`agentVersion/fromAgent.ts`), beside its id. */
export const DRAFT_OUTPUTS = [
  "contentHash",
  "knownVersions",
  "draftVersion",
  "documentRevision",
  "draftPublished",
  "draftHash",
  "latestVersion",
] as const;

/**
 * What this provider process served of each Agent of the deployment, by agent id, as a program has
 * the Agent at that step: its outputs (state, or what `create`, `update` or `read` returned); in the
 * preview of a change of its configuration, its checked inputs over its state, with its checked hash
 * (`__contentHash`) and every output the write will change unknown (the engine plans a change's
 * outputs as its checked inputs). An AgentVersion that names its agent by id (`agentId`) reads it
 * here (`agentVersion/byId.ts`): the engine handles the Agent before the AgentVersion whose
 * `agentId` is one of its outputs, in the same process (the dynamic-provider process, or the
 * plugin's).
 */
const served = new Map<string, Props>();

/** What this process served of agent `agentId` in this deployment (see {@link served}), if anything. */
export function agentAsServed(agentId: string): Props | undefined {
  return served.get(agentId);
}

/** Records the Agent `id` as the step hands it: its outputs, or with `news`, the preview of a change. */
function serve(id: string, outs: Props, news?: Props): void {
  const hash = news?.[CONTENT_HASH_INPUT];
  if (!news || hash === undefined || hash === outs.contentHash) {
    served.set(id, { ...outs, agentId: id });
    return;
  }
  const unknown = Object.fromEntries(DRAFT_OUTPUTS.map((k) => [k, UNKNOWN]));
  served.set(id, { ...outs, ...news, ...unknown, agentId: id, [CONTENT_HASH_INPUT]: hash });
}

const agentHandlers: HandlerFactory = (ctx) => {
  const readCatalogue = catalogueReader(() => ctx.client());
  return {
    async check(olds, news) {
      const refused = unknownInputs(AGENT_FIELDS, news, AGENT_OWN_INPUTS, "Agent");
      if (news.adoptId !== undefined && typeof news.adoptId !== "string") {
        refused.push({ property: "adoptId", reason: "adoptId: must be a string (an agent id)" });
      }
      if (refused.length > 0) return { inputs: news, failures: refused };
      const declared = declaredConfig(news);
      // The catalogue rules read the service: they run when the configuration is new or changed,
      // so a no-op preview or `up` makes no request at all.
      const changed = !deepEqual(declaredConfig(olds), declared);
      if (changed) ctx.warmUp();
      const failures = await agentFailures(
        pickWritten(AGENT_FIELDS, news),
        (config) => wireBody(config),
        changed ? readCatalogue : undefined,
      );
      if (failures.length > 0 || containsUnknown(declared)) return { inputs: news, failures };
      // Under a `__` name, which the engine does not display: a reviewer reading the preview's diff
      // sees the fields the person changed, not the hash (the report reads it: gitops/preview.ts).
      return { inputs: { ...news, [CONTENT_HASH_INPUT]: configurationHash(declared) } };
    },

    async diff(id, olds, news) {
      const changed = agentChanges(olds, news);
      const seen = changed.length > 0 ? seenOf(olds) : undefined;
      if (seen) changing.set(id, seen);
      else changing.delete(id);
      serve(id, olds, changed.length > 0 ? news : undefined);
      return { changes: changed.length > 0, diffs: changed };
    },

    async create(props) {
      const c = await ctx.client();
      const args = inputs(props);
      const declared = declaredConfig(props);
      /** Takes over an existing agent: writes the declaration onto its working version when it differs. */
      const takeOver = async (current: AgentDetailT) => {
        const observed = observedConfig(current, declared);
        const patch = mergePatch(observed, declared);
        if (Object.keys(patch).length === 0)
          return {
            id: current.id,
            outs: outputs(props, current, {}, await attachmentNames(c, current)),
          };
        const written = await patchAndCheck(c, args.name, current, patch, declared);
        const last = { contentHash: configurationHash(observed), draftVersion: current.version };
        const names = await attachmentNames(c, written);
        return { id: written.id, outs: outputs(props, written, remember({}, last, written), names) };
      };
      if (args.adoptId) return takeOver(await workingVersion(c, args.adoptId));
      const body = parseWith(AgentCreateBody, wireBody(declared));
      if (!body.ok) throw new Error(`Agent: invalid body: ${body.issues.map((i) => i.message).join("; ")}`);
      // V0's notes keep the create marker (a version's notes belong to the AgentVersion that
      // publishes it): one request per agent instead of two. The marker is the resource's own
      // (`createMarker`), so a create Pulumi runs again after an interrupted `up` finds the agent
      // the killed attempt made and adopts it instead of making a second one.
      const created = await c.agents.create(body.data, {
        keepMarker: true,
        ...(args.createMarker !== undefined ? { marker: args.createMarker, adoptExisting: true } : {}),
      });
      // An agent an earlier attempt made may have moved on since, or the program may have changed.
      if (
        created.latest_version !== created.version ||
        !deepEqual(observedConfig(created, declared), declared)
      ) {
        return takeOver(await workingVersion(c, created.id));
      }
      return { id: created.id, outs: outputs(props, created, {}, await attachmentNames(c, created)) };
    },

    async read(id, props) {
      const c = await ctx.client();
      const recorded = stored(props);
      const working = await unlessGone(workingVersion(c, id));
      // Gone from the service (another workspace or key): the resource leaves the state.
      if (!working) return {};
      // Rolled back: the stack's own version, not the one put back live, is what it declares.
      const detail = (await rolledBackOwn(c, working, recorded.draftVersion)) ?? working;
      const outs = outputs(props, detail, recorded.knownVersions ?? {}, await attachmentNames(c, detail));
      return {
        id,
        props: outs,
        inputs: refreshedInputs(AGENT_FIELDS, props, outs, ["adoptId", "createMarker", "attachedNames"]),
      };
    },

    async update(id, olds, news) {
      changing.delete(id);
      const c = await ctx.client();
      const before = state(olds);
      const args = inputs(news);
      const declared = declaredConfig(news);
      const seen = declaredConfig(before);
      const done = async (written: AgentDetailT) => ({
        outs: outputs(
          news,
          written,
          remember(before.knownVersions, before, written),
          await attachmentNames(c, written),
        ),
      });
      // In a change of many agents, the agent list may show this one as the stack left it. Not for
      // a patch that writes nothing, or writes `variables` (the system ones are sent back as read).
      const overSeen = mergePatch(lastSeen(before, declared), declared);
      if (Object.keys(overSeen).length > 0 && !("variables" in overSeen)) {
        const listed = await listedSummary(c, id);
        const written = listed && (await patchOverOwnLive(c, args.name, before, listed, overSeen, declared));
        if (written) return done(written);
      }
      // What the patch lands on: the open draft, else the version it branches a draft from (the
      // live one, else the latest), read first. The If-Match alone cannot tell them apart: a draft
      // opened elsewhere from another version can carry the very revision this stack last saw.
      const now = await workingVersion(c, id);
      let base: JsonObject;
      if (deepEqual(observedConfig(now, seen), seen)) {
        // It holds what the stack last saw (a label or notes edit, or a field the program does not
        // set, may have moved its revision): the patch overwrites nothing of anyone's.
        base = lastSeen(before, declared);
      } else if (
        now.is_published &&
        now.version < before.draftVersion &&
        (await heldBack(c, id, before.draftVersion, seen))
      ) {
        // The version this stack last wrote was published and not put live (a failed verification,
        // `live: false`, a refused activation) or taken off air since (the live one is older: a
        // newer live version was made elsewhere, and is a conflict), and no draft is open: the
        // draft the patch branches holds the parent's configuration, and the declared one is
        // written over it, compare-and-set against that parent.
        base = observedConfig(now, declared);
      } else {
        throw changedOutside(args.name, id, now.document_revision, before.documentRevision);
      }
      const patch = mergePatch(base, declared);
      // Going back to what the parent holds writes nothing: the parent is the version to publish.
      if (Object.keys(patch).length === 0) return done(now);
      const written = await patchAndCheck(c, args.name, now, patch, declared);
      return done(written);
    },

    async delete(id, props) {
      changing.delete(id);
      const c = await ctx.client();
      const recorded = stored(props);
      const detail = await unlessGone(c.agents.get(id));
      if (detail && detail.live_version !== null) await c.versions.activate(id, null);
      // An open draft that still attaches this stack's knowledge bases or analysis groups would keep
      // them "in use" and block their deletion later in the same destroy: detach them from the draft.
      if (detail && !detail.is_published) {
        const detach: { knowledge_base_ids?: string[]; analysis_group_ids?: string[] } = {};
        const ours = (v: unknown) => new Set(Array.isArray(v) ? v.filter((x) => typeof x === "string") : []);
        const kb = ours(props.knowledgeBaseIds);
        const ag = ours(props.analysisGroupIds);
        const keptKb = detail.knowledge_base_ids.filter((x) => !kb.has(x));
        const keptAg = detail.analysis_group_ids.filter((x) => !ag.has(x));
        if (keptKb.length !== detail.knowledge_base_ids.length) detach.knowledge_base_ids = keptKb;
        if (keptAg.length !== detail.analysis_group_ids.length) detach.analysis_group_ids = keptAg;
        if (Object.keys(detach).length > 0) {
          // Best effort: the agent goes off air either way; a failure here surfaces when the
          // knowledge base or group is deleted, naming the agent that still uses it.
          await c.agents.patch(id, detach, { ifMatch: detail.document_revision }).catch(() => undefined);
        }
      }
      // The service has no delete: the agent stays in the dashboard, off air.
      console.error(
        `pulumi-voice-agent: agent "${recorded.name}" (${id}) is now off air and remains in the dashboard (the service has no delete).`,
      );
    },
  };
};

/** The Agent's handlers, each Agent recorded as served (see {@link served}) by every step that returns its outputs. */
export const agentProvider: HandlerFactory = (ctx) => {
  const h = agentHandlers(ctx);
  return {
    ...h,
    async create(props) {
      const r = await h.create(props);
      if (r.outs) serve(r.id, r.outs as Props);
      return r;
    },
    async read(id, props) {
      const r = await h.read(id, props);
      if (r.id && r.props) serve(r.id, r.props as Props);
      return r;
    },
    async update(id, olds, news) {
      const r = await h.update(id, olds, news);
      if (r.outs) serve(id, r.outs as Props);
      return r;
    },
  };
};
