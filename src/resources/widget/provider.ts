/**
 * The Widget's provider side: runs in the dynamic-provider process. See `index.ts` for what each
 * step does; the comparison is the shared field-table algorithm (`provider/managed.ts`).
 */
import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import type { VoiceAgentClient, WidgetPatchInput, WidgetT } from "../../client";
import { failure } from "../../provider/failures";
import { unlessGone } from "../../provider/gone";
import {
  assertUnchanged,
  changedFields,
  type FieldTable,
  observe,
  opaquePaths,
  pickManaged,
  pickWritten,
  refreshedInputs,
  unknownInputs,
} from "../../provider/managed";
import {
  deepEqual,
  fromWire,
  type Json,
  type JsonObject,
  mergePatch,
  toCamelKey,
  toWire,
} from "../../provider/normalize";
import type { HandlerFactory, Props } from "../../provider/resource";
import { orUnknown, parseProps } from "../../provider/state";
import { dependsOnUnknown, UNKNOWN, unknownPaths } from "../../provider/unknowns";
import { checkWidgetRules, type Issue, parseWith, WidgetPatch } from "../../spec";

const upper = (v: Json): Json => (typeof v === "string" ? v.toUpperCase() : v);

/** The widget's managed fields and their comparison. */
const WIDGET_FIELDS: FieldTable = {
  managed: ["name", "allowedOrigins", "enabledModes", "theme", "defaultVariables", "status"],
  paths: {
    allowedOrigins: { set: true },
    defaultVariables: { opaque: true },
    ...Object.fromEntries(
      [
        "accentColor",
        "launcherTextColor",
        "userMessageColor",
        "userMessageTextColor",
        "assistantMessageColor",
        "assistantMessageTextColor",
      ].map((k) => [`theme.${k}`, { canonical: upper }]),
    ),
  },
};
const OPAQUE = opaquePaths(WIDGET_FIELDS);
const OWN_INPUTS = ["agentId", "rotateKeyTrigger", "rotateKeyOnCreate"] as const;

/** The inputs after `check`. */
const WidgetInputs = z.looseObject({
  agentId: z.string(),
  name: z.string().optional(),
  rotateKeyTrigger: z.union([z.string(), z.number()]).optional(),
  rotateKeyOnCreate: z.boolean().optional(),
});
/** The state: the inputs, the service's values of the managed fields, and the key. */
const WidgetState = WidgetInputs.extend({
  widgetId: z.string(),
  publicKeyPrefix: z.string(),
  publicKey: z.string().nullable().optional(),
  keyRotatedAt: z.string().nullable().optional(),
});

/** The inputs a preview's `diff` sees: a value not known yet may stand anywhere. */
const WidgetPreviewInputs = WidgetInputs.extend({ rotateKeyOnCreate: orUnknown(z.boolean()).optional() });

const inputs = (props: Props) => parseProps(WidgetInputs, props, "Widget inputs");
const previewInputs = (props: Props) => parseProps(WidgetPreviewInputs, props, "Widget inputs");
const state = (props: Props) => parseProps(WidgetState, props, "Widget state");
/**
 * What `read` and `delete` accept: the state, or only the inputs (a resource adopted into the
 * state by `pulumi import` or a recovery has no outputs yet).
 * Made once: zod compiles a schema at its first parse (a schema made per call is compiled per
 * call).
 */
const StoredWidgetState = WidgetState.partial().required({ agentId: true });
const stored = (props: Props) => parseProps(StoredWidgetState, props, "Widget state");

/** How errors name the widget: by name when the program sets one, and its agent. */
const label = (recorded: { name?: string | undefined; widgetId?: string | undefined; agentId: string }) =>
  `Widget "${recorded.name ?? recorded.widgetId ?? "?"}" of agent ${recorded.agentId}`;

/** The managed configuration the program declares; `status` is `active` unless set. */
function declaredConfig(props: Props): JsonObject {
  return pickManaged(WIDGET_FIELDS, { ...props, status: props.status ?? "active" });
}

/** Every managed field the service holds, in input spelling (absent ones as `null`). */
function serviceConfig(widget: WidgetT): JsonObject {
  const camel = fromWire(widget, OPAQUE) as JsonObject;
  return Object.fromEntries(WIDGET_FIELDS.managed.map((k) => [k, camel[k] ?? null]));
}

/** The wire merge-patch that makes the widget hold `declared` (empty when it already does). */
function widgetPatch(current: WidgetT, declared: JsonObject): WidgetPatchInput {
  const patch = mergePatch(observe(WIDGET_FIELDS, serviceConfig(current), declared), declared);
  return toWire(patch, OPAQUE) as WidgetPatchInput;
}

interface KeyState {
  publicKey: string | null;
  keyRotatedAt: string | null;
}

function outputs(props: Props, widget: WidgetT, key: KeyState): Props {
  const declared = declaredConfig(props);
  return {
    ...props,
    ...observe(WIDGET_FIELDS, serviceConfig(widget), declared),
    agentId: widget.agent_id,
    widgetId: widget.id,
    publicKeyPrefix: widget.public_key_prefix,
    publicKey: key.publicKey,
    keyRotatedAt: key.keyRotatedAt,
  };
}

/** True when the key in the state is no longer the live one (it was rotated outside Pulumi). */
function keyStale(props: Props): boolean {
  return (
    typeof props.publicKey === "string" &&
    typeof props.publicKeyPrefix === "string" &&
    !props.publicKey.startsWith(props.publicKeyPrefix)
  );
}

async function rotate(c: VoiceAgentClient, agentId: string): Promise<KeyState & { prefix: string }> {
  const k = await c.widget.rotateKey(agentId);
  return { publicKey: k.public_key, keyRotatedAt: k.rotated_at, prefix: k.public_key_prefix };
}

/** A spec field path in input spelling; default-variable names keep their spelling. */
function widgetPath(field: string): string {
  const m = /^default_variables\.(.*)$/.exec(field);
  return m ? `defaultVariables.${m[1]}` : toCamelKey(field);
}

const widgetFailure = (issue: Issue): pulumi.dynamic.CheckFailure => failure(issue, widgetPath(issue.field));

export const widgetProvider: HandlerFactory = (ctx) => ({
  async check(_olds, news) {
    const failures = unknownInputs(WIDGET_FIELDS, news, OWN_INPUTS, "Widget");
    if (news.agentId === undefined || news.agentId === null || news.agentId === "") {
      failures.push({
        property: "agentId",
        reason: "agentId: required: the id of the agent whose widget this is (e.g. agent.agentId)",
      });
    } else if (typeof news.agentId !== "string") {
      failures.push({ property: "agentId", reason: "agentId: must be a string (an agent id)" });
    }
    const trigger = news.rotateKeyTrigger;
    if (
      trigger !== undefined &&
      trigger !== null &&
      typeof trigger !== "string" &&
      typeof trigger !== "number"
    ) {
      failures.push({
        property: "rotateKeyTrigger",
        reason: "rotateKeyTrigger: must be a string or a number",
      });
    }
    const onCreate = news.rotateKeyOnCreate;
    if (onCreate !== undefined && typeof onCreate !== "boolean" && onCreate !== UNKNOWN) {
      failures.push({ property: "rotateKeyOnCreate", reason: "rotateKeyOnCreate: must be a boolean" });
    }
    const declared = pickWritten(WIDGET_FIELDS, news);
    const unknowns = unknownPaths(declared);
    const body = toWire(declared, OPAQUE) as JsonObject;
    const parsed = parseWith(WidgetPatch, body);
    if (!parsed.ok) {
      const real = parsed.issues.filter((i) => !dependsOnUnknown(widgetPath(i.field), i.code, unknowns));
      failures.push(...real.map(widgetFailure));
    }
    // The origin rules run whatever else is wrong, on the origins known to be strings; an origin
    // not known yet keeps its place, so messages name the user's indexes.
    const origins = Array.isArray(body.allowed_origins) ? body.allowed_origins : [];
    const issues = checkWidgetRules({
      allowed_origins: origins.map((o) => (typeof o === "string" && o !== UNKNOWN ? o : "https://x")),
    });
    failures.push(...issues.map(widgetFailure));
    const variables = body.default_variables;
    if (typeof variables === "object" && variables !== null && !Array.isArray(variables)) {
      for (const [k, v] of Object.entries(variables)) {
        if (v === null) {
          failures.push({
            property: `defaultVariables.${k}`,
            reason: `defaultVariables.${k}: must be a string (remove the key to remove the variable)`,
          });
        }
      }
    }
    return { inputs: { ...news, status: news.status ?? "active" }, failures };
  },

  async diff(_id, olds, news) {
    const before = state(olds);
    const args = previewInputs(news);
    const replaces = before.agentId !== args.agentId ? ["agentId"] : [];
    const changed = changedFields(WIDGET_FIELDS, olds, { ...news, status: news.status ?? "active" });
    const rotate = !deepEqual(olds.rotateKeyTrigger ?? null, news.rotateKeyTrigger ?? null);
    const diffs = [...replaces, ...changed, ...(rotate ? ["rotateKeyTrigger"] : [])];
    return { changes: diffs.length > 0 || keyStale(olds), replaces, diffs };
  },

  async create(props) {
    const c = await ctx.client();
    const args = inputs(props);
    const current = await c.widget.get(args.agentId);
    const patch = widgetPatch(current, declaredConfig(props));
    let widget = Object.keys(patch).length > 0 ? await c.widget.patch(args.agentId, patch) : current;
    let key: KeyState = { publicKey: null, keyRotatedAt: null };
    if (args.rotateKeyOnCreate !== false) {
      const rotated = await rotate(c, args.agentId);
      key = rotated;
      widget = { ...widget, public_key_prefix: rotated.prefix };
    }
    return { id: widget.id, outs: outputs(props, widget, key) };
  },

  async read(id, props) {
    const c = await ctx.client();
    const recorded = stored(props);
    const widget = await unlessGone(c.widget.get(recorded.agentId));
    if (!widget) return { id: undefined, props: {} };
    const outs = outputs(props, widget, {
      publicKey: recorded.publicKey ?? null,
      keyRotatedAt: recorded.keyRotatedAt ?? null,
    });
    return { id, props: outs, inputs: refreshedInputs(WIDGET_FIELDS, props, outs, OWN_INPUTS) };
  },

  async update(_id, olds, news) {
    const c = await ctx.client();
    const before = state(olds);
    const args = inputs(news);
    const current = await c.widget.get(args.agentId);
    // The service keeps no revision of a widget: compare what the stack last saw before writing.
    assertUnchanged(WIDGET_FIELDS, label(before), olds, serviceConfig(current));
    const patch = widgetPatch(current, declaredConfig(news));
    let widget = Object.keys(patch).length > 0 ? await c.widget.patch(args.agentId, patch) : current;
    let key: KeyState = { publicKey: before.publicKey ?? null, keyRotatedAt: before.keyRotatedAt ?? null };
    const stale = typeof key.publicKey === "string" && !key.publicKey.startsWith(widget.public_key_prefix);
    if (!deepEqual(olds.rotateKeyTrigger ?? null, news.rotateKeyTrigger ?? null) || stale) {
      const rotated = await rotate(c, args.agentId);
      key = rotated;
      widget = { ...widget, public_key_prefix: rotated.prefix };
    }
    return { outs: outputs(news, widget, key) };
  },

  async delete(id, props) {
    const c = await ctx.client();
    const recorded = stored(props);
    const current = await unlessGone(c.widget.get(recorded.agentId));
    if (!current) return;
    if (current.status !== "paused") {
      // Pausing writes to the widget: compare what the stack last saw first, as `update` does.
      assertUnchanged(WIDGET_FIELDS, label(recorded), props, serviceConfig(current));
      if (!(await unlessGone(c.widget.patch(recorded.agentId, { status: "paused" })))) return;
    }
    // The service cannot delete a widget: it stays with its agent, paused, serving nothing.
    console.error(
      `pulumi-voice-agent: widget "${recorded.name ?? id}" of agent ${recorded.agentId} is now paused and ` +
        "remains with its agent (the service cannot delete a widget).",
    );
  },
});
