/**
 * Pulumi YAML on the provider plugin, end to end through the real CLI and Pulumi's YAML language
 * host, the plugin installed from its tarball (`npm run plugin:pack`, then
 * `pulumi plugin install resource voice-agent <version> --file <it>`) into the test's PULUMI_HOME:
 * the example `examples/yaml-support-agent` (no `plugins:` section) goes up, previews and refreshes
 * with no change; a prompt change previews the AgentVersion changing (its one line: the version it
 * publishes) and goes live (voice-agent-diff's report names the change and the version it
 * publishes); a revert goes back to the earlier version with no publish (its line: the version that
 * comes back); a misspelt property and a wrong type are refused at preview, naming them, with
 * nothing written; a dashboard edit is drift for `voice-agent-diff --drift` and a conflict that says
 * what to do; the key is never in the state; the policy pack (installed from the package's tarball)
 * judges the plugin's resources at preview (an active widget listing no origin refused, naming it;
 * the example passing, with an advisory on its Agent); destroy.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { VoiceAgentClient } from "../../src/client";
import { DEFAULT_API_KEY } from "../../src/emulator";
import { findReusedVersions, parsePreview, renderReport } from "../../src/gitops/report";
import { clearRequestLog, requestLog } from "../support/control";
import {
  type Emulator,
  expectPromptChangeGoesLive,
  pluginStack,
  serviceApi,
} from "../support/pluginPrograms";
import { installedPolicyPack, type PulumiProject, REPO_ROOT, toolchainBin } from "../support/pulumi";

let emu: Emulator;
let project: PulumiProject;
/** The version the first `up` put live. */
let firstLive: number;

const EXAMPLE = path.join(REPO_ROOT, "examples/yaml-support-agent");

const api = serviceApi(() => emu.url);

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
  ({ emu, project } = await pluginStack(EXAMPLE, { passphrase: "yaml-example" }));
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
    firstLive = outputs.liveVersion;
    expect(outputs.widgetKeyPrefix).toEqual(expect.any(String));
    const state = await project.exportState();
    expect(state).not.toContain(DEFAULT_API_KEY);
  }, 300_000);

  test("the policy pack on the YAML stack: a plugin resource's violation refused at preview, the example passes", async () => {
    const pack = installedPolicyPack();
    const policyLines = (text: string) => text.split("\n").filter((l) => /\[(advisory|mandatory)\]/.test(l));
    await clearRequestLog(emu);
    // The example as it is passes: only an advisory (its greeting does not say calls are recorded),
    // on the plugin's Agent.
    const advisory = expect.stringMatching(
      /\[advisory\]\s+recording-disclosure\s+\(voice-agent:index:Agent: host\)/,
    );
    const passing = await project.pulumi(["preview", "--policy-pack", pack]);
    expect(passing.code).toBe(0);
    expect(policyLines(`${passing.stdout}${passing.stderr}`)).toEqual([advisory]);
    // An active widget that lists no origin: widget-origins (mandatory) fails the preview, naming
    // the plugin's Widget; nothing is written.
    program((t) => t.replace("      allowedOrigins:\n        - https://shop.example.com\n", ""));
    const refused = await project
      .pulumi(["preview", "--policy-pack", pack], { allowFailure: true })
      .finally(() => program());
    const text = `${refused.stdout}\n${refused.stderr}`;
    expect(refused.code).not.toBe(0);
    expect(policyLines(text).sort()).toEqual([
      advisory,
      expect.stringMatching(/\[mandatory\]\s+widget-origins\s+\(voice-agent:index:Widget: widget\)/),
    ]);
    expect(text).toContain('Widget "widget": allowedOrigins lists no origin');
    expect(
      (await requestLog(emu)).filter((e) => e.method !== "GET" && !e.path.startsWith("/_control")),
    ).toEqual([]);
  }, 300_000);

  test("a prompt change previews the AgentVersion changing, and goes live", async () => {
    const preview = await expectPromptChangeGoesLive(project, api, async (before, preview) => {
      // The AgentVersion says in one line which version it publishes (the plugin says it).
      const line = `AgentVersion live: publishes version ${before.liveVersion + 1} and puts it live`;
      const said = `${preview.stdout}${preview.stderr}`;
      expect(said.split(line).length - 1, said).toBe(1);
      // voice-agent-diff's pull-request report reads the plugin's types as the dynamic ones: the
      // prompt's change, and the version the AgentVersion publishes.
      const json = parsePreview(JSON.parse((await project.pulumi(["preview", "--json"])).stdout));
      const report = renderReport(json);
      expect(report).toMatch(
        /#### ~ Agent `host`: update[\s\S]*systemPrompt[\s\S]*\+Always offer a callback\./,
      );
      expect(report).toContain(
        `#### ~ AgentVersion \`live\`: update\n\nPublishes the agent's draft as version **${before.liveVersion + 1}** and puts it live`,
      );
    });
    // The AgentVersion's `agent` names the same Agent: it is not shown removed and added (nor is
    // the content hash behind it); the Agent's own change and the line above say what changes.
    expect(preview.stdout).not.toMatch(/^\s*[-+~] agent: /m);
    expect(preview.stdout).not.toMatch(/contentHash/);
  }, 300_000);

  test("a revert (the prompt back to its previous text) goes back with no publish", async () => {
    const before = await project.outputs();
    const published = async () =>
      (await api("GET", `/v1/agents/${before.agentId}/versions`)).data.filter(
        (v: { is_published: boolean }) => v.is_published,
      ).length;
    const versions = await published();
    writeFileSync(path.join(project.dir, "prompt.md"), readFileSync(path.join(EXAMPLE, "prompt.md"), "utf8"));
    // The pull-request report can tell which published version the revert brings back.
    const preview = parsePreview(JSON.parse((await project.pulumi(["preview", "--json"])).stdout));
    const client = new VoiceAgentClient({ baseUrl: emu.url, apiKey: DEFAULT_API_KEY });
    expect([...(await findReusedVersions(preview, client)).values()]).toEqual([firstLive]);
    expect(renderReport(preview, { reused: await findReusedVersions(preview, client) })).toContain(
      `Published version **${firstLive}** already holds exactly this configuration`,
    );
    // The AgentVersion's line names the version that comes back; nothing is published.
    const revert = await project.preview();
    const back = `AgentVersion live: a revert: brings back version ${firstLive}, which holds this configuration; nothing published`;
    const said = `${revert.stdout}${revert.stderr}`;
    expect(said.split(back).length - 1, said).toBe(1);
    expect(said).not.toMatch(/publishes version/);
    await project.upAndSettle();
    const after = await project.outputs();
    expect(after.liveVersion).toBe(firstLive);
    const agent = await api("GET", `/v1/agents/${before.agentId}`);
    expect(agent.live_version).toBe(firstLive);
    // The earlier version activated again, nothing published.
    expect(await published()).toBe(versions);
    const history = await api("GET", `/v1/agents/${before.agentId}/activations`);
    expect(history.data[0]).toMatchObject({
      action: "rollback",
      version: firstLive,
      previous_version: before.liveVersion,
    });
  }, 300_000);

  test("a rollback made in the dashboard shows at refresh once; up --refresh keeps it off air; then quiet", async () => {
    const { agentId, liveVersion } = await project.outputs();
    const client = new VoiceAgentClient({ baseUrl: emu.url, apiKey: DEFAULT_API_KEY });
    const other = (await api("GET", `/v1/agents/${agentId}/versions`)).data.find(
      (v: { is_published: boolean; version: number }) => v.is_published && v.version !== liveVersion,
    ).version as number;
    const row = await client.versions.activate(agentId, other);
    // Pulumi's own drift check sees production answer with another version, until an `up` records it.
    for (let i = 0; i < 2; i++) {
      const seen = await project.refresh({ expectNoChanges: true, allowFailure: true });
      expect(seen.code, seen.stdout).not.toBe(0);
    }
    // `up --refresh` records it (an AgentVersion update that writes nothing) and keeps it off air.
    const up = await project.pulumi(["up", "--yes", "--refresh"]);
    expect(up.stdout).toMatch(/AgentVersion live updated/);
    expect(up.stdout).toMatch(/1 updated/);
    // Its preview says so, as the TypeScript class says it.
    expect(`${up.stdout}${up.stderr}`).toContain(
      `version ${liveVersion} stays off air: replaced at ${row.at} by version ${other}`,
    );
    expect((await api("GET", `/v1/agents/${agentId}`)).live_version).toBe(other);
    await project.preview({ expectNoChanges: true });
    await project.refresh({ expectNoChanges: true });
    expect((await api("GET", `/v1/agents/${agentId}`)).live_version).toBe(other);
    // Back live by someone else: the record goes, nothing to do (the later cases start from it).
    await client.versions.activate(agentId, liveVersion);
    await project.refresh();
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
    // voice-agent-diff --drift on this YAML stack reports the edit, as the scheduled workflow runs it.
    const refresh = await project.pulumi(["refresh", "--preview-only", "--json"]);
    const file = path.join(project.dir, "refresh.json");
    writeFileSync(file, refresh.stdout);
    const drift = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile(
        process.execPath,
        [path.join(REPO_ROOT, "dist/gitops/cli.js"), "--drift", file],
        { env: { ...process.env, VOICE_AGENT_BASE_URL: emu.url, VOICE_AGENT_API_KEY: DEFAULT_API_KEY } },
        (err, stdout, stderr) => resolve({ code: err ? Number(err.code) : 0, stdout, stderr }),
      ),
    );
    expect(drift.stderr).toBe("");
    expect(drift.code).toBe(3);
    expect(drift.stdout).toMatch(/^\*\*1 resource changed outside Pulumi\*\*/m);
    expect(drift.stdout).toMatch(/^#### ~ Agent `host`: changed outside Pulumi\n/m);
    expect(drift.stdout).toContain("+Edited in the dashboard.");
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
