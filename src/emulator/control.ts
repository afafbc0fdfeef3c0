/**
 * The control API under `/_emulator/` (the dashboard's part, and test faults). No key needed; no
 * faults, rate limit or logging apply.
 */
import { z } from "zod";
import { CALL_ORIGINS, normalizeE164, parseWith, placeCallIssues } from "../spec";
import { BulkAgentsBody, createAgents } from "./bulkAgents";
import { CallOutcomesBody, type CallRuntime, ControlCallBody, callView, WebhookBody } from "./calls";
import type { EmulatorSettings, Result } from "./context";
import type { Faults } from "./faults";
import { FaultConfig } from "./faults";
import { apiError, invalidRequest, validationError } from "./http";
import type { RateLimiter } from "./rateLimit";
import type { RequestLog } from "./requestLog";
import { Router } from "./router";
import { agentDetail, newVersion, representativeVersion, versionRow } from "./routes/agents";
import { view as groupView } from "./routes/analysis";
import { placeCall, placedAnswer } from "./routes/calls";
import { chatView, endChat, startChat } from "./routes/chats";
import { view as kbView } from "./routes/knowledgeBases";
import { view as widgetView } from "./routes/widget";
import { newId, type State, type VersionRecord, type WorkspaceState } from "./state";
import { placeTraffic, TrafficBody } from "./traffic";

/** What the control API acts on. */
export interface ControlDeps {
  state: State;
  faults: Faults;
  log: RequestLog;
  limiter: RateLimiter;
  settings: EmulatorSettings;
  calls: CallRuntime;
}

type ControlHandler = (deps: ControlDeps, params: Record<string, string>, body: unknown) => Result;

const ToolBody = z.strictObject({
  name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "A tool name is letters, digits and _"),
});
const NumberBody = z.strictObject({ number: z.string().min(1) });
const TemplateBody = z.strictObject({ name: z.string().min(1), language: z.string().min(1) });
const ChatBody = z.strictObject({
  agent_id: z.guid(),
  origin: z.enum(CALL_ORIGINS).optional(),
  version: z.int().min(0).optional(),
});

function parse<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const r = parseWith(schema, body);
  if (!r.ok) throw validationError(r.issues);
  return r.data;
}

function workspace(deps: ControlDeps, name: string): WorkspaceState {
  const ws = deps.state.workspaces.get(name);
  if (!ws) throw apiError(404, "workspace_not_found", `name: no workspace '${name}'`, { param: "name" });
  return ws;
}

const router = new Router<ControlHandler>();

router.add("POST", "/_emulator/reset", (d) => {
  d.calls.reset();
  d.state.reset();
  d.faults.clear();
  d.limiter.clear();
  d.log.clear();
  return { status: 200, body: { reset: true } };
});

router.add("POST", "/_emulator/rate-limit/clear", (d) => {
  d.limiter.clear();
  return { status: 200, body: { cleared: true } };
});

router.add("POST", "/_emulator/workspaces/:name/custom-tools", (d, p, body) => {
  const ws = workspace(d, p.name as string);
  const { name } = parse(ToolBody, body);
  const added = !ws.custom_tools.includes(name);
  if (added) {
    ws.custom_tools.push(name);
    d.state.saveWorkspace(ws);
  }
  return { status: added ? 201 : 200, body: { name, workspace: ws.name } };
});

router.add("POST", "/_emulator/workspaces/:name/numbers", (d, p, body) => {
  const ws = workspace(d, p.name as string);
  const { number } = parse(NumberBody, body);
  const e164 = normalizeE164(number);
  if (!e164)
    throw apiError(400, "document_invalid", `number: '${number}' is not an E.164 number`, {
      param: "number",
    });
  let row = ws.numbers.find((n) => n.number === e164);
  const added = !row || row.lifecycle_status === "released";
  if (!row) {
    row = { id: newId(), number: e164, carrier_status: "listed", lifecycle_status: "active" };
    ws.numbers.push(row);
  } else if (row.lifecycle_status === "released") {
    row.lifecycle_status = "active";
    row.carrier_status = "listed";
  }
  d.state.saveWorkspace(ws);
  return { status: added ? 201 : 200, body: { ...row, agent_id: null } };
});

router.add("POST", "/_emulator/workspaces/:name/whatsapp-templates", (d, p, body) => {
  const ws = workspace(d, p.name as string);
  const { name, language } = parse(TemplateBody, body);
  const exists = ws.templates.some((t) => t.name === name && t.language === language);
  const row = { name, language, status: "approved" as const };
  if (!exists) {
    ws.templates.push(row);
    d.state.saveWorkspace(ws);
  }
  return { status: exists ? 200 : 201, body: row };
});

router.add("POST", "/_emulator/models/:id/retire", (d, p) => {
  const m = d.state.catalogue.models.find((x) => x.id === p.id);
  if (!m) throw apiError(404, "model_not_found", `id: no model '${p.id}' in the catalogue`, { param: "id" });
  m.retired = true;
  d.state.saveGlobal();
  return { status: 200, body: m };
});

router.add("POST", "/_emulator/voices/:provider/:voice_id/withdraw", (d, p) => {
  const v = d.state.catalogue.voices.find((x) => x.provider === p.provider && x.voice_id === p.voice_id);
  if (!v)
    throw apiError(404, "voice_not_found", `voice_id: no voice '${p.voice_id}' of '${p.provider}'`, {
      param: "voice_id",
    });
  v.withdrawn = true;
  d.state.saveGlobal();
  return { status: 200, body: v };
});

router.add("POST", "/_emulator/agents/:agent_id/drafts", (d, p) => {
  const { ws, agent } = agentAnywhere(d, p.agent_id as string);
  const parent = representativeVersion(agent);
  const draft = newVersion(agent.versions.length, structuredClone(parent.config), parent.document_revision);
  agent.versions.push(draft);
  d.state.saveAgent(ws, agent);
  return { status: 201, body: agentDetail(d.state, ws, agent, draft) };
});

function agentAnywhere(d: ControlDeps, id: string) {
  const found = d.state.findAgentAnywhere(id);
  if (!found) throw apiError(404, "agent_not_found", `agent_id: no agent '${id}'`, { param: "agent_id" });
  return found;
}

router.add("PUT", "/_emulator/call-outcomes", (d, _p, body) => {
  d.calls.rules = parse(CallOutcomesBody, body).rules;
  return { status: 200, body: { rules: d.calls.rules } };
});
router.add("GET", "/_emulator/call-outcomes", (d) => ({ status: 200, body: { rules: d.calls.rules } }));

router.add("PUT", "/_emulator/agents/:agent_id/webhook", (d, p, body) => {
  const { ws, agent } = agentAnywhere(d, p.agent_id as string);
  const { url } = parse(WebhookBody, body);
  agent.webhook_url = url;
  d.state.saveAgent(ws, agent);
  return { status: 200, body: { agent_id: agent.id, url } };
});

router.add("POST", "/_emulator/calls", (d, _p, body) => {
  const b = parse(ControlCallBody, body);
  const [both] = placeCallIssues(b);
  if (both) throw invalidRequest(both.message, both.field);
  if (b.direction === "web" && (b.from_number !== undefined || b.to_number !== undefined)) {
    const field = b.from_number !== undefined ? "from_number" : "to_number";
    throw invalidRequest(`${field}: a web call (in a browser) has no phone numbers`, field);
  }
  const { ws } = agentAnywhere(d, b.agent_id);
  const call = placeCall(d.state, d.settings, d.calls, ws, {
    ...b,
    origin: b.origin ?? (b.direction === "inbound" ? "inbound" : "widget"),
  });
  return {
    status: 202,
    raw: { contentType: "application/json", data: placedAnswer(call.id) },
    headers: { "X-Workspace": ws.name },
  };
});

router.add("POST", "/_emulator/keys/:key/revoke", (d, p) => {
  d.state.revokedKeys.add(p.key as string);
  d.state.saveGlobal();
  return { status: 200, body: { key: p.key, revoked: true } };
});

router.add("PUT", "/_emulator/faults", (d, _p, body) => {
  d.faults.set(parse(FaultConfig, body ?? {}));
  return { status: 200, body: d.faults.config };
});
router.add("GET", "/_emulator/faults", (d) => ({ status: 200, body: d.faults.config }));

router.add("GET", "/_emulator/requests", (d) => ({ status: 200, body: d.log.list() }));
router.add("DELETE", "/_emulator/requests", (d) => {
  d.log.clear();
  return { status: 204 };
});

router.add("POST", "/_emulator/traffic", (d, _p, body) => {
  const { workspace, ...answer } = placeTraffic(d, parse(TrafficBody, body));
  return { status: 201, body: answer, headers: { "X-Workspace": workspace.name } };
});

router.add("POST", "/_emulator/workspaces/:name/agents", (d, p, body) => {
  const ws = workspace(d, p.name as string);
  const agents = createAgents(d.state, ws, parse(BulkAgentsBody, body));
  return { status: 201, body: { count: agents.length, agents }, headers: { "X-Workspace": ws.name } };
});

router.add("POST", "/_emulator/chats", (d, _p, body) => {
  const b = parse(ChatBody, body);
  const { ws } = agentAnywhere(d, b.agent_id);
  const chat = startChat(d.state, ws, {
    agent_id: b.agent_id,
    origin: b.origin ?? "widget",
    version: b.version,
  });
  return { status: 201, body: chatView(chat), headers: { "X-Workspace": ws.name } };
});

router.add("POST", "/_emulator/chats/:chat_id/end", (d, p) => {
  for (const ws of d.state.workspaces.values()) {
    const chat = ws.chats.get(p.chat_id as string);
    if (chat) return { status: 200, body: chatView(endChat(d.state, ws, chat)) };
  }
  throw apiError(404, "chat_not_found", `chat_id: no chat '${p.chat_id}'`, { param: "chat_id" });
});

router.add("GET", "/_emulator/health", (d) => ({
  status: 200,
  body: { status: "ok", workspaces: [...d.state.workspaces.keys()] },
}));

router.add("GET", "/_emulator/state", (d) => ({ status: 200, body: snapshot(d) }));

/** `GET /_emulator/state` answer. */
export type EmulatorSnapshot = ReturnType<typeof snapshot>;

/**
 * `GET /_emulator/state`: what each workspace holds, as the API would show it (each agent at its
 * latest version, with its versions, deploy history, widget and webhook; calls as they are now),
 * and what the catalogue has retired or withdrawn. No key appears in it.
 */
function snapshot(d: ControlDeps) {
  const at = Date.now();
  return {
    workspaces: [...d.state.workspaces.values()].map((ws) => ({
      name: ws.name,
      id: ws.id,
      numbers: ws.numbers,
      whatsapp_numbers: ws.whatsapp_numbers,
      whatsapp_templates: ws.templates,
      custom_tools: ws.custom_tools,
      agents: [...ws.agents.values()].map((agent) => ({
        ...agentDetail(d.state, ws, agent, agent.versions.at(-1) as VersionRecord),
        versions: agent.versions.map((v) => versionRow(d.state, ws, agent, v)),
        activations: agent.activations,
        widget: agent.widget ? widgetView(agent.widget) : null,
        webhook_url: agent.webhook_url ?? null,
      })),
      knowledge_bases: [...ws.kbs.values()].map((kb) => kbView(kb)),
      analysis_groups: [...ws.groups.values()].map(groupView),
      calls: [...ws.calls.values()].map((c) => callView(c, at, d.settings.baseUrl)),
      chats: [...ws.chats.values()].map(chatView),
    })),
    retired_models: d.state.catalogue.models.filter((m) => m.retired).map((m) => m.id),
    withdrawn_voices: d.state.catalogue.voices
      .filter((v) => v.withdrawn)
      .map((v) => ({ provider: v.provider, voice_id: v.voice_id })),
  };
}

/** Answers a control request (throws `ApiError` for refusals, 404 and 405). */
export function handleControl(deps: ControlDeps, method: string, path: string, body: unknown): Result {
  const m = router.match(method, path);
  return m.value(deps, m.params, body);
}
