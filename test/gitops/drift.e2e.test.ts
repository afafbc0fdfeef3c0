/**
 * The drift alarm through the real Pulumi CLI against the emulator: `pulumi refresh --preview-only
 * --json` piped into `voice-agent-diff --drift`, as the scheduled workflow of examples/gitops runs
 * it. A clean stack reports no drift (exit 0); a dashboard rollback names the deploy-history row
 * that did it; dashboard edits show each field old → new (the prompt as a line diff) and a
 * resource deleted outside Pulumi; both exit 3. It only reads the service, and never prints the
 * API key.
 */
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { closeDispatchers, VoiceAgentClient } from "../../src/client";
import { DEFAULT_API_KEY, type RunningEmulator, startEmulator } from "../../src/emulator";
import { clearRequestLog, requestLog } from "../support/control";
import { PulumiProject, REPO_ROOT } from "../support/pulumi";
import { section } from "./markdown";

const CLI = path.join(REPO_ROOT, "dist/gitops/cli.js");

const prompt = (purpose: string) =>
  `## Agent Purpose\n${purpose}\n\n## Call Flow\nGreet the caller.\nAnswer the question.\nThen use <end_call>.\n`;

const program = (purpose: string) => `
import * as va from "pulumi-voice-agent";
const agent = new va.Agent("support", {
  name: "Drift support",
  systemPrompt: ${JSON.stringify(prompt(purpose))},
  builtinTools: { endCall: { enabled: true } },
});
const live = new va.AgentVersion("support-live", { agent, label: "release" });
const widget = new va.Widget("widget", {
  agentId: agent.agentId,
  name: "Drift widget",
  theme: { title: "Ours" },
});
const group = new va.AnalysisGroup("quality", {
  name: "Drift quality",
  items: [{ name: "Resolved", type: "boolean", description: "Was it resolved?" }],
});
export const agentId = agent.agentId;
export const version = live.version;
export const publicKey = widget.publicKey;
export const groupId = group.groupId;
`;

let emu: RunningEmulator;
let client: VoiceAgentClient;
beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
  client = new VoiceAgentClient({ baseUrl: emu.url, apiKey: DEFAULT_API_KEY });
});
afterAll(async () => {
  await closeDispatchers();
  await emu?.close();
});

/**
 * `pulumi refresh --preview-only --json` into a file, then `voice-agent-diff --drift` on it, as CI
 * runs them (launched without blocking: the emulator answers from this process).
 */
async function driftCheck(p: PulumiProject) {
  const refresh = await p.pulumi(["refresh", "--preview-only", "--json"]);
  const file = path.join(p.dir, "refresh.json");
  writeFileSync(file, refresh.stdout);
  await clearRequestLog(emu);
  const env = { ...process.env, VOICE_AGENT_BASE_URL: emu.url, VOICE_AGENT_API_KEY: DEFAULT_API_KEY };
  const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [CLI, "--drift", file], { env }, (err, stdout, stderr) => {
      resolve({ code: err ? Number(err.code) : 0, stdout, stderr });
    });
  });
  expect(r.stderr).toBe("");
  expect(r.stdout + r.stderr).not.toContain(DEFAULT_API_KEY);
  // It only reads: the stack is untouched (no CLI writes it) and so is the service.
  const log = await requestLog(emu);
  expect(log.length).toBeGreaterThan(0);
  expect(log.filter((e) => e.method !== "GET")).toEqual([]);
  return { code: r.code, report: r.stdout, refresh: JSON.parse(refresh.stdout) };
}

test("voice-agent-diff --drift: nothing after a clean up, then a dashboard rollback, then dashboard edits", async () => {
  const p = await PulumiProject.create({
    program: program("Help customers track orders."),
    name: "drift",
    config: { "voice-agent:baseUrl": emu.url },
    secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
  });
  await p.up();
  p.setProgram(program("Help customers track and return orders."));
  await p.up();
  const { agentId, version, publicKey, groupId } = await p.outputs();
  expect(version).toBe(1);

  // (a) After a clean up: no drift, exit 0, as Pulumi's own count says.
  const clean = await driftCheck(p);
  expect(clean.code).toBe(0);
  expect(clean.report).toBe(
    "### Voice agents: drift of stack `test`\n\nNo drift: the service holds what the stack recorded " +
      "(4 voice-agent resources read). Pulumi's refresh preview counts 6 unchanged.\n",
  );

  // (b) A rollback in the dashboard: version 0 put back live outside Pulumi.
  const row = await client.versions.activate(agentId, 0);
  expect(row.action).toBe("rollback");
  const rollback = await driftCheck(p);
  expect(rollback.code).toBe(3);
  const versionSection = section(rollback.report, "support-live");
  expect(versionSection).toMatch(
    /^#### ~ AgentVersion `support-live`: live version changed outside Pulumi\n/,
  );
  expect(versionSection).toContain(
    `Version **1**, which this stack put live, is no longer live: version **0** is. ` +
      `It was taken off air by the deploy-history row of ${row.at}: \`rollback\` to version 0.`,
  );
  expect(versionSection).toContain(`| ${row.at} | \`rollback\` | 0 | 1 |`);
  // The program still asks for version 1 live, and no deploy puts it back: said, not shown as an argument.
  expect(versionSection).toContain("No deploy puts it back live: fix forward");
  expect(versionSection).not.toMatch(/\| `live` \|/);
  // A rollback is not drift of the agent's configuration: the agent still reads as the version the
  // stack wrote (the AgentVersion's section says it is off air), so nothing reads as a prompt edit.
  expect(rollback.report).not.toMatch(/^#### ~ Agent `support`/m);
  expect(rollback.report).toMatch(/^\*\*1 resource changed outside Pulumi\*\* \(4 read\)/m);
  expect(rollback.report).not.toContain("Widget");

  // (c) Back to version 1 (as the stack recorded it), then dashboard edits: the agent's name and
  // prompt, the widget's title, and the analysis group deleted.
  await client.versions.activate(agentId, 1);
  await client.agents.patch(agentId, {
    name: "Drift support (dashboard)",
    system_prompt: prompt("Help customers track orders, returns and refunds."),
  });
  await client.widget.patch(agentId, { theme: { title: "Dashboard" } });
  await client.analysis.delete(groupId);
  const edits = await driftCheck(p);
  expect(edits.code).toBe(3);
  expect(edits.report).toMatch(/^\*\*3 resources changed outside Pulumi\*\* \(4 read\)/m);
  const agent = section(edits.report, "support");
  expect(agent).toMatch(/^#### ~ Agent `support`: changed outside Pulumi\n/);
  expect(agent).toContain("In the dashboard: https://");
  expect(agent).toContain('| `name` | `"Drift support"` | `"Drift support (dashboard)"` |');
  expect(agent).toContain("| `systemPrompt` | *(8 lines)* | *(8 lines)* |");
  expect(agent).toContain(
    "-Help customers track and return orders.\n+Help customers track orders, returns and refunds.",
  );
  const widget = section(edits.report, "widget");
  expect(widget).toMatch(/^#### ~ Widget `widget`: changed outside Pulumi\n/);
  expect(widget).toContain('| `theme.title` | `"Ours"` | `"Dashboard"` |');
  expect(widget).not.toContain(publicKey);
  expect(edits.report).toContain("#### - AnalysisGroup `quality`: deleted outside Pulumi");
  // The version the stack put live still is: no AgentVersion section.
  expect(edits.report).not.toContain("AgentVersion");
  expect(edits.report).not.toContain(publicKey);
}, 300_000);
