/**
 * The emulator's state: a global part (catalogue, revoked keys) and one part per workspace
 * (agents with their versions, activations and widget; knowledge bases; analysis groups; what the
 * workspace holds). Kept in memory; with a database file every committed write is also stored as a
 * JSON document in SQLite (node:sqlite), and a restart loads them back.
 */
import { randomUUID } from "node:crypto";
import type { DatabaseSync, StatementSync } from "node:sqlite";
import {
  type ActivationRow,
  type AgentConfig,
  type Catalogue,
  type CustomAnalysis,
  DEFAULT_ANALYSIS_GROUP,
  DEFAULT_ANALYSIS_GROUP_NAME,
  type TranscriptTurn,
  type WhatsAppTemplateRow,
  type Widget,
} from "../spec";
import { DEFAULT_ANALYSIS_ITEMS, ORG, seedCatalogue, seedNumbers, stableUuid } from "./seed";

/** One version of an agent. */
export interface VersionRecord {
  version: number;
  version_id: string;
  is_published: boolean;
  document_revision: number;
  label: string | null;
  notes: string | null;
  config: AgentConfig;
  created_at: string;
  updated_at: string;
}

/** The widget, with its full public key (never read back except by rotate). */
export interface WidgetRecord extends Widget {
  public_key: string;
}

/** An agent: its versions (index = version number), deploy history and widget. */
export interface AgentRecord {
  id: string;
  seq: number;
  created_at: string;
  versions: VersionRecord[];
  live_version: number | null;
  activations: ActivationRow[];
  widget: WidgetRecord | null;
  /** The dashboard's webhook setting (`PUT /_emulator/agents/{id}/webhook`); absent means none. */
  webhook_url?: string | null;
}

/** What a call's answer decides (from the call-outcome rules and the version that answered). */
export interface CallOutcome {
  /** Terminal status. */
  status: string;
  /** Whether the line connected (a person or a voicemail answered). */
  connected: boolean;
  /** Connected duration in seconds, or null: the call's clock decides it. */
  duration_seconds: number | null;
  transcript: TranscriptTurn[];
  custom_analysis: CustomAnalysis;
  /** A transfer to a human: its target and how it ends; null when there is none. */
  transfer: { target: string | null; outcome: "completed" | "failed" } | null;
}

/**
 * A placed call. Its visible state is derived from the clock (`created_ms` and `call_ms`, see
 * src/emulator/calls.ts), so a call moves on by itself and a restart finds it where it should be.
 */
export interface CallRecord {
  id: string;
  seq: number;
  agent_id: string;
  agent_version: number;
  direction: string;
  origin: string | null;
  from_number: string | null;
  to_number: string | null;
  metadata: Record<string, unknown> | null;
  variables: Record<string, string> | null;
  /** When it was placed (epoch ms) and how long its whole life takes on the clock. */
  created_ms: number;
  call_ms: number;
  outcome: CallOutcome;
  recording_enabled: boolean;
  custom_analysis_enabled: boolean;
  rate_per_min: number;
  /** The agent's webhook when the call was placed (events go there). */
  webhook_url: string | null;
  /** The key it was placed with, the request it answered (canonical JSON) and the exact answer. */
  idempotency: { key: string; fingerprint: string; response: string } | null;
  /**
   * How much later than its clock the call is analysed (ms; traffic's `analysis_delay_seconds`):
   * the analysed and processed stages move by it. Absent: 0.
   */
  analysis_delay_ms?: number;
}

/**
 * A chat: a text conversation with an agent, started through the control API as a widget visitor
 * would (`POST /_emulator/chats`); `ended_ms` is null while it is open.
 */
export interface ChatRecord {
  id: string;
  seq: number;
  agent_id: string;
  agent_version: number;
  origin: string;
  created_ms: number;
  ended_ms: number | null;
}

/** A knowledge-base document; its status is computed from `ready_at` (see `docStatus`). */
export interface KbDocRecord {
  id: string;
  name: string;
  source: "text" | "url";
  url: string | null;
  text: string | null;
  created_at: string;
  ready_at: number;
  final_status: "ready" | "failed";
  final_error: string | null;
}

export interface KbRecord {
  id: string;
  seq: number;
  name: string;
  description: string | null;
  documents: KbDocRecord[];
  created_at: string;
  updated_at: string;
}

export interface GroupItemRecord {
  id: string;
  seq: number;
  name: string;
  description: string | null;
  type: "text" | "boolean" | "number" | "enum";
  enum_values: string[] | null;
  enabled: boolean;
  created_at: string;
}

export interface GroupRecord {
  id: string;
  seq: number;
  name: string;
  description: string | null;
  enabled: boolean;
  protected: boolean;
  items: GroupItemRecord[];
  created_at: string;
  updated_at: string;
}

export interface NumberRecord {
  id: string;
  number: string;
  carrier_status: "listed" | "delisted";
  lifecycle_status: "active" | "grace_period" | "released";
}

export interface WhatsAppNumberRecord {
  id: string;
  number: string;
  phone_number_id: string;
  display_name: string;
}

/** What a workspace holds besides agents, knowledge bases and groups. */
export interface WorkspaceMeta {
  name: string;
  id: string;
  default_group_id: string;
  numbers: NumberRecord[];
  whatsapp_numbers: WhatsAppNumberRecord[];
  templates: WhatsAppTemplateRow[];
  custom_tools: string[];
}

export interface WorkspaceState extends WorkspaceMeta {
  key: string;
  agents: Map<string, AgentRecord>;
  kbs: Map<string, KbRecord>;
  groups: Map<string, GroupRecord>;
  /** Calls by id, in placing order. */
  calls: Map<string, CallRecord>;
  /** The same calls in placing order (ascending `seq`): the listing's index. */
  callList: CallRecord[];
  /** Idempotency-Key of a placed call to its id. */
  callKeys: Map<string, string>;
  /** Chats in starting order. */
  chats: Map<string, ChatRecord>;
}

interface GlobalDoc {
  catalogue: Catalogue;
  revoked_keys: string[];
}

/** Documents in SQLite: one row per agent, knowledge base, group, call, chat, workspace, plus the global row. */
class Store {
  private readonly db: DatabaseSync;
  private readonly putStmt: StatementSync;
  private readonly delStmt: StatementSync;

  constructor(file: string) {
    // Loaded on demand: node:sqlite prints an experimental warning when it is first loaded.
    const sqlite = require("node:sqlite") as typeof import("node:sqlite");
    this.db = new sqlite.DatabaseSync(file);
    this.db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;");
    this.db.exec("CREATE TABLE IF NOT EXISTS docs (key TEXT PRIMARY KEY, json TEXT NOT NULL)");
    this.putStmt = this.db.prepare("INSERT OR REPLACE INTO docs (key, json) VALUES (?, ?)");
    this.delStmt = this.db.prepare("DELETE FROM docs WHERE key = ?");
  }

  all(): Map<string, unknown> {
    const rows = this.db.prepare("SELECT key, json FROM docs").all() as { key: string; json: string }[];
    return new Map(rows.map((r) => [r.key, JSON.parse(r.json)]));
  }

  put(key: string, value: unknown): void {
    this.putStmt.run(key, JSON.stringify(value));
  }

  delete(key: string): void {
    this.delStmt.run(key);
  }

  clear(): void {
    this.db.exec("DELETE FROM docs");
  }

  transaction<T>(fn: () => T): T {
    if (this.db.isTransaction) return fn();
    this.db.exec("BEGIN");
    try {
      const out = fn();
      this.db.exec("COMMIT");
      return out;
    } catch (err) {
      this.db.exec("ROLLBACK");
      throw err;
    }
  }

  close(): void {
    this.db.close();
  }
}

const now = () => new Date().toISOString();

/**
 * Calls loaded from the database share equal outcomes and variables again (as traffic placed them:
 * one object per agent and outcome), so a large workspace takes after a restart the memory it took
 * before. Nothing mutates either.
 */
function shareOutcomes(calls: CallRecord[]): void {
  const outcomes = new Map<string, CallOutcome>();
  const variables = new Map<string, Record<string, string>>();
  for (const c of calls) {
    const o = JSON.stringify(c.outcome);
    const known = outcomes.get(o);
    if (known) c.outcome = known;
    else outcomes.set(o, c.outcome);
    if (c.variables) {
      const v = JSON.stringify(c.variables);
      const same = variables.get(v);
      if (same) c.variables = same;
      else variables.set(v, c.variables);
    }
  }
}

/** A configured workspace: its name and API key. */
export interface WorkspaceConfig {
  name: string;
  key: string;
}

/**
 * Fills a workspace the moment it is seeded (at start for a workspace the database does not hold
 * yet, and on every reset): the `--seed` file's agents, knowledge bases, analysis groups and numbers.
 */
export type WorkspaceSeeder = (state: State, ws: WorkspaceState) => void;

/** The whole state, with write-through persistence. */
export class State {
  catalogue!: Catalogue;
  revokedKeys = new Set<string>();
  readonly workspaces = new Map<string, WorkspaceState>();
  private readonly byKey = new Map<string, WorkspaceState>();
  private seq = 0;
  private readonly store: Store | null;

  constructor(
    private readonly configs: WorkspaceConfig[],
    dbFile?: string,
    private readonly seeder?: WorkspaceSeeder,
  ) {
    this.store = dbFile ? new Store(dbFile) : null;
    this.load();
  }

  /** The next ordering number (creation order of agents, knowledge bases, groups and items). */
  nextSeq(): number {
    this.seq += 1;
    return this.seq;
  }

  /** The ordering number `nextSeq` will give next. */
  peekSeq(): number {
    return this.seq + 1;
  }

  /** The workspace of an API key, or undefined for an unknown or revoked key. */
  workspaceForKey(key: string): WorkspaceState | undefined {
    if (this.revokedKeys.has(key)) return undefined;
    return this.byKey.get(key);
  }

  /** Everything back to the seeded state (the database too). */
  reset(): void {
    this.store?.clear();
    this.workspaces.clear();
    this.byKey.clear();
    this.revokedKeys.clear();
    this.seq = 0;
    this.load();
  }

  saveGlobal(): void {
    const doc: GlobalDoc = { catalogue: this.catalogue, revoked_keys: [...this.revokedKeys] };
    this.store?.put("global", doc);
  }

  saveWorkspace(ws: WorkspaceState): void {
    if (!this.store) return;
    const meta: WorkspaceMeta = {
      name: ws.name,
      id: ws.id,
      default_group_id: ws.default_group_id,
      numbers: ws.numbers,
      whatsapp_numbers: ws.whatsapp_numbers,
      templates: ws.templates,
      custom_tools: ws.custom_tools,
    };
    this.store.put(`ws/${ws.name}`, meta);
  }

  saveAgent(ws: WorkspaceState, agent: AgentRecord): void {
    this.store?.put(`agent/${ws.name}/${agent.id}`, agent);
  }

  saveKb(ws: WorkspaceState, kb: KbRecord): void {
    this.store?.put(`kb/${ws.name}/${kb.id}`, kb);
  }

  deleteKb(ws: WorkspaceState, id: string): void {
    this.store?.delete(`kb/${ws.name}/${id}`);
  }

  saveGroup(ws: WorkspaceState, group: GroupRecord): void {
    this.store?.put(`group/${ws.name}/${group.id}`, group);
  }

  deleteGroup(ws: WorkspaceState, id: string): void {
    this.store?.delete(`group/${ws.name}/${id}`);
  }

  /** Adds a placed call (and its Idempotency-Key) to the workspace and stores it. */
  addCall(ws: WorkspaceState, call: CallRecord): void {
    const last = ws.callList.at(-1);
    if (last && last.seq >= call.seq)
      throw new Error(`calls must be added in placing order (seq ${call.seq} after ${last.seq})`);
    ws.calls.set(call.id, call);
    ws.callList.push(call);
    if (call.idempotency) ws.callKeys.set(call.idempotency.key, call.id);
    this.store?.put(`call/${ws.name}/${call.id}`, call);
  }

  /** Adds a chat to the workspace, or stores its change (it ended). */
  saveChat(ws: WorkspaceState, chat: ChatRecord): void {
    ws.chats.set(chat.id, chat);
    this.store?.put(`chat/${ws.name}/${chat.id}`, chat);
  }

  /**
   * Runs `fn` as one database transaction (many writes at once: traffic at volume, bulk agents);
   * without a database it just runs it. A throw rolls the database back (the memory is the
   * caller's to keep consistent: bulk writers check everything before the first write).
   */
  batch<T>(fn: () => T): T {
    return this.store ? this.store.transaction(fn) : fn();
  }

  /** The agent with this id in any workspace, with its workspace. */
  findAgentAnywhere(id: string): { ws: WorkspaceState; agent: AgentRecord } | undefined {
    for (const ws of this.workspaces.values()) {
      const agent = ws.agents.get(id);
      if (agent) return { ws, agent };
    }
    return undefined;
  }

  close(): void {
    this.store?.close();
  }

  private load(): void {
    const docs = this.store?.all() ?? new Map<string, unknown>();
    const global = docs.get("global") as GlobalDoc | undefined;
    this.catalogue = global?.catalogue ?? seedCatalogue();
    this.revokedKeys = new Set(global?.revoked_keys ?? []);
    if (!global) this.saveGlobal();
    let maxSeq = 0;
    this.configs.forEach((cfg, index) => {
      const meta = docs.get(`ws/${cfg.name}`) as WorkspaceMeta | undefined;
      const ws: WorkspaceState = meta
        ? {
            ...meta,
            key: cfg.key,
            agents: new Map(),
            kbs: new Map(),
            groups: new Map(),
            calls: new Map(),
            callList: [],
            callKeys: new Map(),
            chats: new Map(),
          }
        : this.seedWorkspace(cfg, index);
      if (meta) {
        for (const [key, value] of docs) {
          const [kind, wsName, id] = key.split("/");
          if (wsName !== cfg.name || id === undefined) continue;
          if (kind === "agent") ws.agents.set(id, value as AgentRecord);
          else if (kind === "kb") ws.kbs.set(id, value as KbRecord);
          else if (kind === "group") ws.groups.set(id, value as GroupRecord);
          else if (kind === "call") ws.calls.set(id, value as CallRecord);
          else if (kind === "chat") ws.chats.set(id, value as ChatRecord);
        }
        // Creation and placing order (the documents come back in key order).
        ws.agents = new Map([...ws.agents].sort((a, b) => a[1].seq - b[1].seq));
        ws.callList = [...ws.calls.values()].sort((a, b) => a.seq - b.seq);
        shareOutcomes(ws.callList);
        ws.calls = new Map(ws.callList.map((c) => [c.id, c]));
        ws.chats = new Map([...ws.chats].sort((a, b) => a[1].seq - b[1].seq));
        for (const c of ws.calls.values()) if (c.idempotency) ws.callKeys.set(c.idempotency.key, c.id);
      }
      for (const r of [
        ...ws.agents.values(),
        ...ws.kbs.values(),
        ...ws.groups.values(),
        ...ws.calls.values(),
        ...ws.chats.values(),
      ])
        maxSeq = Math.max(maxSeq, r.seq);
      for (const g of ws.groups.values()) for (const it of g.items) maxSeq = Math.max(maxSeq, it.seq);
      this.workspaces.set(ws.name, ws);
      this.byKey.set(cfg.key, ws);
    });
    this.seq = Math.max(this.seq, maxSeq);
  }

  private seedWorkspace(cfg: WorkspaceConfig, index: number): WorkspaceState {
    const seeded = seedNumbers(index);
    const at = now();
    const groupId = stableUuid(`ws:${cfg.name}:group:default`);
    const ws: WorkspaceState = {
      name: cfg.name,
      id: stableUuid(`ws:${cfg.name}`),
      key: cfg.key,
      default_group_id: groupId,
      numbers: seeded.numbers.map((n) => ({ id: stableUuid(`ws:${cfg.name}:number:${n.number}`), ...n })),
      whatsapp_numbers: seeded.whatsappNumbers.map((n) => ({
        id: stableUuid(`ws:${cfg.name}:wa:${n.number}`),
        ...n,
      })),
      templates: seeded.templates,
      custom_tools: [],
      agents: new Map(),
      kbs: new Map(),
      groups: new Map(),
      calls: new Map(),
      callList: [],
      callKeys: new Map(),
      chats: new Map(),
    };
    const group: GroupRecord = {
      id: groupId,
      seq: this.nextSeq(),
      name: DEFAULT_ANALYSIS_GROUP_NAME,
      description: DEFAULT_ANALYSIS_GROUP.description,
      enabled: true,
      protected: true,
      items: DEFAULT_ANALYSIS_ITEMS.map((it) => ({
        id: stableUuid(`ws:${cfg.name}:group:default:${it.name}`),
        seq: this.nextSeq(),
        enabled: true,
        created_at: at,
        ...it,
      })),
      created_at: at,
      updated_at: at,
    };
    ws.groups.set(group.id, group);
    this.saveWorkspace(ws);
    this.saveGroup(ws, group);
    this.seeder?.(this, ws);
    return ws;
  }
}

/** The organisation of every workspace. */
export { ORG };

/** A new random id. */
export const newId = (): string => randomUUID();
export { now };
