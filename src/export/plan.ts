/**
 * What `voice-agent-export` declares for a workspace it has read: one resource per object, each
 * with its adopt input and only the fields that differ from the platform defaults (src/spec), in
 * the program's camelCase spelling, references between them as references, names derived from the
 * objects' names. Pure: no I/O; `render.ts` turns the plan into files.
 */

import type { AnalysisGroup, KnowledgeBase } from "../client";
import { CREATE_MARKER_PREFIX } from "../client/recovery";
import {
  deepEqual,
  fromWire,
  isPlainObject,
  type Json,
  type JsonObject,
  toCamelKey,
} from "../provider/normalize";
import {
  type AgentConfig,
  DEFAULT_ANALYSIS_GROUP,
  DEFAULT_ANALYSIS_GROUP_NAME,
  DEFAULT_WIDGET,
  DEFAULT_WIDGET_THEME,
  defaultAgentConfig,
  effectiveConfig,
  READ_ONLY_PATHS,
  TRANSFER_NUMBER_DEFAULTS,
} from "../spec";
import type { AgentSnapshot, WorkspaceSnapshot } from "./read";

/** Program code standing for a value: a reference to another resource, or a prompt file read at run time. */
export class Code {
  private constructor(
    readonly kind: "ref" | "file",
    /** The variable (ref) or the file's path relative to the project (file). */
    readonly target: string,
    /** The referenced output (`id`, `agentId`); none for the resource itself. */
    readonly property?: string,
  ) {}

  /** `variable` or `variable.property`. */
  static ref(variable: string, property?: string): Code {
    return new Code("ref", variable, property);
  }

  /** `readFileSync(path, "utf8")`. */
  static file(path: string): Code {
    return new Code("file", path);
  }
}

/** A value of a resource's arguments: JSON, with {@link Code} where the program computes it. */
export type Value = null | boolean | number | string | Code | Value[] | { [key: string]: Value };

/** The resource types the exporter declares. */
export type ResourceType = "KnowledgeBase" | "AnalysisGroup" | "Agent" | "AgentVersion" | "Widget";

/** One resource of the program. */
export interface PlannedResource {
  type: ResourceType;
  /** The Pulumi resource name: unique within its type, stable, derived from the object's name. */
  name: string;
  /** The program's variable for it: unique in the program. */
  variable: string;
  /** Its arguments, keys in the order they are written. */
  args: { [key: string]: Value };
  /** Lines of the comment written above it. */
  comments: string[];
  /** The id of the service object it stands for (the agent's, for an AgentVersion or a Widget). */
  adopts: string;
  /** True when another resource refers to it (the program keeps it in a `const`). */
  referenced: boolean;
}

/** A file the program reads (a system prompt). */
export interface PlannedFile {
  path: string;
  content: string;
}

/** Everything the exported program declares. */
export interface ExportPlan {
  baseUrl: string;
  resources: PlannedResource[];
  prompts: PlannedFile[];
  /**
   * Things the user must know (each a sentence): agents gone before their read, blocked versions,
   * failed documents. Written on stderr and in the README.
   */
  warnings: string[];
}

// ---------------------------------------------------------------------------------------------
// Names
// ---------------------------------------------------------------------------------------------

const RESERVED = new Set(
  (
    "break case catch class const continue debugger default delete do else enum export extends false " +
    "finally for function if import in instanceof new null return super switch this throw true try " +
    "typeof var void while with as implements interface let package private protected public static " +
    "yield any boolean number string symbol type from of async await constructor require module " +
    "exports va readFileSync pulumi undefined"
  ).split(" "),
);

/** `Acme support (EN)` → `acme-support-en`; `""` → `fallback`. */
export function slug(text: string, fallback: string): string {
  const s = text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 48)
    .replace(/-+$/g, "");
  return s === "" ? fallback : s;
}

/** `acme-support` → `acmeSupport`; one that would start with a digit gets `prefix` first. */
function camel(slugText: string, prefix: string): string {
  const words = slugText.split("-").filter(Boolean);
  const joined = words.map((w, i) => (i === 0 ? w : w.charAt(0).toUpperCase() + w.slice(1))).join("");
  return /^[a-z_$]/.test(joined) ? joined : `${prefix}${joined.charAt(0).toUpperCase()}${joined.slice(1)}`;
}

/** Hands out names unique within one namespace: the first `x`, then `x-2`, `x-3` (or `x2` for variables). */
class Namespace {
  private readonly used = new Set<string>();

  constructor(
    private readonly separator: string,
    reserved: Iterable<string> = [],
  ) {
    for (const r of reserved) this.used.add(r);
  }

  take(base: string): string {
    let name = base;
    for (let n = 2; this.used.has(name); n++) name = `${base}${this.separator}${n}`;
    this.used.add(name);
    return name;
  }
}

// ---------------------------------------------------------------------------------------------
// Declarations: only what differs from the platform defaults
// ---------------------------------------------------------------------------------------------

const dropNulls = (o: JsonObject): JsonObject =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null));

/** How the items of a list are declared, by the list's path (fields at their defaults left out). */
const LIST_ITEMS: Record<string, (item: JsonObject) => JsonObject> = {
  "builtin_tools.transfer_call.numbers": (n) =>
    Object.fromEntries(
      Object.entries(n).filter(
        ([k, v]) => k === "number" || (TRANSFER_NUMBER_DEFAULTS as Record<string, Json>)[k] !== v,
      ),
    ),
  "memory.fields": (f) => {
    const { type, ...rest } = dropNulls(f);
    return type === undefined || type === "string" ? rest : { ...rest, type };
  },
};

/** Values compared without regard to case (the service treats colours that way). */
const sameColour = (a: Json, b: Json | undefined) =>
  typeof a === "string" &&
  typeof b === "string" &&
  /^#[0-9a-f]{6}$/i.test(a) &&
  a.toUpperCase() === b.toUpperCase();

/** `value` without its read-only members (a fallback that the defaults do not have). */
function withoutReadOnly(value: Json, path: string): Json {
  if (!isPlainObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => !READ_ONLY_PATHS.has(`${path}.${k}`))
      .map(([k, v]) => [k, withoutReadOnly(v, `${path}.${k}`)]),
  );
}

/**
 * The part of `actual` that differs from `base` (wire spelling): objects member by member, lists
 * and scalars whole; `undefined` when nothing differs. Read-only members are never declared.
 */
function differing(actual: Json, base: Json | undefined, path: string): Json | undefined {
  if (isPlainObject(actual) && isPlainObject(base)) {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(actual)) {
      const p = `${path}.${k}`;
      if (READ_ONLY_PATHS.has(p)) continue;
      const d = differing(v, base[k], p);
      if (d !== undefined) out[k] = d;
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }
  if (deepEqual(actual, base ?? null) || sameColour(actual, base)) return undefined;
  const items = LIST_ITEMS[path];
  if (items && Array.isArray(actual)) return actual.map((it) => (isPlainObject(it) ? items(it) : it));
  return withoutReadOnly(actual, path);
}

const sameSet = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && [...a].sort().join("\n") === [...b].sort().join("\n");

/** Is `text` user data, or the create marker this package leaves in descriptions and notes? */
const isMarker = (text: string | null | undefined) =>
  typeof text === "string" && text.startsWith(CREATE_MARKER_PREFIX);

/** The agent body's objects declared member by member (the rest is handled one by one). */
const AGENT_OBJECTS = [
  "greeting",
  "language",
  "transcriber",
  "model",
  "voice",
  "conversation",
  "call",
  "inbound",
  "builtin_tools",
  "memory",
  "numbers",
] as const satisfies readonly (keyof AgentConfig)[];

/** Ids of the exported knowledge bases and groups, to the variables that declare them. */
type References = ReadonlyMap<string, string>;

/** The ids as references to the resources declaring them (an id not exported stays literal). */
function refs(ids: readonly string[], declared: References, warnings: string[], what: string): Value[] {
  return ids.map((id) => {
    const variable = declared.get(id);
    if (variable) return Code.ref(variable, "id");
    warnings.push(`${what}: ${id} is not exported; it is declared by its id.`);
    return id;
  });
}

/** The Agent's arguments: `adoptId`, `name`, the prompt from its file, and what differs from a new agent. */
export function agentArgs(
  a: AgentSnapshot,
  promptPath: string | undefined,
  base: AgentConfig,
  declared: References,
  warnings: string[],
): { [key: string]: Value } {
  const config = effectiveConfig(a.working);
  const args: { [key: string]: Value } = { adoptId: a.summary.id, name: config.name };
  if (promptPath !== undefined) args.systemPrompt = Code.file(promptPath);
  for (const key of AGENT_OBJECTS) {
    const d = differing(config[key] as unknown as Json, base[key] as unknown as Json, key);
    if (d !== undefined) args[toCamelKey(key)] = fromWire(d) as Json;
  }
  const variables = config.variables
    .filter((v) => !v.system_defined || v.default_value !== null)
    .map(
      (v): Value =>
        v.default_value === null ? { key: v.key } : { key: v.key, defaultValue: v.default_value },
    );
  if (variables.length > 0) args.variables = variables;
  const name = `agent "${config.name}" (${a.summary.id})`;
  if (!sameSet(config.knowledge_base_ids, base.knowledge_base_ids)) {
    args.knowledgeBaseIds = refs(config.knowledge_base_ids, declared, warnings, `${name}, knowledge base`);
  }
  if (!sameSet(config.analysis_group_ids, base.analysis_group_ids)) {
    args.analysisGroupIds = refs(config.analysis_group_ids, declared, warnings, `${name}, analysis group`);
  }
  return args;
}

/** The Widget's arguments when the widget holds anything a freshly prepared one does not; else undefined. */
export function widgetArgs(a: AgentSnapshot, agentVariable: string): { [key: string]: Value } | undefined {
  const w = a.widget;
  const args: { [key: string]: Value } = { agentId: Code.ref(agentVariable, "agentId") };
  if (w.name !== a.summary.name) args.name = w.name;
  if (w.allowed_origins.length > 0) args.allowedOrigins = [...w.allowed_origins];
  const modes = differing(w.enabled_modes, DEFAULT_WIDGET.enabled_modes as JsonObject, "enabled_modes");
  if (modes !== undefined) args.enabledModes = fromWire(modes) as Json;
  const theme = differing(w.theme as JsonObject, DEFAULT_WIDGET_THEME as JsonObject, "theme");
  if (theme !== undefined) args.theme = fromWire(theme) as Json;
  // User data: the variables' names keep their spelling.
  if (Object.keys(w.default_variables).length > 0) args.defaultVariables = { ...w.default_variables };
  if (w.status !== DEFAULT_WIDGET.status) args.status = w.status;
  if (Object.keys(args).length === 1) return undefined;
  // The key embedded in the site stays the live one: no rotation on adoption.
  args.rotateKeyOnCreate = false;
  return args;
}

/** The KnowledgeBase's arguments: `adoptId`, `name`, its description and its documents (text ones by name). */
export function knowledgeBaseArgs(kb: KnowledgeBase): { [key: string]: Value } {
  const args: { [key: string]: Value } = { adoptId: kb.id, name: kb.name };
  if (kb.description !== null && !isMarker(kb.description)) args.description = kb.description;
  if (kb.documents.length > 0) {
    args.documents = kb.documents.map(
      (d): Value =>
        d.source === "url" ? { name: d.name, url: d.url ?? "" } : { name: d.name, heldText: true },
    );
  }
  return args;
}

/**
 * The AnalysisGroup's arguments: `adoptDefault` for the workspace's Default Analysis group (`isDefault`),
 * else `adoptId` and `name`; what differs from the platform's (the Default group's) or an empty group.
 */
export function analysisGroupArgs(g: AnalysisGroup, isDefault: boolean): { [key: string]: Value } {
  const args: { [key: string]: Value } = isDefault ? { adoptDefault: true } : { adoptId: g.id, name: g.name };
  // A create marker in a description is this package's, not the user's: left undeclared.
  if (!isMarker(g.description)) {
    const platform = isDefault ? DEFAULT_ANALYSIS_GROUP.description : null;
    if (g.description !== platform) args.description = g.description;
  }
  if (!g.enabled) args.enabled = false;
  const items = g.items.map((it) => ({
    name: it.name,
    type: it.type,
    ...(it.description !== null ? { description: it.description } : {}),
    ...(it.type === "enum" && it.enum_values ? { enumValues: [...it.enum_values] } : {}),
    ...(it.enabled ? {} : { enabled: false }),
  }));
  const asDefault = DEFAULT_ANALYSIS_GROUP.items.map((it) => ({
    name: it.name,
    type: it.type,
    ...(it.description !== null ? { description: it.description } : {}),
    ...(it.type === "enum" && it.enum_values ? { enumValues: [...it.enum_values] } : {}),
  }));
  if (isDefault ? !deepEqual(items, asDefault) : items.length > 0) args.items = items;
  return args;
}

/** The configuration a new agent holds in a workspace whose Default Analysis group is `defaultGroup`. */
export function newAgentBase(defaultGroup: AnalysisGroup | undefined): AgentConfig {
  const base = defaultAgentConfig();
  base.analysis_group_ids = defaultGroup ? [defaultGroup.id] : [];
  return base;
}

// ---------------------------------------------------------------------------------------------
// The plan
// ---------------------------------------------------------------------------------------------

const quote = (s: string) => JSON.stringify(s);

/** The program that adopts every object of `ws` and declares exactly what the service holds. */
export function planExport(ws: WorkspaceSnapshot): ExportPlan {
  const resources: PlannedResource[] = [];
  const prompts: PlannedFile[] = [];
  const warnings: string[] = [];
  const variables = new Namespace("", RESERVED);
  const names: Record<ResourceType, Namespace> = {
    KnowledgeBase: new Namespace("-"),
    AnalysisGroup: new Namespace("-"),
    Agent: new Namespace("-"),
    AgentVersion: new Namespace("-"),
    Widget: new Namespace("-"),
  };
  const declared = new Map<string, string>();
  const byVariable = new Map<string, PlannedResource>();
  const add = (r: Omit<PlannedResource, "referenced">) => {
    const planned = { ...r, referenced: false };
    resources.push(planned);
    byVariable.set(planned.variable, planned);
    return planned;
  };

  for (const kb of ws.knowledgeBases) {
    const s = slug(kb.name, "knowledge-base");
    const args = knowledgeBaseArgs(kb);
    const held = kb.documents.filter((d) => d.source !== "url");
    for (const d of kb.documents.filter((x) => x.status === "failed")) {
      warnings.push(
        `knowledge base "${kb.name}" (${kb.id}): document "${d.name}" failed to process in the service (${d.error ?? "no reason given"}).`,
      );
    }
    const comments = [`Knowledge base ${quote(kb.name)} (${kb.id}).`];
    if (held.length > 0) {
      comments.push(
        "The service never reads a text document back: those are declared by name (heldText). Give a",
        "document's text ({ name, text }) before changing this knowledge base: a change sends every document.",
      );
    }
    const r = add({
      type: "KnowledgeBase",
      name: names.KnowledgeBase.take(s),
      variable: variables.take(camel(s, "kb").replace(/(?<!Kb)$/, "Kb")),
      args,
      comments,
      adopts: kb.id,
    });
    declared.set(kb.id, r.variable);
  }

  const defaultGroup = ws.analysisGroups.find((g) => g.name === DEFAULT_ANALYSIS_GROUP_NAME);
  for (const g of ws.analysisGroups) {
    const isDefault = g === defaultGroup;
    const s = slug(g.name, "analysis-group");
    const args = analysisGroupArgs(g, isDefault);
    const comments = isDefault
      ? [`The workspace's ${DEFAULT_ANALYSIS_GROUP_NAME} group (${g.id}): destroy leaves it in place.`]
      : [`Analysis group ${quote(g.name)} (${g.id}).`];
    const r = add({
      type: "AnalysisGroup",
      name: names.AnalysisGroup.take(s),
      variable: variables.take(camel(s, "group").replace(/(?<!Analysis)$/, "Analysis")),
      args,
      comments,
      adopts: g.id,
    });
    declared.set(g.id, r.variable);
  }

  for (const gone of ws.vanished) {
    warnings.push(
      `agent "${gone.name}" (${gone.id}) disappeared between the listing and its read: it is left out of the export.`,
    );
  }
  const base = newAgentBase(defaultGroup);
  for (const a of ws.agents) {
    const s = slug(a.summary.name, "agent");
    const name = names.Agent.take(s);
    const variable = variables.take(camel(name, "agent"));
    const promptPath = a.working.system_prompt !== null ? `prompts/${name}.md` : undefined;
    if (promptPath !== undefined) prompts.push({ path: promptPath, content: a.working.system_prompt ?? "" });
    const v = a.working.version;
    const where = a.working.is_published ? `version ${v} (published)` : `its working draft (version ${v})`;
    const comments = [`Agent ${quote(a.summary.name)} (${a.summary.id}), as ${where} holds it.`];
    if (a.working.blocked_reasons.length > 0) {
      comments.push(`Version ${v} is blocked: ${a.working.blocked_reasons.join("; ")}.`);
      warnings.push(
        `agent "${a.summary.name}" (${a.summary.id}): version ${v} is blocked (${a.working.blocked_reasons.join("; ")}); ` +
          "the preview refuses its configuration until the program changes it.",
      );
    }
    const agent = add({
      type: "Agent",
      name,
      variable,
      args: agentArgs(a, promptPath, base, declared, warnings),
      comments,
      adopts: a.summary.id,
    });
    for (const value of [agent.args.knowledgeBaseIds, agent.args.analysisGroupIds]) {
      for (const item of Array.isArray(value) ? value : []) {
        if (item instanceof Code) {
          const target = byVariable.get(item.target);
          if (target) target.referenced = true;
        }
      }
    }

    const rel = a.release;
    const label = (l: string | null) => (l !== null && !isMarker(l) ? ` (label ${quote(l)})` : "");
    if (rel.kind === "live" || rel.kind === "pinned") {
      agent.referenced = true;
      const comments =
        rel.kind === "live"
          ? [
              `Version ${rel.version}${label(rel.label)} is live and holds this configuration: it stays live.`,
              "A configuration change publishes the next version and puts it live.",
            ]
          : [
              `Version ${rel.version}${label(rel.label)} is live; the working draft (version ${rel.draft}) holds changes not`,
              `published yet. Pinned to version ${rel.version}, so that \`pulumi up\` keeps it live and leaves the draft`,
              "untouched. Remove `version` to publish the draft and put it live.",
            ];
      add({
        type: "AgentVersion",
        name: names.AgentVersion.take(`${name}-live`),
        variable: variables.take(`${variable}Live`),
        args:
          rel.kind === "live"
            ? { agent: Code.ref(variable) }
            : { agent: Code.ref(variable), version: rel.version },
        comments,
        adopts: a.summary.id,
      });
    } else {
      agent.comments.push(
        rel.kind === "neverPublished"
          ? "Never published. To publish its draft and put it live: new va.AgentVersion(name, { agent })."
          : `Off air (no version is live; the latest is ${rel.latest}). An AgentVersion would put one live.`,
      );
    }

    const wargs = widgetArgs(a, variable);
    if (wargs) {
      agent.referenced = true;
      add({
        type: "Widget",
        name: names.Widget.take(`${name}-widget`),
        variable: variables.take(`${variable}Widget`),
        args: wargs,
        comments: [
          `The agent's widget (${a.widget.id})${a.widget.status === "paused" ? ", paused" : ""}; its public key is kept`,
          "(no rotation on adoption).",
        ],
        adopts: a.summary.id,
      });
    }
  }

  return { baseUrl: ws.baseUrl, resources, prompts, warnings };
}
