/**
 * AgentVersion: publishing the agent's working draft as a frozen version, and putting it live.
 *
 * - A configuration change of the {@link Agent} changes its `contentHash`, which replaces this
 *   resource: the replacement publishes the draft the Agent wrote (guarded by `If-Match` with the
 *   revision the Agent wrote) and activates it, before the old resource is removed (removing an
 *   AgentVersion never deletes history).
 * - Publishing is content-addressed: when a published version already holds exactly the draft's
 *   configuration it is reused instead of publishing a duplicate, so a Git revert puts the earlier
 *   version number back live (the service records a rollback). The Agent records the versions
 *   this stack saw published by content hash (`knownVersions`), so finding that version costs one
 *   read, whatever the agent's history; only versions published outside the stack's sight (the
 *   dashboard, an interrupted `up`) are listed and compared.
 * - `version` pins an existing published version instead (a rollback without publishing).
 * - `label` and `notes` change in place on the published version; `live` moves the live pointer.
 * - `read` (refresh) notices when the live pointer moved outside Pulumi and shows it as drift.
 */
import * as pulumi from "@pulumi/pulumi";
import type { AgentDetailT, ApiError, VoiceAgentClient } from "../client";
import { client } from "../provider/context";
import { unlessGone } from "../provider/gone";
import type { ResourceHandler } from "../provider/handlers";
import { canonicalJson, containsUnknown, dropUndefined } from "../provider/normalize";
import { withProvider } from "../provider/providerResource";
import { dynamicProvider } from "../provider/shim";
import type { Agent } from "./agent";

type In<T> = pulumi.Input<T>;

/** Inputs of an {@link AgentVersion}. */
export interface AgentVersionArgs {
  /** The agent whose working draft to publish. Its configuration hash decides when a new version is needed. */
  agent: Agent;
  /** Short name of the version, e.g. a release tag; editable after publishing. Default: none. */
  label?: In<string>;
  /** Free text about the version, e.g. the commit message; editable after publishing. Default: none. */
  notes?: In<string>;
  /** Put this version live (make it answer calls). Default `true`. `false` publishes without moving the live pointer. */
  live?: In<boolean>;
  /**
   * Pin an existing published version by number instead of publishing the draft: a rollback that
   * publishes nothing. Default: unset (publish the draft).
   */
  version?: In<number>;
}

/** A published version of an agent, and whether it is live. */
export class AgentVersion extends pulumi.dynamic.Resource {
  /** The agent's id. */
  declare readonly agentId: pulumi.Output<string>;
  /** The published version number. */
  declare readonly version: pulumi.Output<number>;
  /** The version's uuid (accepted by the place-a-call operation as `agent_version_id`). */
  declare readonly versionId: pulumi.Output<string>;
  /** Whether this version answers calls (as last read). */
  declare readonly isLive: pulumi.Output<boolean>;
  /** `published` (a new version), `reused` (a published version already held this configuration) or `pinned`. */
  declare readonly origin: pulumi.Output<"published" | "reused" | "pinned">;
  /** The deploy-history action of the last activation: `activate`, `rollback`, or `none`. */
  declare readonly activation: pulumi.Output<string>;
  /** Why the version cannot go live (retired model, withdrawn voice, deleted knowledge base). */
  declare readonly blockedReasons: pulumi.Output<string[]>;
  declare readonly label: pulumi.Output<string | undefined>;
  declare readonly notes: pulumi.Output<string | undefined>;

  constructor(name: string, args: AgentVersionArgs, opts?: pulumi.CustomResourceOptions) {
    const publishing = args.version === undefined;
    super(
      dynamicProvider("agentVersion"),
      name,
      {
        agentId: args.agent.agentId,
        contentHash: publishing ? args.agent.contentHash : undefined,
        // Where to look for a published version that already holds the draft's configuration.
        knownVersion: publishing
          ? pulumi
              .all([args.agent.contentHash, args.agent.knownVersions])
              .apply(([hash, known]) => known?.[hash])
          : undefined,
        knownUpTo: publishing
          ? args.agent.knownVersions.apply((known) => Math.max(-1, ...Object.values(known ?? {})))
          : undefined,
        draftVersion: args.agent.draftVersion,
        documentRevision: args.agent.documentRevision,
        label: args.label,
        notes: args.notes,
        live: args.live ?? true,
        pinnedVersion: args.version,
        version: undefined,
        versionId: undefined,
        isLive: undefined,
        origin: undefined,
        activation: undefined,
        blockedReasons: undefined,
      },
      withProvider({ ...opts, dependsOn: opts?.dependsOn ?? args.agent }),
      "voice-agent",
      "AgentVersion",
    );
    // A version that became blocked (a model retired, a voice withdrawn, a knowledge base deleted)
    // is flagged at preview, from the state as last read (`pulumi preview --refresh` reads it anew).
    pulumi.all([this.version, this.blockedReasons]).apply(([version, reasons]) => {
      if (reasons && reasons.length > 0) {
        pulumi.log.warn(
          `version ${version} is blocked and cannot go live again: ${reasons.join("; ")}`,
          this,
        );
      }
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Provider side.

/** Fields of an agent detail that describe the version rather than the configuration. */
const VERSION_METADATA = new Set([
  "id",
  "version",
  "version_id",
  "is_published",
  "is_live",
  "live_version",
  "latest_version",
  "document_revision",
  "label",
  "notes",
  "blocked_reasons",
  "created_at",
  "updated_at",
  "dashboard_url",
]);

/** The configuration a version holds, as canonical text: equal text means equal configuration. */
export function configurationText(detail: Record<string, unknown>): string {
  const config = Object.fromEntries(Object.entries(detail).filter(([k]) => !VERSION_METADATA.has(k)));
  return canonicalJson(config);
}

/** Publishes the draft, or finds the published version that already holds its configuration. */
async function publishOrReuse(
  c: VoiceAgentClient,
  inputs: any,
): Promise<{ detail: AgentDetailT; origin: "published" | "reused" }> {
  const draft = await c.getAgent(inputs.agentId, { version: inputs.draftVersion });
  if (draft.is_published) return { detail: draft, origin: "reused" };
  const wanted = configurationText(draft);
  for (const version of await draftCandidates(c, inputs, draft)) {
    const candidate = await c.getAgent(inputs.agentId, { version });
    if (candidate.is_published && configurationText(candidate) === wanted) {
      return { detail: candidate, origin: "reused" };
    }
  }
  try {
    const published = await c.publishVersion(
      inputs.agentId,
      draft.version,
      { label: inputs.label ?? null, notes: inputs.notes ?? null },
      { ifMatch: inputs.documentRevision },
    );
    return { detail: published, origin: "published" };
  } catch (err) {
    const e = err as ApiError;
    if (e?.code === "revision_conflict") {
      throw new Error(
        `Version ${draft.version} of agent ${inputs.agentId} was edited outside Pulumi after this stack wrote it ` +
          `(revision ${e.currentRevision ?? "?"}, expected ${inputs.documentRevision}); nothing was published. ` +
          `Run \`pulumi refresh\`, review the drift in the next preview, then \`pulumi up\`. (request ${e.requestId ?? "unknown"})`,
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
 * and is the latest, so a change in steady state reads nothing more. A stack without a record
 * (created by an older release) compares every published version once.
 */
async function draftCandidates(c: VoiceAgentClient, inputs: any, draft: AgentDetailT): Promise<number[]> {
  const recorded = typeof inputs.knownVersion === "number" ? inputs.knownVersion : undefined;
  const upTo: number = typeof inputs.knownUpTo === "number" ? inputs.knownUpTo : -1;
  if (draft.version === upTo + 1 && draft.latest_version === draft.version) {
    return recorded === undefined ? [] : [recorded];
  }
  return reuseCandidates(c, inputs.agentId, recorded, upTo, draft.version);
}

/**
 * `recorded` (when set), then the published versions of the agent above `knownUpTo`, newest first,
 * without `exclude`: where to look for a version to reuse. Also used by `voice-agent-diff --resolve`.
 */
export async function reuseCandidates(
  c: VoiceAgentClient,
  agentId: string,
  recorded: number | undefined,
  knownUpTo: number,
  exclude?: number,
): Promise<number[]> {
  const out = recorded === undefined ? [] : [recorded];
  for await (const row of c.listVersions(agentId)) {
    if (row.version <= knownUpTo) break; // newest first: the rest is known
    if (row.is_published && row.version !== exclude && !out.includes(row.version)) out.push(row.version);
  }
  return out;
}

/** Puts `version` live; a blocked version fails with its reasons. */
async function goLive(c: VoiceAgentClient, agentId: string, version: number): Promise<string> {
  try {
    const row = await c.activate(agentId, version);
    return row.action;
  } catch (err) {
    const e = err as ApiError;
    if (e?.code === "version_blocked" || e?.code === "agent_not_published") {
      throw new Error(`Version ${version} of agent ${agentId} cannot go live: ${e.message}`);
    }
    throw err;
  }
}

/** Label and notes, when the program sets them and the version holds something else. */
async function syncMetadata(c: VoiceAgentClient, inputs: any, detail: any): Promise<any> {
  const patch: Record<string, string | null> = {};
  if (inputs.label !== undefined && inputs.label !== detail.label) patch.label = inputs.label;
  if (inputs.notes !== undefined && inputs.notes !== detail.notes) patch.notes = inputs.notes;
  if (Object.keys(patch).length === 0) return detail;
  return c.patchAgent(inputs.agentId, patch, { version: detail.version });
}

function outputs(inputs: any, detail: any, origin: string, activation: string) {
  return dropUndefined({
    ...inputs,
    version: detail.version,
    versionId: detail.version_id,
    isLive: detail.is_live,
    label: detail.label ?? undefined,
    notes: detail.notes ?? undefined,
    origin,
    activation,
    blockedReasons: detail.blocked_reasons ?? [],
  });
}

export const agentVersionHandler: ResourceHandler = {
  async check(olds, news) {
    const failures: pulumi.dynamic.CheckFailure[] = [];
    // The pinned version is read when the pin is new or changed: a no-op preview reads nothing.
    const pinChanged =
      olds.pinnedVersion !== news.pinnedVersion || olds.agentId !== news.agentId || olds.live !== news.live;
    if (news.pinnedVersion !== undefined && !containsUnknown(news.pinnedVersion) && pinChanged) {
      if (!Number.isInteger(news.pinnedVersion) || news.pinnedVersion < 0) {
        failures.push({
          property: "version",
          reason: "version must be a published version number (an integer >= 0)",
        });
      } else if (!containsUnknown(news.agentId) && news.agentId) {
        // A pinned version must exist, be published, and be able to go live.
        const c = await client().catch(() => undefined);
        const detail = await c
          ?.getAgent(news.agentId, { version: news.pinnedVersion })
          .catch((e: ApiError) => e);
        if (detail && (detail as ApiError).code === "version_not_found") {
          failures.push({ property: "version", reason: `version ${news.pinnedVersion} does not exist` });
        } else if (detail && !(detail instanceof Error)) {
          if (!detail.is_published) {
            failures.push({
              property: "version",
              reason: `version ${news.pinnedVersion} is a draft: only a published version can be pinned`,
            });
          } else if (news.live && detail.blocked_reasons.length > 0) {
            failures.push({
              property: "version",
              reason: `version ${news.pinnedVersion} cannot go live: ${detail.blocked_reasons.join("; ")}`,
            });
          }
        }
      }
    }
    return { inputs: news, failures };
  },

  async diff(_id, olds, news) {
    const replaces: string[] = [];
    if (olds.agentId !== news.agentId) replaces.push("agentId");
    if ((olds.pinnedVersion ?? null) !== (news.pinnedVersion ?? null)) replaces.push("version");
    if (news.pinnedVersion === undefined && olds.contentHash !== news.contentHash)
      replaces.push("contentHash");
    const changes =
      replaces.length > 0 ||
      (news.label !== undefined && news.label !== olds.label) ||
      (news.notes !== undefined && news.notes !== olds.notes) ||
      (news.live === true && olds.isLive !== true);
    return { changes, replaces };
  },

  async create(inputs) {
    const c = await client();
    // The version's detail comes with the publish (or the comparison that found it): no read again.
    const { detail: chosen, origin } =
      inputs.pinnedVersion !== undefined
        ? {
            detail: await c.getAgent(inputs.agentId, { version: inputs.pinnedVersion }),
            origin: "pinned" as const,
          }
        : await publishOrReuse(c, inputs);
    const version: number = chosen.version;
    let detail = await syncMetadata(c, inputs, chosen);
    let activation = "none";
    if (inputs.live) {
      activation = await goLive(c, inputs.agentId, version);
      detail = { ...detail, is_live: true };
    }
    return { id: `${inputs.agentId}/${version}`, outs: outputs(inputs, detail, origin, activation) };
  },

  async read(id, props) {
    const c = await client();
    const detail = await unlessGone(c.getAgent(props.agentId, { version: props.version }));
    if (!detail) return {};
    const outs = outputs(props, detail, props.origin, props.activation);
    const inputs: Record<string, unknown> = {};
    for (const key of [
      "agentId",
      "contentHash",
      "knownVersion",
      "knownUpTo",
      "draftVersion",
      "documentRevision",
      "pinnedVersion",
    ]) {
      if (props[key] !== undefined) inputs[key] = props[key];
    }
    if (props.label !== undefined) inputs.label = outs.label;
    if (props.notes !== undefined) inputs.notes = outs.notes;
    // A version put live by Pulumi that no longer is (a rollback in the dashboard) reads as not live.
    inputs.live = props.live === true ? detail.is_live : props.live;
    return { id, props: outs, inputs };
  },

  async update(_id, olds, news) {
    const c = await client();
    let detail = await c.getAgent(news.agentId, { version: olds.version });
    detail = await syncMetadata(c, news, detail);
    let activation = olds.activation;
    if (news.live && !detail.is_live) {
      activation = await goLive(c, news.agentId, olds.version);
      detail = { ...detail, is_live: true };
    }
    return { outs: outputs({ ...news }, detail, olds.origin, activation) };
  },

  async delete() {
    // Removing an AgentVersion never deletes history: the version stays published in the service.
  },
};
