/**
 * Preview-time validation: the spec's own rules (src/spec, shared with the emulator) applied to the
 * declared configuration, with every message naming the field as the program spells it.
 *
 * Values unknown during preview are left out, so the rules check what is known. The catalogue rules
 * (voices per language, fallbacks, emotion and speed support, retired models, holdings) run when
 * the service is reachable; the catalogue is read once per provider process.
 */
import type * as pulumi from "@pulumi/pulumi";
import type { VoiceAgentClient } from "../client";
import type { Catalogue, Holdings, Issue } from "../spec";
import { specModule } from "./lazy";
import { isPlainObject, toCamelKey, toWire, UNKNOWN } from "./normalize";

/** `builtin_tools.transfer_call.numbers[0].timezone` → `builtinTools.transferCall.numbers[0].timezone`. */
export function inputPath(wirePath: string): string {
  return wirePath.replace(/[a-z0-9_]+/gi, (segment) => toCamelKey(segment));
}

/** A spec issue as a Pulumi check failure, in input spelling. */
export function failure(issue: Issue): pulumi.dynamic.CheckFailure {
  const property = inputPath(issue.field);
  const message = issue.message.startsWith(`${issue.field}:`)
    ? issue.message.slice(issue.field.length + 1).trim()
    : issue.message;
  return { property, reason: `${property}: ${message} (${issue.code})` };
}

/** `value` without the parts unknown during preview. */
export function knownPart(value: unknown): unknown {
  if (value === UNKNOWN) return undefined;
  if (Array.isArray(value)) return value.map(knownPart).filter((v) => v !== undefined);
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const known = knownPart(v);
      if (known !== undefined) out[k] = known;
    }
    return out;
  }
  return value;
}

let catalogue: Promise<Catalogue> | undefined;
let holdings: Promise<Holdings> | undefined;

async function loadCatalogue(c: VoiceAgentClient): Promise<Catalogue> {
  const [models, voices, transcribers, languages, ttsCapabilities] = await Promise.all([
    c.listModels(),
    c.listVoices(),
    c.listTranscribers(),
    c.listLanguages(),
    c.getTtsCapabilities(),
  ]);
  return { models, voices, transcribers, languages, ttsCapabilities };
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

async function loadHoldings(c: VoiceAgentClient): Promise<Holdings> {
  const [numbers, whatsappNumbers, whatsappTemplates, kbs, groups] = await Promise.all([
    c.listNumbers(),
    c.listWhatsAppNumbers(),
    c.listWhatsAppTemplates(),
    collect(c.listKnowledgeBases()),
    collect(c.listAnalysisGroups()),
  ]);
  return {
    numbers,
    whatsappNumbers,
    whatsappTemplates,
    knowledgeBaseIds: kbs.map((k: any) => k.id),
    analysisGroupIds: groups.map((g: any) => g.id),
  };
}

/** Ids the configuration attaches that the cached holdings do not list (created since they were read). */
function missingIds(body: Record<string, any>, h: Holdings): boolean {
  const kb = new Set(h.knowledgeBaseIds ?? []);
  const ag = new Set(h.analysisGroupIds ?? []);
  return (
    (body.knowledge_base_ids ?? []).some((id: string) => !kb.has(id)) ||
    (body.analysis_group_ids ?? []).some((id: string) => !ag.has(id))
  );
}

/**
 * Every documented rule for an agent's declared configuration (camelCase, normalized). Returns the
 * failures; an empty list means the service would accept it as far as the known values tell.
 * Without `getClient`, only the rules that need no catalogue run.
 */
export async function validateAgentInputs(
  declared: Record<string, unknown>,
  getClient: (() => Promise<VoiceAgentClient>) | undefined,
  toBody: (known: Record<string, unknown>) => Record<string, any> = (known) =>
    toWire(known) as Record<string, any>,
): Promise<pulumi.dynamic.CheckFailure[]> {
  const {
    AgentBody,
    AgentCreateBody,
    BUILTIN_TOOL_NAMES,
    checkAgentCatalogue,
    checkAgentStatic,
    newAgentConfig,
    parseWith,
    promptToolReferences,
  } = specModule;
  const body = toBody(knownPart(declared) as Record<string, unknown>);
  const parsed = parseWith(declared.name === UNKNOWN ? AgentBody : AgentCreateBody, body);
  if (!parsed.ok) return parsed.issues.map(failure);

  const config = newAgentConfig(parsed.data);
  // Custom tools have no API, so a name that is not a built-in tool may be one of them; a built-in
  // tool the prompt names must be enabled, and that is known here.
  const maybeCustom = promptToolReferences(config.system_prompt).filter(
    (name) => !(BUILTIN_TOOL_NAMES as readonly string[]).includes(name),
  );
  const issues = checkAgentStatic(config, { customTools: maybeCustom });
  if (issues.length > 0 || !getClient) return issues.map(failure);

  let client: VoiceAgentClient;
  try {
    client = await getClient();
    catalogue ??= loadCatalogue(client);
    holdings ??= loadHoldings(client);
    let [cat, held] = await Promise.all([catalogue, holdings]);
    if (missingIds(body, held)) {
      holdings = loadHoldings(client);
      held = await holdings;
    }
    return checkAgentCatalogue(config, cat, held).map(failure);
  } catch {
    // The service is not reachable (or not configured): the catalogue rules run when it is.
    catalogue = undefined;
    holdings = undefined;
    return [];
  }
}
