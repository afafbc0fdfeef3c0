/**
 * A stack deployed with the released 0.1.0 (its packed tarball, kept in test/fixtures) keeps working
 * after the package is upgraded to this build: its state (exported here from 0.1.0) loads, and
 * preview, refresh and up run against it with no change to make and no perpetual diff; a change then
 * updates the AgentVersion that 0.1.0 created by replacement in place.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { DEFAULT_API_KEY, type RunningEmulator, startEmulator } from "../../src/emulator";
import { installTarball, PulumiProject, packTarball, REPO_ROOT, tempDir } from "../support/pulumi";

const RELEASED = path.join(REPO_ROOT, "test/fixtures/pulumi-voice-agent-0.1.0.tgz");

const program = (prompt: string) => `
import * as va from "pulumi-voice-agent";
const kb = new va.KnowledgeBase("faq", {
  name: "Upgrade FAQ",
  documents: [{ name: "returns", text: "Returns are free within 30 days." }],
});
const group = new va.AnalysisGroup("quality", {
  name: "Upgrade quality",
  items: [{ name: "Resolved", description: "Was the issue resolved?", type: "boolean" }],
});
const agent = new va.Agent("support", {
  name: "Upgrade agent",
  systemPrompt: ${JSON.stringify(prompt)},
  language: { default: "en-IN", additional: ["hi-IN"] },
  voice: { provider: "sarvam", voiceId: "meera" },
  variables: [{ key: "order_id", defaultValue: "none" }],
  knowledgeBaseIds: [kb.knowledgeBaseId],
  analysisGroupIds: [group.groupId],
});
const version = new va.AgentVersion("support-live", { agent, label: "upgrade" });
new va.Widget("support-widget", { agentId: agent.agentId, name: "Upgrade widget", allowedOrigins: ["https://example.com"] });
export const live = version.version;
`;

let emu: RunningEmulator;
let work: string;

beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
  work = tempDir("upgrade-");
  installTarball(work, RELEASED);
}, 300_000);

afterAll(async () => {
  await emu?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("upgrade from 0.1.0", () => {
  test("a 0.1.0 state loads, and preview, refresh and up run against it", async () => {
    const project = await PulumiProject.create({
      program: program("## Agent Purpose\nHelp customers with returns."),
      base: work,
      config: { "voice-agent:baseUrl": emu.url },
      secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
    });
    await project.up();
    // A change under 0.1.0, which replaces the AgentVersion: its id then names version 1.
    project.setProgram(program("## Agent Purpose\nHelp customers with returns, politely."));
    await project.up();
    const exported = JSON.parse((await project.pulumi(["stack", "export"])).stdout);
    const versionState = exported.deployment.resources.find((r: { type: string }) =>
      r.type.endsWith("AgentVersion"),
    );
    expect(versionState.id).toMatch(/\/1$/);
    const agentState = exported.deployment.resources.find((r: { type: string }) => r.type.endsWith("Agent"));
    expect(agentState.outputs.contentHash).toMatch(/^sha256:/);

    // Upgrade the package in place: the state above now meets this build.
    const tarball = packTarball(work);
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", `./${tarball}`], {
      cwd: work,
      stdio: "ignore",
    });
    const installed = JSON.parse(
      readFileSync(path.join(work, "node_modules/pulumi-voice-agent/package.json"), "utf8"),
    );
    expect(installed.version).not.toBe("0.1.0");
    // The client's documented import works from an installed package (docs/client.md).
    const imported = execFileSync(
      process.execPath,
      ["-e", "const c = require('pulumi-voice-agent/client'); console.log(typeof c.VoiceAgentClient)"],
      { cwd: work, encoding: "utf8" },
    );
    expect(imported.trim()).toBe("function");
    expect(installed.version).toBe(
      JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")).version,
    );

    await project.preview({ expectNoChanges: true });
    // 0.1.0 kept the outcome at the top level of the AgentVersion's outputs; the refresh rewrites
    // it under `__outcome`, showing no change.
    const outcomeOf = async () => {
      const state = JSON.parse((await project.pulumi(["stack", "export"])).stdout).deployment.resources.find(
        (r: { type: string }) => r.type.endsWith("AgentVersion"),
      ).outputs;
      return { top: state.origin, outcome: state.__outcome };
    };
    expect(await outcomeOf()).toEqual({ top: "published", outcome: undefined });
    await project.refresh({ expectNoChanges: true });
    expect(await outcomeOf()).toEqual({
      top: undefined,
      outcome: expect.objectContaining({ origin: "published", activation: "activate" }),
    });
    await project.up();
    await project.preview({ expectNoChanges: true });

    // And the everyday change still publishes the next version, now in place: the AgentVersion
    // keeps the id 0.1.0 gave it, and the refresh below reads the version its state records.
    project.setProgram(program("## Agent Purpose\nHelp customers with returns and exchanges."));
    const changed = await project.up();
    expect(changed.stdout).not.toMatch(/replace/);
    expect((await project.outputs()).live).toBe(2);
    await project.preview({ expectNoChanges: true });
    await project.refresh({ expectNoChanges: true });
  }, 600_000);
});
