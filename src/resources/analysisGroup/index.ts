/**
 * AnalysisGroup: a group of custom analyses run after each call, kept equal to what the program
 * declares.
 *
 * - `check` validates at preview: name bounds, item names unique, item types, `enumValues` on
 *   `enum` items only (and required there), naming each field as the program spells it.
 * - `create` creates the group, or adopts an existing one: the workspace's Default Analysis group
 *   (`adoptDefault: true`) or any group by id (`adoptId`), then writes the declaration onto it.
 * - `update` replaces the group (`PUT`). Declared items are matched by name to the group's items
 *   and sent with their ids, so an item whose fields change keeps its identity (and the history of
 *   results keyed by it); unmatched items are created, items no longer declared are removed.
 *   Group and item fields the program does not set are sent back as the service holds them.
 * - `diff` compares the declared fields; items as a set keyed by name, each by the fields set.
 * - `read` (refresh) brings the service's values back, so the next preview shows the drift.
 * - `delete` deletes the group, except an adopted Default Analysis group, which the service protects:
 *   it is left in place as it is (nothing is restored). A group still attached to an agent's draft or
 *   live version cannot be deleted: the error names the agents.
 *
 * This file is the program side; the provider side is `provider.ts`.
 */
import type * as pulumi from "@pulumi/pulumi";
import { recordAttachable } from "../attachmentNames";
import { createMarker } from "../createMarker";
import { ServiceResource } from "../serviceResource";

/** One analysis the group runs after each call. */
export interface AnalysisItemArgs {
  /** Unique within the group, 1 to 255 characters; items are matched by name across updates. */
  name: pulumi.Input<string>;
  /** What to extract; guides the analysis. Default: unset (not managed). */
  description?: pulumi.Input<string | null>;
  /** Kind of result. */
  type: pulumi.Input<"text" | "boolean" | "number" | "enum">;
  /** The allowed results of an `enum` item (required there, refused on other types). */
  enumValues?: pulumi.Input<pulumi.Input<string>[] | null>;
  /** Run this item. Service default `true`. */
  enabled?: pulumi.Input<boolean>;
}

/** Inputs of an {@link AnalysisGroup}. */
export interface AnalysisGroupArgs {
  /** Display name, 1 to 255 characters, unique in the workspace. Required unless adopting. */
  name?: pulumi.Input<string>;
  /** Free text. Default: unset (not managed); `null` clears it. */
  description?: pulumi.Input<string | null>;
  /** Run the group. Service default `true`. */
  enabled?: pulumi.Input<boolean>;
  /** The whole item set, in any order. Default: unset (the items are not managed). */
  items?: pulumi.Input<pulumi.Input<AnalysisItemArgs>[]>;
  /**
   * Manage the workspace's Default Analysis group (`User Sentiment`, `Outcome`, `Language`)
   * instead of creating a group. Destroy leaves it in place as it then is. Create only.
   */
  adoptDefault?: pulumi.Input<boolean>;
  /** Id of an existing group to take over instead of creating one. Create only. */
  adoptId?: pulumi.Input<string>;
}

/** A custom-analysis group. Attach it to agents with `analysisGroupIds: [group.id]`. */
export class AnalysisGroup extends ServiceResource {
  /** The group's id (also the resource's `id`). */
  declare readonly groupId: pulumi.Output<string>;
  /** Item ids by item name: stable while an item keeps its name. */
  declare readonly itemIds: pulumi.Output<Record<string, string>>;
  /** The declared name (unset when an adopted group's name is not managed). */
  declare readonly name: pulumi.Output<string | undefined>;
  declare readonly enabled: pulumi.Output<boolean | undefined>;

  constructor(name: string, args: AnalysisGroupArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      "analysisGroup",
      "AnalysisGroup",
      name,
      {
        ...args,
        createMarker: createMarker("voice-agent:AnalysisGroup", name, opts),
        groupId: undefined,
        itemIds: undefined,
      },
      opts,
    );
    recordAttachable(this.id, this.name);
  }
}
