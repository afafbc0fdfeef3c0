/**
 * Verified go-live in the pull-request report, fed with documents recorded from real runs
 * (test/e2e/verify.e2e.test.ts and test/e2e/examples.e2e.test.ts with RECORD_PREVIEWS=1): the
 * test calls a change will place, and a failed verification of a deploy (`pulumi up --json`)
 * under its resource.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, test } from "vitest";
import { isEventStream, parseEventStream } from "../../src/gitops/events";
import { renderReport } from "../../src/gitops/report";
import { failedVerifications, verificationPlan } from "../../src/gitops/verification";
import { REPO_ROOT } from "../support/pulumi";
import { fixture, stepOf } from "./previews";

const run = () => readFileSync(path.join(REPO_ROOT, "test/fixtures/runs/verify-failed-up.jsonl"), "utf8");
const section = (md: string, heading: string) => {
  const start = md.indexOf(heading);
  const end = md.indexOf("\n#### ", start + 1);
  return md.slice(start, end === -1 ? undefined : end);
};

describe("the report of a change that places test calls", () => {
  test("says how many test calls and to which numbers, under the AgentVersion", () => {
    const md = renderReport(fixture("verify-prompt-change"));
    const version = section(md, "#### ~ AgentVersion `support-live`: update");
    expect(version).toContain(
      "places **2 test calls** pinned to it, to `+14155550101` and `+14155550102`; it goes live only if every expectation holds",
    );
    expect(version).toContain("Publishes the agent's draft as version **1**");
    // The Agent's section says nothing of calls.
    expect(section(md, "#### ~ Agent `support`: update")).not.toContain("test call");
  });

  test("the example's production stack: one test call to its test line", () => {
    const md = renderReport(fixture("support-agent-prod-prompt-change"));
    expect(section(md, "AgentVersion `support-live`")).toContain(
      "places **1 test call** pinned to it, to `+918065550199`",
    );
    // The stack without a test line places none.
    expect(renderReport(fixture("support-agent-prompt-change"))).not.toContain("test call");
  });

  test("no calls when nothing goes live, when only verify changes, or when the version is not to be live", () => {
    const preview = fixture("verify-prompt-change");
    const step = stepOf(preview, "support-live");
    expect(verificationPlan(step)).not.toBe("");
    const inputs = step.newState!.inputs!;
    // Only `verify` changed on a live version: the update records it and places nothing.
    const verifyOnly = {
      ...step,
      newState: { ...step.newState!, inputs: { ...step.oldState!.inputs!, verify: inputs.verify } },
    };
    expect(verificationPlan(verifyOnly)).toBe("");
    expect(
      verificationPlan({ ...step, newState: { ...step.newState!, inputs: { ...inputs, live: false } } }),
    ).toBe("");
    expect(verificationPlan({ ...step, op: "delete" })).toBe("");
    // A number known only after apply is said so, never guessed.
    const unknown = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
    const later = { ...inputs, verify: { calls: [{ toNumber: unknown }] } };
    expect(verificationPlan({ ...step, newState: { ...step.newState!, inputs: later } })).toContain(
      "places **1 test call** pinned to it, to *(known after apply)*",
    );
    expect(
      verificationPlan({ ...step, newState: { ...step.newState!, inputs: { ...inputs, verify: unknown } } }),
    ).toContain("places test calls pinned to it (known after apply)");
  });
});

describe("the report of a deploy whose verification failed", () => {
  test("reads the event stream of pulumi up --json", () => {
    expect(isEventStream(run())).toBe(true);
    expect(isEventStream(JSON.stringify(fixture("verify-prompt-change")))).toBe(false);
    expect(() => parseEventStream(`${run()}not json\n`)).toThrow(/line \d+: not an engine event/);
  });

  test("shows the failure under its AgentVersion, with each failing call and expectation, and once", () => {
    const deploy = parseEventStream(run());
    expect([...failedVerifications(deploy).keys()]).toEqual([stepOf(deploy, "support-live").urn]);
    const md = renderReport(deploy, { title: "Voice agents: deploy" });
    const version = section(md, "#### ~ AgentVersion `support-live`: update");
    expect(version).toContain("**Verification failed**: the version did not go live.");
    expect(version).toMatch(/Verification of version 1 of agent [0-9a-f-]{36} failed: 1 of 2 test calls/);
    expect(version).toMatch(
      /test call 0 to \+14155550101: [0-9a-f-]{36} https:\/\/\S+\/calls\/[0-9a-f-]{36}/,
    );
    expect(version).toContain('status: expected "completed", got "no_answer"');
    expect(version).toContain("version 0 stays live");
    // Listed under its resource, not again among the run's errors.
    const errors = md.slice(md.indexOf("#### Warnings and errors"));
    expect(errors).toContain("update failed");
    expect(errors).not.toContain("Verification of version");
  });

  test("a test call that could not be placed, or a timeout, is also reported under its AgentVersion", () => {
    const deploy = parseEventStream(run());
    const urn = stepOf(deploy, "support-live").urn;
    const agent = "5b0c1a2e-0000-4000-8000-000000000001";
    for (const message of [
      `Verification of version 1 of agent ${agent}: test call 0 (to +14155550101) could not be placed: the service refused it.`,
      `Verification of version 1 of agent ${agent} timed out after 600 s: 1 of 1 test calls had not finished.`,
    ]) {
      const diagnostics = [{ urn, severity: "error", message }];
      expect([...failedVerifications({ ...deploy, diagnostics }).values()]).toEqual([message]);
    }
  });

  test("voice-agent-diff reads a deploy's event stream from a file", () => {
    const file = path.join(REPO_ROOT, "test/fixtures/runs/verify-failed-up.jsonl");
    const r = spawnSync(process.execPath, [path.join(REPO_ROOT, "dist/gitops/cli.js"), file], {
      encoding: "utf8",
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^### Voice agents: deploy\n/);
    expect(r.stdout).toContain("**Verification failed**");
  });
});
