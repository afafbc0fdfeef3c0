/**
 * The pull-request report, fed with `pulumi preview --json` documents recorded from real runs of the
 * examples (test/e2e/examples.e2e.test.ts with RECORD_PREVIEWS=1).
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, test } from "vitest";
import type { VoiceAgentClient } from "../../src/client";
import { findReusedVersions, type PreviewJson, renderReport } from "../../src/gitops/report";
import { toWire } from "../../src/provider/normalize";
import { declaredConfig } from "../../src/resources/agent/projection";
import { REPO_ROOT } from "../support/pulumi";

const fixture = (name: string): PreviewJson =>
  JSON.parse(readFileSync(path.join(REPO_ROOT, "test/fixtures/previews", `${name}.json`), "utf8"));

describe("voice-agent-diff report", () => {
  test("creation: every resource to create, with the declared fields", () => {
    const md = renderReport(fixture("support-agent-create"));
    expect(md).toMatch(/\*\*\d+ to create\*\*/);
    expect(md).toContain("#### + Agent `support`: create");
    expect(md).toContain("#### + AgentVersion `support-live`: create");
    expect(md).toMatch(/\| `voice\.voiceId` \| +\| `"meera"` \|/);
    expect(md).toMatch(/\| `numbers\.inboundPhone` \| +\| `"\+918065550101"` \|/);
    expect(md).toMatch(/Publishes the agent's draft as version \*\*0\*\* and puts it live/);
  });

  test("a prompt change: the prompt's line diff and the version that will go live", () => {
    const md = renderReport(fixture("support-agent-prompt-change"));
    expect(md).toContain("#### ~ Agent `support`: update");
    expect(md).toContain("| `systemPrompt` |");
    expect(md).toContain("```diff");
    expect(md).toMatch(/^-.*arrange returns\.$/m);
    expect(md).toMatch(/^\+.*arrange returns and exchanges\.$/m);
    expect(md).toMatch(
      /#### \+- AgentVersion `support-live`: replace \(because of the agent's configuration\)/,
    );
    expect(md).toContain(
      "Publishes the agent's draft as version **1** and puts it live (replacing live version 0)",
    );
    expect(md).not.toContain("`agentId`");
  });

  test("a revert names the version it can bring back when the service is asked", () => {
    const preview = fixture("rollback-revert");
    const urn = preview.steps!.find((s) => s.urn.endsWith("::reservations-live"))!.urn;
    const md = renderReport(preview, { reused: new Map([[urn, 0]]) });
    expect(md).toContain("Published version **0** already holds exactly this configuration");
    expect(md).toContain("(a rollback)");
    expect(md).toMatch(/^-Ask about dietary needs\.$/m);
  });

  test("a revert names the version the stack recorded, without asking the service", () => {
    const md = renderReport(fixture("rollback-revert"));
    expect(md).toContain(
      "A revert: this stack published version **0** with this configuration, so it is put back live",
    );
    expect(md).toContain("(a rollback)");
  });

  test("--resolve reads the recorded version and the versions published since, not the whole history", async () => {
    const preview = fixture("rollback-revert");
    const step = preview.steps!.find((s) => s.urn.endsWith("::reservations-live"))!;
    const agentInputs = preview.steps!.find((s) => s.urn.endsWith("::reservations"))!.newState!.inputs!;
    /** A service holding versions 0..9 (2..9 published in the dashboard) and the open draft 10. */
    const service = (holding: number) => {
      const reads: number[] = [];
      const client = {
        versions: {
          async *list() {
            for (let v = 10; v >= 0; v--) yield { version: v, is_published: v < 10 };
          },
        },
        agents: {
          async get(_id: string, { version }: { version: number }) {
            reads.push(version);
            const config =
              version === holding ? agentInputs : { ...agentInputs, systemPrompt: `v${version}` };
            return { ...(toWire(declaredConfig(config)) as object), version, is_published: true };
          },
        },
      };
      return { reads, client: client as unknown as VoiceAgentClient };
    };
    // The stack recorded version 0 for this configuration: one read.
    let s0 = service(0);
    expect((await findReusedVersions(preview, s0.client)).get(step.urn)).toBe(0);
    expect(s0.reads).toEqual([0]);
    // Had version 0 not held it (a stale record), version 5 (published in the dashboard) is found:
    // after the recorded one, the versions above the newest recorded (1), newest first; never 1.
    s0 = service(5);
    expect((await findReusedVersions(preview, s0.client)).get(step.urn)).toBe(5);
    expect(s0.reads).toEqual([0, 9, 8, 7, 6, 5]);
  });

  test("a new configuration is not mistaken for a revert", () => {
    const md = renderReport(fixture("support-agent-prompt-change"));
    expect(md).not.toContain("A revert");
    expect(md).toContain("Publishes the agent's draft as version **1**");
  });

  test("an in-place update of the version: a label", () => {
    const md = renderReport(fixture("rollback-label"));
    expect(md).toContain("#### ~ AgentVersion `reservations-live`: update");
    expect(md).toContain("relabels version 0 to `2026.11.2`");
    expect(md).not.toContain("Agent `reservations`");
  });

  test("no change says so in one line", () => {
    expect(renderReport(fixture("support-agent-no-change"))).toBe(
      "### Voice agents: preview\n\nNo changes: the service already matches this commit.\n",
    );
  });

  test("deletion: what goes, and that history stays", () => {
    const md = renderReport(fixture("rollback-delete"));
    expect(md).toContain("#### - Agent `reservations`: delete");
    expect(md).toContain("#### - AgentVersion `reservations-live`: delete");
    expect(md).toContain("stays published in the service's history");
  });

  test("warnings and errors of the preview are listed", () => {
    const preview = fixture("rollback-label");
    preview.diagnostics = [
      { severity: "warning", message: "voice 'x' will be withdrawn\n", urn: "urn:a::b" },
    ];
    expect(renderReport(preview)).toContain("- **warning** `b`: voice 'x' will be withdrawn");
  });

  test("the command reads a file or stdin and refuses what is not preview JSON", () => {
    const cli = path.join(REPO_ROOT, "dist/gitops/cli.js");
    const file = path.join(REPO_ROOT, "test/fixtures/previews/support-agent-no-change.json");
    expect(execFileSync(process.execPath, [cli, file], { encoding: "utf8" })).toContain("No changes");
    expect(
      execFileSync(process.execPath, [cli, "--title", "prod"], {
        input: readFileSync(file),
        encoding: "utf8",
      }),
    ).toContain("### prod");
    expect(() => execFileSync(process.execPath, [cli], { input: "not json", stdio: "pipe" })).toThrow(
      /not the JSON/,
    );
  });
});

describe("voice-agent-diff report: defects fixed", () => {
  /**
   * A stack with two agents, built from the recorded prompt-change preview: a second agent whose
   * state says it is at versions 0 (latest 0), next to the first at 7, each with its AgentVersion.
   */
  function twoAgents(): PreviewJson {
    const one = fixture("support-agent-prompt-change");
    const steps = one.steps ?? [];
    const agent = structuredClone(steps.find((s) => s.urn.endsWith("::support"))!);
    const version = structuredClone(steps.find((s) => s.urn.endsWith("::support-live"))!);
    agent.oldState!.outputs = {
      ...agent.oldState!.outputs,
      draftVersion: 7,
      latestVersion: 7,
      liveVersion: 7,
    };
    version.oldState!.outputs = { ...version.oldState!.outputs, version: 7 };
    const second = structuredClone(agent);
    const secondVersion = structuredClone(version);
    second.urn = agent.urn.replace(/::support$/, "::sales");
    second.oldState!.id = "00000000-0000-4000-8000-000000000002";
    second.oldState!.outputs = {
      ...second.oldState!.outputs,
      agentId: second.oldState!.id,
      draftVersion: 0,
      latestVersion: 0,
      liveVersion: 0,
      knownVersions: {},
    };
    secondVersion.urn = version.urn.replace(/::support-live$/, "::sales-live");
    secondVersion.newState!.inputs = { ...secondVersion.newState!.inputs, agentId: second.oldState!.id };
    secondVersion.newState!.dependencies = [second.urn];
    secondVersion.oldState!.outputs = { ...secondVersion.oldState!.outputs, version: 0 };
    // The second agent's steps come after the first's, as the engine lists them.
    return {
      ...one,
      steps: [...steps.filter((s) => s !== undefined), second, secondVersion].map((s) =>
        s.urn.endsWith("::support") ? agent : s.urn.endsWith("::support-live") ? version : s,
      ),
    };
  }

  test("with two agents, each version section names its own agent's next version", () => {
    const md = renderReport(twoAgents());
    const sales = md.slice(md.indexOf("AgentVersion `sales-live`"));
    const support = md.slice(
      md.indexOf("AgentVersion `support-live`"),
      md.indexOf("AgentVersion `sales-live`") > md.indexOf("AgentVersion `support-live`")
        ? md.indexOf("AgentVersion `sales-live`")
        : undefined,
    );
    expect(support).toContain("as version **8** and puts it live (replacing live version 7)");
    expect(sales).toContain("as version **1** and puts it live (replacing live version 0)");
  });

  test("a prompt holding three backticks cannot close the diff's fence", () => {
    const preview = fixture("support-agent-prompt-change");
    const step = preview.steps!.find((s) => s.urn.endsWith("::support"))!;
    step.newState!.inputs = {
      ...step.newState!.inputs,
      systemPrompt: "## Agent Purpose\nShow JSON like this:\n```json\n{}\n```\nThen stop.",
    };
    const md = renderReport(preview);
    const diff = md.slice(md.indexOf("<summary><code>systemPrompt</code></summary>"));
    const fence = /\n(`{3,})diff\n/.exec(diff)?.[1] ?? "";
    expect(fence.length).toBeGreaterThan(3);
    const body = diff.slice(diff.indexOf(`${fence}diff\n`) + fence.length + 5);
    expect(body.indexOf(`\n${fence}\n`)).toBeGreaterThan(body.indexOf("Then stop."));
  });

  test("internal inputs are never listed as changed fields nor as replace reasons", () => {
    const md = renderReport(fixture("support-agent-prompt-change"));
    expect(md).not.toMatch(/contentHash|knownVersions|documentRevision|draftVersion/);
  });
});
