/**
 * AgentVersion: publishing the agent's working draft as a frozen version, and putting it live.
 *
 * - A configuration change of the {@link Agent} changes its `contentHash`, which updates this
 *   resource in place: it publishes the draft the Agent wrote (guarded by `If-Match` with the
 *   revision the Agent wrote) and puts it live. Its `version`, `versionId`, `origin` and
 *   `activation` outputs change (unknown at preview); its id, `<agentId>/<version>`, keeps naming the
 *   version chosen when it was created. Only another `agent` replaces it (removing an AgentVersion
 *   never deletes history).
 * - Publishing is content-addressed: when a published version already holds exactly the draft's
 *   configuration it is reused instead of publishing a duplicate, so a Git revert puts the earlier
 *   version number back live (the service records a rollback). The Agent records the versions
 *   this stack saw published by content hash (`knownVersions`), so finding that version costs one
 *   read, whatever the agent's history; only versions published outside the stack's sight (the
 *   dashboard, an interrupted `up`) are listed and compared.
 * - `version` pins an existing published version instead (a rollback without publishing); setting,
 *   changing or removing the pin also updates in place.
 * - `label` and `notes` change in place on the published version; `live` moves the live pointer.
 * - `read` (refresh) notices when the live pointer moved outside Pulumi and shows it as drift.
 *
 * This file is the program side; the provider side is `provider.ts`, and the search for a version
 * to reuse (shared with `voice-agent-diff --resolve`) is `reuse.ts`.
 */
import * as pulumi from "@pulumi/pulumi";
import type { Agent } from "../agent";
import { ServiceResource } from "../serviceResource";

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
export class AgentVersion extends ServiceResource {
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
    // Keys the inputs do not have (a misspelt `lable`, from JavaScript or YAML-loaded settings) go
    // to the provider, which refuses them by name at preview instead of dropping them.
    const { agent: _agent, label: _label, notes: _notes, live: _live, version: _version, ...unknown } = args;
    super(
      "agentVersion",
      "AgentVersion",
      name,
      {
        ...unknown,
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
        // What the Agent's last write told of the draft: a change publishes it without reading it.
        draftPublished: publishing ? args.agent.draftPublished : undefined,
        draftHash: publishing ? args.agent.draftHash : undefined,
        latestVersion: publishing ? args.agent.latestVersion : undefined,
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
      { ...opts, dependsOn: opts?.dependsOn ?? args.agent },
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
