/** The agent's widget: read shape, merge-patch body, rotate-key answer, and the origin rules. */
import { z } from "zod";
import { Id, type Issue, Timestamp } from "./common";

/** Corners a widget can sit in. */
export const WIDGET_POSITIONS = ["bottom-right", "bottom-left", "top-right", "top-left"] as const;
/** Launcher button shapes. */
export const WIDGET_BUTTON_SHAPES = ["rounded", "square", "pill"] as const;

const colour = z.string().regex(/^#[0-9A-Fa-f]{6}$/, "Colour should be a #RRGGBB string");
const px = z.int().min(0).max(4096);

const themeShape = {
  title: z.string(),
  subtitle: z.string(),
  welcome_message: z.string(),
  logo_url: z.string().nullable(),
  accent_color: colour,
  launcher_text_color: colour,
  user_message_color: colour,
  user_message_text_color: colour,
  assistant_message_color: colour,
  assistant_message_text_color: colour,
  position: z.enum(WIDGET_POSITIONS),
  launcher_label: z.string(),
  button_shape: z.enum(WIDGET_BUTTON_SHAPES),
  panel_radius: px,
  message_radius: px,
  launcher_radius: px,
  icon_radius: px,
  dock_icon_size: px,
  launcher_padding_x: px,
  launcher_padding_y: px,
  widget_width: px,
  widget_height: px,
  show_inbound_number: z.boolean(),
};
/** Widget appearance and placement. */
export const WidgetTheme = z.object(themeShape);
export type WidgetTheme = z.infer<typeof WidgetTheme>;

/** `GET`/`PATCH /v1/agents/{id}/widget` answer. Only the key prefix is ever read back. */
export const Widget = z.object({
  id: Id,
  agent_id: Id,
  name: z.string(),
  allowed_origins: z.array(z.string()),
  enabled_modes: z.object({ chat: z.boolean(), talk: z.boolean() }),
  theme: WidgetTheme,
  default_variables: z.record(z.string(), z.string()),
  status: z.enum(["active", "paused"]),
  public_key_prefix: z.string(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type Widget = z.infer<typeof Widget>;

/**
 * `PATCH /v1/agents/{id}/widget` body: every field optional; objects merge (`theme`,
 * `enabled_modes`, `default_variables`, where a `null` value removes a variable), lists replace.
 */
export const WidgetPatch = z
  .strictObject({
    name: z.string().min(1).max(255),
    allowed_origins: z.array(z.string()),
    enabled_modes: z.strictObject({ chat: z.boolean(), talk: z.boolean() }).partial(),
    theme: z.strictObject(themeShape).partial(),
    default_variables: z.record(z.string(), z.string().nullable()),
    status: z.enum(["active", "paused"]),
  })
  .partial();
export type WidgetPatch = z.infer<typeof WidgetPatch>;

/** `POST /v1/agents/{id}/widget/rotate-key` answer: the only place the full key appears. */
export const RotateKeyResponse = z.object({
  public_key: z.string(),
  public_key_prefix: z.string(),
  rotated_at: Timestamp,
});
export type RotateKeyResponse = z.infer<typeof RotateKeyResponse>;

/**
 * Why `origin` cannot be an allowed origin, or null when it can: exact `scheme://host[:port]`,
 * https only except for localhost and 127.0.0.1, no path, query, credentials or wildcard.
 */
export function originProblem(origin: string): string | null {
  if (origin.includes("*")) return "wildcards are not allowed; list each exact origin";
  let u: URL;
  try {
    u = new URL(origin);
  } catch {
    return "is not an origin (scheme://host[:port])";
  }
  if (u.protocol !== "https:" && u.protocol !== "http:") return "the scheme must be https";
  const local = u.hostname === "localhost" || u.hostname === "127.0.0.1";
  if (u.protocol === "http:" && !local) return "must use https (http only for localhost and 127.0.0.1)";
  if (u.username || u.password) return "must not carry credentials";
  if (u.origin !== origin) return `must be the exact origin '${u.origin}' (no path, query or trailing slash)`;
  return null;
}

/** Widget rules beyond the schema: each allowed origin well-formed (400 `document_invalid`). */
export function checkWidgetRules(patch: WidgetPatch): Issue[] {
  const issues: Issue[] = [];
  (patch.allowed_origins ?? []).forEach((o, i) => {
    const problem = originProblem(o);
    if (problem) {
      const field = `allowed_origins[${i}]`;
      issues.push({ field, code: "document_invalid", message: `${field}: '${o}' ${problem}` });
    }
  });
  return issues;
}
