/**
 * The starter template (templates/voice-agent-typescript) as a user starts from it: `pulumi new`
 * makes the project, where the packed package is installed; the program type-checks; then the
 * README's steps (`pulumi stack init`, the two config lines, `pulumi up`) deploy the agent live,
 * a prompt change deploys the next version, and destroy takes it off air.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { DEFAULT_API_KEY, type RunningEmulator, startEmulator } from "../../src/emulator";
import { installedPackageDir, PulumiProject, pulumiEnvironment, REPO_ROOT } from "../support/pulumi";

const TEMPLATE = path.join(REPO_ROOT, "templates/voice-agent-typescript");

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
});
afterAll(async () => {
  await emu?.close();
});

function run(file: string, args: string[], env: NodeJS.ProcessEnv = process.env) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(file, args, { env }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

async function api(pathname: string): Promise<any> {
  const res = await fetch(`${emu.url}${pathname}`, {
    headers: { authorization: `Bearer ${DEFAULT_API_KEY}` },
  });
  expect(res.status).toBe(200);
  return res.json();
}

test("pulumi new from the template, then the README's steps: live, a prompt change, destroy", async () => {
  const installed = installedPackageDir();
  const work = mkdtempSync(path.join(installed, "template-"));
  const generated = path.join(work, "my-voice-agents");
  let p: PulumiProject | undefined;
  try {
    mkdirSync(path.join(work, ".home"));
    const made = await run(
      "pulumi",
      [
        "new",
        TEMPLATE,
        "--dir",
        generated,
        "--name",
        "my-voice-agents",
        "--description",
        "Order support for the tea shop",
        "--generate-only",
        "--yes",
        "--non-interactive",
      ],
      pulumiEnvironment({ PULUMI_HOME: path.join(work, ".home") }),
    );
    expect(made.stderr).toBe("");
    expect(made.code).toBe(0);
    expect(readFileSync(path.join(generated, "Pulumi.yaml"), "utf8")).toMatch(
      /^name: my-voice-agents\ndescription: Order support for the tea shop\n/,
    );
    expect(JSON.parse(readFileSync(path.join(generated, "package.json"), "utf8")).name).toBe(
      "my-voice-agents",
    );
    const tsc = await run(path.join(installed, "node_modules/.bin/tsc"), ["--noEmit", "-p", generated]);
    expect(tsc.stdout + tsc.stderr).toBe("");

    // The README: `pulumi stack init dev`, the base URL, the secret key, `pulumi up`.
    p = await PulumiProject.fromDirectory(generated, {
      stack: "dev",
      passphrase: "template-e2e",
      installed: true,
      config: { "voice-agent:baseUrl": emu.url },
    });
    await p.pulumi(["config", "set", "--secret", "voice-agent:apiKey", DEFAULT_API_KEY]);
    await p.upAndSettle({ quiet: true });
    const out = await p.outputs();
    expect(out.liveVersion).toBe(0);
    const agent = await api(`/v1/agents/${out.agentId}?version=live`);
    expect(agent).toMatchObject({ name: "Order support", label: "1", is_live: true });
    expect(agent.system_prompt).toBe(readFileSync(path.join(TEMPLATE, "prompt.md"), "utf8"));

    const prompt = path.join(p.dir, "prompt.md");
    writeFileSync(prompt, `${readFileSync(prompt, "utf8")}Offer a callback when the line is noisy.\n`);
    await p.upAndSettle({ quiet: true });
    expect((await p.outputs()).liveVersion).toBe(1);

    await p.destroy();
    expect((await api(`/v1/agents/${out.agentId}`)).live_version).toBeNull();
  } finally {
    p?.cleanup();
    rmSync(work, { recursive: true, force: true });
  }
}, 600_000);
