/**
 * The files of the exported project, from an {@link ExportPlan}: the program (`index.ts`), the
 * prompts, `Pulumi.yaml`, `Pulumi.<stack>.yaml` (the base URL only: the API key is never written),
 * `package.json`, `tsconfig.json`, `.gitignore` and a README. Pure: `main.ts` writes them.
 */
import { Code, type ExportPlan, type PlannedResource, type Value } from "./plan";

/** Versions the exported `package.json` pins: this package's and the `@pulumi/pulumi` it uses. */
export interface Versions {
  self: string;
  pulumi: string;
  typescript: string;
  typesNode: string;
}

/** The program's language: TypeScript on the package, or Pulumi YAML on the provider plugin. */
export type Language = "typescript" | "yaml";

/** What the files are for. */
export interface RenderOptions {
  project: string;
  stack: string;
  versions: Versions;
  /** Default `typescript`. */
  language?: Language;
}

const WIDTH = 110;
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

const key = (k: string) => (IDENTIFIER.test(k) ? k : JSON.stringify(k));

function code(c: Code): string {
  if (c.kind === "file") return `readFileSync(${JSON.stringify(c.target)}, "utf8")`;
  return c.property === undefined ? c.target : `${c.target}.${c.property}`;
}

/**
 * TypeScript for `v`: on one line when it fits in what is left of the line (`lead` characters
 * already written on it, which start `indent` levels in), else one member a line.
 */
export function printValue(v: Value, indent = 0, lead = indent * 2): string {
  if (v instanceof Code) return code(v);
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  const pad = "  ".repeat(indent + 1);
  const entries = Array.isArray(v)
    ? v.map((item) => ({ prefix: "", value: item }))
    : Object.entries(v).map(([k, item]) => ({ prefix: `${key(k)}: `, value: item }));
  if (entries.length === 0) return Array.isArray(v) ? "[]" : "{}";
  const flat = entries.map((e) => `${e.prefix}${printValue(e.value, indent + 1, 0)}`);
  const oneLine = Array.isArray(v) ? `[${flat.join(", ")}]` : `{ ${flat.join(", ")} }`;
  // `;` or `,` follows the value.
  if (!oneLine.includes("\n") && lead + oneLine.length + 2 <= WIDTH) return oneLine;
  const lines = entries.map(
    (e) => `${pad}${e.prefix}${printValue(e.value, indent + 1, pad.length + e.prefix.length)},`,
  );
  const [open, close] = Array.isArray(v) ? ["[", "]"] : ["{", "}"];
  return `${open}\n${lines.join("\n")}\n${"  ".repeat(indent)}${close}`;
}

function comment(lines: readonly string[]): string {
  return lines.map((l) => `// ${l}`.trimEnd()).join("\n");
}

function resource(r: PlannedResource): string {
  const start = `${r.referenced ? `const ${r.variable} = ` : ""}new va.${r.type}(${JSON.stringify(r.name)}, `;
  return `${comment(r.comments)}\n${start}${printValue(r.args, 0, start.length)});`;
}

const SECTIONS: [string, PlannedResource["type"][]][] = [
  ["Knowledge bases", ["KnowledgeBase"]],
  ["Analysis groups", ["AnalysisGroup"]],
  ["Agents, their live versions and widgets", ["Agent", "AgentVersion", "Widget"]],
];

/** The program. */
export function renderProgram(plan: ExportPlan, opts: RenderOptions): string {
  const head = [
    "/**",
    ` * The voice agents of ${plan.baseUrl}, exported by voice-agent-export (pulumi-voice-agent ${opts.versions.self}).`,
    " *",
    " * Every resource adopts an object the workspace holds (adoptId; adoptDefault for the Default Analysis",
    " * group; a widget is its agent's) and declares exactly the configuration the service holds, fields at",
    " * their platform defaults left out: the first `pulumi up` writes nothing to the service. From then on",
    " * this program is the source of truth: change it, review `pulumi preview`, then `pulumi up`.",
    " */",
  ];
  const imports = [
    ...(plan.prompts.length > 0 ? ['import { readFileSync } from "node:fs";'] : []),
    'import * as va from "pulumi-voice-agent";',
  ];
  const parts = [head.join("\n"), imports.join("\n")];
  for (const [title, types] of SECTIONS) {
    const rs = plan.resources.filter((r) => types.includes(r.type));
    if (rs.length === 0) continue;
    parts.push(`// ---- ${title} ----`);
    let body = "";
    for (const r of rs) {
      // An agent starts a group of its own resources: a blank line before it.
      body += `${body === "" ? "" : r.type === "Agent" || r.type === "KnowledgeBase" || r.type === "AnalysisGroup" ? "\n\n" : "\n"}${resource(r)}`;
    }
    parts.push(body);
  }
  return `${parts.join("\n\n")}\n`;
}

/** A YAML scalar: JSON's spelling (a JSON string is a YAML double-quoted one). */
const scalar = (v: null | boolean | number | string) => JSON.stringify(v);

/** A mapping key: bare when plain, else quoted. */
const yamlKey = (k: string) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? k : JSON.stringify(k));

/** Pulumi YAML for a {@link Code}: an interpolation of another resource, or `fn::readFile`. */
function yamlCode(c: Code): Value {
  if (c.kind === "file") return { "fn::readFile": `./${c.target}` };
  return c.property === undefined ? `\${${c.target}}` : `\${${c.target}.${c.property}}`;
}

/** The lines of `v` in block style, `indent` levels in (objects and lists one member a line). */
export function yamlLines(v: Value, indent: number): string[] {
  const value = v instanceof Code ? yamlCode(v) : v;
  const pad = "  ".repeat(indent);
  if (value === null || typeof value !== "object" || value instanceof Code)
    return [`${pad}${scalar(value as string)}`];
  const nested = (item: Value): [string, string[]] => {
    const inner = item instanceof Code ? yamlCode(item) : item;
    if (inner === null || typeof inner !== "object" || inner instanceof Code)
      return [` ${scalar(inner as string)}`, []];
    if (Array.isArray(inner) ? inner.length === 0 : Object.keys(inner).length === 0)
      return [Array.isArray(inner) ? " []" : " {}", []];
    return ["", yamlLines(inner, indent + 1)];
  };
  if (Array.isArray(value)) {
    return value.flatMap((item) => {
      const [head, rest] = nested(item);
      // A list item's first line goes after its dash.
      if (head !== "") return [`${pad}-${head}`];
      const [first = "", ...others] = rest;
      return [`${pad}- ${first.trimStart()}`, ...others];
    });
  }
  return Object.entries(value).flatMap(([k, item]) => {
    const [head, rest] = nested(item);
    return [`${pad}${yamlKey(k)}:${head}`, ...rest];
  });
}

/**
 * `v` with every `$` of its text written `$$` (Pulumi YAML's escape: `${x}` in an agent's text is
 * text, not an interpolation). (A function, since `$$` in a replacement string means `$`.)
 */
function escaped(v: Value): Value {
  if (typeof v === "string") return v.replaceAll("$", () => "$$");
  if (v === null || typeof v !== "object" || v instanceof Code) return v;
  if (Array.isArray(v)) return v.map(escaped);
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, escaped(x)]));
}

/** The Pulumi YAML program (`Pulumi.yaml`): the project and its resources, in the plan's order. */
export function renderYamlProgram(plan: ExportPlan, opts: RenderOptions): string {
  const lines = [
    `# The voice agents of ${plan.baseUrl}, exported by voice-agent-export (pulumi-voice-agent ${opts.versions.self}).`,
    "#",
    "# Every resource adopts an object the workspace holds (adoptId; adoptDefault for the Default Analysis",
    "# group; a widget is its agent's) and declares exactly the configuration the service holds, fields at",
    "# their platform defaults left out: the first `pulumi up` writes nothing to the service. From then on",
    "# this program is the source of truth: change it, review `pulumi preview`, then `pulumi up`.",
    `name: ${opts.project}`,
    `description: ${scalar(`Voice agents of ${plan.baseUrl}, exported by voice-agent-export.`)}`,
    "runtime: yaml",
    "resources:",
  ];
  for (const r of plan.resources) {
    if (r.type === "Agent" || r.type === "KnowledgeBase" || r.type === "AnalysisGroup") lines.push("");
    lines.push(...r.comments.map((c) => `  # ${c}`.trimEnd()));
    lines.push(`  ${r.variable}:`, `    type: voice-agent:index:${r.type}`);
    if (r.name !== r.variable) lines.push(`    name: ${scalar(r.name)}`);
    lines.push("    properties:", ...yamlLines(escaped(r.args), 3));
  }
  return `${lines.join("\n")}\n`;
}

const count = (plan: ExportPlan, type: PlannedResource["type"]) =>
  plan.resources.filter((r) => r.type === type).length;
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** A one-line account of what the plan declares. */
export function summarize(plan: ExportPlan): string {
  return [
    plural(count(plan, "Agent"), "agent"),
    plural(count(plan, "AgentVersion"), "live version"),
    plural(count(plan, "Widget"), "widget"),
    plural(count(plan, "KnowledgeBase"), "knowledge base"),
    plural(count(plan, "AnalysisGroup"), "analysis group"),
  ].join(", ");
}

function readme(plan: ExportPlan, opts: RenderOptions): string {
  const notes: string[] = [];
  const pinned = plan.resources.filter((r) => r.type === "AgentVersion" && r.args.version !== undefined);
  if (pinned.length > 0) {
    const one = pinned.length === 1;
    notes.push(
      `- ${plural(pinned.length, "agent has", "agents have")} a working draft ahead of the live version: ` +
        `${one ? "its" : "their"} AgentVersion is pinned to the live version (\`version: n\`), so \`pulumi up\` ` +
        `keeps it live and leaves the draft untouched. Remove \`version\` to publish the draft.`,
    );
  }
  const unreleased = plan.resources.filter(
    (r) =>
      r.type === "Agent" && !plan.resources.some((v) => v.type === "AgentVersion" && v.adopts === r.adopts),
  );
  if (unreleased.length > 0) {
    notes.push(
      `- ${plural(unreleased.length, "agent is", "agents are")} not live (never published, or off air): ` +
        "no AgentVersion is declared for them, so nothing is published or put live. Add one to do so.",
    );
  }
  if (
    plan.resources.some((r) => r.type === "KnowledgeBase" && JSON.stringify(r.args).includes('"heldText"'))
  ) {
    notes.push(
      "- The service never reads a text document back: text documents are declared by name " +
        "(`heldText: true`). Put a document's text in the program (`{ name, text }`) before changing its " +
        "knowledge base: a change sends every document.",
    );
  }
  for (const w of plan.warnings) notes.push(`- ${w}`);
  return `# ${opts.project}

The voice agents of ${plan.baseUrl} as a Pulumi program, exported by \`voice-agent-export\`
(pulumi-voice-agent ${opts.versions.self}): ${summarize(plan)}.

Each resource adopts the object the workspace holds and declares exactly its configuration, so the
first \`pulumi up\` writes nothing to the service; \`pulumi preview\` then shows no changes.

## Run it

\`\`\`sh
${
  opts.language === "yaml"
    ? `# the provider plugin, once per machine (npm run plugin:pack in pulumi-voice-agent ${opts.versions.self}):
pulumi plugin install resource voice-agent ${opts.versions.self} --file pulumi-resource-voice-agent-v${opts.versions.self}-linux-amd64.tar.gz`
    : "npm install"
}
pulumi stack init ${opts.stack}
pulumi config set --secret voice-agent:apiKey <your key>   # or VOICE_AGENT_API_KEY in CI
pulumi up
\`\`\`

\`Pulumi.${opts.stack}.yaml\` already holds \`voice-agent:baseUrl\`. The API key goes in with
\`pulumi config set --secret voice-agent:apiKey\` (stored encrypted in that file); it was not
written anywhere by the export.

## What is where

- \`${opts.language === "yaml" ? "Pulumi.yaml" : "index.ts"}\`: the program${opts.language === "yaml" ? " (Pulumi YAML, on the voice-agent provider plugin)" : ""}. Knowledge bases and analysis groups first, then each agent with its
  live version and its widget; an agent refers to its knowledge bases and groups by reference.
- \`prompts/<agent>.md\`: each agent's system prompt. Edit one and \`pulumi up\`: the agent's draft is
  written; with an AgentVersion that is not pinned, it is published as the next version and goes live.
${notes.length > 0 ? `\n## Notes\n\n${notes.join("\n")}\n` : ""}`;
}

/** Every file of the project, by path relative to its folder. */
export function renderProject(plan: ExportPlan, opts: RenderOptions): Map<string, string> {
  const files = new Map<string, string>();
  files.set(`Pulumi.${opts.stack}.yaml`, `config:\n  voice-agent:baseUrl: ${JSON.stringify(plan.baseUrl)}\n`);
  for (const p of plan.prompts) files.set(p.path, p.content);
  files.set("README.md", readme(plan, opts));
  if (opts.language === "yaml") {
    files.set("Pulumi.yaml", renderYamlProgram(plan, opts));
    return files;
  }
  files.set(
    "Pulumi.yaml",
    [
      `name: ${opts.project}`,
      `description: ${JSON.stringify(`Voice agents of ${plan.baseUrl}, exported by voice-agent-export.`)}`,
      "runtime:",
      "  name: nodejs",
      "  options:",
      "    typescript: true",
      "main: index.ts",
      "",
    ].join("\n"),
  );
  files.set(
    "package.json",
    `${JSON.stringify(
      {
        name: opts.project.toLowerCase().replace(/[^a-z0-9._-]/g, "-"),
        private: true,
        main: "index.ts",
        dependencies: {
          "@pulumi/pulumi": opts.versions.pulumi,
          "pulumi-voice-agent": opts.versions.self,
        },
        devDependencies: {
          "@types/node": opts.versions.typesNode,
          typescript: opts.versions.typescript,
        },
      },
      null,
      2,
    )}\n`,
  );
  files.set(
    "tsconfig.json",
    `${JSON.stringify(
      {
        compilerOptions: {
          strict: true,
          target: "es2022",
          module: "commonjs",
          moduleResolution: "node",
          esModuleInterop: true,
          skipLibCheck: true,
          forceConsistentCasingInFileNames: true,
          outDir: "bin",
        },
        files: ["index.ts"],
      },
      null,
      2,
    )}\n`,
  );
  files.set(".gitignore", "node_modules/\nbin/\n");
  files.set("index.ts", renderProgram(plan, opts));
  return files;
}
