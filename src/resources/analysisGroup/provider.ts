/**
 * The AnalysisGroup's provider side: runs in the dynamic-provider process. See `index.ts` for
 * what each step does; the comparison is the shared field-table algorithm (`provider/managed.ts`).
 */
import { z } from "zod";
import type { AnalysisGroup as AnalysisGroupRecord, VoiceAgentClient } from "../../client";
import { ApiError } from "../../client/errors";
import { bodyFailures } from "../../provider/failures";
import {
  assertUnchanged,
  changedFields,
  type FieldTable,
  observe,
  pickManaged,
  refreshedInputs,
  unknownInputs,
} from "../../provider/managed";
import {
  deepEqual,
  fromWire,
  isPlainObject,
  type Json,
  type JsonObject,
  project,
  toWire,
} from "../../provider/normalize";
import type { HandlerFactory, Props } from "../../provider/resource";
import { orUnknown, parseProps } from "../../provider/state";
import { UNKNOWN, unknownPaths } from "../../provider/unknowns";
import {
  type AnalysisGroupInput,
  AnalysisGroupInput as AnalysisGroupInputSchema,
  type AnalysisItemInput,
  AnalysisItemInput as AnalysisItemInputSchema,
  checkAnalysisGroupRules,
  DEFAULT_ANALYSIS_GROUP_NAME,
} from "../../spec";
import { forgettingNames } from "../agent/names";
import { declareAnalyses } from "./declared";

const ITEM_FIELDS = ["name", "description", "type", "enumValues", "enabled"] as const;

/** The item of `it` with only the fields an item has, as the program set them. */
const itemShape = (it: Json): Json =>
  isPlainObject(it)
    ? Object.fromEntries(ITEM_FIELDS.filter((k) => it[k] !== undefined).map((k) => [k, it[k] as Json]))
    : it;

/** The group's managed fields: items are a set keyed by name, each compared by the fields set. */
const GROUP_FIELDS: FieldTable = {
  managed: ["name", "description", "enabled", "items"],
  paths: { items: { keyedBy: "name" }, "items[]": { canonical: itemShape } },
};
const OWN_INPUTS = ["adoptDefault", "adoptId", "createMarker"] as const;

const GroupInputs = z.looseObject({
  name: z.string().optional(),
  adoptDefault: z.boolean().optional(),
  adoptId: z.string().optional(),
  createMarker: z.string().optional(),
});
const GroupState = GroupInputs.extend({ groupId: z.string(), itemIds: z.record(z.string(), z.string()) });

/** The inputs a preview's `diff` sees: a value not known yet may stand anywhere. */
const GroupPreviewInputs = GroupInputs.extend({ adoptDefault: orUnknown(z.boolean()).optional() });

const inputs = (props: Props) => parseProps(GroupInputs, props, "AnalysisGroup inputs");
const previewInputs = (props: Props) => parseProps(GroupPreviewInputs, props, "AnalysisGroup inputs");

/** What the program may write: the request body, except an item's `id`, which is the service's. */
const ProgramGroupInput = AnalysisGroupInputSchema.extend({
  items: z.array(AnalysisItemInputSchema.omit({ id: true })).optional(),
});
const state = (props: Props) => parseProps(GroupState, props, "AnalysisGroup state");
/**
 * What `read` and `delete` accept: the state, or only the inputs (a resource adopted into the
 * state by `pulumi import` or a recovery has no outputs yet).
 * Made once: zod compiles a schema at its first parse (a schema made per call is compiled per
 * call).
 */
const StoredGroupState = GroupState.partial();
const stored = (props: Props) => parseProps(StoredGroupState, props, "AnalysisGroup state");

/**
 * What the service holds, in input spelling. Each item is shown by the fields the declared item of
 * the same name sets; an item the program does not declare, by name and type (a drift the next up
 * removes).
 */
function serviceConfig(group: AnalysisGroupRecord, declared: JsonObject): JsonObject {
  const camel = fromWire(group) as JsonObject;
  const wanted = new Map<Json, Json>(
    (Array.isArray(declared.items) ? declared.items : []).map((it) => [
      isPlainObject(it) ? (it.name ?? null) : it,
      it,
    ]),
  );
  const items = (Array.isArray(camel.items) ? camel.items : []).map((it) =>
    isPlainObject(it)
      ? (project(it, wanted.get(it.name ?? null) ?? { name: it.name ?? null, type: it.type ?? null }) as Json)
      : it,
  );
  return pickManaged(GROUP_FIELDS, { ...camel, items });
}

function outputs(props: Props, group: AnalysisGroupRecord): Props {
  const declared = pickManaged(GROUP_FIELDS, props);
  return {
    ...props,
    ...observe(GROUP_FIELDS, serviceConfig(group, declared), declared),
    groupId: group.id,
    itemIds: Object.fromEntries(group.items.map((it) => [it.name, it.id])),
  };
}

/** The declared items as the program wrote them, in wire spelling. */
function declaredItems(props: Props): JsonObject[] | undefined {
  return Array.isArray(props.items)
    ? props.items.map((it) => toWire(itemShape(it as Json)) as JsonObject)
    : undefined;
}

/**
 * The `PUT` body that makes `current` hold the declaration: declared items sent with the id of the
 * current item of the same name; what the program does not set, sent back as the service holds it.
 */
function replaceBody(props: Props, current: AnalysisGroupRecord): AnalysisGroupInput {
  const declared = pickManaged(GROUP_FIELDS, props);
  const existing = new Map(current.items.map((it) => [it.name, it]));
  const items =
    declaredItems(props)?.map((wire) => {
      const cur = typeof wire.name === "string" ? existing.get(wire.name) : undefined;
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
    }) ?? current.items.map(({ created_at: _c, ...rest }) => rest);
  return parseBody({
    name: declared.name ?? current.name,
    description: declared.description !== undefined ? declared.description : current.description,
    enabled: declared.enabled ?? current.enabled,
    items,
  });
}

function parseBody(body: unknown): AnalysisGroupInput {
  const parsed = AnalysisGroupInputSchema.safeParse(body);
  if (!parsed.success) throw new Error("AnalysisGroup: invalid body", { cause: parsed.error });
  return parsed.data;
}

/** The group to adopt: by id, or the workspace's Default Analysis group. */
/**
 * A create refused because the name is taken says which group holds it and what to do: the one
 * case a killed `up` can leave without a marker (killed after the declared description replaced
 * the marker, before Pulumi saved the state: docs/reliability.md).
 */
async function nameTakenError(c: VoiceAgentClient, name: unknown, err: unknown): Promise<unknown> {
  if (!(err instanceof ApiError) || !err.errors.some((e) => e.field === "name") || typeof name !== "string") {
    return err;
  }
  const holder = await c.analysis
    .list()
    .find((g) => g.name === name)
    .catch(() => undefined);
  if (!holder) return err;
  return new Error(
    `An analysis group named "${name}" already exists in the workspace (id ${holder.id}); nothing was created. ` +
      `If an interrupted \`pulumi up\` of this stack made it, take it over: set \`adoptId: "${holder.id}"\` on this ` +
      `resource and run \`pulumi up\` again. Otherwise give this group another name.`,
    { cause: err },
  );
}

async function adoptTarget(c: VoiceAgentClient, props: Props): Promise<AnalysisGroupRecord> {
  const args = inputs(props);
  if (args.adoptId) {
    const g = await c.analysis.get(args.adoptId);
    if (!g) throw new Error(`adoptId: there is no analysis group ${args.adoptId} in this workspace`);
    return g;
  }
  const g = await c.analysis.list().find((x) => x.name === DEFAULT_ANALYSIS_GROUP_NAME);
  if (!g) {
    throw new Error(
      `adoptDefault: no group named "${DEFAULT_ANALYSIS_GROUP_NAME}" in this workspace (renamed?); ` +
        "adopt it by id with adoptId instead",
    );
  }
  return g;
}

/**
 * A declared item with valid stand-ins for the values unknown at preview, so the rules check what
 * is known; whatever they say about a stand-in is left out (`bodyFailures`).
 */
function withStandIns(item: unknown, i: number): unknown {
  if (item === UNKNOWN) return { name: `(known after apply ${i})`, type: "text" };
  if (!isPlainObject(item)) return item;
  const it: Record<string, Json> = { ...item };
  if (it.name === UNKNOWN) it.name = `(known after apply ${i})`;
  if (it.type === UNKNOWN) it.type = it.enumValues !== undefined && it.enumValues !== null ? "enum" : "text";
  if (it.enumValues === UNKNOWN) it.enumValues = it.type === "enum" ? ["(known after apply)"] : null;
  if (it.description === UNKNOWN) it.description = null;
  if (it.enabled === UNKNOWN) it.enabled = true;
  return it;
}

export const analysisGroupProvider: HandlerFactory = (ctx) =>
  forgettingNames({
    async check(_olds, news) {
      // A watch rate on an analysis this deployment creates is not refused at preview (declared.ts).
      declareAnalyses(news);
      const failures = unknownInputs(GROUP_FIELDS, news, OWN_INPUTS, "AnalysisGroup");
      const adopting = Boolean(news.adoptDefault) || news.adoptId !== undefined;
      if (news.adoptDefault === true && news.adoptId !== undefined) {
        failures.push({
          property: "adoptId",
          reason: "adoptId: set either adoptDefault or adoptId, not both",
        });
      }
      if (
        news.adoptDefault !== undefined &&
        typeof news.adoptDefault !== "boolean" &&
        news.adoptDefault !== UNKNOWN
      ) {
        failures.push({ property: "adoptDefault", reason: "adoptDefault: must be a boolean" });
      }
      if (news.name === undefined && !adopting) {
        failures.push({
          property: "name",
          reason: "name: Field required (missing): set a name, or adopt a group with adoptDefault or adoptId",
        });
        return { inputs: news, failures };
      }
      const written = {
        name: news.name,
        description: news.description,
        enabled: news.enabled,
        items: news.items,
      };
      const unknowns = unknownPaths(written);
      const standIn = (k: string, v: unknown, value: Json) =>
        v === UNKNOWN ? { [k]: value } : v === undefined ? {} : { [k]: v };
      const body = {
        name: news.name === UNKNOWN || news.name === undefined ? "(kept)" : news.name,
        ...standIn("description", news.description, null),
        ...standIn("enabled", news.enabled, true),
        ...(Array.isArray(news.items)
          ? { items: news.items.map((it, i) => toWire(withStandIns(it, i))) }
          : news.items !== undefined && news.items !== UNKNOWN
            ? { items: news.items }
            : {}),
      };
      failures.push(...bodyFailures(ProgramGroupInput, checkAnalysisGroupRules, body, unknowns));
      return { inputs: news, failures };
    },

    async diff(_id, olds, news) {
      state(olds);
      previewInputs(news);
      const changed = changedFields(GROUP_FIELDS, olds, news);
      return { changes: changed.length > 0, diffs: changed };
    },

    async create(props) {
      const c = await ctx.client();
      const declared = pickManaged(GROUP_FIELDS, props);
      const args = inputs(props);
      if (args.adoptDefault || args.adoptId) {
        const current = await adoptTarget(c, props);
        const observed = observe(GROUP_FIELDS, serviceConfig(current, declared), declared);
        const same = deepEqual(observed, declared);
        const written = same ? current : await c.analysis.replace(current.id, replaceBody(props, current));
        return { id: written.id, outs: outputs(props, written) };
      }
      // Items are created in the order the program lists them (the service orders them by creation).
      const items = declaredItems(props) as AnalysisItemInput[] | undefined;
      // The resource's own marker: a create Pulumi runs again after an interrupted `up` adopts the
      // group the killed attempt made (see the knowledge base's create).
      const marker = args.createMarker;
      const created = await c.analysis
        .create(
          parseBody({
            name: declared.name,
            ...(declared.description !== undefined ? { description: declared.description } : {}),
            ...(declared.enabled !== undefined ? { enabled: declared.enabled } : {}),
            ...(items ? { items } : {}),
          }),
          { keepMarker: true, ...(marker !== undefined ? { marker, adoptExisting: true } : {}) },
        )
        .catch(async (err: unknown) => {
          throw await nameTakenError(c, declared.name, err);
        });
      // One an earlier attempt made holds what that attempt declared: bring it to this declaration.
      const observed = observe(GROUP_FIELDS, serviceConfig(created, declared), declared);
      const written = deepEqual(observed, declared)
        ? created
        : await c.analysis.replace(created.id, replaceBody(props, created));
      return { id: written.id, outs: outputs(props, written) };
    },

    async read(id, props) {
      const c = await ctx.client();
      stored(props);
      const group = await c.analysis.get(id);
      if (!group) return { id: undefined, props: {} };
      const outs = outputs(props, group);
      return { id, props: outs, inputs: refreshedInputs(GROUP_FIELDS, props, outs, OWN_INPUTS) };
    },

    async update(id, olds, news) {
      const c = await ctx.client();
      const before = state(olds);
      const current = await c.analysis.get(id);
      if (!current) {
        throw new Error(
          `Analysis group "${before.name ?? id}" (${id}) no longer exists: run \`pulumi refresh\`.`,
        );
      }
      // The service keeps no revision of a group: compare what the stack last saw before writing.
      const seen = pickManaged(GROUP_FIELDS, olds);
      assertUnchanged(
        GROUP_FIELDS,
        `Analysis group "${before.name ?? current.name}" (${id})`,
        olds,
        serviceConfig(current, seen),
      );
      const written = await c.analysis.replace(id, replaceBody(news, current));
      return { outs: outputs(news, written) };
    },

    async delete(id, props) {
      const recorded = stored(props);
      if (recorded.adoptDefault) {
        console.error(
          `pulumi-voice-agent: the Default Analysis group (${id}) is left in place as it is ` +
            "(every workspace has it; it cannot be deleted).",
        );
        return;
      }
      const c = await ctx.client();
      try {
        await c.analysis.delete(id);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        if (err.status === 404) return;
        if (err.code === "group_protected") {
          console.error(
            `pulumi-voice-agent: analysis group "${recorded.name}" (${id}) is protected by the service and is left in place.`,
          );
          return;
        }
        if (err.code === "group_in_use") {
          throw new Error(
            `Analysis group "${recorded.name}" (${id}) cannot be deleted while agents use it: ${err.detailMessage}. ` +
              "Remove its id from those agents' analysisGroupIds first (and put a version without it live); " +
              "when the agent references `group.id` in the same program, one `pulumi up` does both in order. " +
              `(request ${err.requestId ?? "unknown"})`,
            { cause: err },
          );
        }
        throw err;
      }
    },
  });
