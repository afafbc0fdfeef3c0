/**
 * The one home of an Agent's projection: how its configuration is compared, by the provider's diff
 * and writes, the pull-request report, the drift alarm and promotion.
 *
 * - Within one stack: the field table, what the program declares, what the service holds
 *   (projected onto what the program declares) and the content hash that names a configuration.
 * - Between environments (two stacks, two workspaces): the environment-independent form (every
 *   managed field in program spelling, knowledge bases and analysis groups by name, derived fields
 *   left out), its digest (`configDigest`), paths in program spelling to leave out
 *   (`variables[callee_region].defaultValue`), and the field-by-field differences.
 *
 * It loads neither `@pulumi/pulumi` nor the client.
 */
import type { AgentDetailT } from "../../client";
import { changedFields, type FieldTable, normalize, observe, pickManaged } from "../../provider/managed";
import {
  contentHash,
  deepEqual,
  fromWire,
  isPlainObject,
  type Json,
  type JsonObject,
} from "../../provider/normalize";
import { containsUnknown, UNKNOWN } from "../../provider/unknowns";
import { normalizeE164 } from "../../spec/common";
import { SYSTEM_VARIABLE_KEYS } from "../../spec/defaults";
import { AGENT_CONFIG_FIELDS } from "./fields";

/** A phone number in the spelling the service reads it back in (E.164), when it is one. */
const phone = (v: Json): Json => (typeof v === "string" ? (normalizeE164(v) ?? v) : v);

/** The Agent's managed fields (the configuration of the agent body, in input spelling) and their comparison. */
export const AGENT_FIELDS: FieldTable = {
  managed: AGENT_CONFIG_FIELDS,
  paths: {
    // `greeting: {}` reads back as an empty object: the same as none.
    greeting: { canonical: (v) => (isPlainObject(v) && v.message === undefined ? null : v) },
    knowledgeBaseIds: { set: true },
    analysisGroupIds: { set: true },
    variables: { keyedBy: "key" },
    // The service adds `systemDefined` and `deletable` to every variable; anything else a program
    // writes stays, so the schema refuses a misspelt key.
    "variables[]": {
      canonical: (v) => {
        if (!isPlainObject(v)) return v;
        const { systemDefined: _s, deletable: _d, ...rest } = v;
        return { ...rest, defaultValue: rest.defaultValue ?? null };
      },
    },
    "memory.fields": { keyedBy: "key" },
    "numbers.inboundPhone": { canonical: phone },
    "numbers.inboundWhatsapp": { canonical: phone },
    // The service refuses a transfer number not written in E.164; spaces and dashes in a number
    // written with its country code are only spelling. Digits without one are never given one.
    "builtinTools.transferCall.numbers[].number": { canonical: phone },
  },
};

/** The Agent's inputs that are not configuration (`__contentHash`: {@link CONTENT_HASH_INPUT}, recomputed by every check). */
export const AGENT_OWN_INPUTS = ["adoptId", "createMarker", "attachedNames", "__contentHash"] as const;

/**
 * The checked input holding the declared configuration's hash (the output `contentHash` once
 * written), under a `__` name the engine never displays in a diff. States written before 0.x hold
 * it as `contentHash`, which nothing reads from the inputs.
 */
export const CONTENT_HASH_INPUT = "__contentHash";

/** The managed configuration the program declares (inputs), normalized for comparison and hashing. */
export function declaredConfig(inputs: Readonly<Record<string, unknown>>): JsonObject {
  return pickManaged(AGENT_FIELDS, inputs);
}

/** Every managed field the service holds, in input spelling; system variables only where declared. */
export function serviceConfig(detail: AgentDetailT, declared: JsonObject): JsonObject {
  const camel = fromWire(detail) as JsonObject;
  const declaredKeys = new Set(
    (Array.isArray(declared.variables) ? declared.variables : []).map((v) => (isPlainObject(v) ? v.key : v)),
  );
  if (Array.isArray(camel.variables)) {
    camel.variables = camel.variables.filter(
      (v) => !(isPlainObject(v) && v.systemDefined === true && !declaredKeys.has(v.key ?? null)),
    );
  }
  return pickManaged(AGENT_FIELDS, camel);
}

/** What the service holds, restricted to the fields (and object keys) `declared` sets. */
export function observedConfig(detail: AgentDetailT, declared: JsonObject): JsonObject {
  return observe(AGENT_FIELDS, serviceConfig(detail, declared), declared);
}

/** The hash that names a configuration: equal configurations, equal hashes. */
export function configurationHash(config: JsonObject): string {
  return contentHash(config);
}

// ---------------------------------------------------------------------------------------------
// The environment-independent configuration: what two stacks (two workspaces) compare.
// ---------------------------------------------------------------------------------------------

/** The managed fields of an agent whose values a stack changes (the diff the engine shows). */
export function agentChanges(
  olds: Readonly<Record<string, unknown>>,
  news: Readonly<Record<string, unknown>>,
): string[] {
  const changed = changedFields(AGENT_FIELDS, olds, news);
  // A knowledge base or analysis group of the program renamed (attachmentNames.ts): the agent is
  // updated to record its digest under the new name. A state without the names (an earlier
  // release's) and names unknown at preview compare as unchanged.
  const [was, now] = [olds.attachedNames, news.attachedNames];
  if (Array.isArray(was) && Array.isArray(now) && !containsUnknown(now as Json) && !deepEqual(was, now))
    changed.push("attachedNames");
  return changed;
}

/** Fields the service derives from others (read-only): never compared between environments. */
const DERIVED: readonly (readonly [string, string])[] = [
  ["transcriber", "provider"],
  ["model", "provider"],
  ["voice", "model"],
];

/** Names of the knowledge bases and analysis groups of one workspace, by id. */
export interface AttachmentNames {
  readonly knowledgeBases: Readonly<Record<string, string>>;
  readonly analysisGroups: Readonly<Record<string, string>>;
}

/** Every managed field of one version as the service holds it, in program spelling, normalized. */
export function fullConfig(detail: AgentDetailT): JsonObject {
  return pickManaged(AGENT_FIELDS, fromWire(detail) as JsonObject);
}

/** The knowledge-base and analysis-group ids a configuration attaches (known ones only). */
export function attachedIds(config: JsonObject): { knowledgeBases: string[]; analysisGroups: string[] } {
  const ids = (v: Json | undefined) => (Array.isArray(v) ? v.filter((x) => typeof x === "string") : []);
  return {
    knowledgeBases: ids(config.knowledgeBaseIds).filter((x) => x !== UNKNOWN),
    analysisGroups: ids(config.analysisGroupIds).filter((x) => x !== UNKNOWN),
  };
}

/**
 * The environment-independent form of a configuration (program spelling): knowledge bases and
 * analysis groups by name instead of id (an id `names` does not know stays, as `id:<id>`), the
 * fields the service derives left out. Values unknown at preview stay unknown.
 */
export function portableConfig(config: JsonObject, names: AttachmentNames): JsonObject {
  const out: JsonObject = structuredClone(config);
  const byName = (v: Json | undefined, table: Readonly<Record<string, string>>): Json | undefined => {
    if (!Array.isArray(v)) return v;
    return [
      ...new Set(v.map((id) => (typeof id === "string" && id !== UNKNOWN ? (table[id] ?? `id:${id}`) : id))),
    ]
      .map((x) => JSON.stringify(x))
      .sort()
      .map((s) => JSON.parse(s) as Json);
  };
  if (out.knowledgeBaseIds !== undefined)
    out.knowledgeBaseIds = byName(out.knowledgeBaseIds, names.knowledgeBases) ?? null;
  if (out.analysisGroupIds !== undefined)
    out.analysisGroupIds = byName(out.analysisGroupIds, names.analysisGroups) ?? null;
  for (const [field, key] of DERIVED) {
    const v = out[field];
    if (isPlainObject(v)) delete v[key];
  }
  return out;
}

/** The digest of an environment-independent configuration: equal configurations, equal digests. */
export function configDigest(portable: JsonObject): string {
  return contentHash(portable);
}

/**
 * `base` with `declared` written over it as the Agent's patch writes it (objects merge, lists and
 * everything else replace, `null` clears): the configuration a draft will hold.
 */
export function overlay(base: JsonObject, declared: JsonObject): JsonObject {
  const merge = (b: Json | undefined, d: Json): Json => {
    if (!isPlainObject(d) || !isPlainObject(b)) return structuredClone(d);
    const out: JsonObject = { ...b };
    for (const [k, v] of Object.entries(d)) out[k] = merge(b[k], v);
    return out;
  };
  const merged = merge(base, declared) as JsonObject;
  // The Agent writes the system variables back as the service holds them, with a declared default.
  if (Array.isArray(declared.variables) && Array.isArray(base.variables)) {
    const listed = new Set(declared.variables.map((v) => (isPlainObject(v) ? v.key : v)));
    const system = base.variables.filter(
      (v) => isPlainObject(v) && SYSTEM_VARIABLE_KEYS.some((k) => k === v.key) && !listed.has(v.key ?? null),
    );
    merged.variables = [...declared.variables, ...system];
  }
  return normalize(AGENT_FIELDS, merged);
}

/**
 * What the service documents of a new agent's configuration, in program spelling: no knowledge
 * base, and the system variables `callee_name` and `callee_number`. The base a new agent's
 * declaration is written over (the rest of a new agent's read-back is not documented).
 */
export function newAgentBase(): JsonObject {
  return {
    knowledgeBaseIds: [],
    variables: SYSTEM_VARIABLE_KEYS.map((key) => ({ key, defaultValue: null })),
  };
}

/** One segment of a path in program spelling: an object key, a list element by key, or by index. */
type Segment = { key: string } | { item: string } | { index: number };

/**
 * Parses a path in program spelling (`name`, `voice.speed`, `variables[callee_region].defaultValue`,
 * `builtinTools.transferCall.numbers[0]`): list elements by their key (or index). Undefined when it
 * is not one.
 */
export function parsePath(path: string): Segment[] | undefined {
  const out: Segment[] = [];
  const re = /([A-Za-z_][A-Za-z0-9_]*)|\[([^\]]+)\]|\./g;
  let expectKey = true;
  let pos = 0;
  for (let m = re.exec(path); m; m = re.exec(path)) {
    if (m.index !== pos) return undefined;
    pos = re.lastIndex;
    if (m[1] !== undefined) {
      if (!expectKey) return undefined;
      out.push({ key: m[1] });
      expectKey = false;
    } else if (m[2] !== undefined) {
      if (expectKey) return undefined;
      out.push(/^\d+$/.test(m[2]) ? { index: Number(m[2]) } : { item: m[2] });
    } else {
      if (expectKey) return undefined;
      expectKey = true;
    }
  }
  if (pos !== path.length || expectKey || out.length === 0) return undefined;
  const first = out[0];
  if (!first || !("key" in first) || !AGENT_FIELDS.managed.includes(first.key)) return undefined;
  return out;
}

/** The key a list element is known by (`key`, else `name`, else `number`), when it has one. */
function itemKey(item: Json): string | undefined {
  if (!isPlainObject(item)) return undefined;
  for (const k of ["key", "name", "number"]) if (typeof item[k] === "string") return item[k] as string;
  return undefined;
}

/** `config` without the value at each path of `ignore` (paths that reach nothing are no-ops). */
export function withoutPaths(config: JsonObject, ignore: readonly string[]): JsonObject {
  const out: JsonObject = structuredClone(config);
  for (const path of ignore) {
    const segments = parsePath(path);
    if (!segments) continue;
    let parent: Json = out;
    for (let i = 0; i < segments.length; i++) {
      const seg = segments[i] as Segment;
      const last = i === segments.length - 1;
      if ("key" in seg) {
        if (!isPlainObject(parent)) break;
        if (last) delete parent[seg.key];
        else parent = parent[seg.key] ?? null;
      } else {
        if (!Array.isArray(parent)) break;
        const list: Json[] = parent;
        const at = "index" in seg ? seg.index : list.findIndex((x) => itemKey(x) === seg.item);
        if (at < 0 || at >= list.length) break;
        if (last) list.splice(at, 1);
        else parent = list[at] ?? null;
      }
    }
  }
  return out;
}

/** One field that differs between two configurations, in program spelling. */
export interface Difference {
  /** `systemPrompt`, `voice.speed`, `variables[callee_region].defaultValue`. */
  path: string;
  /** The value on each side (`undefined`: not set). */
  left: Json | undefined;
  right: Json | undefined;
}

/**
 * How `differences` lines up the elements of the list at `rulePath` (dotted, `[]` for items): a
 * list the field table keys (`variables`, a set by key; `memory.fields`, which the service orders
 * by key) element by key; every other list in order, as the service reads it (it dials
 * `builtinTools.transferCall.numbers` first to last), lists of objects index by index and lists of
 * values whole.
 */
function keyOfList(rulePath: string): string | undefined {
  const rule = AGENT_FIELDS.paths?.[rulePath];
  return rule && "keyedBy" in rule ? rule.keyedBy : undefined;
}

/** The elements of a list by their `key` (in order of first appearance); undefined when one has none. */
function byKey(list: readonly Json[], key: string): Map<string, Json[]> | undefined {
  const out = new Map<string, Json[]>();
  for (const x of list) {
    const k = isPlainObject(x) ? x[key] : undefined;
    if (typeof k !== "string") return undefined;
    out.set(k, [...(out.get(k) ?? []), x]);
  }
  return out;
}

/** The elements a key names on one side, for a message: none, the one, or all of them. */
const oneOrAll = (items: Json[]): Json | undefined => (items.length <= 1 ? items[0] : items);

/**
 * The fields that differ between two configurations (program spelling), leaf by leaf: objects key
 * by key, the lists the field table keys (`variables`, `memory.fields`) element by key (a key
 * repeated on either side compared with all its elements, never collapsed into one), every other
 * list in order (objects index by index, values whole). A value unknown at preview on either side
 * is not a difference (it is not known yet), and only it is left out: every known field beside it
 * is compared; a list holding an unknown element is left out whole (its elements cannot be lined
 * up).
 */
export function differences(left: JsonObject, right: JsonObject): Difference[] {
  const out: Difference[] = [];
  const join = (path: string, k: string) => (path ? `${path}.${k}` : k);
  const walk = (a: Json | undefined, b: Json | undefined, path: string, rulePath: string) => {
    if (a === UNKNOWN || b === UNKNOWN) return;
    if (deepEqual(a ?? null, b ?? null)) return;
    if (isPlainObject(a) && isPlainObject(b)) {
      for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort())
        walk(a[k], b[k], join(path, k), join(rulePath, k));
      return;
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      // An element unknown at preview: the list cannot be lined up; it is not known yet.
      if (a.includes(UNKNOWN) || b.includes(UNKNOWN)) return;
      const key = keyOfList(rulePath);
      const groups = key === undefined ? undefined : byKey([...a, ...b], key);
      if (key !== undefined && groups) {
        if (groups.has(UNKNOWN)) return;
        const [ga, gb] = [byKey(a, key), byKey(b, key)];
        for (const k of groups.keys()) {
          const [xa, xb] = [ga?.get(k) ?? [], gb?.get(k) ?? []];
          if (xa.length <= 1 && xb.length <= 1) walk(xa[0], xb[0], `${path}[${k}]`, `${rulePath}[]`);
          // A key repeated on either side: every element it names, never one for all.
          else if (!deepEqual(xa, xb))
            out.push({ path: `${path}[${k}]`, left: oneOrAll(xa), right: oneOrAll(xb) });
        }
        return;
      }
      if (key === undefined && [...a, ...b].some(isPlainObject)) {
        for (let i = 0; i < Math.max(a.length, b.length); i++)
          walk(a[i], b[i], `${path}[${i}]`, `${rulePath}[]`);
        return;
      }
    }
    if (containsUnknown(a ?? null) || containsUnknown(b ?? null)) return;
    out.push({ path, left: a, right: b });
  };
  walk(left, right, "", "");
  return out;
}

/** A value for a message: JSON, a long text by its first differing line (`other`: the text compared). */
export function describeValue(value: Json | undefined, other?: Json): string {
  if (value === undefined) return "(not set)";
  if (typeof value === "string" && (value.includes("\n") || value.length > 80)) {
    const lines = value.split("\n");
    const others = typeof other === "string" ? other.split("\n") : [];
    let i = 0;
    while (i < lines.length && lines[i] === others[i]) i++;
    const line = lines[i] ?? "";
    const shown = line.length > 80 ? `${line.slice(0, 77)}...` : line;
    return i >= lines.length
      ? `(${lines.length} lines, ends after line ${lines.length})`
      : `line ${i + 1}: ${JSON.stringify(shown)}`;
  }
  const text = JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
