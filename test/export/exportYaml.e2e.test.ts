/**
 * `voice-agent-export --language yaml` end to end: the command exports a workspace holding every
 * shape of agent (and random configurations) from the emulator as a Pulumi YAML program, and the
 * real Pulumi CLI (the YAML language host, the provider plugin installed from its tarball) runs
 * it as the TypeScript export's test does: the first `up` makes zero write requests, records every
 * exported object in the state, and leaves nothing to change for `preview` and `refresh`; then a
 * one-line prompt change deploys as the next version.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { VoiceAgentClient } from "../../src/client";
import { DEFAULT_API_KEY, type RunningEmulator, startEmulator } from "../../src/emulator";
import { type ExportPlan, planExport } from "../../src/export/plan";
import { readWorkspace } from "../../src/export/read";
import { clearRequestLog } from "../support/control";
import { expectAdopted, expectPromptEditsDeploy, writesTo } from "../support/exported";
import { pluginVersion } from "../support/pluginPrograms";
import { PulumiProject, packedPlugin, REPO_ROOT, tempDir } from "../support/pulumi";
import { type Shapes, seedRandomAgents, seedShapes } from "../support/workspace";

const RANDOM_AGENTS = 3;
const VERSION = pluginVersion();

let emu: RunningEmulator;
let client: VoiceAgentClient;
let shapes: Shapes;
let tarball: string;

beforeAll(async () => {
  tarball = packedPlugin();
  emu = await startEmulator({ port: 0, rateLimitPerMinute: 0 });
  client = new VoiceAgentClient({ baseUrl: emu.url, apiKey: DEFAULT_API_KEY, rateLimitPerMinute: 1_000_000 });
  shapes = await seedShapes(client, emu);
  const groups = (await client.analysis.list().toArray()).map((g) => g.id);
  await seedRandomAgents(client, 11, RANDOM_AGENTS, {
    knowledgeBaseIds: Object.values(shapes.knowledgeBases),
    analysisGroupIds: groups,
  });
}, 240_000);
afterAll(async () => {
  await emu?.close();
});

function run(file: string, args: string[], opts: { env?: Record<string, string> } = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(file, args, { env: { ...process.env, ...opts.env } }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

const writes = () => writesTo(emu);

test("export --language yaml, up: zero writes, every object in the state, no change; then a prompt edit deploys version n+1", async () => {
  const work = tempDir("export-yaml-");
  const out = path.join(work, "voice-agents");
  let p: PulumiProject | undefined;
  try {
    await clearRequestLog(emu);
    const exported = await run(
      process.execPath,
      [path.join(REPO_ROOT, "dist/export/cli.js"), "--out", out, "--language", "yaml"],
      { env: { VOICE_AGENT_BASE_URL: emu.url, VOICE_AGENT_API_KEY: DEFAULT_API_KEY } },
    );
    expect(exported.stderr).toBe("");
    expect(exported.code).toBe(0);
    expect(await writes()).toEqual([]);
    const program = readFileSync(path.join(out, "Pulumi.yaml"), "utf8");
    expect(program).toContain("runtime: yaml");
    expect(existsSync(path.join(out, "package.json"))).toBe(false);

    const plan: ExportPlan = planExport(await readWorkspace(client));
    p = await PulumiProject.fromDirectory(out, { stack: "dev", passphrase: "export-yaml-e2e" });
    await p.pulumi(["plugin", "install", "resource", "voice-agent", VERSION, "--file", tarball], {
      noStack: true,
    });
    await p.pulumi(["config", "set", "--secret", "voice-agent:apiKey", DEFAULT_API_KEY]);
    await clearRequestLog(emu);
    await p.upAndSettle({ quiet: true });
    expect(await writes()).toEqual([]);

    // Every exported object is in the state, adopted under its own id.
    await expectAdopted(p, plan, "voice-agent:index:");
    expect(plan.resources.filter((r) => r.type === "Agent")).toHaveLength(11 + RANDOM_AGENTS);
    // The plugin's provider keeps its key in the state as a secret (encrypted), never in plain text.
    expect(await p.exportState()).not.toContain(DEFAULT_API_KEY);

    // A one-line change to two exported prompts: each deploys as the next version, and goes live;
    // nothing else is written.
    await expectPromptEditsDeploy(p, emu, client, shapes);
  } finally {
    p?.cleanup();
    rmSync(work, { recursive: true, force: true });
  }
}, 900_000);
