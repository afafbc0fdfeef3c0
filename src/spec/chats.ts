/**
 * Chats (the reference's "Chat"): text conversations with an agent, from the widget or the web. The
 * reference shows `status`, `origin`, `agent_version` and `dashboard_url`, and of `status` only
 * `completed` (no longer active, a visitor closing the tab included); the rest of the record is the
 * project's decision (docs/service-decisions.md, "Chats").
 */
import { z } from "zod";
import { Timestamp } from "./common";
import { Envelope } from "./paging";

/** Chat `status` values: `completed` is the reference's; `active` (open) is the project's decision. Open set. */
export const CHAT_STATUSES = ["active", "completed"] as const;

/** A chat: list item of `GET /v1/chats`. */
export const ChatObject = z.object({
  id: z.string(),
  agent_id: z.string().nullable(),
  /** Version that answered. */
  agent_version: z.int(),
  /** Open set: see `CHAT_STATUSES`. */
  status: z.string(),
  /** Open set (`widget`, `web`, ...). */
  origin: z.string().nullable(),
  created_at: Timestamp,
  /** When it was completed; null while active. */
  ended_at: Timestamp.nullable(),
  dashboard_url: z.string(),
});
export type ChatObject = z.infer<typeof ChatObject>;

/** `GET /v1/chats` answer. */
export const ChatList = Envelope(ChatObject);
export type ChatList = z.infer<typeof ChatList>;

/** Query parameters of `GET /v1/chats`. */
export const CHAT_LIST_QUERY = ["cursor", "limit"] as const;
