/**
 * voice-agent-export without the Pulumi CLI: what it reads and declares for every shape of agent,
 * knowledge base, analysis group and widget, checked by running the declared resources through the
 * providers' own handlers (check, create, diff, read), as the engine's first `up` and a refresh
 * would, against the emulator: zero write requests, nothing to change afterwards. Also random
 * agent configurations (fixed seed, every field of the agent body) and the files written.
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { z } from "zod";
import { VoiceAgentClient } from "../../src/client";
import { DEFAULT_API_KEY, type RunningEmulator, startEmulator } from "../../src/emulator";
import { HELP, OPTIONS } from "../../src/export/main";
import { Code, type ExportPlan, type PlannedResource, planExport, type Value } from "../../src/export/plan";
import { readWorkspace } from "../../src/export/read";
import { printValue, renderProject } from "../../src/export/render";
import { contextFor } from "../../src/provider/context";
import type { ResourceHandler } from "../../src/provider/resource";
import { agentProvider } from "../../src/resources/agent/provider";
import { agentVersionProvider } from "../../src/resources/agentVersion/provider";
import { analysisGroupProvider } from "../../src/resources/analysisGroup/provider";
import { knowledgeBaseProvider } from "../../src/resources/knowledgeBase/provider";
import { widgetProvider } from "../../src/resources/widget/provider";
import { AgentBody } from "../../src/spec";
import { clearRequestLog, requestLog, resetEmulator } from "../support/control";
import { REPO_ROOT, tempDir } from "../support/pulumi";
import { prng, randomAgentBody, type Shapes, seedRandomAgents, seedShapes } from "../support/workspace";

/** Configurations the random round-trip makes and adopts. */
const RANDOM_AGENTS = 200;
const SEED = 20261114;

let emu: RunningEmulator;
let client: VoiceAgentClient;

beforeAll(async () => {
  // No server-side limit and a client pace far above what these tests send: hundreds of requests.
  emu = await startEmulator({ port: 0, rateLimitPerMinute: 0 });
  client = new VoiceAgentClient({ baseUrl: emu.url, apiKey: DEFAULT_API_KEY, rateLimitPerMinute: 1_000_000 });
});
afterAll(async () => {
  await emu?.close();
});

const VERSIONS = { self: "0.2.0", pulumi: "3.259.0", typescript: "~5.9.3", typesNode: "^24.19.2" };

async function exportPlan(agentIds?: string[]): Promise<ExportPlan> {
  return planExport(await readWorkspace(client, agentIds ? { agentIds } : {}));
}

/** The write requests (anything but GET) the emulator saw since the log was last cleared. */
async function writes(): Promise<string[]> {
  return (await requestLog(emu)).filter((r) => r.method !== "GET").map((r) => `${r.method} ${r.path}`);
}

interface Applied {
  id: string;
  inputs: Record<string, any>;
  outs: Record<string, any>;
}

/**
 * The plan's resources through the providers' handlers, in order, as the engine's first `up` runs
 * them (check, then create, with references resolved to what the earlier creates returned); then,
 * for each, the no-change preview (`diff`) and refresh (`read`, then `diff`) must find nothing.
 */
async function applyPlan(plan: ExportPlan): Promise<Map<string, Applied>> {
  const ctx = contextFor(client);
  const handlers: Record<PlannedResource["type"], ResourceHandler> = {
    Agent: agentProvider(ctx),
    AgentVersion: agentVersionProvider(ctx),
    Widget: widgetProvider(ctx),
    KnowledgeBase: knowledgeBaseProvider(ctx),
    AnalysisGroup: analysisGroupProvider(ctx),
  };
  const prompts = new Map(plan.prompts.map((p) => [p.path, p.content]));
  const applied = new Map<string, Applied>();
  const resolve = (v: Value): unknown => {
    if (v instanceof Code) {
      if (v.kind === "file") return prompts.get(v.target);
      const target = applied.get(v.target);
      if (!target) throw new Error(`${v.target} is referenced before it is declared`);
      return v.property === "id" ? target.id : target.outs[v.property ?? "id"];
    }
    if (Array.isArray(v)) return v.map(resolve);
    if (v !== null && typeof v === "object")
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolve(x)]));
    return v;
  };
  for (const r of plan.resources) {
    const h = handlers[r.type];
    let inputs: Record<string, any>;
    if (r.type === "AgentVersion") {
      // What the AgentVersion class hands its provider (src/resources/agentVersion/index.ts).
      const agent = applied.get((r.args.agent as Code).target)?.outs as Record<string, any>;
      const pinned = r.args.version as number | undefined;
      const known: Record<string, number> = agent.knownVersions ?? {};
      inputs = JSON.parse(
        JSON.stringify({
          agentId: agent.agentId,
          contentHash: pinned === undefined ? agent.contentHash : undefined,
          knownVersion: pinned === undefined ? known[agent.contentHash] : undefined,
          knownUpTo: pinned === undefined ? Math.max(-1, ...Object.values(known)) : undefined,
          draftVersion: agent.draftVersion,
          documentRevision: agent.documentRevision,
          draftPublished: pinned === undefined ? agent.draftPublished : undefined,
          draftHash: pinned === undefined ? agent.draftHash : undefined,
          latestVersion: pinned === undefined ? agent.latestVersion : undefined,
          live: true,
          pinnedVersion: pinned,
        }),
      );
    } else {
      inputs = resolve(r.args) as Record<string, any>;
      if (r.type !== "Widget") inputs.createMarker = `pulumi-voice-agent:create:${r.type}-${r.name}`;
    }
    const checked = await h.check({}, inputs);
    expect(checked.failures ?? [], `${r.type} ${r.name}`).toEqual([]);
    const made = await h.create(checked.inputs);
    const outs = made.outs as Record<string, any>;
    expect(
      (await h.diff(made.id, outs, checked.inputs)).changes,
      `${r.type} ${r.name}: no-change preview`,
    ).toBe(false);
    const read = await h.read(made.id, outs);
    expect(read.id, `${r.type} ${r.name}: refresh`).toBe(made.id);
    const refreshed = await h.diff(made.id, read.props as Record<string, any>, checked.inputs);
    expect(refreshed.changes, `${r.type} ${r.name}: no change after a refresh`).toBe(false);
    applied.set(r.variable, { id: made.id, inputs: checked.inputs, outs });
  }
  return applied;
}

const byType = (plan: ExportPlan, type: PlannedResource["type"], adopts: string) =>
  plan.resources.filter((r) => r.type === type && r.adopts === adopts);
const one = (plan: ExportPlan, type: PlannedResource["type"], adopts: string) => {
  const found = byType(plan, type, adopts);
  expect(found, `${type} of ${adopts}`).toHaveLength(1);
  return found[0] as PlannedResource;
};

describe("every shape, in one workspace", () => {
  let shapes: Shapes;
  let plan: ExportPlan;

  beforeAll(async () => {
    await resetEmulator(emu);
    shapes = await seedShapes(client, emu);
    await clearRequestLog(emu);
    plan = await exportPlan();
  });

  test("the export only reads", async () => {
    expect(await writes()).toEqual([]);
  });

  test("the first up adopts every object with zero writes; no change afterwards", async () => {
    await clearRequestLog(emu);
    const applied = await applyPlan(plan);
    expect(await writes()).toEqual([]);
    for (const r of plan.resources) {
      const a = applied.get(r.variable) as Applied;
      // What names the adopted object: the id, the agent of a version (`<agentId>/<n>`), a widget's agent.
      const adopted =
        r.type === "AgentVersion"
          ? a.id.slice(0, a.id.lastIndexOf("/"))
          : r.type === "Widget"
            ? a.outs.agentId
            : a.id;
      expect(adopted, `${r.type} ${r.variable}`).toBe(r.adopts);
    }
    // The live versions stay live, the drafts stay drafts.
    const live = await client.agents.get(shapes.draftAhead);
    expect(live).toMatchObject({ version: 1, is_published: false, live_version: 0 });
    expect((await client.agents.get(shapes.rolledBack)).live_version).toBe(1);
    expect((await client.agents.get(shapes.offAir)).live_version).toBeNull();
    expect((await client.agents.get(shapes.neverPublished)).latest_version).toBe(0);
  });

  test("live, with or without an equal draft, several versions, rolled back: an AgentVersion without a pin", () => {
    for (const id of [shapes.live, shapes.liveWithEqualDraft, shapes.severalVersions, shapes.rolledBack]) {
      const v = one(plan, "AgentVersion", id);
      expect(v.args).toEqual({ agent: expect.any(Code) });
      expect(v.comments.join(" ")).toMatch(/is live and holds this configuration: it stays live/);
    }
    expect(one(plan, "AgentVersion", shapes.live).comments[0]).toContain('(label "2026.11.1")');
    // The rolled-back agent is declared as its live version (1) holds it, not as the newest (2).
    const rolled = one(plan, "Agent", shapes.rolledBack);
    const prompt = plan.prompts.find((p) => p.path === (rolled.args.systemPrompt as Code).target);
    expect(prompt?.content).toContain("dues, politely.");
  });

  test("a draft ahead of the live version: declared as the draft, the live version pinned with a comment", () => {
    const agent = one(plan, "Agent", shapes.draftAhead);
    expect(agent.args).toMatchObject({
      model: { model: "gpt-4o", temperature: 0.3 },
      call: { maxDurationMinutes: 25 },
    });
    expect(plan.prompts.find((p) => p.path === "prompts/sales.md")?.content).toContain(
      "enterprise and team plans",
    );
    const v = one(plan, "AgentVersion", shapes.draftAhead);
    expect(v.args).toEqual({ agent: expect.any(Code), version: 0 });
    expect(v.comments.join(" ")).toMatch(
      /Version 0 \(label "sales-1"\) is live; the working draft \(version 1\) holds changes not published yet\. Pinned to version 0/,
    );
  });

  test("never published and off air: no AgentVersion, and a comment says why", () => {
    expect(byType(plan, "AgentVersion", shapes.neverPublished)).toEqual([]);
    expect(one(plan, "Agent", shapes.neverPublished).comments.join(" ")).toMatch(/Never published/);
    expect(byType(plan, "AgentVersion", shapes.offAir)).toEqual([]);
    expect(one(plan, "Agent", shapes.offAir).comments.join(" ")).toMatch(/Off air/);
  });

  test("only fields that differ from a new agent's, in input spelling; the prompt exactly as held", () => {
    expect(one(plan, "Agent", shapes.live).args).toEqual({
      adoptId: shapes.live,
      name: "Front desk",
      systemPrompt: expect.any(Code),
      greeting: { message: "Welcome to the {{custom.branch}} branch!" },
      language: { default: "en-IN", additional: ["hi-IN"] },
      voice: { provider: "cartesia", voiceId: "asha", speed: 1.1, emotion: "calm" },
      conversation: { responseEagerness: 0.75, silenceReminder: { seconds: 12 } },
      variables: [{ key: "branch", defaultValue: "Koramangala" }],
    });
    expect(one(plan, "Agent", shapes.neverPublished).args).toEqual({
      adoptId: shapes.neverPublished,
      name: "Prototype",
      systemPrompt: expect.any(Code),
      builtinTools: { endCall: { enabled: false } },
    });
    expect(plan.prompts.find((p) => p.path === "prompts/prototype.md")?.content).toBe(
      "Just a draft: नमस्ते! Quotes \"'`${x}` and a backslash \\ stay as written.",
    );
  });

  test("knowledge bases and analysis groups: adopted, referenced by the agents, markers left out", () => {
    const faq = one(plan, "KnowledgeBase", shapes.knowledgeBases.faq);
    expect(faq.args).toEqual({
      adoptId: shapes.knowledgeBases.faq,
      name: "Store FAQ",
      description: "Opening hours, delivery areas, returns.",
      documents: [
        { name: "hours", heldText: true },
        { name: "returns", url: "https://shop.example.com/returns" },
      ],
    });
    // Its description is the create marker this package left: not the user's, not declared.
    const catalogue = one(plan, "KnowledgeBase", shapes.knowledgeBases.catalogue);
    expect(catalogue.args.description).toBeUndefined();
    const defaults = one(plan, "AnalysisGroup", shapes.groups.defaultGroup);
    expect(defaults.args).toMatchObject({ adoptDefault: true });
    expect(defaults.args.adoptId).toBeUndefined();
    expect((defaults.args.items as any[]).find((i) => i.name === "Language")).toMatchObject({
      enabled: false,
    });
    expect(one(plan, "AnalysisGroup", shapes.groups.compliance).args).toEqual({
      adoptId: shapes.groups.compliance,
      name: "Compliance",
      enabled: false,
    });
    const leads = one(plan, "AnalysisGroup", shapes.groups.leads);
    expect(leads.args.items).toEqual([
      { name: "Interested", type: "boolean", description: "Did the caller want to buy?" },
      { name: "Budget", type: "number" },
      { name: "Channel", type: "enum", enumValues: ["web", "phone", "store"] },
      { name: "Notes", type: "text", enabled: false },
    ]);
    const web = one(plan, "Agent", shapes.webAgent);
    expect(web.args.knowledgeBaseIds).toEqual([
      Code.ref(faq.variable, "id"),
      Code.ref(catalogue.variable, "id"),
    ]);
    expect(web.args.analysisGroupIds).toEqual([
      Code.ref(leads.variable, "id"),
      Code.ref(defaults.variable, "id"),
    ]);
    for (const r of [faq, catalogue, leads, defaults]) expect(r.referenced).toBe(true);
    // The Default Analysis group detached is a declaration of its own; attached alone, the default.
    expect(one(plan, "Agent", shapes.noAnalysis).args.analysisGroupIds).toEqual([]);
    expect(one(plan, "Agent", shapes.live).args.analysisGroupIds).toBeUndefined();
  });

  test("widgets: a configured one is adopted without a key rotation; paused stays paused; an untouched one is left out", () => {
    expect(one(plan, "Widget", shapes.webAgent).args).toEqual({
      agentId: expect.any(Code),
      name: "Tea shop chat",
      allowedOrigins: ["https://teashop.example", "http://localhost:3000"],
      enabledModes: { talk: false },
      theme: {
        title: "Ask us anything",
        logoUrl: "https://teashop.example/logo.png",
        accentColor: "#0b6e4f",
        position: "bottom-left",
        buttonShape: "pill",
        widgetWidth: 420,
      },
      defaultVariables: { storeCity: "Bengaluru", "store-id": "42" },
      status: "paused",
      rotateKeyOnCreate: false,
    });
    expect(one(plan, "Widget", shapes.live).args).toEqual({
      agentId: expect.any(Code),
      allowedOrigins: ["https://frontdesk.example"],
      rotateKeyOnCreate: false,
    });
    expect(byType(plan, "Widget", shapes.severalVersions)).toEqual([]);
  });

  test("names: readable, unique, stable", async () => {
    const [a, b] = shapes.twins;
    expect(one(plan, "Agent", a).name).toBe("support");
    expect(one(plan, "Agent", b).name).toBe("support-2");
    expect(one(plan, "AgentVersion", shapes.live).name).toBe("front-desk-live");
    expect(one(plan, "Widget", shapes.webAgent).name).toBe("tea-shop-assistant-widget");
    expect(one(plan, "AnalysisGroup", shapes.groups.defaultGroup).name).toBe("default-analysis");
    const variables = plan.resources.map((r) => r.variable);
    expect(new Set(variables).size).toBe(variables.length);
    for (const type of ["Agent", "AgentVersion", "Widget", "KnowledgeBase", "AnalysisGroup"] as const) {
      const names = plan.resources.filter((r) => r.type === type).map((r) => r.name);
      expect(new Set(names).size).toBe(names.length);
    }
    // Exported again: the same files, byte for byte.
    const again = await exportPlan();
    const files = (p: ExportPlan) => renderProject(p, { project: "p", stack: "dev", versions: VERSIONS });
    expect([...files(again)]).toEqual([...files(plan)]);
  });

  test("one agent at a time (--agent): what it uses comes along; zero writes", async () => {
    const ids = [
      shapes.live,
      shapes.liveWithEqualDraft,
      shapes.draftAhead,
      shapes.neverPublished,
      shapes.severalVersions,
      shapes.rolledBack,
      shapes.offAir,
      shapes.webAgent,
      shapes.noAnalysis,
    ];
    for (const id of ids) {
      const alone = await exportPlan([id]);
      expect(alone.resources.filter((r) => r.type === "Agent").map((r) => r.adopts)).toEqual([id]);
      await clearRequestLog(emu);
      await applyPlan(alone);
      expect(await writes(), id).toEqual([]);
    }
    const web = await exportPlan([shapes.webAgent]);
    expect(web.resources.filter((r) => r.type === "KnowledgeBase").map((r) => r.adopts)).toEqual([
      shapes.knowledgeBases.faq,
      shapes.knowledgeBases.catalogue,
    ]);
    expect(web.resources.filter((r) => r.type === "AnalysisGroup").map((r) => r.adopts)).toEqual([
      shapes.groups.defaultGroup,
      shapes.groups.leads,
    ]);
    await expect(exportPlan(["00000000-0000-4000-8000-000000000000"])).rejects.toThrow(
      /--agent: no agent 00000000-0000-4000-8000-000000000000 in this workspace/,
    );
  });
});

/** Every leaf path of a zod request schema (`a.b`, list items as `a[]`). */
function schemaPaths(schema: z.ZodType, prefix = ""): string[] {
  let s: z.ZodType = schema;
  while (s instanceof z.ZodOptional || s instanceof z.ZodNullable) s = s.unwrap() as z.ZodType;
  if (s instanceof z.ZodObject) {
    return Object.entries(s.shape as Record<string, z.ZodType>).flatMap(([k, v]) =>
      schemaPaths(v, prefix ? `${prefix}.${k}` : k),
    );
  }
  if (s instanceof z.ZodArray && (s.element instanceof z.ZodObject || s.element instanceof z.ZodOptional)) {
    return schemaPaths(s.element as z.ZodType, `${prefix}[]`);
  }
  return [prefix];
}

/** The leaf paths of a body that hold a value (not null). */
function bodyPaths(v: unknown, prefix = ""): string[] {
  if (v === null || v === undefined) return [];
  if (Array.isArray(v)) {
    return v.some((x) => x !== null && typeof x === "object")
      ? v.flatMap((x) => bodyPaths(x, `${prefix}[]`))
      : [prefix];
  }
  if (typeof v === "object") {
    return Object.entries(v).flatMap(([k, x]) => bodyPaths(x, prefix ? `${prefix}.${k}` : k));
  }
  return [prefix];
}

describe("random agent configurations round-trip", () => {
  test(`the generator (seed ${SEED}) exercises every field of the agent body`, () => {
    const rand = prng(SEED);
    const attach = { knowledgeBaseIds: ["kb"], analysisGroupIds: ["g"] };
    const seen = new Set(
      Array.from({ length: RANDOM_AGENTS }, (_, i) => bodyPaths(randomAgentBody(rand, i, attach))).flat(),
    );
    const fields = schemaPaths(AgentBody);
    expect(fields.length).toBeGreaterThan(90);
    expect(fields.filter((f) => !seen.has(f))).toEqual([]);
  });

  test(`${RANDOM_AGENTS} random agents: exported, adopted with zero writes, no change afterwards`, async () => {
    await resetEmulator(emu);
    const kb = await client.knowledgeBases.create({ name: "Docs", documents: [{ name: "a", text: "one" }] });
    const group = await client.analysis.create({ name: "Extra", items: [{ name: "Score", type: "number" }] });
    const groups = (await client.analysis.list().toArray()).map((g) => g.id);
    const made = await seedRandomAgents(client, SEED, RANDOM_AGENTS, {
      knowledgeBaseIds: [kb.id],
      analysisGroupIds: groups,
    });
    expect(made).toHaveLength(RANDOM_AGENTS);
    expect(groups).toContain(group.id);
    const plan = await exportPlan();
    expect(plan.resources.filter((r) => r.type === "Agent")).toHaveLength(RANDOM_AGENTS);
    await clearRequestLog(emu);
    await applyPlan(plan);
    expect(await writes()).toEqual([]);
  }, 300_000);
});

describe("the files", () => {
  let plan: ExportPlan;
  beforeAll(async () => {
    await resetEmulator(emu);
    await seedShapes(client, emu);
    plan = await exportPlan();
  });

  test("a ready project: Pulumi.yaml, the stack's base URL, pinned versions, the prompts read from files", () => {
    const files = renderProject(plan, { project: "acme-voice", stack: "prod", versions: VERSIONS });
    expect([...files.keys()].sort()).toEqual(
      [
        ".gitignore",
        "Pulumi.prod.yaml",
        "Pulumi.yaml",
        "README.md",
        "index.ts",
        "package.json",
        "tsconfig.json",
        ...plan.prompts.map((p) => p.path),
      ].sort(),
    );
    expect(files.get("Pulumi.yaml")).toMatch(
      /^name: acme-voice\n[\s\S]*runtime:\n {2}name: nodejs\n {2}options:\n {4}typescript: true\n/,
    );
    expect(files.get("Pulumi.prod.yaml")).toBe(`config:\n  voice-agent:baseUrl: "${emu.url}"\n`);
    expect(JSON.parse(files.get("package.json") as string)).toMatchObject({
      dependencies: { "@pulumi/pulumi": "3.259.0", "pulumi-voice-agent": "0.2.0" },
    });
    const program = files.get("index.ts") as string;
    expect(program).toContain('import * as va from "pulumi-voice-agent";');
    expect(program).toContain('systemPrompt: readFileSync("prompts/front-desk.md", "utf8"),');
    expect(program).toContain('new va.AgentVersion("sales-live", { agent: sales, version: 0 });');
    expect(program).toMatch(/knowledgeBaseIds: \[storeFaqKb\.id, productCatalogueKb\.id\]/);
    const readme = files.get("README.md") as string;
    expect(readme).toContain("npm install\npulumi stack init prod\n");
    expect(readme).toContain("pulumi config set --secret voice-agent:apiKey <your key>");
    expect(readme).toContain("pulumi up\n");
    for (const [name, content] of files) expect(content, name).not.toContain(DEFAULT_API_KEY);
  });

  test("strings of every kind are written as TypeScript that evaluates to the same value", () => {
    const tricky = {
      a: 'quote " backslash \\ tick ` dollar ${x} newline \n tab \t nul \u0000 sep \u2028 नमस्ते 🎧',
      "store-id": ["x", 1.5, -0.25, true, null],
      nested: { deep: { deeper: "y".repeat(200) } },
    };
    // biome-ignore lint/security/noGlobalEval: the printed literal is what is checked.
    expect(eval(`(${printValue(tricky)})`)).toEqual(tricky);
  });
});

test("--language yaml: the plan as Pulumi YAML, references interpolated, prompts read, text's `$` escaped", () => {
  const plan: ExportPlan = {
    baseUrl: "http://127.0.0.1:1",
    prompts: [{ path: "prompts/sales.md", content: "Hi ${name}" }],
    warnings: [],
    resources: [
      {
        type: "KnowledgeBase",
        name: "faq",
        variable: "faqKb",
        args: { adoptId: "kb1", name: "FAQ", documents: [{ name: "hours", heldText: true }] },
        comments: ["Knowledge base."],
        adopts: "kb1",
        referenced: true,
      },
      {
        type: "Agent",
        name: "sales",
        variable: "sales",
        args: {
          adoptId: "a1",
          name: "Sales ${region} $$",
          systemPrompt: Code.file("prompts/sales.md"),
          knowledgeBaseIds: [Code.ref("faqKb", "id")],
          variables: [{ key: "k", defaultValue: "v" }],
        },
        comments: ["Agent."],
        adopts: "a1",
        referenced: true,
      },
      {
        type: "AgentVersion",
        name: "sales-live",
        variable: "salesLive",
        args: { agent: Code.ref("sales"), version: 0 },
        comments: [],
        adopts: "a1",
        referenced: false,
      },
    ],
  };
  const files = renderProject(plan, {
    project: "p",
    stack: "dev",
    versions: { self: "1.0.0", pulumi: "^3", typescript: "^5", typesNode: "^22" },
    language: "yaml",
  });
  expect([...files.keys()].sort()).toEqual([
    "Pulumi.dev.yaml",
    "Pulumi.yaml",
    "README.md",
    "prompts/sales.md",
  ]);
  const program = files.get("Pulumi.yaml") as string;
  expect(program).toContain(
    [
      "  # Agent.",
      "  sales:",
      "    type: voice-agent:index:Agent",
      "    properties:",
      '      adoptId: "a1"',
      '      name: "Sales $${region} $$$$"',
      "      systemPrompt:",
      '        "fn::readFile": "./prompts/sales.md"',
      "      knowledgeBaseIds:",
      '        - "${faqKb.id}"',
      "      variables:",
      '        - key: "k"',
      '          defaultValue: "v"',
      "  salesLive:",
      "    type: voice-agent:index:AgentVersion",
      '    name: "sales-live"',
      "    properties:",
      '      agent: "${sales}"',
      "      version: 0",
    ].join("\n"),
  );
  expect(program).toMatch(/^runtime: yaml$/m);
  expect(files.get("prompts/sales.md")).toBe("Hi ${name}");
  expect(files.get("README.md")).toContain("pulumi plugin install resource voice-agent 1.0.0 --file");
});

describe("voice-agent-export (the command, dist/export/cli.js)", () => {
  const CLI = path.join(REPO_ROOT, "dist/export/cli.js");
  // Asynchronous: the emulator answering the command runs in this process.
  const run = (args: string[], env: Record<string, string> = {}) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [CLI, ...args],
        {
          encoding: "utf8",
          env: { ...process.env, VOICE_AGENT_BASE_URL: "", VOICE_AGENT_API_KEY: "", ...env },
        },
        (err, stdout, stderr) =>
          resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
      );
    });
  let dir: string;
  let shapes: Shapes;
  beforeAll(async () => {
    dir = tempDir("export-cli-");
    await resetEmulator(emu);
    shapes = await seedShapes(client, emu);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("--help lists every option, the environment, the exit codes and examples", async () => {
    const r = await run(["--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(HELP);
    expect((await run(["-h"])).stdout).toBe(HELP);
    for (const name of Object.keys(OPTIONS)) expect(r.stdout).toContain(`--${name}`);
    for (const env of [
      "VOICE_AGENT_BASE_URL",
      "VOICE_AGENT_API_KEY",
      "VOICE_AGENT_RATE_LIMIT",
      "VOICE_AGENT_DEBUG",
    ])
      expect(r.stdout).toContain(env);
    expect(r.stdout).toMatch(/Exit codes:\n {2}0 .*\n {2}1 [\s\S]*\n {2}2 /);
  });

  test.each([
    [[], "--out DIR is required"],
    [["--out"], "option '--out <value>' argument missing"],
    [["--out", "x", "--bogus"], "unknown option '--bogus'"],
    [["--out", "x", "stray"], "unexpected argument: stray (the folder goes after --out)"],
    [
      ["--out", "x", "--stack", "a b"],
      "--stack: \"a b\" is not a stack name (letters, digits, '-', '_' and '.')",
    ],
    [
      ["--out", "x", "--project", "a/b"],
      "--project: \"a/b\" is not a project name (letters, digits, '-', '_' and '.')",
    ],
    [["--out", "x", "--language", "cobol"], '--language: "cobol" is not typescript or yaml'],
  ])("refuses %j with exit code 2", async (args, message) => {
    const r = await run(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`voice-agent-export: ${message}\nRun voice-agent-export --help for the usage.\n`);
  });

  test("without the environment, or with an agent the workspace lacks: exit code 1, one line, no key", async () => {
    const none = await run(["--out", path.join(dir, "none")]);
    expect(none.code).toBe(1);
    expect(none.stderr).toBe(
      "voice-agent-export: the export asks the service: give --stack NAME to read voice-agent:baseUrl and voice-agent:apiKey from that stack's configuration, or set VOICE_AGENT_BASE_URL and VOICE_AGENT_API_KEY\n",
    );
    const env = { VOICE_AGENT_BASE_URL: emu.url, VOICE_AGENT_API_KEY: DEFAULT_API_KEY };
    const missing = await run(["--out", path.join(dir, "missing"), "--agent", "nope"], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^voice-agent-export: --agent: no agent nope in this workspace/);
    const refused = await run(["--out", path.join(dir, "refused")], {
      ...env,
      VOICE_AGENT_API_KEY: "va_wrong_key",
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).not.toContain("va_wrong_key");
  });

  test("writes the project; refuses a folder that is not empty unless --force", async () => {
    const env = { VOICE_AGENT_BASE_URL: emu.url, VOICE_AGENT_API_KEY: DEFAULT_API_KEY };
    const out = path.join(dir, "acme voice");
    const r = await run(["--out", out], env);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^Exported 11 agents, 7 live versions, 2 widgets, 2 knowledge bases, 3 analysis groups from /,
    );
    expect(r.stdout).toContain("pulumi config set --secret voice-agent:apiKey <your key>");
    expect(readFileSync(path.join(out, "Pulumi.yaml"), "utf8")).toMatch(/^name: acme-voice\n/);
    expect(readdirSync(path.join(out, "prompts"))).toContain("front-desk.md");
    expect(readFileSync(path.join(out, "Pulumi.dev.yaml"), "utf8")).toContain(emu.url);
    const package_ = JSON.parse(readFileSync(path.join(out, "package.json"), "utf8"));
    const ours = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));
    expect(package_.dependencies).toEqual({
      "@pulumi/pulumi": ours.peerDependencies["@pulumi/pulumi"],
      "pulumi-voice-agent": ours.version,
    });
    for (const f of readdirSync(out, { recursive: true }) as string[]) {
      const file = path.join(out, f);
      if (f.endsWith(".md") || f.endsWith(".ts") || f.endsWith(".json") || f.endsWith(".yaml"))
        expect(readFileSync(file, "utf8"), f).not.toContain(DEFAULT_API_KEY);
    }
    writeFileSync(path.join(out, "extra.txt"), "mine");
    const again = await run(["--out", out], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/is not empty .*--force/);
    const forced = await run(["--out", out, "--force", "--stack", "prod", "--project", "voice"], env);
    expect(forced.code).toBe(0);
    expect(readFileSync(path.join(out, "Pulumi.prod.yaml"), "utf8")).toContain(emu.url);
    expect(readFileSync(path.join(out, "extra.txt"), "utf8")).toBe("mine");
  });

  test("an agent gone between the listing and its read: named on stderr and in the README, the rest exported", async () => {
    const gone = shapes.severalVersions;
    // In front of the emulator: the listing passes as it is; every read of `gone` is sent for an
    // id the workspace never held, so the emulator answers its own 404, as for an agent removed
    // right after the listing.
    const proxy: Server = createServer(async (req, res) => {
      const url = (req.url ?? "/").replace(
        `/v1/agents/${gone}`,
        "/v1/agents/00000000-0000-4000-8000-000000000000",
      );
      const answer = await fetch(`${emu.url}${url}`, {
        method: req.method ?? "GET",
        headers: { authorization: req.headers.authorization ?? "" },
      });
      res.writeHead(answer.status, {
        "content-type": answer.headers.get("content-type") ?? "application/json",
      });
      res.end(Buffer.from(await answer.arrayBuffer()));
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = proxy.address() as { port: number };
      const whole = await run(["--out", path.join(dir, "whole")], {
        VOICE_AGENT_BASE_URL: emu.url,
        VOICE_AGENT_API_KEY: DEFAULT_API_KEY,
      });
      const out = path.join(dir, "gone");
      const r = await run(["--out", out], {
        VOICE_AGENT_BASE_URL: `http://127.0.0.1:${port}`,
        VOICE_AGENT_API_KEY: DEFAULT_API_KEY,
      });
      expect(whole.code).toBe(0);
      expect(r.code).toBe(0);
      const line = `agent "Billing" (${gone}) disappeared between the listing and its read: it is left out of the export.`;
      expect(r.stderr).toBe(`voice-agent-export: warning: ${line}\n`);
      expect(readFileSync(path.join(out, "README.md"), "utf8")).toContain(`\n- ${line}\n`);
      expect(r.stdout).toMatch(
        /^Exported 10 agents, 6 live versions, 2 widgets, 2 knowledge bases, 3 analysis groups from /,
      );
      // Everything else as the export without the fault wrote it.
      const adopted = (folder: string) =>
        [...readFileSync(path.join(dir, folder, "index.ts"), "utf8").matchAll(/adoptId: "([^"]+)"/g)].map(
          (m) => m[1],
        );
      expect(adopted("gone")).toEqual(adopted("whole").filter((id) => id !== gone));
      const prompts = (folder: string) => readdirSync(path.join(dir, folder, "prompts")).sort();
      expect(prompts("gone")).toEqual(prompts("whole").filter((f) => f !== "billing.md"));
      for (const f of prompts("gone")) {
        expect(readFileSync(path.join(out, "prompts", f), "utf8"), f).toBe(
          readFileSync(path.join(dir, "whole", "prompts", f), "utf8"),
        );
      }
    } finally {
      await new Promise((resolve) => proxy.close(resolve));
    }
  });
});
