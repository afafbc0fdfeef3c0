/**
 * Widget: the embeddable chat/talk widget of an agent, kept equal to what the program declares.
 *
 * Every agent has exactly one widget; the service prepares it on first read and can neither create
 * nor delete it. So:
 *
 * - `check` validates the declared fields at preview (name bounds, exact https origins, `#RRGGBB`
 *   colours, positions, button shapes, integer sizes), naming each field as the program spells it.
 * - `create` adopts the agent's widget (a read prepares it), merge-patches the declared fields that
 *   differ, then rotates the public key once (unless `rotateKeyOnCreate: false`), so that the secret
 *   output `publicKey` is always a key that works.
 * - `diff` compares the declared fields with what the service read back, projected onto the fields
 *   the program sets: theme fields and modes left unset, origin order and colour case never cause a
 *   change. `allowedOrigins` and `defaultVariables` are whole values (the declared set is the set).
 * - `update` reads the widget and merge-patches what differs from the declaration; a changed
 *   `rotateKeyTrigger` rotates the key. A key rotated outside Pulumi (its prefix no longer matches
 *   the key in the state) shows as a change and the next `up` rotates again, so the stack's key is
 *   always the live one.
 * - `read` (refresh) brings the service's values of the managed fields back into the state.
 * - `delete` pauses the widget (the service cannot delete it), so nothing is left serving.
 */
import * as pulumi from "@pulumi/pulumi";
import type { VoiceAgentClient, WidgetT } from "../client";
import { client } from "../provider/context";
import { unlessGone } from "../provider/gone";
import type { ResourceHandler } from "../provider/handlers";
import { specModule } from "../provider/lazy";
import {
  changedKeys,
  containsUnknown,
  deepEqual,
  fromWire,
  isPlainObject,
  mergePatch,
  project,
  toWire,
  UNKNOWN,
} from "../provider/normalize";
import { withProvider } from "../provider/providerResource";
import { dynamicProvider } from "../provider/shim";
import { failure, knownPart } from "../provider/validate";
import type { Issue } from "../spec";

type In<T> = pulumi.Input<T>;

/**
 * Appearance and placement of the widget. Every field is optional: a field left unset keeps the
 * service's value and is not managed.
 */
export interface WidgetThemeArgs {
  /** Panel title. */
  title?: In<string>;
  /** Line under the title. */
  subtitle?: In<string>;
  /** First message shown to a visitor. */
  welcomeMessage?: In<string>;
  /** Logo image URL; `null` shows none. */
  logoUrl?: In<string | null>;
  /** Accent colour, `#RRGGBB` (compared without regard to case). */
  accentColor?: In<string>;
  /** Launcher text colour, `#RRGGBB`. */
  launcherTextColor?: In<string>;
  /** Visitor message bubble colour, `#RRGGBB`. */
  userMessageColor?: In<string>;
  /** Visitor message text colour, `#RRGGBB`. */
  userMessageTextColor?: In<string>;
  /** Agent message bubble colour, `#RRGGBB`. */
  assistantMessageColor?: In<string>;
  /** Agent message text colour, `#RRGGBB`. */
  assistantMessageTextColor?: In<string>;
  /** Corner the widget sits in. Service default `bottom-right`. */
  position?: In<"bottom-right" | "bottom-left" | "top-right" | "top-left">;
  /** Text of the launcher button. */
  launcherLabel?: In<string>;
  /** Launcher button shape. Service default `rounded`. */
  buttonShape?: In<"rounded" | "square" | "pill">;
  /** Panel corner radius, integer pixels (0 to 4096). */
  panelRadius?: In<number>;
  /** Message bubble radius, integer pixels (0 to 4096). */
  messageRadius?: In<number>;
  /** Launcher radius, integer pixels (0 to 4096). */
  launcherRadius?: In<number>;
  /** Icon radius, integer pixels (0 to 4096). */
  iconRadius?: In<number>;
  /** Dock icon size, integer pixels (0 to 4096). */
  dockIconSize?: In<number>;
  /** Launcher horizontal padding, integer pixels (0 to 4096). */
  launcherPaddingX?: In<number>;
  /** Launcher vertical padding, integer pixels (0 to 4096). */
  launcherPaddingY?: In<number>;
  /** Panel width, integer pixels (0 to 4096). */
  widgetWidth?: In<number>;
  /** Panel height, integer pixels (0 to 4096). */
  widgetHeight?: In<number>;
  /** Show the agent's inbound phone number in the panel. */
  showInboundNumber?: In<boolean>;
}

/** The widget's configuration. Every field but `agentId` is optional: what is not set is not managed. */
export interface WidgetArgs {
  /** The agent whose widget this is (e.g. `agent.agentId`). Changing it moves to another agent's widget (replace). */
  agentId: In<string>;
  /** Display name, 1 to 255 characters. Service default: the agent's name. */
  name?: In<string>;
  /**
   * The security boundary: the exact origins (`scheme://host[:port]`) whose pages may use the
   * public key. https only, except `http://localhost` and `http://127.0.0.1`; no path, no
   * wildcard. The whole set, in any order (it replaces the service's set). Service default: none.
   */
  allowedOrigins?: In<In<string>[]>;
  /** Whether visitors can type (`chat`), talk (`talk`), or both. Service default: both on. */
  enabledModes?: In<{ chat?: In<boolean>; talk?: In<boolean> }>;
  /** Appearance and placement. */
  theme?: In<WidgetThemeArgs>;
  /**
   * Values of the agent's `{{variables}}` for every conversation the widget starts. Keys are kept
   * exactly as written. The whole map: a variable removed here is removed from the widget.
   */
  defaultVariables?: In<Record<string, In<string>>>;
  /** `active` (serving) or `paused`. Default `active`: a widget paused elsewhere shows as drift. */
  status?: In<"active" | "paused">;
  /**
   * Any value; changing it rotates the public key (the old key stops working, the new one is the
   * secret output `publicKey`). Default: unset.
   */
  rotateKeyTrigger?: In<string | number>;
  /**
   * Rotate the key once on create, so `publicKey` is known from the first `up`. Default `true`.
   * Set `false` when adopting a widget whose current key is already embedded in a site: `publicKey`
   * is then `null` until the first rotation by `rotateKeyTrigger`.
   */
  rotateKeyOnCreate?: In<boolean>;
}

/** The fields of the widget body the program can manage, in input spelling. */
const MANAGED_FIELDS = [
  "name",
  "allowedOrigins",
  "enabledModes",
  "theme",
  "defaultVariables",
  "status",
] as const;

/** Keys that are user data and keep their spelling between inputs and the wire. */
const OPAQUE = new Set(["defaultVariables"]);

/**
 * The embeddable widget of an agent (one per agent). Creating it adopts the agent's widget;
 * destroying it pauses the widget. `publicKey` is a Pulumi secret.
 */
export class Widget extends pulumi.dynamic.Resource {
  /** The widget's id in the service. */
  declare readonly widgetId: pulumi.Output<string>;
  /** The agent's id. */
  declare readonly agentId: pulumi.Output<string>;
  /** Tells which key is live (the first characters of the key). Plain. */
  declare readonly publicKeyPrefix: pulumi.Output<string>;
  /**
   * The full public key from the last rotation made by this resource (secret). `null` only with
   * `rotateKeyOnCreate: false` before the first rotation.
   */
  declare readonly publicKey: pulumi.Output<string | null>;
  /** When that rotation happened (ISO 8601), or `null`. */
  declare readonly keyRotatedAt: pulumi.Output<string | null>;
  declare readonly name: pulumi.Output<string | undefined>;
  declare readonly allowedOrigins: pulumi.Output<string[] | undefined>;
  declare readonly status: pulumi.Output<"active" | "paused">;

  constructor(name: string, args: WidgetArgs, opts?: pulumi.CustomResourceOptions) {
    const options = withProvider(opts);
    super(
      dynamicProvider("widget"),
      name,
      {
        ...args,
        widgetId: undefined,
        publicKeyPrefix: undefined,
        publicKey: undefined,
        keyRotatedAt: undefined,
      },
      {
        ...options,
        additionalSecretOutputs: [...new Set([...(options.additionalSecretOutputs ?? []), "publicKey"])],
      },
      "voice-agent",
      "Widget",
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Provider side: runs in the dynamic-provider process.

type Config = Record<string, any>;

const COLOUR_FIELDS = [
  "accentColor",
  "launcherTextColor",
  "userMessageColor",
  "userMessageTextColor",
  "assistantMessageColor",
  "assistantMessageTextColor",
];

/** One spelling for values the service treats as equal: origins as a sorted set, colours upper case. */
function normalizeConfig(config: Config): Config {
  const c: Config = structuredClone(config);
  const settled = (v: unknown) => v !== undefined && !containsUnknown(v);
  if (Array.isArray(c.allowedOrigins) && settled(c.allowedOrigins)) {
    c.allowedOrigins = [...new Set(c.allowedOrigins as string[])].sort();
  }
  if (isPlainObject(c.theme)) {
    for (const key of COLOUR_FIELDS) {
      const v = c.theme[key];
      if (typeof v === "string" && v !== UNKNOWN) c.theme[key] = v.toUpperCase();
    }
  }
  return c;
}

/** The managed configuration in `inputs`, normalized; `status` defaults to `active`. */
function declaredConfig(inputs: Record<string, any>): Config {
  const out: Config = {};
  for (const key of MANAGED_FIELDS) {
    if (inputs[key] !== undefined) out[key] = inputs[key];
  }
  out.status ??= "active";
  return normalizeConfig(out);
}

/** Every managed field the service holds, in input spelling, normalized. */
function serviceConfig(widget: WidgetT): Config {
  const camel = fromWire(widget, OPAQUE) as Config;
  return normalizeConfig(Object.fromEntries(MANAGED_FIELDS.map((k) => [k, camel[k] ?? null])));
}

/**
 * `current` restricted to the shape of `declared`: objects by the keys the program sets, except
 * `defaultVariables`, which is a whole map (a variable the program dropped must be removed).
 */
function projected(current: Config, declared: Config): Config {
  const out = project(current, declared) as Config;
  if (declared.defaultVariables !== undefined) out.defaultVariables = current.defaultVariables ?? null;
  return out;
}

/** The wire merge-patch that makes the widget hold `declared` (empty when it already does). */
function widgetPatch(current: Config, declared: Config): Record<string, any> {
  return toWire(mergePatch(projected(current, declared), declared), OPAQUE) as Record<string, any>;
}

interface KeyState {
  publicKey: string | null;
  keyRotatedAt: string | null;
}

function outputs(inputs: Record<string, any>, widget: WidgetT, key: KeyState): Record<string, unknown> {
  const declared = declaredConfig(inputs);
  return {
    ...inputs,
    ...projected(serviceConfig(widget), declared),
    agentId: widget.agent_id,
    widgetId: widget.id,
    publicKeyPrefix: widget.public_key_prefix,
    publicKey: key.publicKey,
    keyRotatedAt: key.keyRotatedAt,
  };
}

/** True when the key in the state is no longer the live one (it was rotated outside Pulumi). */
function keyStale(props: Record<string, any>): boolean {
  return (
    typeof props.publicKey === "string" &&
    typeof props.publicKeyPrefix === "string" &&
    !props.publicKey.startsWith(props.publicKeyPrefix)
  );
}

async function rotate(c: VoiceAgentClient, agentId: string): Promise<KeyState & { prefix: string }> {
  const k = await c.rotateWidgetKey(agentId);
  return { publicKey: k.public_key, keyRotatedAt: k.rotated_at, prefix: k.public_key_prefix };
}

/** A spec issue as a check failure; default-variable names keep their spelling. */
function widgetFailure(issue: Issue): pulumi.dynamic.CheckFailure {
  const m = /^default_variables\.(.*)$/.exec(issue.field);
  if (!m) return failure(issue);
  const property = `defaultVariables.${m[1]}`;
  const message = issue.message.startsWith(`${issue.field}:`)
    ? issue.message.slice(issue.field.length + 1).trim()
    : issue.message;
  return { property, reason: `${property}: ${message} (${issue.code})` };
}

export const widgetHandler: ResourceHandler = {
  async check(_olds, news) {
    const failures: pulumi.dynamic.CheckFailure[] = [];
    const inputs = { ...news, status: news.status ?? "active" };
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
    if (
      news.rotateKeyOnCreate !== undefined &&
      typeof news.rotateKeyOnCreate !== "boolean" &&
      news.rotateKeyOnCreate !== UNKNOWN
    ) {
      failures.push({ property: "rotateKeyOnCreate", reason: "rotateKeyOnCreate: must be a boolean" });
    }
    const declared: Config = {};
    for (const key of MANAGED_FIELDS) if (inputs[key] !== undefined) declared[key] = inputs[key];
    const body = toWire(knownPart(declared), OPAQUE) as Record<string, any>;
    const { checkWidgetRules, parseWith, WidgetPatch } = specModule;
    const parsed = parseWith(WidgetPatch, body);
    if (!parsed.ok) failures.push(...parsed.issues.map(widgetFailure));
    // The origin rules run whatever else is wrong, on the origins that are strings.
    const origins = Array.isArray(body.allowed_origins) ? body.allowed_origins : [];
    const issues = checkWidgetRules({
      allowed_origins: origins.map((o: unknown) => (typeof o === "string" ? o : "https://x")),
    });
    failures.push(...issues.map(widgetFailure));
    for (const [k, v] of Object.entries(
      isPlainObject(body.default_variables) ? body.default_variables : {},
    )) {
      if (v === null) {
        failures.push({
          property: `defaultVariables.${k}`,
          reason: `defaultVariables.${k}: must be a string (remove the key to remove the variable)`,
        });
      }
    }
    return { inputs, failures };
  },

  async diff(_id, olds, news) {
    const replaces = olds.agentId !== news.agentId ? ["agentId"] : [];
    const declared = declaredConfig(news);
    const observed: Config = {};
    for (const key of Object.keys(declared)) observed[key] = olds[key] ?? null;
    const changes =
      replaces.length > 0 ||
      changedKeys(observed, declared).length > 0 ||
      !deepEqual(olds.rotateKeyTrigger ?? null, news.rotateKeyTrigger ?? null) ||
      keyStale(olds);
    return { changes, replaces };
  },

  async create(inputs) {
    const c = await client();
    const current = await c.getWidget(inputs.agentId);
    const patch = widgetPatch(serviceConfig(current), declaredConfig(inputs));
    let widget = Object.keys(patch).length > 0 ? await c.patchWidget(inputs.agentId, patch) : current;
    let key: KeyState = { publicKey: null, keyRotatedAt: null };
    if (inputs.rotateKeyOnCreate !== false) {
      const rotated = await rotate(c, inputs.agentId);
      key = rotated;
      widget = { ...widget, public_key_prefix: rotated.prefix };
    }
    return { id: widget.id, outs: outputs(inputs, widget, key) };
  },

  async read(id, props) {
    const c = await client();
    const widget = await unlessGone(c.getWidget(props.agentId));
    if (!widget) return { id: undefined, props: {} };
    const outs = outputs(props, widget, {
      publicKey: props.publicKey ?? null,
      keyRotatedAt: props.keyRotatedAt ?? null,
    });
    const inputs: Record<string, unknown> = {};
    for (const key of ["agentId", "rotateKeyTrigger", "rotateKeyOnCreate"]) {
      if (props[key] !== undefined) inputs[key] = props[key];
    }
    for (const key of MANAGED_FIELDS) {
      if (props[key] !== undefined) inputs[key] = outs[key];
    }
    return { id, props: outs, inputs };
  },

  async update(_id, olds, news) {
    const c = await client();
    const current = await c.getWidget(news.agentId);
    const patch = widgetPatch(serviceConfig(current), declaredConfig(news));
    let widget = Object.keys(patch).length > 0 ? await c.patchWidget(news.agentId, patch) : current;
    let key: KeyState = { publicKey: olds.publicKey ?? null, keyRotatedAt: olds.keyRotatedAt ?? null };
    const stale = typeof key.publicKey === "string" && !key.publicKey.startsWith(widget.public_key_prefix);
    if (!deepEqual(olds.rotateKeyTrigger ?? null, news.rotateKeyTrigger ?? null) || stale) {
      const rotated = await rotate(c, news.agentId);
      key = rotated;
      widget = { ...widget, public_key_prefix: rotated.prefix };
    }
    return { outs: outputs(news, widget, key) };
  },

  async delete(id, props) {
    const c = await client();
    if (!(await unlessGone(c.patchWidget(props.agentId, { status: "paused" })))) return;
    // The service cannot delete a widget: it stays with its agent, paused, serving nothing.
    console.error(
      `pulumi-voice-agent: widget "${props.name ?? id}" of agent ${props.agentId} is now paused and ` +
        "remains with its agent (the service cannot delete a widget).",
    );
  },
};
