/**
 * Chats: `GET /v1/chats` (newest first, cursor pages), and starting and ending one, which the
 * control API does as a widget visitor would (`POST /_emulator/chats`,
 * `POST /_emulator/chats/{chat_id}/end`).
 */
import type { ChatObject, Issue } from "../../spec";
import type { Result, RouteContext } from "../context";
import { apiError, limitOf, pageOf, validationError } from "../http";
import { type ChatRecord, newId, type State, type WorkspaceState } from "../state";
import { DASHBOARD_BASE } from "./agents";
import { answeringVersion } from "./calls";

/** A chat as `GET /v1/chats` shows it. */
export function chatView(c: ChatRecord): ChatObject {
  return {
    id: c.id,
    agent_id: c.agent_id,
    agent_version: c.agent_version,
    status: c.ended_ms === null ? "active" : "completed",
    origin: c.origin,
    created_at: new Date(c.created_ms).toISOString(),
    ended_at: c.ended_ms === null ? null : new Date(c.ended_ms).toISOString(),
    dashboard_url: `${DASHBOARD_BASE}/chats/${c.id}`,
  };
}

/** `GET /v1/chats`: newest first. */
export function listChats(ctx: RouteContext): Result {
  const issues: Issue[] = [];
  const limit = limitOf(ctx.query, issues);
  if (issues.length) throw validationError(issues);
  const chats = [...ctx.ws.chats.values()].reverse();
  return {
    status: 200,
    body: pageOf(chats, (c) => c.seq, chatView, {
      list: "chats",
      cursor: ctx.query.get("cursor"),
      limit,
      desc: true,
    }),
  };
}

/** How a chat starts. */
export interface ChatStart {
  agent_id: string;
  origin: string;
  version?: number;
}

/**
 * Starts a chat with the agent's live version (or the pinned published one), refused as a call
 * would be; from the widget, also refused when its widget is paused or has chat switched off.
 */
export function startChat(state: State, ws: WorkspaceState, start: ChatStart): ChatRecord {
  const agent = ws.agents.get(start.agent_id);
  if (!agent)
    throw apiError(404, "agent_not_found", `agent_id: no agent '${start.agent_id}'`, { param: "agent_id" });
  const v = answeringVersion(state, ws, agent, { version: start.version });
  const widget = agent.widget;
  if (start.origin === "widget" && widget && (widget.status !== "active" || !widget.enabled_modes.chat))
    throw apiError(
      409,
      "chat_disabled",
      `agent_id: the widget of agent ${agent.id} takes no chats (${widget.status !== "active" ? `its status is '${widget.status}'` : "enabled_modes.chat is false"})`,
      { param: "agent_id" },
    );
  const chat: ChatRecord = {
    id: newId(),
    seq: state.nextSeq(),
    agent_id: agent.id,
    agent_version: v.version,
    origin: start.origin,
    created_ms: Date.now(),
    ended_ms: null,
  };
  state.saveChat(ws, chat);
  return chat;
}

/** Completes a chat (the visitor closed it); a completed chat stays as it is. */
export function endChat(state: State, ws: WorkspaceState, chat: ChatRecord): ChatRecord {
  if (chat.ended_ms === null) {
    chat.ended_ms = Date.now();
    state.saveChat(ws, chat);
  }
  return chat;
}
