/** The watch workflow sample: every few minutes and on demand, production, failing when it rolled a version back. */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { describe, expect, test } from "vitest";
import { parse } from "yaml";
import { REPO_ROOT } from "../support/pulumi";

const file = path.join(REPO_ROOT, "examples/gitops/.github/workflows/voice-agents-watch.yml");
const text = readFileSync(file, "utf8");
const workflow = parse(text);
const job = workflow.jobs.watch;
const steps: string[] = job.steps.filter((s: any) => s.run).map((s: any) => s.run);

describe("examples/gitops watch workflow", () => {
  test("runs every few minutes and on demand, one pass at a time", () => {
    expect(Object.keys(workflow.on).sort()).toEqual(["schedule", "workflow_dispatch"]);
    expect(workflow.on.schedule[0].cron).toMatch(/^\*\/\d+ \* \* \* \*$/);
    expect(workflow.concurrency).toEqual({ group: "voice-agents-watch", "cancel-in-progress": false });
    expect(workflow.permissions).toEqual({ contents: "read" });
  });

  test("pipes the drift alarm's input, `pulumi refresh --preview-only --json`, into voice-agent-diff --watch", () => {
    const all = steps.join("\n");
    expect(all).toContain("pulumi refresh --preview-only --json --stack prod > refresh.json");
    expect(all).not.toMatch(/pulumi (up|refresh (?!--preview-only))/);
    const report = steps.find((s) => s.includes("voice-agent-diff"))!;
    expect(report).toMatch(/npx voice-agent-diff --watch --json watch\.json .*refresh\.json > watch\.md\n/);
  });

  test("the report step, run as GitHub runs it (bash -e), writes the summary and ends with the watch's exit code", () => {
    const report = steps.find((s) => s.includes("voice-agent-diff"))!;
    const dir = mkdtempSync(path.join(tmpdir(), "watch-step-"));
    try {
      writeFileSync(path.join(dir, "npx"), '#!/bin/sh\necho "### watch report"\nexit "$STUB_EXIT"\n');
      chmodSync(path.join(dir, "npx"), 0o755);
      for (const code of [0, 7, 6, 5, 1]) {
        const summary = path.join(dir, `summary-${code}.md`);
        const r = spawnSync("bash", ["-e", "-c", report], {
          cwd: dir,
          env: { PATH: `${dir}:${process.env.PATH}`, GITHUB_STEP_SUMMARY: summary, STUB_EXIT: String(code) },
        });
        expect(r.status).toBe(code);
        expect(readFileSync(summary, "utf8")).toBe("### watch report\n");
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the API key comes from the CI's secret store, never from the file", () => {
    expect(job.env.VOICE_AGENT_API_KEY).toBe("${{ secrets.VOICE_AGENT_API_KEY }}");
    expect(text).not.toMatch(/va_[a-z0-9_]+/i);
  });
});
