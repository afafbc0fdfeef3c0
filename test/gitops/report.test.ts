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
    expect(md).toMatch(/#### \+- AgentVersion `support-live`: replace \(because of `contentHash`\)/);
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
        async *listVersions() {
          for (let v = 10; v >= 0; v--) yield { version: v, is_published: v < 10 };
        },
        async getAgent(_id: string, { version }: { version: number }) {
          reads.push(version);
          const config = version === holding ? agentInputs : { ...agentInputs, systemPrompt: `v${version}` };
          return { ...(toWire(declaredConfig(config)) as object), version, is_published: true };
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
