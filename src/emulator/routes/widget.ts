/** The agent's widget: prepared on first read, merge-patched, key rotated. */
import { randomBytes } from "node:crypto";
import {
  checkWidgetRules,
  DEFAULT_WIDGET,
  DEFAULT_WIDGET_THEME,
  parseWith,
  type Widget,
  WidgetPatch,
  type WidgetTheme,
} from "../../spec";
import { type Result, type RouteContext, refuseIf } from "../context";
import { validationError } from "../http";
import { type AgentRecord, newId, now, type VersionRecord, type WidgetRecord } from "../state";
import { findAgent } from "./agents";

/** Theme of a freshly prepared widget (the spec's, `DEFAULT_WIDGET_THEME`). */
export const DEFAULT_THEME: WidgetTheme = DEFAULT_WIDGET_THEME;

const newKey = () => `pk_live_${randomBytes(16).toString("hex")}`;
const prefixOf = (key: string) => key.slice(0, 12);

function prepare(ctx: RouteContext, agent: AgentRecord): WidgetRecord {
  if (agent.widget) return agent.widget;
  const at = now();
  const key = newKey();
  agent.widget = {
    id: newId(),
    agent_id: agent.id,
    name: (agent.versions.at(-1) as VersionRecord).config.name,
    allowed_origins: [...DEFAULT_WIDGET.allowed_origins],
    enabled_modes: { ...DEFAULT_WIDGET.enabled_modes },
    theme: { ...DEFAULT_THEME },
    default_variables: { ...DEFAULT_WIDGET.default_variables },
    status: DEFAULT_WIDGET.status,
    public_key: key,
    public_key_prefix: prefixOf(key),
    created_at: at,
    updated_at: at,
  };
  ctx.state.saveAgent(ctx.ws, agent);
  return agent.widget;
}

export function view(w: WidgetRecord): Widget {
  const { public_key: _hidden, ...rest } = w;
  return structuredClone(rest);
}

/** `GET /v1/agents/{id}/widget`. */
export function readWidget(ctx: RouteContext): Result {
  return { status: 200, body: view(prepare(ctx, findAgent(ctx))) };
}

/** `PATCH /v1/agents/{id}/widget`: objects merge, lists replace, `null` removes a default variable. */
export async function patchWidget(ctx: RouteContext): Promise<Result> {
  const agent = findAgent(ctx);
  const parsed = parseWith(WidgetPatch, await ctx.body());
  if (!parsed.ok) throw validationError(parsed.issues);
  const p = parsed.data;
  refuseIf(checkWidgetRules(p));
  const w = prepare(ctx, agent);
  if (p.name !== undefined) w.name = p.name;
  if (p.allowed_origins !== undefined) w.allowed_origins = [...p.allowed_origins];
  if (p.enabled_modes) w.enabled_modes = { ...w.enabled_modes, ...p.enabled_modes };
  if (p.theme) w.theme = { ...w.theme, ...p.theme };
  if (p.default_variables) {
    for (const [k, v] of Object.entries(p.default_variables)) {
      if (v === null) delete w.default_variables[k];
      else w.default_variables[k] = v;
    }
  }
  if (p.status !== undefined) w.status = p.status;
  w.updated_at = now();
  ctx.state.saveAgent(ctx.ws, agent);
  return { status: 200, body: view(w) };
}

/** `POST /v1/agents/{id}/widget/rotate-key`: the only answer with the full public key. */
export function rotateWidgetKey(ctx: RouteContext): Result {
  const agent = findAgent(ctx);
  const w = prepare(ctx, agent);
  const key = newKey();
  const at = now();
  w.public_key = key;
  w.public_key_prefix = prefixOf(key);
  w.updated_at = at;
  ctx.state.saveAgent(ctx.ws, agent);
  return { status: 200, body: { public_key: key, public_key_prefix: w.public_key_prefix, rotated_at: at } };
}
