/** The drift-alarm workflow sample: daily and on demand, per stack, failing when anything drifted. */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { describe, expect, test } from "vitest";
import { parse } from "yaml";
import { REPO_ROOT } from "../support/pulumi";

const file = path.join(REPO_ROOT, "examples/gitops/.github/workflows/voice-agents-drift.yml");
const text = readFileSync(file, "utf8");
const workflow = parse(text);
const job = workflow.jobs.drift;
const steps: string[] = job.steps.filter((s: any) => s.run).map((s: any) => s.run);

describe("examples/gitops drift workflow", () => {
  test("runs daily and on demand, for every stack, without stopping the others on a failure", () => {
    expect(Object.keys(workflow.on).sort()).toEqual(["schedule", "workflow_dispatch"]);
    expect(workflow.on.schedule).toHaveLength(1);
    // minute hour * * *: once a day.
    expect(workflow.on.schedule[0].cron).toMatch(/^\d{1,2} \d{1,2} \* \* \*$/);
    expect(job.strategy.matrix.stack).toEqual(["dev", "prod"]);
    expect(job.strategy["fail-fast"]).toBe(false);
    expect(workflow.permissions).toEqual({ contents: "read" });
  });

  test("pipes `pulumi refresh --preview-only --json` into voice-agent-diff --drift, whose exit code fails the job", () => {
    const all = steps.join("\n");
    expect(all).toContain("pulumi refresh --preview-only --json --stack ${{ matrix.stack }} > refresh.json");
    expect(all).not.toMatch(/pulumi refresh (?!--preview-only)/);
    const report = steps.find((s) => s.includes("voice-agent-diff"))!;
    expect(report).toMatch(/npx voice-agent-diff --drift .*refresh\.json > drift\.md\n/);
    // The report goes to the job's summary, and the command's own exit code (3 on drift) ends the step.
    expect(report).toMatch(/^set \+e\n/);
    expect(report).toContain('cat drift.md >> "$GITHUB_STEP_SUMMARY"');
    expect(report.trimEnd()).toMatch(/code=\$\?\n[\s\S]*exit \$code$/);
  });

  test("the report step, run as GitHub runs it (bash -e), ends with voice-agent-diff's exit code after writing the summary", () => {
    // GitHub substitutes the expressions before the shell runs.
    const report = steps
      .find((s) => s.includes("voice-agent-diff"))!
      .replaceAll("${{ matrix.stack }}", "dev");
    const dir = mkdtempSync(path.join(tmpdir(), "drift-step-"));
    try {
      // A stand-in for npx: prints a report and exits with the code the test asks for.
      writeFileSync(path.join(dir, "npx"), '#!/bin/sh\necho "### drift report"\nexit "$STUB_EXIT"\n');
      chmodSync(path.join(dir, "npx"), 0o755);
      for (const code of [0, 3, 1]) {
        const summary = path.join(dir, `summary-${code}.md`);
        const r = spawnSync("bash", ["-e", "-c", report], {
          cwd: dir,
          env: { PATH: `${dir}:${process.env.PATH}`, GITHUB_STEP_SUMMARY: summary, STUB_EXIT: String(code) },
        });
        expect(r.status).toBe(code);
        expect(readFileSync(summary, "utf8")).toBe("### drift report\n");
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the API key comes from the CI's secret store, never from the file", () => {
    expect(job.env.VOICE_AGENT_API_KEY).toBe("${{ secrets.VOICE_AGENT_API_KEY }}");
    expect(job.env.VOICE_AGENT_BASE_URL).toBe("${{ vars.VOICE_AGENT_BASE_URL }}");
    expect(text).not.toMatch(/va_[a-z0-9_]+/i);
  });
});
