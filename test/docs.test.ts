/**
 * The repository stands on its own: no file points at a path of the machine it was written on (the
 * service decisions it follows are told in docs/service-decisions.md, not in a file beside the
 * checkout), and every relative link of its Markdown pages leads to a file of the repository, and a
 * link's `#anchor` to a heading of that page.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, test } from "vitest";
import { parse as parseYaml } from "yaml";
import { brokenLinks } from "./support/links";
import { REPO_ROOT } from "./support/pulumi";

/** Tracked files and new ones not ignored, relative to the repository. */
const files = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], {
  cwd: REPO_ROOT,
  encoding: "utf8",
})
  .split("\n")
  .filter((f) => f !== "" && existsSync(path.join(REPO_ROOT, f)));
const read = (f: string) => readFileSync(path.join(REPO_ROOT, f), "utf8");
const TEXT = /\.(ts|mts|js|cjs|mjs|json|md|ya?ml|sh|go|mod)$/;

describe("the repository stands on its own", () => {
  test("no file names a path of the machine or a folder beside the checkout", () => {
    const outside = /(?<![\w.:-])\/work\/|shared\/spec/;
    const found = files
      .filter((f) => TEXT.test(f) && f !== "test/docs.test.ts")
      .flatMap((f) =>
        read(f)
          .split("\n")
          .flatMap((line, i) => (outside.test(line) ? [`${f}:${i + 1}: ${line.trim()}`] : [])),
      );
    expect(found).toEqual([]);
  });

  test("every relative link of the Markdown pages leads to a file of the repository, and its anchor to a heading", () => {
    const pages = files.filter((f) => f.endsWith(".md"));
    expect(pages).toContain("docs/service-decisions.md");
    expect(brokenLinks(REPO_ROOT, pages)).toEqual([]);
  });
});

/** The pages whose code blocks are checked: the docs, the READMEs, the examples' and templates'. */
const codePages = files.filter(
  (f) => f.endsWith(".md") && (/^(docs|examples|templates)\//.test(f) || f === "README.md"),
);

/** The fenced blocks of `language` in a page's text, each with the line it starts on. */
function fenced(text: string, language: string): { line: number; code: string }[] {
  const blocks: { line: number; code: string }[] = [];
  for (const m of text.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, "gm"))) {
    blocks.push({ line: text.slice(0, m.index).split("\n").length, code: m[1] as string });
  }
  return blocks;
}

type Spec = {
  type?: string;
  $ref?: string;
  items?: Spec;
  additionalProperties?: Spec;
  oneOf?: Spec[];
  properties?: Record<string, Spec>;
  inputProperties?: Record<string, Spec>;
  inputs?: { properties?: Record<string, Spec> };
  outputs?: { properties?: Record<string, Spec> };
  enum?: unknown[];
};
const schema: {
  resources: Record<string, Spec>;
  types: Record<string, Spec>;
  functions: Record<string, Spec>;
  provider: Spec;
} = JSON.parse(read("schema.json"));

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);
/** A Pulumi YAML expression (`fn::readFile: ...`, `fn::secret: ...`) stands for a value of any shape. */
const isExpression = (v: unknown) => isObject(v) && Object.keys(v).some((k) => k.startsWith("fn::"));

/** The keys of `value` that `spec` (a schema property's type) does not name, at any depth. */
function unknownKeys(value: unknown, spec: Spec | undefined, at: string): string[] {
  if (spec === undefined || value === null || typeof value !== "object" || isExpression(value)) return [];
  if (spec.oneOf) {
    const tries = spec.oneOf.map((alt) => unknownKeys(value, alt, at));
    return tries.some((t) => t.length === 0) ? [] : (tries[0] ?? []);
  }
  if (spec.$ref?.startsWith("#/types/")) {
    const type = schema.types[spec.$ref.slice("#/types/".length)];
    if (type === undefined) return [`${at}: ${spec.$ref} is not a type of schema.json`];
    return unknownKeys(value, { properties: type.properties ?? {} }, at);
  }
  if (Array.isArray(value)) return value.flatMap((v, i) => unknownKeys(v, spec.items, `${at}[${i}]`));
  if (spec.additionalProperties) {
    return Object.entries(value).flatMap(([k, v]) => unknownKeys(v, spec.additionalProperties, `${at}.${k}`));
  }
  if (!spec.properties) return [];
  return Object.entries(value).flatMap(([k, v]) =>
    spec.properties?.[k] === undefined
      ? [`${at}.${k}: not a property of schema.json`]
      : unknownKeys(v, spec.properties[k], `${at}.${k}`),
  );
}

/**
 * What a Pulumi YAML program names that schema.json does not have: a `voice-agent:` type or function,
 * an input property at any depth, a function's argument or returned output, or an output read as
 * `${resource.output}` of a voice-agent resource the program declares.
 */
function yamlProblems(program: unknown): string[] {
  if (!isObject(program)) return [];
  const problems: string[] = [];
  const declared = new Map<string, Spec>();
  for (const [name, resource] of Object.entries(isObject(program.resources) ? program.resources : {})) {
    if (!isObject(resource) || typeof resource.type !== "string") continue;
    const type = resource.type;
    if (type === "pulumi:providers:voice-agent") {
      problems.push(
        ...unknownKeys(resource.properties ?? {}, { properties: schema.provider.inputProperties }, name),
      );
    } else if (type.startsWith("voice-agent:")) {
      const spec = schema.resources[type];
      if (spec === undefined) {
        problems.push(`${name}: ${type} is not a resource of schema.json`);
        continue;
      }
      declared.set(name, spec);
      problems.push(...unknownKeys(resource.properties ?? {}, { properties: spec.inputProperties }, name));
    }
  }
  const invokes = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(invokes);
    if (!isObject(v)) return;
    const invoke = v["fn::invoke"];
    if (
      isObject(invoke) &&
      typeof invoke.function === "string" &&
      invoke.function.startsWith("voice-agent:")
    ) {
      const fn = schema.functions[invoke.function];
      if (fn === undefined) problems.push(`${invoke.function} is not a function of schema.json`);
      else {
        problems.push(
          ...unknownKeys(
            invoke.arguments ?? {},
            { properties: fn.inputs?.properties ?? {} },
            invoke.function,
          ),
        );
        if (typeof invoke.return === "string" && fn.outputs?.properties?.[invoke.return] === undefined) {
          problems.push(`${invoke.function}: returns no ${invoke.return}`);
        }
      }
    }
    Object.values(v).forEach(invokes);
  };
  invokes(program);
  for (const [, name, output] of JSON.stringify(program).matchAll(/\$\{([\w-]+)\.(\w+)/g)) {
    const spec = declared.get(name as string);
    if (
      spec &&
      !["id", "urn"].includes(output as string) &&
      spec.properties?.[output as string] === undefined
    ) {
      problems.push(`\${${name}.${output}}: ${name} has no output ${output} in schema.json`);
    }
  }
  return problems;
}

/** The Go SDK's exported names (sdk/go/voiceagent): its functions and types, and its structs' fields. */
function goSdkNames(): { decls: Set<string>; fields: Set<string> } {
  const dir = path.join(REPO_ROOT, "sdk/go/voiceagent");
  const text = files
    .filter(
      (f) => f.startsWith("sdk/go/voiceagent/") && f.endsWith(".go") && !f.slice(dir.length).includes("/"),
    )
    .map(read)
    .join("\n");
  return {
    decls: new Set([...text.matchAll(/^(?:func|type) ([A-Z]\w*)/gm)].map((m) => m[1] as string)),
    fields: new Set([...text.matchAll(/^\t([A-Z]\w*)\s+\S/gm)].map((m) => m[1] as string)),
  };
}

const hasGofmt = spawnSync("gofmt", ["-h"]).error === undefined;
if (!hasGofmt && process.env.CI === "true")
  throw new Error("gofmt not found, and CI must check the Go blocks");

describe("the code blocks of the docs", () => {
  test("every YAML block parses, and names only types, functions and properties schema.json has", () => {
    const problems: string[] = [];
    const programs = [
      ...codePages.flatMap((page) =>
        fenced(read(page), "yaml").map((b) => ({ where: `${page}:${b.line}`, code: b.code })),
      ),
      ...["templates/voice-agent-yaml/Pulumi.yaml", "examples/yaml-support-agent/Pulumi.yaml"].map((f) => ({
        where: f,
        code: read(f),
      })),
    ];
    expect(programs.length).toBeGreaterThan(10);
    for (const { where, code } of programs) {
      let parsed: unknown;
      try {
        parsed = parseYaml(code);
      } catch (err) {
        problems.push(`${where}: does not parse: ${(err as Error).message.split("\n")[0]}`);
        continue;
      }
      problems.push(...yamlProblems(parsed).map((p) => `${where}: ${p}`));
    }
    expect(problems).toEqual([]);
  });

  test("the check finds a misspelt property, an invented output and an unknown function", () => {
    const program = parseYaml(
      [
        "variables:",
        "  v:",
        "    fn::invoke: { function: voice-agent:index:getVoice, arguments: {} }",
        "resources:",
        "  host:",
        "    type: voice-agent:index:Agent",
        "    properties: { name: A, greting: { message: Hi }, voice: { provider: sarvam, voice: meera } }",
        "outputs:",
        "  x: ${host.agentID}",
      ].join("\n"),
    );
    expect(yamlProblems(program)).toEqual([
      "host.greting: not a property of schema.json",
      "host.voice.voice: not a property of schema.json",
      "voice-agent:index:getVoice is not a function of schema.json",
      "${host.agentID}: host has no output agentID in schema.json",
    ]);
  });

  test.skipIf(!hasGofmt)(
    "every Go block is gofmt-clean Go, naming only the Go SDK's functions, types and fields",
    () => {
      const { decls, fields } = goSdkNames();
      expect(decls.has("NewAgent")).toBe(true);
      const problems: string[] = [];
      const blocks = codePages.flatMap((page) =>
        fenced(read(page), "go").map((b) => ({ where: `${page}:${b.line}`, code: b.code })),
      );
      expect(blocks.length).toBeGreaterThan(5);
      for (const { where, code } of blocks) {
        // A whole file as shown; a fragment inside a function of its own.
        const whole = /^(\/\/.*\n)*package /.test(code);
        const source = whole ? code : `package main\n\nfunc _() {\n${code}}\n`;
        const fmt = spawnSync("gofmt", ["-e"], { input: source, encoding: "utf8" });
        if (fmt.status !== 0) problems.push(`${where}: ${fmt.stderr.trim()}`);
        else if (whole && fmt.stdout !== code) problems.push(`${where}: not as gofmt writes it`);
        for (const [, name] of code.matchAll(/\bvoiceagent\.([A-Za-z]\w*)/g)) {
          if (!decls.has(name as string)) problems.push(`${where}: voiceagent.${name} is not in the Go SDK`);
        }
        for (const [, key] of code.matchAll(/^\s*([A-Z]\w*):\s/gm)) {
          if (!fields.has(key as string)) problems.push(`${where}: ${key} is no field of the Go SDK`);
        }
      }
      expect(problems).toEqual([]);
    },
  );
});
