/**
 * `pulumi import` of the provider plugin's five kinds, end to end through the real CLI, the plugin
 * installed from its tarball: objects made directly in the service (as in the dashboard) are
 * adopted with no write to it, and the code the import generates, pasted into the program, previews
 * with no change (`--expect-no-changes`): in Pulumi YAML (the YAML language host; both lanes), in
 * TypeScript under Pulumi's stock Node.js host and in Go under Pulumi's stock Go host (the stock
 * lane; the Go code, on the SDK of sdk/go, must compile). An AgentVersion's agent is generated as
 * `agentId`, a reference to the Agent imported alongside (`agentId: ${host.id}`), and the pasted
 * version follows that Agent with no change (docs/plugin.md). The knowledge base holds a url and a
 * text document: the text, which the service never reads back, is declared by name (`heldText`).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { VoiceAgentClient } from "../../src/client";
import { DEFAULT_API_KEY, startEmulator } from "../../src/emulator";
import { clearRequestLog, requestLog } from "../support/control";
import { pluginVersion, writeGoModule } from "../support/pluginPrograms";
import {
  installedPackageDir,
  PulumiProject,
  packedPlugin,
  pulumiHost,
  REPO_ROOT,
  tempDir,
} from "../support/pulumi";

type Emulator = Awaited<ReturnType<typeof startEmulator>>;
let emu: Emulator;
let tarball: string;
const VERSION = pluginVersion();

/** Go, for the Go program (in CI it must be there). */
const hasGo = spawnSync("go", ["version"]).status === 0;
if (!hasGo && process.env.CI === "true") {
  throw new Error("test/e2e/pluginImport.e2e.test.ts: `go` not found, and CI must run the Go import");
}
if (!hasGo) console.log("test/e2e/pluginImport.e2e.test.ts: the Go import did not run: `go` not found");

/** The objects made in the service, by the name each is imported under. */
interface Made {
  faq: string;
  outcome: string;
  host: string;
  version: number;
}

/** An agent with its knowledge base, analysis group and widget, published and live: made as a dashboard user would. */
async function madeInTheService(): Promise<Made> {
  emu.reset(); // a workspace of its own for each test (names are unique in it)
  const client = new VoiceAgentClient({ baseUrl: emu.url, apiKey: DEFAULT_API_KEY });
  const kb = await client.knowledgeBases.create({
    name: "Store FAQ",
    description: "Answers for callers",
    documents: [
      { name: "returns", url: "https://shop.example.com/returns" },
      { name: "hours", text: "Open 9 to 5, Monday to Friday." },
    ],
  });
  const group = await client.analysis.create({
    name: "Outcome",
    description: "How the call ended",
    enabled: true,
    items: [{ name: "resolved", type: "boolean", description: "Was it resolved?", enabled: true }],
  });
  const agent = await client.agents.create({
    name: "Dashboard support",
    system_prompt: "You are Acme's support agent.\nBe brief.",
    greeting: { message: "Hello from Acme!" },
    model: { model: "gpt-4o", temperature: 0.3 },
    knowledge_base_ids: [kb.id],
    analysis_group_ids: [group.id],
  });
  await client.widget.patch(agent.id, {
    allowed_origins: ["https://shop.example.com"],
    theme: { title: "Need help?" },
  });
  await client.versions.publish(agent.id, agent.version, { label: "first" });
  await client.versions.activate(agent.id, agent.version);
  return { faq: kb.id, outcome: group.id, host: agent.id, version: agent.version };
}

/** The `pulumi import --file` document for the five objects. */
function importFile(m: Made): string {
  const t = (kind: string) => `voice-agent:index:${kind}`;
  return JSON.stringify({
    resources: [
      { type: t("KnowledgeBase"), name: "faq", id: m.faq },
      { type: t("AnalysisGroup"), name: "outcome", id: m.outcome },
      { type: t("Agent"), name: "host", id: m.host },
      { type: t("Widget"), name: "widget", id: m.host },
      { type: t("AgentVersion"), name: "live", id: `${m.host}/${m.version}` },
    ],
  });
}

beforeAll(async () => {
  tarball = packedPlugin();
  emu = await startEmulator({ port: 0 });
}, 240_000);

afterAll(async () => {
  await emu?.close();
});

/** A project on the plugin (installed from its tarball) and the emulator, with `Pulumi.yaml`'s text. */
async function projectOf(pulumiYaml: string, base?: string): Promise<PulumiProject> {
  const source = tempDir("import-", base);
  writeFileSync(path.join(source, "Pulumi.yaml"), pulumiYaml);
  try {
    const project = await PulumiProject.fromDirectory(source, {
      stack: "dev",
      passphrase: "import",
      config: { "voice-agent:baseUrl": emu.url },
      secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
      ...(base ? { base } : {}),
    });
    await project.pulumi(["plugin", "install", "resource", "voice-agent", VERSION, "--file", tarball], {
      noStack: true,
    });
    return project;
  } finally {
    rmSync(source, { recursive: true, force: true });
  }
}

/** `pulumi import --file` of the five objects, asserting the service saw no write. */
async function imported(project: PulumiProject, made: Made, args: string[]): Promise<void> {
  writeFileSync(path.join(project.dir, "import.json"), importFile(made));
  await clearRequestLog(emu);
  const run = await project.pulumi(["import", "--file", "import.json", "--yes", ...args]);
  // No warning (an imported input that fails to validate would say so).
  expect(`${run.stdout}${run.stderr}`).not.toMatch(/warning|failed to validate/i);
  expect((await requestLog(emu)).filter((e) => e.method !== "GET")).toEqual([]);
}

/** `preview` and `refresh` with no change, and the service saw no write. */
async function settled(project: PulumiProject): Promise<void> {
  await clearRequestLog(emu);
  await project.preview({ expectNoChanges: true });
  await project.refresh({ expectNoChanges: true });
  expect((await requestLog(emu)).filter((e) => e.method !== "GET")).toEqual([]);
}

describe("pulumi import of the plugin's resources", () => {
  test("YAML: the five kinds adopted with no write; the generated code pasted previews no change", async () => {
    const made = await madeInTheService();
    const project = await projectOf("name: imported\nruntime: yaml\n");
    try {
      await imported(project, made, ["--out", "generated.yaml"]);
      const generated = readFileSync(path.join(project.dir, "generated.yaml"), "utf8");
      // Every field the service holds that a new object would not, in the program's names; the
      // objects imported together referenced by their ids.
      expect(generated).toContain("systemPrompt:");
      expect(generated).toMatch(/knowledgeBaseIds:\s*\n\s*- \$\{faq\.id\}/);
      expect(generated).toMatch(/analysisGroupIds:\s*\n\s*- \$\{outcome\.id\}/);
      expect(generated).toMatch(/agentId: \$\{host\.id\}/);
      // The AgentVersion names the Agent imported alongside by its id (the live version holding
      // the agent's configuration: not pinned).
      expect(generated).toMatch(
        /live:\n\s+type: voice-agent:(index:)?AgentVersion\n\s+properties:\n\s+agentId: \$\{host\.id\}\n\s+options:/,
      );
      // The documents: the url as it is, the text (never read back) by name.
      expect(generated).toMatch(/- name: returns\n\s+url: https:\/\/shop\.example\.com\/returns\n/);
      expect(generated).toMatch(/- heldText: true\n\s+name: hours\n/);
      // Nothing the service defaults (a new agent's transcriber, voice, call limits).
      expect(generated).not.toMatch(/transcriber:|maxDurationMinutes/);
      // Pasted into the program as it is.
      writeFileSync(path.join(project.dir, "Pulumi.yaml"), `name: imported\nruntime: yaml\n${generated}`);
      await settled(project);
      // The AgentVersion named by id follows its Agent: a prompt change previews it changing.
      writeFileSync(
        path.join(project.dir, "Pulumi.yaml"),
        `name: imported\nruntime: yaml\n${generated.replace("Be brief.", "Be brief and kind.")}`,
      );
      const preview = await project.pulumi(["preview", "--json"]);
      const steps = (JSON.parse(preview.stdout).steps ?? []) as { op: string; urn: string }[];
      expect(steps.filter((x) => x.op !== "same").map((x) => `${x.op} ${x.urn.split("::").pop()}`)).toEqual([
        "update host",
        "update live",
      ]);
    } finally {
      project.cleanup();
    }
  }, 600_000);

  // Pulumi's stock Node.js host generates the TypeScript (GenerateProgram) and the SDK the program
  // imports (`pulumi package gen-sdk`, compiled with tsc and linked into node_modules): the stock lane.
  test.runIf(pulumiHost() === "stock")(
    "TypeScript (stock host): the five kinds adopted with no write; the generated code pasted previews no change",
    async () => {
      const made = await madeInTheService();
      const installed = installedPackageDir();
      const project = await projectOf("name: imported\nruntime: nodejs\nmain: index.ts\n", installed);
      try {
        writeFileSync(path.join(project.dir, "index.ts"), "export {};\n");
        await imported(project, made, ["--out", "generated.ts"]);
        const generated = readFileSync(path.join(project.dir, "generated.ts"), "utf8");
        expect(generated).toContain("systemPrompt: `You are Acme's support agent.\nBe brief.`");
        expect(generated).toMatch(/knowledgeBaseIds: \[faq\.id\]/);
        expect(generated).toMatch(/agentId: host\.id/);
        expect(generated).toMatch(/new voice_agent\.AgentVersion\("live", \{\s*agentId: host\.id,?\s*\}/);
        expect(generated).toMatch(
          /\{\s*name: "returns",\s*url: "https:\/\/shop\.example\.com\/returns",?\s*\}/,
        );
        expect(generated).toMatch(/\{\s*heldText: true,\s*name: "hours",?\s*\}/);
        expect(generated).not.toMatch(/transcriber|maxDurationMinutes/);

        // The SDK the generated code imports, as `pulumi package gen-sdk` writes it, compiled.
        await project.pulumi(
          ["package", "gen-sdk", path.join(REPO_ROOT, "schema.json"), "--language", "nodejs", "--out", "sdk"],
          { noStack: true },
        );
        const sdk = path.join(project.dir, "sdk/nodejs");
        execFileSync(process.execPath, [path.join(REPO_ROOT, "node_modules/typescript/bin/tsc"), "-p", sdk]);
        const pkg = readFileSync(path.join(sdk, "package.json"), "utf8").replace("${VERSION}", VERSION);
        writeFileSync(path.join(sdk, "bin/package.json"), pkg);
        const linked = path.join(project.dir, "node_modules/@pulumi-voice-agent");
        mkdirSync(linked, { recursive: true });
        symlinkSync(path.join(sdk, "bin"), path.join(linked, "voice-agent"));

        // Pasted into the program as it is.
        writeFileSync(path.join(project.dir, "index.ts"), generated);
        await settled(project);
      } finally {
        project.cleanup();
      }
    },
    600_000,
  );

  // Pulumi's stock Go host generates the Go (GenerateProgram) on the SDK of sdk/go: pasted as it is
  // into main.go, it compiles (a knowledge base's documents typed, `KnowledgeBaseDocumentArray`) and
  // previews with no change. Built once (`go build`, as go.e2e.test.ts builds: the Go build cache
  // serves both) and run as a binary (the host's `binary` option).
  test.runIf(pulumiHost() === "stock" && hasGo)(
    "Go (stock host): the five kinds adopted with no write; the generated code compiles and previews no change",
    async () => {
      const made = await madeInTheService();
      const project = await projectOf(
        "name: imported\nruntime:\n  name: go\n  options:\n    binary: ./imported\n",
      );
      try {
        writeGoModule(project.dir, "imported", VERSION);
        await imported(project, made, ["--out", "main.go"]);
        const generated = readFileSync(path.join(project.dir, "main.go"), "utf8");
        expect(generated).not.toContain("pulumi.Any");
        expect(generated).toContain("voiceagent.KnowledgeBaseDocumentArray{");
        expect(generated).toMatch(
          /&voiceagent\.KnowledgeBaseDocumentArgs\{\s*Name:\s+pulumi\.String\("returns"\),\s*Url:\s+pulumi\.String\("https:\/\/shop\.example\.com\/returns"\),\s*\}/,
        );
        expect(generated).toMatch(
          /&voiceagent\.KnowledgeBaseDocumentArgs\{\s*HeldText:\s+pulumi\.Bool\(true\),\s*Name:\s+pulumi\.String\("hours"\),\s*\}/,
        );
        expect(generated).toMatch(/KnowledgeBaseIds: pulumi\.StringArray\{\s*faq\.ID\(\)[\w.()]*,\s*\}/);
        expect(generated).toMatch(
          /voiceagent\.NewAgentVersion\(ctx, "live", &voiceagent\.AgentVersionArgs\{\s*AgentId: host\.ID\(\)[\w.()]*,\s*\}/,
        );
        expect(generated).not.toMatch(/Transcriber|MaxDurationMinutes/);

        const t0 = performance.now();
        execFileSync("go", ["build", "-trimpath", "-o", "imported", "."], {
          cwd: project.dir,
          env: { ...process.env, CGO_ENABLED: "0", GOFLAGS: "-mod=mod -buildvcs=false" },
          stdio: "pipe",
        });
        console.log(`pluginImport (Go): go build in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

        await settled(project);
        // And `up` has nothing to do: no step, no write.
        await project.pulumi(["up", "--yes", "--skip-preview", "--expect-no-changes"]);
        expect((await requestLog(emu)).filter((e) => e.method !== "GET")).toEqual([]);
      } finally {
        project.cleanup();
      }
    },
    900_000,
  );
});
