/**
 * voice-agent-export end to end, as a user runs it: the command of the packed package exports a
 * workspace holding every shape of agent (and random configurations) from the emulator; the
 * project it writes type-checks, and the real Pulumi CLI's first `up` makes zero write requests,
 * records every exported object in the state, and leaves nothing to change for `preview` and
 * `refresh`. Then a one-line prompt change deploys as the next version, as usual.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { VoiceAgentClient } from "../../src/client";
import { DEFAULT_API_KEY, type RunningEmulator, startEmulator } from "../../src/emulator";
import { type ExportPlan, planExport } from "../../src/export/plan";
import { readWorkspace } from "../../src/export/read";
import { clearRequestLog } from "../support/control";
import { expectAdopted, expectPromptEditsDeploy, writesTo } from "../support/exported";
import { installedPackageDir, PulumiProject } from "../support/pulumi";
import { type Shapes, seedRandomAgents, seedShapes } from "../support/workspace";

/** Random configurations in the exported workspace, besides one agent of every shape. */
const RANDOM_AGENTS = 6;

let emu: RunningEmulator;
let client: VoiceAgentClient;
let shapes: Shapes;
let installed: string;

beforeAll(async () => {
  // The packed package's install first: when it has to be made (a minute, synchronously, when the
  // package changed) nothing else waits on this process, not the emulator's open connections.
  installed = installedPackageDir();
  emu = await startEmulator({ port: 0, rateLimitPerMinute: 0 });
  client = new VoiceAgentClient({ baseUrl: emu.url, apiKey: DEFAULT_API_KEY, rateLimitPerMinute: 1_000_000 });
  shapes = await seedShapes(client, emu);
  const groups = (await client.analysis.list().toArray()).map((g) => g.id);
  await seedRandomAgents(client, 7, RANDOM_AGENTS, {
    knowledgeBaseIds: Object.values(shapes.knowledgeBases),
    analysisGroupIds: groups,
  });
});
afterAll(async () => {
  await emu?.close();
});

function run(file: string, args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(file, args, { cwd: opts.cwd, env: { ...process.env, ...opts.env } }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

const writes = () => writesTo(emu);

test("export, install, up: zero writes, every object in the state, no change; then a prompt edit deploys version n+1", async () => {
  const work = mkdtempSync(path.join(installed, "export-"));
  const out = path.join(work, "voice-agents");
  let p: PulumiProject | undefined;
  try {
    // The packed package's command, as `npx voice-agent-export` runs it.
    await clearRequestLog(emu);
    const exported = await run(path.join(installed, "node_modules/.bin/voice-agent-export"), ["--out", out], {
      env: { VOICE_AGENT_BASE_URL: emu.url, VOICE_AGENT_API_KEY: DEFAULT_API_KEY },
    });
    expect(exported.stderr).toBe("");
    expect(exported.code).toBe(0);
    expect(await writes()).toEqual([]);

    // The program type-checks against the installed package's types.
    const tsc = await run(path.join(installed, "node_modules/.bin/tsc"), ["--noEmit", "-p", out]);
    expect(tsc.stdout + tsc.stderr).toBe("");
    expect(tsc.code).toBe(0);

    const plan: ExportPlan = planExport(await readWorkspace(client));
    p = await PulumiProject.fromDirectory(out, { stack: "dev", passphrase: "export-e2e", installed: true });
    await p.pulumi(["config", "set", "--secret", "voice-agent:apiKey", DEFAULT_API_KEY]);
    await clearRequestLog(emu);
    await p.upAndSettle({ quiet: true });
    expect(await writes()).toEqual([]);

    // Every exported object is in the state, adopted under its own id.
    await expectAdopted(p, plan, "voice-agent:");
    expect(plan.resources.filter((r) => r.type === "Agent")).toHaveLength(11 + RANDOM_AGENTS);
    expect(await p.exportState(true)).not.toContain(DEFAULT_API_KEY);

    // A one-line change to two exported prompts: each deploys as the next version, and goes live;
    // nothing else is written.
    await expectPromptEditsDeploy(p, emu, client, shapes);
  } finally {
    p?.cleanup();
    rmSync(work, { recursive: true, force: true });
  }
}, 600_000);
