/**
 * The report's Promotion lines from a `pulumi preview --json` document: what staging showed
 * against the thresholds (met and not met), "not yet proven" when it falls short (the preview
 * passes, `up` refuses), or why production is refused (a difference fails the preview).
 */
import { expect, test } from "vitest";
import { promotionLines } from "../../src/gitops/promotion";
import { parsePreview, renderReport } from "../../src/gitops/report";

const URN = "urn:pulumi:prod::app::pulumi-nodejs:dynamic/voice-agent:AgentVersion::support-live";
const proof = {
  fromAgentId: "a-staging",
  fromVersion: 4,
  liveSince: "2026-11-25T06:00:00.000Z",
  minutesLive: 125.5,
  calls: 18,
  rates: [
    {
      analysis: "Default Analysis/User Sentiment",
      value: "negative",
      atMost: 0.1,
      matching: 1,
      share: 1 / 18,
    },
  ],
  origins: ["widget", "inbound"],
  soakMinutes: 60,
  minCalls: 20,
  configDigest: "sha256:abc",
  notCounted: 0,
  verdict: "inconclusive",
  findings: [
    {
      requirement: "soak",
      verdict: "pass",
      observed: 125.5,
      bound: 60,
      reason: "live 125 minutes (at least 60)",
    },
    {
      requirement: "minCalls",
      verdict: "inconclusive",
      observed: 18,
      bound: 20,
      reason: "18 of 20 calls (origins widget, inbound)",
    },
    {
      requirement: "rate",
      verdict: "pass",
      observed: 1 / 18,
      bound: 0.1,
      reason: 'Default Analysis/User Sentiment = "negative" on 1 of 18 calls (5.6%, at most 10%)',
    },
  ],
};

/** A preview that publishes the AgentVersion, with the proof `check` recorded. */
const publishing = (p: typeof proof) =>
  parsePreview({
    steps: [
      {
        op: "create-replacement",
        urn: URN,
        newState: {
          type: "pulumi-nodejs:dynamic/voice-agent:AgentVersion",
          inputs: { agentId: "a-prod", promote: { from: "a-staging" }, promoteProof: p },
        },
      },
    ],
  });

test("a promotion not yet proven: staging's version, how long live, calls and rates against the thresholds; `up` will refuse", () => {
  expect(promotionLines(publishing(proof))).toEqual([
    "- `support-live`: **not yet proven**: staging agent `a-staging` version **4**, live for 2 h 5 min (since 2026-11-25T06:00:00.000Z); " +
      "18 calls counted; same configuration (`sha256:abc`); live 125 minutes (at least 60): met; " +
      'Default Analysis/User Sentiment = "negative" on 1 of 18 calls (5.6%, at most 10%): met; ' +
      "18 of 20 calls (origins widget, inbound): **not met**; `up` will refuse until it is.",
  ]);
});

test("a proven promotion: every threshold met", () => {
  expect(
    promotionLines(
      publishing({
        ...proof,
        minCalls: 18,
        verdict: "pass",
        findings: proof.findings.map((f) =>
          f.requirement === "minCalls"
            ? { ...f, verdict: "pass", reason: "18 calls (at least 18; origins widget, inbound)" }
            : f,
        ),
      }),
    ),
  ).toEqual([
    "- `support-live`: staging agent `a-staging` version **4**, live for 2 h 5 min (since 2026-11-25T06:00:00.000Z); " +
      "18 calls counted; same configuration (`sha256:abc`); live 125 minutes (at least 60): met; " +
      "18 calls (at least 18; origins widget, inbound): met; " +
      'Default Analysis/User Sentiment = "negative" on 1 of 18 calls (5.6%, at most 10%): met.',
  ]);
});

test("a refused promotion: the preview's error on the AgentVersion, on one line, in the report", () => {
  const preview = parsePreview({
    steps: [],
    diagnostics: [
      {
        urn: URN,
        severity: "error",
        message:
          "pulumi-nodejs:dynamic:Resource resource 'support-live': property promote value {...} has a problem: promote: staging agent a-staging has no live version, so nothing has proven itself there.\nDeploy staging first.",
      },
      { urn: URN, severity: "error", message: "preview failed" },
    ],
  });
  const md = renderReport(preview);
  expect(md).toContain(
    "#### Promotion\n\nWhat staging's live version has shown, against the thresholds of `promote`.\n\n" +
      "- `support-live`: **refused**: promote: staging agent a-staging has no live version, so nothing has proven itself there. Deploy staging first.\n",
  );
});

test("no promote, no Promotion section", () => {
  expect(renderReport(parsePreview({ steps: [] }))).not.toContain("Promotion");
});
