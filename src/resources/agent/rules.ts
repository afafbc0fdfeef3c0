/**
 * The Agent's preview-time rules: the spec's own schemas and rules (src/spec, shared with the
 * emulator) applied to the declared configuration, every message naming the field as the program
 * spells it.
 *
 * Values unknown at preview follow the one strategy of `provider/unknowns.ts`: they stay in place
 * for the schema check (whose problems at or under them are not reported), and the rules of a group
 * of related fields holding one are skipped. The catalogue rules (voices per language, fallbacks,
 * emotion and speed support, retired models, holdings) read the service: a service that cannot be
 * reached, or refuses the key, fails the preview at once with what was not checked.
 */
import { performance } from "node:perf_hooks";
import type * as pulumi from "@pulumi/pulumi";
import type { VoiceAgentClient } from "../../client";
import { ApiError, AuthError } from "../../client/errors";
import { ExpectedFailure, failure, inputPath } from "../../provider/failures";
import type { JsonObject } from "../../provider/normalize";
import {
  dependsOnUnknown,
  fieldsWithUnknowns,
  topField,
  unknownPaths,
  withoutFields,
} from "../../provider/unknowns";
import {
  AgentBody,
  AgentCreateBody,
  BUILTIN_TOOL_NAMES,
  type Catalogue,
  checkAgentCatalogue,
  checkAgentStatic,
  type Holdings,
  type Issue,
  newAgentConfig,
  parseWith,
  promptToolReferences,
} from "../../spec";

/**
 * Top-level fields the rules check against each other: when one holds a value unknown at preview,
 * the rules of every field of its group are skipped (a voice cannot be checked against a language
 * not known yet, nor a prompt's tools against tools not known yet).
 */
const RELATED: readonly (readonly string[])[] = [
  ["language", "voice", "transcriber"],
  ["systemPrompt", "builtinTools", "variables"],
  ["builtinTools", "numbers"],
];

/** The catalogue and holdings the catalogue rules read. */
export interface CatalogueSnapshot {
  catalogue: Catalogue;
  holdings: Holdings;
}

/**
 * Every documented rule for an Agent's declared configuration (input spelling, normalized, values
 * unknown at preview in place). `toBody` turns a configuration into the wire body the service
 * would receive. Without `snapshot`, only the rules that need no catalogue run.
 */
export async function agentFailures(
  declared: JsonObject,
  toBody: (config: JsonObject) => JsonObject,
  snapshot?: (body: JsonObject, fresh?: boolean) => Promise<CatalogueSnapshot>,
): Promise<pulumi.dynamic.CheckFailure[]> {
  // 1. The schema, with unknown values in place: what is wrong whatever they turn out to be.
  const unknowns = unknownPaths(declared);
  const schemaIssues = parseWith(AgentCreateBody, toBody(declared));
  if (!schemaIssues.ok) {
    const real = schemaIssues.issues.filter((i) => !dependsOnUnknown(inputPath(i.field), i.code, unknowns));
    if (real.length > 0) return real.map((i) => failure(i));
  }

  // 2. The rules, on the groups of fields whose values are all known.
  const skipped = fieldsWithUnknowns(declared, RELATED);
  const known = withoutFields(declared, skipped);
  const body = toBody(known);
  const parsed = parseWith(skipped.has("name") ? AgentBody : AgentCreateBody, body);
  if (!parsed.ok) return parsed.issues.map((i) => failure(i));
  const relevant = (issues: readonly Issue[]) =>
    issues.filter((i) => !skipped.has(topField(inputPath(i.field)))).map((i) => failure(i));

  const config = newAgentConfig(parsed.data);
  // Custom tools have no API, so a name that is not a built-in tool may be one of them; a built-in
  // tool the prompt names must be enabled, and that is known here.
  const maybeCustom = promptToolReferences(config.system_prompt).filter(
    (name) => !(BUILTIN_TOOL_NAMES as readonly string[]).includes(name),
  );
  const staticFailures = relevant(checkAgentStatic(config, { customTools: maybeCustom }));
  if (staticFailures.length > 0 || !snapshot) return staticFailures;
  const cached = await snapshot(body);
  const found = relevant(checkAgentCatalogue(config, cached.catalogue, cached.holdings));
  if (found.length === 0) return found;
  // Refused against a snapshot read earlier in this process: read again before saying so (a
  // number bought, a voice restored since).
  const fresh = await snapshot(body, true);
  return relevant(checkAgentCatalogue(config, fresh.catalogue, fresh.holdings));
}

/** How long a preview waits for the catalogue before it says the service cannot be reached. */
export const CATALOGUE_WAIT_MS = 10_000;

/**
 * Reads the catalogue and the workspace's holdings once per provider process (again when a body
 * attaches an id created since). A failure is never swallowed: it fails the check, saying which
 * rules could not be checked and why, with the cause kept.
 */
export function catalogueReader(
  client: () => Promise<VoiceAgentClient>,
  waitMs = CATALOGUE_WAIT_MS,
): (body: JsonObject, fresh?: boolean) => Promise<CatalogueSnapshot> {
  let catalogue: Promise<Catalogue> | undefined;
  let holdings: Promise<Holdings> | undefined;
  return async (body, fresh = false) => {
    try {
      const c = await client();
      if (fresh) {
        catalogue = undefined;
        holdings = undefined;
      }
      catalogue ??= loadCatalogue(c);
      holdings ??= loadHoldings(c);
      const read = Promise.all([catalogue, holdings]);
      let [cat, held] = await within(waitMs, read, c);
      if (missingIds(body, held)) {
        holdings = loadHoldings(c);
        held = await within(waitMs, holdings, c);
      }
      return { catalogue: cat, holdings: held };
    } catch (err) {
      catalogue = undefined;
      holdings = undefined;
      throw catalogueError(err);
    }
  };
}

function catalogueError(err: unknown): Error {
  const what =
    "the agent's configuration could not be checked against the service's catalogue " +
    "(voices, models, transcribers, languages) and the workspace's holdings (numbers, templates, " +
    "knowledge bases, analysis groups)";
  if (err instanceof AuthError || (err instanceof ApiError && err.status === 401)) {
    return new Error(
      `The service refused the API key, so ${what}. Set a valid key: ` +
        "`pulumi config set --secret voice-agent:apiKey <key>` (or VOICE_AGENT_API_KEY in CI).",
      { cause: err },
    );
  }
  // The cause first (a service not there, one that does not answer): what it left unchecked after.
  const reason = err instanceof Error ? err.message : String(err);
  return new Error(`${reason} (the agent's configuration was not checked against the service's catalogue)`, {
    cause: err,
  });
}

/**
 * `work`, or a failure once the service has not answered anything for `ms`: time spent held by the
 * rate limit (a pause after a 429, a full window: another pipeline may share the key) does not
 * count, since the service is answering then; a service that does not answer at all fails in `ms`.
 */
async function within<T>(ms: number, work: Promise<T>, client: VoiceAgentClient): Promise<T> {
  const start = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    const watch = () => {
      const pace = client.pace();
      const now = performance.now();
      const heard = pace.holding ? now : Math.max(start, pace.heardAt);
      if (now - heard >= ms) {
        reject(new ExpectedFailure(`no answer from ${client.baseUrl} within ${Math.round(ms / 1000)} s`));
        return;
      }
      timer = setTimeout(watch, Math.max(50, ms - (now - heard)));
      timer.unref();
    };
    timer = setTimeout(watch, ms);
    timer.unref();
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function loadCatalogue(c: VoiceAgentClient): Promise<Catalogue> {
  const [models, voices, transcribers, languages, ttsCapabilities] = await Promise.all([
    c.catalogue.models(),
    c.catalogue.voices(),
    c.catalogue.transcribers(),
    c.catalogue.languages(),
    c.catalogue.ttsCapabilities(),
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
    c.catalogue.numbers(),
    c.catalogue.whatsappNumbers(),
    c.catalogue.whatsappTemplates(),
    collect(c.knowledgeBases.list()),
    collect(c.analysis.list()),
  ]);
  return {
    numbers,
    whatsappNumbers,
    whatsappTemplates,
    knowledgeBaseIds: kbs.map((k) => k.id),
    analysisGroupIds: groups.map((g) => g.id),
  };
}

/** Ids the body attaches that the cached holdings do not list (created since they were read). */
function missingIds(body: JsonObject, h: Holdings): boolean {
  const ids = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
  const kb = new Set(h.knowledgeBaseIds ?? []);
  const ag = new Set(h.analysisGroupIds ?? []);
  return (
    ids(body.knowledge_base_ids).some((id) => !kb.has(id)) ||
    ids(body.analysis_group_ids).some((id) => !ag.has(id))
  );
}
