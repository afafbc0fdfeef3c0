/**
 * The service spec, encoded once: zod schemas of every request and response (snake_case, the wire
 * format) and the pure rules that decide whether the service accepts a write. The emulator refuses
 * writes with these; the provider runs the same functions at preview.
 */
import { type AgentBody, AgentBody as AgentBodySchema, type AgentConfig, AgentCreateBody } from "./agent";
import type { Catalogue, Holdings } from "./catalogue";
import { checkAgentCatalogue, deriveReadOnly } from "./catalogueRules";
import { type Issue, isValidationType } from "./common";
import { applyAgentPatch, defaultAgentConfig, finalizeAgentConfig } from "./defaults";
import { parseWith } from "./issues";
import { checkAgentStatic } from "./rules";

export * from "./agent";
export * from "./analysis";
export * from "./calls";
export * from "./catalogue";
export * from "./catalogueRules";
export * from "./chats";
export * from "./common";
export * from "./defaults";
export * from "./errors";
export * from "./issues";
export * from "./knowledgeBase";
export * from "./paging";
export * from "./rules";
export * from "./widget";

/** HTTP status the service answers for a list of issues: 422 if any is a validation type, else 400. */
export function issuesStatus(issues: readonly Issue[]): 400 | 422 {
  return issues.some((i) => isValidationType(i.code)) ? 422 : 400;
}

/** Schema check of an agent body (`create` requires `name`). Problems are 422 validation types. */
export function validateAgentBody(
  body: unknown,
  mode: "create" | "patch",
): { ok: true; data: AgentBody } | { ok: false; issues: Issue[] } {
  return parseWith(mode === "create" ? AgentCreateBody : AgentBodySchema, body);
}

/** What the rules may use besides the configuration. Omitted parts skip the rules needing them. */
export interface AgentCheckContext {
  /** The service catalogue (rules "b"); without it only rules "a" run. */
  catalogue?: Catalogue;
  /** What the workspace holds (numbers, templates, knowledge bases, groups, custom tools). */
  holdings?: Holdings;
  /** The body that produced the configuration (names the field of a same-provider fallback refusal). */
  patch?: AgentBody;
}

/**
 * Every rule on an effective configuration: rules "a" always, rules "b" when a catalogue is given.
 * Issues come in the order the service reports them (the first one is the refusal's reason).
 */
export function checkAgent(config: AgentConfig, ctx: AgentCheckContext = {}): Issue[] {
  const issues = checkAgentStatic(config, { customTools: ctx.holdings?.customTools, patch: ctx.patch });
  if (ctx.catalogue)
    issues.push(...checkAgentCatalogue(config, ctx.catalogue, ctx.holdings, { patch: ctx.patch }));
  // Schema-like problems (422 types) are reported before reason codes, as the service does.
  return [
    ...issues.filter((i) => isValidationType(i.code)),
    ...issues.filter((i) => !isValidationType(i.code)),
  ];
}

/** Result of planning an agent write. */
export type AgentWritePlan =
  | { ok: true; body: AgentBody; config: AgentConfig }
  | { ok: false; status: 400 | 422; issues: Issue[] };

/**
 * The whole decision of an agent create (`current` null) or patch: schema check, merge-patch onto
 * `current`, every rule, then the read-back normalisation (derived read-only fields when a
 * catalogue is given, memory fields by key, numbers in E.164). `config` is what the service stores
 * and reads back; on refusal `status` and `issues` are what it answers. `createBase` is what a
 * create starts from (the service attaches the workspace's Default Analysis group: pass
 * `{...defaultAgentConfig(), analysis_group_ids: [defaultGroupId]}`).
 */
export function planAgentWrite(
  current: AgentConfig | null,
  body: unknown,
  ctx: AgentCheckContext = {},
  createBase: AgentConfig = defaultAgentConfig(),
): AgentWritePlan {
  const parsed = validateAgentBody(body, current ? "patch" : "create");
  if (!parsed.ok) return { ok: false, status: 422, issues: parsed.issues };
  const merged = applyAgentPatch(current ?? createBase, parsed.data);
  const issues = checkAgent(merged, { ...ctx, patch: parsed.data });
  if (issues.length) return { ok: false, status: issuesStatus(issues), issues };
  const finalized = finalizeAgentConfig(merged);
  return {
    ok: true,
    body: parsed.data,
    config: ctx.catalogue ? deriveReadOnly(finalized, ctx.catalogue) : finalized,
  };
}
