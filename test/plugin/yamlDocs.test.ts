/**
 * The Pulumi YAML the docs show cannot rot: every `yaml` block of the resource pages, docs/plugin.md
 * and the README that declares resources of the plugin (or calls its functions) is parsed and its
 * property names and value shapes checked against schema.json, at every depth; the required inputs
 * are there. Each resource page shows its resource in YAML beside the TypeScript.
 */
import { readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, test } from "vitest";
import { parse } from "yaml";
import { blocksOfPage, REPO_ROOT } from "../support/pulumi";

type Spec = Record<string, unknown>;
const schema = JSON.parse(readFileSync(path.join(REPO_ROOT, "schema.json"), "utf8")) as {
  provider: { inputProperties: Record<string, Spec> };
  resources: Record<string, { inputProperties: Record<string, Spec>; requiredInputs?: string[] }>;
  functions: Record<
    string,
    { inputs?: { properties: Record<string, Spec> }; outputs: { properties: Record<string, Spec> } }
  >;
  types: Record<string, Spec>;
};

const PAGES = [
  ...readdirSync(path.join(REPO_ROOT, "docs/resources")).map((f) => `docs/resources/${f}`),
  "docs/plugin.md",
  "README.md",
];

/** An interpolation (`${host.agentId}`) or a built-in function (`fn::readFile`) stands for any value. */
const computed = (v: unknown): boolean =>
  (typeof v === "string" && /^\$\{[^}]+\}$/.test(v.trim())) ||
  (v !== null &&
    typeof v === "object" &&
    !Array.isArray(v) &&
    Object.keys(v).some((k) => k.startsWith("fn::")));

/** What is wrong with `value` against a Pulumi type spec, each problem named by its path. */
function check(value: unknown, spec: Spec, at: string): string[] {
  if (computed(value)) return [];
  const ref = typeof spec.$ref === "string" ? spec.$ref : undefined;
  if (ref === "pulumi.json#/Any") return [];
  if (ref?.startsWith("#/resources/"))
    return typeof value === "string" ? [] : [`${at}: a resource reference`];
  if (ref?.startsWith("#/types/")) return check(value, schema.types[ref.slice(8)] as Spec, at);
  if (Array.isArray(spec.oneOf)) {
    const each = (spec.oneOf as Spec[]).map((s) => check(value, s, at));
    return each.some((p) => p.length === 0) ? [] : (each[0] ?? []);
  }
  switch (spec.type) {
    case "string":
      return typeof value === "string" ? [] : [`${at}: expected a string, got ${JSON.stringify(value)}`];
    case "number":
      return typeof value === "number" ? [] : [`${at}: expected a number, got ${JSON.stringify(value)}`];
    case "boolean":
      return typeof value === "boolean" ? [] : [`${at}: expected a boolean, got ${JSON.stringify(value)}`];
    case "array":
      if (!Array.isArray(value)) return [`${at}: expected a list`];
      return value.flatMap((v, i) => check(v, spec.items as Spec, `${at}[${i}]`));
    default: {
      if (value === null || typeof value !== "object" || Array.isArray(value))
        return [`${at}: expected an object`];
      const entries = Object.entries(value as Record<string, unknown>);
      if (spec.additionalProperties) {
        return entries.flatMap(([k, v]) => check(v, spec.additionalProperties as Spec, `${at}.${k}`));
      }
      return objectProblems(
        value as Record<string, unknown>,
        (spec.properties ?? {}) as Record<string, Spec>,
        [],
        at,
      );
    }
  }
}

function objectProblems(
  value: Record<string, unknown>,
  properties: Record<string, Spec>,
  required: string[],
  at: string,
): string[] {
  const problems = Object.entries(value).flatMap(([k, v]) => {
    const spec = properties[k];
    return spec ? check(v, spec, at ? `${at}.${k}` : k) : [`${at ? `${at}.` : ""}${k}: not a property`];
  });
  for (const r of required) if (!(r in value)) problems.push(`${at}: ${r} missing`);
  return problems;
}

/** Every `fn::invoke` of the plugin's functions in a YAML document, with where it is. */
function invokes(node: unknown, at: string, out: [string, Record<string, unknown>][]): void {
  if (Array.isArray(node)) {
    for (const [i, n] of node.entries()) invokes(n, `${at}[${i}]`, out);
  } else if (node !== null && typeof node === "object") {
    for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
      if (k === "fn::invoke") out.push([at, v as Record<string, unknown>]);
      else invokes(v, `${at}.${k}`, out);
    }
  }
}

/** What is wrong with a YAML program's use of the plugin: its resources' properties, its functions' calls. */
function problemsOf(doc: Record<string, unknown>): { checked: string[]; problems: string[] } {
  const checked: string[] = [];
  const problems: string[] = [];
  const resources = (doc.resources ?? {}) as Record<
    string,
    { type?: string; properties?: Record<string, unknown> }
  >;
  for (const [name, r] of Object.entries(resources)) {
    if (!r.type?.startsWith("voice-agent:") && r.type !== "pulumi:providers:voice-agent") continue;
    checked.push(r.type);
    const spec =
      r.type === "pulumi:providers:voice-agent"
        ? { inputProperties: schema.provider.inputProperties, requiredInputs: [] }
        : schema.resources[r.type];
    if (!spec) {
      problems.push(`${name}: no resource ${r.type}`);
      continue;
    }
    problems.push(
      ...objectProblems(r.properties ?? {}, spec.inputProperties, spec.requiredInputs ?? [], name),
    );
  }
  const calls: [string, Record<string, unknown>][] = [];
  invokes(doc, "", calls);
  for (const [at, call] of calls) {
    const fn = schema.functions[String(call.function)];
    if (!fn) {
      if (String(call.function).startsWith("voice-agent:"))
        problems.push(`${at}: no function ${call.function}`);
      continue;
    }
    checked.push(String(call.function));
    problems.push(
      ...objectProblems(
        (call.arguments ?? {}) as Record<string, unknown>,
        fn.inputs?.properties ?? {},
        [],
        `${at}.arguments`,
      ),
    );
    if (call.return !== undefined && !(String(call.return) in fn.outputs.properties)) {
      problems.push(`${at}.return: ${call.return} is not a result of ${call.function}`);
    }
  }
  return { checked, problems };
}

describe("the docs' Pulumi YAML", () => {
  test.each(PAGES)("%s: every program is what schema.json accepts", (page) => {
    for (const block of blocksOfPage(page, "yaml")) {
      const doc = parse(block) as Record<string, unknown> | null;
      if (!doc || typeof doc !== "object") continue;
      expect(problemsOf(doc).problems, `${page}:\n${block}`).toEqual([]);
    }
  });

  test.each(
    readdirSync(path.join(REPO_ROOT, "docs/resources"))
      .filter((f) => f !== "lookups.md")
      .map((f) => [f]),
  )("docs/resources/%s shows its resource in YAML beside the TypeScript", (file) => {
    const page = `docs/resources/${file}`;
    const title = /^# (\w+)/m.exec(readFileSync(path.join(REPO_ROOT, page), "utf8"))?.[1];
    const shown = blocksOfPage(page, "yaml").flatMap((b) => problemsOf(parse(b) ?? {}).checked);
    expect(shown).toContain(`voice-agent:index:${title}`);
    expect(blocksOfPage(page, "ts").length).toBeGreaterThan(0);
  });

  test("docs/resources/lookups.md calls a lookup in YAML", () => {
    const shown = blocksOfPage("docs/resources/lookups.md", "yaml").flatMap(
      (b) => problemsOf(parse(b) ?? {}).checked,
    );
    expect(shown).toContain("voice-agent:index:getVoices");
  });

  test("a misspelt property, a wrong type and an unknown function are found", () => {
    const { problems } = problemsOf(
      parse(`
variables:
  v:
    fn::invoke:
      function: voice-agent:index:getVoices
      arguments: { provder: sarvam }
      return: item
resources:
  host:
    type: voice-agent:index:Agent
    properties:
      name: x
      greting: { message: hi }
      conversation: { responseEagerness: [fast] }
  w:
    type: voice-agent:index:Widget
    properties: {}
`),
    );
    expect(problems).toEqual([
      "host.greting: not a property",
      'host.conversation.responseEagerness: expected a number, got ["fast"]',
      "w: agentId missing",
      ".variables.v.arguments.provder: not a property",
      ".variables.v.return: item is not a result of voice-agent:index:getVoices",
    ]);
  });
});
