/**
 * schema.json is generated from the resources' public inputs and outputs (their TypeScript
 * definitions and TSDoc, `scripts/plugin/schema.ts`). It must be current, and its property names
 * must be exactly those the zod definitions that validate the inputs accept, at every depth: a
 * field added, renamed or removed on one side only fails here.
 */
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { schemaText } from "../../scripts/plugin/schema";
import { toCamelKey } from "../../src/provider/normalize";
import { VerifySpec } from "../../src/resources/agentVersion/verify";
import { WatchSpec } from "../../src/resources/agentVersion/watch";
import { AgentBody, AnalysisGroupInput, KnowledgeBaseInput, WidgetPatch } from "../../src/spec";

const ROOT = path.resolve(__dirname, "../..");
type Node = Record<string, unknown>;
const schema = JSON.parse(readFileSync(path.join(ROOT, "schema.json"), "utf8")) as {
  resources: Record<string, { inputProperties: Record<string, Node> }>;
  types: Record<string, Node>;
};

/** Names of the object properties at every path (`a.b[]` for list items), from a Pulumi type spec. */
function pulumiTree(spec: Node, at: string, out: Map<string, Set<string>>, seen = new Set<string>()): void {
  const ref =
    typeof spec.$ref === "string" && spec.$ref.startsWith("#/types/") ? spec.$ref.slice(8) : undefined;
  if (ref) {
    if (seen.has(`${ref}@${at}`)) return;
    seen.add(`${ref}@${at}`);
    pulumiTree(schema.types[ref] as Node, at, out, seen);
    return;
  }
  if (Array.isArray(spec.oneOf)) for (const s of spec.oneOf as Node[]) pulumiTree(s, at, out, seen);
  if (spec.items) pulumiTree(spec.items as Node, `${at}[]`, out, seen);
  if (spec.properties) objectTree(spec.properties as Record<string, Node>, at, out, seen);
}
function objectTree(
  props: Record<string, Node>,
  at: string,
  out: Map<string, Set<string>>,
  seen = new Set<string>(),
) {
  const names = out.get(at) ?? new Set<string>();
  out.set(at, names);
  for (const [k, v] of Object.entries(props)) {
    names.add(k);
    pulumiTree(v, at ? `${at}.${k}` : k, out, seen);
  }
}

/** The same, from a zod schema's JSON Schema (wire keys camelCased, as the program spells them). */
function zodTree(
  json: Node,
  defs: Record<string, Node>,
  at: string,
  out: Map<string, Set<string>>,
  camel: boolean,
) {
  const ref = typeof json.$ref === "string" ? json.$ref.replace(/^#\/(\$defs|definitions)\//, "") : undefined;
  if (ref && defs[ref]) return zodTree(defs[ref], defs, at, out, camel);
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    if (Array.isArray(json[key])) for (const s of json[key] as Node[]) zodTree(s, defs, at, out, camel);
  }
  if (json.items && typeof json.items === "object") zodTree(json.items as Node, defs, `${at}[]`, out, camel);
  if (json.properties) {
    const names = out.get(at) ?? new Set<string>();
    out.set(at, names);
    for (const [k, v] of Object.entries(json.properties as Record<string, Node>)) {
      const name = camel ? toCamelKey(k) : k;
      names.add(name);
      zodTree(v, defs, at ? `${at}.${name}` : name, out, camel);
    }
  }
}

function fromZod(s: z.ZodType, camel: boolean, prefix = ""): Map<string, Set<string>> {
  const json = z.toJSONSchema(s, { io: "input", unrepresentable: "any" }) as Node;
  const out = new Map<string, Set<string>>();
  zodTree(json, (json.$defs ?? {}) as Record<string, Node>, prefix, out, camel);
  return out;
}

function fromSchema(resource: string, only?: readonly string[], prefix = ""): Map<string, Set<string>> {
  const inputs = schema.resources[`voice-agent:index:${resource}`]?.inputProperties ?? {};
  const picked = only ? Object.fromEntries(Object.entries(inputs).filter(([k]) => only.includes(k))) : inputs;
  const out = new Map<string, Set<string>>();
  if (prefix) pulumiTree(picked[prefix] as Node, prefix, out);
  else objectTree(picked, "", out);
  return out;
}

/**
 * Where the program's inputs and the wire definition differ on purpose, each with its reason:
 * `drop` are wire fields the program never sets, `add` program fields the wire never sees.
 */
const ON_PURPOSE: Record<string, { drop?: Record<string, string[]>; add?: Record<string, string[]> }> = {
  Agent: {
    drop: {
      // A version's label and notes belong to the AgentVersion that publishes it.
      "": ["label", "notes"],
      // Providers are derived by the service from the model; a voice's model from its provider.
      model: ["provider"],
      "model.fallback": ["provider"],
      transcriber: ["provider"],
      "transcriber.fallback": ["provider"],
      voice: ["model"],
      "voice.fallback": ["model"],
      // System variables are the service's; the program declares custom ones only.
      "variables[]": ["deletable", "systemDefined"],
    },
  },
  // An item's id is the service's.
  AnalysisGroup: { drop: { "items[]": ["id"] } },
  // A document whose text the service already holds (adoption) is named, not sent.
  KnowledgeBase: { add: { "documents[]": ["heldText"] } },
  // A rate is one of two forms, told apart by a transform zod cannot describe as JSON Schema.
  watch: { add: { "watch.rates[]": ["analysis", "atMost", "status", "value"] } },
};

function onPurpose(key: string, tree: Map<string, Set<string>>): Map<string, Set<string>> {
  const { drop = {}, add = {} } = ON_PURPOSE[key] ?? {};
  for (const [at, names] of Object.entries(drop)) for (const n of names) tree.get(at)?.delete(n);
  for (const [at, names] of Object.entries(add)) {
    const set = tree.get(at) ?? new Set<string>();
    tree.set(at, set);
    for (const n of names) set.add(n);
  }
  return tree;
}

const asObject = (m: Map<string, Set<string>>) =>
  Object.fromEntries(
    [...m].map(([k, v]) => [k, [...v].sort()]).sort(([a], [b]) => String(a).localeCompare(String(b))),
  );

describe("schema.json", () => {
  it("is what `npm run plugin:schema` generates from the inputs (run it after changing them)", () => {
    expect(readFileSync(path.join(ROOT, "schema.json"), "utf8")).toBe(schemaText());
  }, 120_000);

  // The managed configuration: the zod bodies the check validates, camelCased.
  it.each([
    ["Agent", AgentBody],
    ["Widget", WidgetPatch],
    ["KnowledgeBase", KnowledgeBaseInput],
    ["AnalysisGroup", AnalysisGroupInput],
  ] as const)(
    "%s: every configuration field the service's definition validates, and no other",
    (resource, body) => {
      const wire = onPurpose(resource, fromZod(body, true));
      const top = [...(wire.get("") ?? [])];
      const declared = fromSchema(resource, top);
      expect(asObject(declared)).toEqual(asObject(wire));
    },
  );

  it.each([
    ["verify", VerifySpec],
    ["watch", WatchSpec],
  ] as const)("AgentVersion's %s: the fields its zod definition validates", (field, spec) => {
    expect(asObject(fromSchema("AgentVersion", undefined, field))).toEqual(
      asObject(onPurpose(field, fromZod(spec, false, field))),
    );
  });
});
