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
 */
import * as pulumi from "@pulumi/pulumi";
import type { AnalysisGroup as AnalysisGroupRecord, ApiError, VoiceAgentClient } from "../client";
import { client } from "../provider/context";
import type { ResourceHandler } from "../provider/handlers";
import { specModule } from "../provider/lazy";
import { changedKeys, containsUnknown, fromWire, project, toWire, UNKNOWN } from "../provider/normalize";
import { withProvider } from "../provider/providerResource";
import { dynamicProvider } from "../provider/shim";
import { failure, knownPart } from "../provider/validate";

type In<T> = pulumi.Input<T>;

/** One analysis the group runs after each call. */
export interface AnalysisItemArgs {
  /** Unique within the group, 1 to 255 characters; items are matched by name across updates. */
  name: In<string>;
  /** What to extract; guides the analysis. Default: unset (not managed). */
  description?: In<string | null>;
  /** Kind of result. */
  type: In<"text" | "boolean" | "number" | "enum">;
  /** The allowed results of an `enum` item (required there, refused on other types). */
  enumValues?: In<In<string>[] | null>;
  /** Run this item. Service default `true`. */
  enabled?: In<boolean>;
}

/** Inputs of an {@link AnalysisGroup}. */
export interface AnalysisGroupArgs {
  /** Display name, 1 to 255 characters, unique in the workspace. Required unless adopting. */
  name?: In<string>;
  /** Free text. Default: unset (not managed); `null` clears it. */
  description?: In<string | null>;
  /** Run the group. Service default `true`. */
  enabled?: In<boolean>;
  /** The whole item set, in any order. Default: unset (the items are not managed). */
  items?: In<In<AnalysisItemArgs>[]>;
  /**
   * Manage the workspace's Default Analysis group (`User Sentiment`, `Outcome`, `Language`)
   * instead of creating a group. Destroy leaves it in place as it then is. Create only.
   */
  adoptDefault?: In<boolean>;
  /** Id of an existing group to take over instead of creating one. Create only. */
  adoptId?: In<string>;
}

/** A custom-analysis group. Attach it to agents with `analysisGroupIds: [group.id]`. */
export class AnalysisGroup extends pulumi.dynamic.Resource {
  /** The group's id (also the resource's `id`). */
  declare readonly groupId: pulumi.Output<string>;
  /** Item ids by item name: stable while an item keeps its name. */
  declare readonly itemIds: pulumi.Output<Record<string, string>>;
  /** The declared name (unset when an adopted group's name is not managed). */
  declare readonly name: pulumi.Output<string | undefined>;
  declare readonly enabled: pulumi.Output<boolean | undefined>;

  constructor(name: string, args: AnalysisGroupArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      dynamicProvider("analysisGroup"),
      name,
      { ...args, groupId: undefined, itemIds: undefined },
      withProvider(opts),
      "voice-agent",
      "AnalysisGroup",
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Provider side: runs in the dynamic-provider process.

type Config = Record<string, any>;
type WireItem = AnalysisGroupRecord["items"][number];

const GROUP_FIELDS = ["name", "description", "enabled", "items"] as const;
const ITEM_FIELDS = ["name", "description", "type", "enumValues", "enabled"] as const;

const byName = (a: { name?: unknown }, b: { name?: unknown }) => String(a.name).localeCompare(String(b.name));

/** The managed configuration in `inputs`; items sorted by name, each with the fields it sets. */
function declaredConfig(inputs: Record<string, any>): Config {
  const out: Config = {};
  for (const key of GROUP_FIELDS) if (inputs[key] !== undefined) out[key] = inputs[key];
  if (Array.isArray(out.items) && !containsUnknown(out.items)) {
    out.items = out.items
      .map((it: any) =>
        Object.fromEntries(ITEM_FIELDS.filter((k) => it[k] !== undefined).map((k) => [k, it[k]])),
      )
      .sort(byName);
  }
  return out;
}

/** What the service holds, in input spelling, restricted to what `declared` manages. */
function observedConfig(group: AnalysisGroupRecord, declared: Config): Config {
  const camel = fromWire(group) as Config;
  const out: Config = {};
  for (const key of ["name", "description", "enabled"]) if (key in declared) out[key] = camel[key] ?? null;
  if (declared.items !== undefined) {
    const wanted = new Map<string, Config>(
      (Array.isArray(declared.items) ? declared.items : []).map((it: Config) => [String(it.name), it]),
    );
    out.items = (camel.items as Config[])
      .map((it) => {
        const d = wanted.get(it.name);
        // An item the program does not declare shows by name and type (a drift the next up removes).
        return project(it, d ?? { name: it.name, type: it.type }) as Config;
      })
      .sort(byName);
  }
  return out;
}

function outputs(inputs: Record<string, any>, group: AnalysisGroupRecord): Record<string, unknown> {
  return {
    ...inputs,
    ...observedConfig(group, declaredConfig(inputs)),
    groupId: group.id,
    itemIds: Object.fromEntries(group.items.map((it) => [it.name, it.id])),
  };
}

/**
 * The `PUT` body that makes `current` hold the declaration: declared items sent with the id of the
 * current item of the same name; what the program does not set, sent back as the service holds it.
 */
function replaceBody(inputs: Record<string, any>, current: AnalysisGroupRecord) {
  const declared = declaredConfig(inputs);
  const existing = new Map(current.items.map((it) => [it.name, it]));
  const keep = ({ created_at: _c, ...rest }: WireItem) => rest;
  const items = Array.isArray(inputs.items)
    ? (inputs.items as Config[]).map((d) => {
        const cur = existing.get(d.name);
        const wire = toWire(
          Object.fromEntries(ITEM_FIELDS.filter((k) => d[k] !== undefined).map((k) => [k, d[k]])),
        ) as Config;
        return {
          ...(cur ? { id: cur.id } : {}),
          name: wire.name,
          description: wire.description !== undefined ? wire.description : (cur?.description ?? null),
          type: wire.type,
          enum_values:
            wire.enum_values !== undefined
              ? wire.enum_values
              : wire.type === "enum" && cur?.type === "enum"
                ? cur.enum_values
                : null,
          enabled: wire.enabled ?? cur?.enabled ?? true,
        };
      })
    : current.items.map(keep);
  return {
    name: (declared.name as string | undefined) ?? current.name,
    description: declared.description !== undefined ? declared.description : current.description,
    enabled: (declared.enabled as boolean | undefined) ?? current.enabled,
    items,
  };
}

/** The group to adopt: by id, or the workspace's Default Analysis group. */
async function adoptTarget(c: VoiceAgentClient, inputs: Record<string, any>): Promise<AnalysisGroupRecord> {
  if (inputs.adoptId) {
    const g = await c.getAnalysisGroup(inputs.adoptId);
    if (!g) throw new Error(`adoptId: there is no analysis group ${inputs.adoptId} in this workspace`);
    return g;
  }
  const { DEFAULT_ANALYSIS_GROUP_NAME } = specModule;
  const g = await c.listAnalysisGroups().find((x) => x.name === DEFAULT_ANALYSIS_GROUP_NAME);
  if (!g) {
    throw new Error(
      `adoptDefault: no group named "${DEFAULT_ANALYSIS_GROUP_NAME}" in this workspace (renamed?); ` +
        "adopt it by id with adoptId instead",
    );
  }
  return g;
}

function explainInUse(err: unknown, props: Record<string, any>, id: string): never {
  const e = err as ApiError;
  if (e?.code === "group_in_use") {
    throw new Error(
      `Analysis group "${props.name}" (${id}) cannot be deleted while agents use it: ${e.detailMessage}. ` +
        "Remove its id from those agents' analysisGroupIds first (and put a version without it live); " +
        "when the agent references `group.id` in the same program, one `pulumi up` does both in order. " +
        `(request ${e.requestId ?? "unknown"})`,
    );
  }
  throw err;
}

/**
 * A declared item with stand-ins for the values unknown during preview, so the rules check what is
 * known without reporting what is not (each stand-in is valid and unique).
 */
function knownItem(item: unknown, i: number): unknown {
  if (item === UNKNOWN) return { name: `(known after apply ${i})`, type: "text" };
  if (!item || typeof item !== "object") return item;
  const it = { ...(item as Config) };
  if (it.name === UNKNOWN) it.name = `(known after apply ${i})`;
  if (it.type === UNKNOWN) it.type = it.enumValues !== undefined && it.enumValues !== null ? "enum" : "text";
  if (it.enumValues === UNKNOWN) it.enumValues = it.type === "enum" ? ["(known after apply)"] : undefined;
  return it;
}

export const analysisGroupHandler: ResourceHandler = {
  async check(_olds, news) {
    const failures: pulumi.dynamic.CheckFailure[] = [];
    const adopting = Boolean(news.adoptDefault) || news.adoptId !== undefined;
    if (news.adoptDefault === true && news.adoptId !== undefined) {
      failures.push({ property: "adoptId", reason: "adoptId: set either adoptDefault or adoptId, not both" });
    }
    if (
      news.adoptDefault !== undefined &&
      typeof news.adoptDefault !== "boolean" &&
      news.adoptDefault !== UNKNOWN
    ) {
      failures.push({ property: "adoptDefault", reason: "adoptDefault: must be a boolean" });
    }
    const declared: Config = Object.fromEntries(GROUP_FIELDS.map((k) => [k, news[k]]));
    if (Array.isArray(declared.items)) declared.items = declared.items.map(knownItem);
    const wire = toWire(knownPart(declared)) as Config;
    if (news.name === UNKNOWN || (news.name === undefined && adopting)) wire.name = "(kept)";
    if (news.name === undefined && !adopting) {
      failures.push({
        property: "name",
        reason: "name: Field required (missing): set a name, or adopt a group with adoptDefault or adoptId",
      });
    } else {
      const { AnalysisGroupInput, checkAnalysisGroupRules, parseWith } = specModule;
      const parsed = parseWith(AnalysisGroupInput, wire);
      if (!parsed.ok) failures.push(...parsed.issues.map(failure));
      else failures.push(...checkAnalysisGroupRules(parsed.data).map(failure));
    }
    return { inputs: news, failures };
  },

  async diff(_id, olds, news) {
    const declared = declaredConfig(news);
    const observed: Config = {};
    for (const key of Object.keys(declared)) observed[key] = olds[key] ?? null;
    return { changes: changedKeys(observed, declared).length > 0 };
  },

  async create(inputs) {
    const c = await client();
    const declared = declaredConfig(inputs);
    if (inputs.adoptDefault || inputs.adoptId) {
      const current = await adoptTarget(c, inputs);
      const same = changedKeys(observedConfig(current, declared), declared).length === 0;
      const written = same ? current : await c.replaceAnalysisGroup(current.id, replaceBody(inputs, current));
      return { id: written.id, outs: outputs(inputs, written) };
    }
    // Items are created in the order the program lists them (the service orders them by creation).
    const items = Array.isArray(inputs.items)
      ? (inputs.items as Config[]).map(
          (it) =>
            toWire(
              Object.fromEntries(ITEM_FIELDS.filter((k) => it[k] !== undefined).map((k) => [k, it[k]])),
            ) as any,
        )
      : undefined;
    const created = await c.createAnalysisGroup({
      name: declared.name,
      ...(declared.description !== undefined ? { description: declared.description } : {}),
      ...(declared.enabled !== undefined ? { enabled: declared.enabled } : {}),
      ...(items ? { items } : {}),
    });
    return { id: created.id, outs: outputs(inputs, created) };
  },

  async read(id, props) {
    const c = await client();
    const group = await c.getAnalysisGroup(id);
    if (!group) return { id: undefined, props: {} };
    const outs = outputs(props, group);
    const inputs: Record<string, unknown> = {};
    for (const key of ["adoptDefault", "adoptId"]) if (props[key] !== undefined) inputs[key] = props[key];
    for (const key of GROUP_FIELDS) if (props[key] !== undefined) inputs[key] = outs[key];
    return { id, props: outs, inputs };
  },

  async update(id, _olds, news) {
    const c = await client();
    const current = await c.getAnalysisGroup(id);
    if (!current)
      throw new Error(
        `Analysis group "${news.name ?? id}" (${id}) no longer exists: run \`pulumi refresh\`.`,
      );
    const written = await c.replaceAnalysisGroup(id, replaceBody(news, current));
    return { outs: outputs(news, written) };
  },

  async delete(id, props) {
    if (props.adoptDefault) {
      console.error(
        `pulumi-voice-agent: the Default Analysis group (${id}) is left in place as it is ` +
          "(every workspace has it; it cannot be deleted).",
      );
      return;
    }
    const c = await client();
    try {
      await c.deleteAnalysisGroup(id);
    } catch (err) {
      const e = err as ApiError;
      if (e.status === 404) return;
      if (e.code === "group_protected") {
        console.error(
          `pulumi-voice-agent: analysis group "${props.name}" (${id}) is protected by the service and is left in place.`,
        );
        return;
      }
      explainInUse(err, props, id);
    }
  },
};
