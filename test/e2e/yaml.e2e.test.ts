/**
 * Pulumi YAML on the provider plugin, end to end through the real CLI and Pulumi's YAML language
 * host, the plugin installed from its tarball (`npm run plugin:pack`, then
 * `pulumi plugin install resource voice-agent <version> --file <it>`) into the test's PULUMI_HOME:
 * the example `examples/yaml-support-agent` (no `plugins:` section) goes up, previews and refreshes
 * with no change; a prompt change previews the AgentVersion changing (its one line: the version it
 * publishes; for the revert, the version that comes back) and goes live; a misspelt
 * property and a wrong type are refused at preview, naming them, with nothing written; a dashboard
 * edit is a conflict that says what to do; the key is never in the state; destroy.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { DEFAULT_API_KEY, startEmulator } from "../../src/emulator";
import { PulumiProject, REPO_ROOT, toolchainBin } from "../support/pulumi";

type Emulator = Awaited<ReturnType<typeof startEmulator>>;
let emu: Emulator;
let project: PulumiProject;

const EXAMPLE = path.join(REPO_ROOT, "examples/yaml-support-agent");
const VERSION = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")).version as string;

async function api(method: string, at: string, body?: unknown): Promise<any> {
  const res = await fetch(`${emu.url}${at}`, {
    method,
    headers: { authorization: `Bearer ${DEFAULT_API_KEY}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${at}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** The workspace's agents as the service lists them (every field, revisions included). */
const agents = async (): Promise<string> => JSON.stringify(await api("GET", "/v1/agents"));

/** The example's Pulumi.yaml with `edit` applied to its text. */
function program(edit: (text: string) => string = (t) => t): void {
  writeFileSync(
    path.join(project.dir, "Pulumi.yaml"),
    edit(readFileSync(path.join(EXAMPLE, "Pulumi.yaml"), "utf8")),
  );
}

beforeAll(async () => {
  if (!existsSync(path.join(toolchainBin(), "pulumi-language-yaml"))) {
    throw new Error(`${toolchainBin()} holds no pulumi-language-yaml: run \`npm run setup\``);
  }
  const tarball = execFileSync("bash", ["scripts/plugin/pack.sh"], { cwd: REPO_ROOT, encoding: "utf8" })
    .trim()
    .split(" ")[0] as string;
  emu = await startEmulator({ port: 0 });
  project = await PulumiProject.fromDirectory(EXAMPLE, {
    stack: "dev",
    passphrase: "yaml-example",
    config: { "voice-agent:baseUrl": emu.url },
    secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
  });
  await project.pulumi(
    ["plugin", "install", "resource", "voice-agent", VERSION, "--file", path.join(REPO_ROOT, tarball)],
    { noStack: true },
  );
}, 240_000);

afterAll(async () => {
  project?.cleanup();
  await emu?.close();
});

describe("a YAML program on the voice-agent plugin", () => {
  test("up, then preview and refresh with no change; the key is not in the state", async () => {
    await project.upAndSettle();
    const outputs = await project.outputs();
    const agent = await api("GET", `/v1/agents/${outputs.agentId}`);
    expect(agent.system_prompt).toContain("## Agent Purpose");
    expect(agent.live_version).toBe(outputs.liveVersion);
    expect(outputs.widgetKeyPrefix).toEqual(expect.any(String));
    const state = await project.exportState();
    expect(state).not.toContain(DEFAULT_API_KEY);
  }, 300_000);

  test("a prompt change previews the AgentVersion changing, and goes live", async () => {
    const before = await project.outputs();
    const prompt = path.join(project.dir, "prompt.md");
    const original = readFileSync(prompt, "utf8");
    writeFileSync(prompt, `${original}\nAlways offer a callback.\n`);
    const preview = await project.preview();
    // The AgentVersion says in one line which version it publishes (the plugin says it).
    const line = `AgentVersion live: publishes version ${before.liveVersion + 1} and puts it live`;
    expect(`${preview.stdout}${preview.stderr}`.split(line).length - 1, preview.stdout + preview.stderr).toBe(
      1,
    );
    // The agent's prompt changes, its version is updated in place (publishing), nothing else.
    expect(preview.stdout).toMatch(
      /~ voice-agent:index:Agent: \(update\)[\s\S]*::host\][\s\S]*Always offer a callback/,
    );
    expect(preview.stdout).toMatch(/~ voice-agent:index:AgentVersion: \(update\)[\s\S]*::live\]/);
    // The field named is the user's `agent` (not the content hash behind it).
    expect(preview.stdout).toMatch(/[-~] agent: /);
    expect(preview.stdout).not.toMatch(/replace|Widget/);
    await project.upAndSettle();
    const after = await project.outputs();
    expect(after.liveVersion).toBeGreaterThan(before.liveVersion);
    const agent = await api("GET", `/v1/agents/${after.agentId}`);
    expect(agent.live_version).toBe(after.liveVersion);
    expect(agent.system_prompt).toContain("Always offer a callback.");

    // Its revert: the line names the version that comes back; nothing is published.
    writeFileSync(prompt, original);
    const revert = await project.preview();
    const back = `AgentVersion live: a revert: brings back version ${before.liveVersion}, which holds this configuration; nothing published`;
    expect(`${revert.stdout}${revert.stderr}`.split(back).length - 1, revert.stdout + revert.stderr).toBe(1);
    expect(revert.stdout).not.toMatch(/publishes version/);
    writeFileSync(prompt, `${original}\nAlways offer a callback.\n`);
    await project.preview({ expectNoChanges: true });
  }, 300_000);

  test.each([
    ["a misspelt property", (t: string) => t.replace("greeting:", "greting:"), /greting/],
    [
      "a wrong type",
      (t: string) => t.replace("responseEagerness: 0.75", "responseEagerness: [fast]"),
      /responseEagerness/,
    ],
  ])(
    "%s is refused at preview, naming it, and nothing is written",
    async (_case, edit, named) => {
      const held = await agents();
      program(edit);
      const preview = await project.preview({ allowFailure: true });
      expect(preview.code).not.toBe(0);
      expect(`${preview.stdout}${preview.stderr}`).toMatch(named);
      expect(await agents()).toBe(held);
      program();
    },
    300_000,
  );

  test("a dashboard edit is a conflict that says what to do", async () => {
    const { agentId } = await project.outputs();
    const agent = await api("GET", `/v1/agents/${agentId}`);
    await api("PATCH", `/v1/agents/${agentId}`, {
      system_prompt: `${agent.system_prompt}\nEdited in the dashboard.`,
    });
    const prompt = path.join(project.dir, "prompt.md");
    writeFileSync(prompt, `${readFileSync(prompt, "utf8")}\nNever promise refunds.\n`);
    const up = await project.up({ allowFailure: true });
    expect(up.code).not.toBe(0);
    expect(`${up.stdout}${up.stderr}`).toMatch(
      /changed outside Pulumi.*Nothing was written.*pulumi refresh/s,
    );
    const now = await api("GET", `/v1/agents/${agentId}`);
    expect(now.system_prompt).toContain("Edited in the dashboard.");
    expect(now.system_prompt).not.toContain("Never promise refunds.");
  }, 300_000);

  test("destroy", async () => {
    await project.destroy();
    expect(JSON.parse(await project.exportState()).resources ?? []).toEqual([]);
  }, 300_000);
});
