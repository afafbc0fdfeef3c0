/** Catalogues, numbers, WhatsApp numbers and templates, memory subjects: read-only bare arrays and pages. */
import type { NumberRow } from "../../spec";
import type { Result, RouteContext } from "../context";
import { apiError, limitOf, pageOf, validationError } from "../http";
import type { WorkspaceState } from "../state";
import { findAgent, representativeVersion } from "./agents";

export const listModels = (ctx: RouteContext): Result => ({ status: 200, body: ctx.state.catalogue.models });

/** `GET /v1/voices?provider=&language=`. */
export function listVoices(ctx: RouteContext): Result {
  const provider = ctx.query.get("provider");
  const language = ctx.query.get("language");
  const rows = ctx.state.catalogue.voices.filter(
    (v) =>
      (provider === undefined || v.provider === provider) &&
      (language === undefined || v.languages.includes(language)),
  );
  return { status: 200, body: rows };
}

export const listTranscribers = (ctx: RouteContext): Result => ({
  status: 200,
  body: ctx.state.catalogue.transcribers,
});
export const listLanguages = (ctx: RouteContext): Result => ({
  status: 200,
  body: ctx.state.catalogue.languages,
});
export const ttsCapabilities = (ctx: RouteContext): Result => ({
  status: 200,
  body: ctx.state.catalogue.ttsCapabilities,
});

/** Number rows with the agent that answers on each (its live version, or latest when off air). */
export function numberRows(ws: WorkspaceState): NumberRow[] {
  const owner = new Map<string, string>();
  for (const agent of ws.agents.values()) {
    const n = representativeVersion(agent).config.numbers.inbound_phone;
    if (n && !owner.has(n)) owner.set(n, agent.id);
  }
  return ws.numbers.map((n) => ({
    ...n,
    agent_id: n.lifecycle_status === "released" ? null : (owner.get(n.number) ?? null),
  }));
}

export const listNumbers = (ctx: RouteContext): Result => ({ status: 200, body: numberRows(ctx.ws) });
export const listWhatsAppNumbers = (ctx: RouteContext): Result => ({
  status: 200,
  body: ctx.ws.whatsapp_numbers,
});
export const listWhatsAppTemplates = (ctx: RouteContext): Result => ({ status: 200, body: ctx.ws.templates });

/** `GET /v1/agents/{id}/memory/subjects`: remembered callers (the emulator remembers nothing: none). */
export function listMemorySubjects(ctx: RouteContext): Result {
  const agent = findAgent(ctx);
  const issues: Parameters<typeof validationError>[0] = [];
  const limit = limitOf(ctx.query, issues);
  if (issues.length) throw validationError(issues);
  return {
    status: 200,
    body: pageOf(
      [] as { seq: number }[],
      (s) => s.seq,
      (s) => s,
      {
        list: `memory-subjects:${agent.id}`,
        cursor: ctx.query.get("cursor"),
        limit,
        desc: true,
      },
    ),
  };
}

/**
 * `GET /v1/agents/{id}/memory/calls/{call_id}`: memory changes of one call of that agent. The
 * emulator records no memory, so a call of the agent answers an empty list; any other call id is
 * 404 `call_not_found`.
 */
export function memoryOfCall(ctx: RouteContext): Result {
  const agent = findAgent(ctx);
  const call = ctx.ws.calls.get(ctx.params.call_id as string);
  if (!call || call.agent_id !== agent.id)
    throw apiError(404, "call_not_found", `call_id: no call '${ctx.params.call_id}' of agent ${agent.id}`, {
      param: "call_id",
    });
  return { status: 200, body: [] };
}
