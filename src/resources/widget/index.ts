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
 * - `update` reads the widget, refuses when a field the stack manages was changed outside Pulumi
 *   since the stack last saw it (run `pulumi refresh`), and merge-patches what differs from the
 *   declaration; a changed `rotateKeyTrigger` rotates the key. A key rotated outside Pulumi (its
 *   prefix no longer matches the key in the state) shows as a change and the next `up` rotates
 *   again, so the stack's key is always the live one.
 * - `read` (refresh) brings the service's values of the managed fields back into the state.
 * - `delete` pauses the widget (the service cannot delete it), so nothing is left serving; the
 *   pause is compared first as an update is, and a widget already paused is left as it is.
 *
 * This file is the program side; the provider side is `provider.ts`.
 */
import type * as pulumi from "@pulumi/pulumi";
import { ServiceResource } from "../serviceResource";

/**
 * Appearance and placement of the widget. Every field is optional: a field left unset keeps the
 * service's value and is not managed.
 */
export interface WidgetThemeArgs {
  /** Panel title. */
  title?: pulumi.Input<string>;
  /** Line under the title. */
  subtitle?: pulumi.Input<string>;
  /** First message shown to a visitor. */
  welcomeMessage?: pulumi.Input<string>;
  /** Logo image URL; `null` shows none. */
  logoUrl?: pulumi.Input<string | null>;
  /** Accent colour, `#RRGGBB` (compared without regard to case). */
  accentColor?: pulumi.Input<string>;
  /** Launcher text colour, `#RRGGBB`. */
  launcherTextColor?: pulumi.Input<string>;
  /** Visitor message bubble colour, `#RRGGBB`. */
  userMessageColor?: pulumi.Input<string>;
  /** Visitor message text colour, `#RRGGBB`. */
  userMessageTextColor?: pulumi.Input<string>;
  /** Agent message bubble colour, `#RRGGBB`. */
  assistantMessageColor?: pulumi.Input<string>;
  /** Agent message text colour, `#RRGGBB`. */
  assistantMessageTextColor?: pulumi.Input<string>;
  /** Corner the widget sits in. Service default `bottom-right`. */
  position?: pulumi.Input<"bottom-right" | "bottom-left" | "top-right" | "top-left">;
  /** Text of the launcher button. */
  launcherLabel?: pulumi.Input<string>;
  /** Launcher button shape. Service default `rounded`. */
  buttonShape?: pulumi.Input<"rounded" | "square" | "pill">;
  /** Panel corner radius, integer pixels (0 to 4096). */
  panelRadius?: pulumi.Input<number>;
  /** Message bubble radius, integer pixels (0 to 4096). */
  messageRadius?: pulumi.Input<number>;
  /** Launcher radius, integer pixels (0 to 4096). */
  launcherRadius?: pulumi.Input<number>;
  /** Icon radius, integer pixels (0 to 4096). */
  iconRadius?: pulumi.Input<number>;
  /** Dock icon size, integer pixels (0 to 4096). */
  dockIconSize?: pulumi.Input<number>;
  /** Launcher horizontal padding, integer pixels (0 to 4096). */
  launcherPaddingX?: pulumi.Input<number>;
  /** Launcher vertical padding, integer pixels (0 to 4096). */
  launcherPaddingY?: pulumi.Input<number>;
  /** Panel width, integer pixels (0 to 4096). */
  widgetWidth?: pulumi.Input<number>;
  /** Panel height, integer pixels (0 to 4096). */
  widgetHeight?: pulumi.Input<number>;
  /** Show the agent's inbound phone number in the panel. */
  showInboundNumber?: pulumi.Input<boolean>;
}

/** The widget's configuration. Every field but `agentId` is optional: what is not set is not managed. */
export interface WidgetArgs {
  /** The agent whose widget this is (e.g. `agent.agentId`). Changing it moves to another agent's widget (replace). */
  agentId: pulumi.Input<string>;
  /** Display name, 1 to 255 characters. Service default: the agent's name. */
  name?: pulumi.Input<string>;
  /**
   * The security boundary: the exact origins (`scheme://host[:port]`) whose pages may use the
   * public key. https only, except `http://localhost` and `http://127.0.0.1`; no path, no
   * wildcard. The whole set, in any order (it replaces the service's set). Service default: none.
   */
  allowedOrigins?: pulumi.Input<pulumi.Input<string>[]>;
  /** Whether visitors can type (`chat`), talk (`talk`), or both. Service default: both on. */
  enabledModes?: pulumi.Input<{ chat?: pulumi.Input<boolean>; talk?: pulumi.Input<boolean> }>;
  /** Appearance and placement. */
  theme?: pulumi.Input<WidgetThemeArgs>;
  /**
   * Values of the agent's `{{variables}}` for every conversation the widget starts. Keys are kept
   * exactly as written. The whole map: a variable removed here is removed from the widget.
   */
  defaultVariables?: pulumi.Input<Record<string, pulumi.Input<string>>>;
  /** `active` (serving) or `paused`. Default `active`: a widget paused elsewhere shows as drift. */
  status?: pulumi.Input<"active" | "paused">;
  /**
   * Any value; changing it rotates the public key (the old key stops working, the new one is the
   * secret output `publicKey`). Default: unset.
   */
  rotateKeyTrigger?: pulumi.Input<string | number>;
  /**
   * Rotate the key once on create, so `publicKey` is known from the first `up`. Default `true`.
   * Set `false` when adopting a widget whose current key is already embedded in a site: `publicKey`
   * is then `null` until the first rotation by `rotateKeyTrigger`.
   */
  rotateKeyOnCreate?: pulumi.Input<boolean>;
}

/**
 * The embeddable widget of an agent (one per agent). Creating it adopts the agent's widget;
 * destroying it pauses the widget. `publicKey` is a Pulumi secret.
 */
export class Widget extends ServiceResource {
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
    super(
      "widget",
      "Widget",
      name,
      {
        ...args,
        widgetId: undefined,
        publicKeyPrefix: undefined,
        publicKey: undefined,
        keyRotatedAt: undefined,
      },
      {
        ...opts,
        additionalSecretOutputs: [...new Set([...(opts?.additionalSecretOutputs ?? []), "publicKey"])],
      },
    );
  }
}
