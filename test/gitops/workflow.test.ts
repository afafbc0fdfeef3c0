/** The CI workflow sample: preview with a report on pull requests, deploy per environment on merge. */
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, test } from "vitest";
import { parse } from "yaml";
import { REPO_ROOT } from "../support/pulumi";

const file = path.join(REPO_ROOT, "examples/gitops/.github/workflows/voice-agents.yml");
const text = readFileSync(file, "utf8");
const workflow = parse(text);
const runs = (job: string): string[] =>
  workflow.jobs[job].steps.filter((s: any) => s.run).map((s: any) => s.run);

describe("examples/gitops workflow", () => {
  test("previews pull requests and deploys merges to main", () => {
    expect(Object.keys(workflow.on).sort()).toEqual(["pull_request", "push"]);
    expect(workflow.on.push.branches).toEqual(["main"]);
    expect(workflow.jobs.preview.if).toContain("pull_request");
    expect(workflow.jobs.deploy.if).toContain("push");
  });

  test("the preview job posts the voice-agent-diff report of `pulumi preview --json`, per stack", () => {
    const steps = runs("preview").join("\n");
    expect(steps).toMatch(
      /pulumi preview --stack \$\{\{ matrix\.stack \}\} --policy-pack node_modules\/pulumi-voice-agent\/policy --json --show-sames > preview\.json/,
    );
    expect(steps).toMatch(/voice-agent-diff --resolve .*preview\.json > report\.md/);
    expect(workflow.jobs.preview.strategy.matrix.stack).toEqual(["dev", "prod"]);
    const comment = workflow.jobs.preview.steps.find((s: any) =>
      String(s.uses).includes("pull-request-comment"),
    );
    expect(comment.with.path).toBe("agents/report.md");
    expect(workflow.permissions["pull-requests"]).toBe("write");
  });

  test("a break outside the service fails the check until the description acknowledges it; the comment is posted first", () => {
    const steps = workflow.jobs.preview.steps;
    const report = steps.find((s: any) => s.name === "Report");
    expect(report.run).toContain("voice-agent-diff --resolve --fail-on-breaking");
    // The description reaches the shell as an environment variable, never spliced into the script.
    expect(report.env.PR_BODY).toBe("${{ github.event.pull_request.body }}");
    expect(report.run).not.toContain("github.event");
    expect(report.run).toContain("export VOICE_AGENT_ACKNOWLEDGE");
    const comment = steps.findIndex((s: any) => String(s.uses).includes("pull-request-comment"));
    const gate = steps.findIndex((s: any) => s.if === "steps.report.outputs.status == '4'");
    expect(steps.indexOf(report)).toBeLessThan(comment);
    expect(comment).toBeLessThan(gate);
    expect(steps[gate].run).toContain("exit 1");
    expect(workflow.on.pull_request.types).toContain("edited");
  });

  test("the deploy job runs `pulumi up` per environment, dev before prod, then expects no changes", () => {
    const steps = runs("deploy").join("\n");
    expect(steps).toContain("pulumi up --yes --stack ${{ matrix.stack }}");
    // The deploy's events become its report on the run's summary, a failed verification included.
    expect(steps).toMatch(/pulumi up .* --json > up\.json/);
    const report = workflow.jobs.deploy.steps.find((s: any) => s.name === "Deploy report");
    expect(report.if).toContain("!cancelled()");
    expect(report.run).toMatch(/voice-agent-diff .*up\.json >> "\$GITHUB_STEP_SUMMARY"/);
    expect(steps).toContain("pulumi preview --expect-no-changes --stack ${{ matrix.stack }}");
    expect(workflow.jobs.deploy.strategy.matrix.stack).toEqual(["dev", "prod"]);
    expect(workflow.jobs.deploy.strategy["max-parallel"]).toBe(1);
    expect(workflow.jobs.deploy.environment).toBe("${{ matrix.stack }}");
  });

  test("the API key comes from the CI's secret store, never from the file", () => {
    for (const job of ["preview", "deploy"]) {
      expect(workflow.jobs[job].env.VOICE_AGENT_API_KEY).toBe("${{ secrets.VOICE_AGENT_API_KEY }}");
    }
    expect(text).not.toMatch(/va_[a-z0-9_]+/i);
  });
});
