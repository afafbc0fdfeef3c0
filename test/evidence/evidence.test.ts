/**
 * The evidence module: which calls count (`callState`), reading an analysis value, the Wilson
 * interval, the pure judge's fail-closed rules, and a sample of one version's calls read through
 * the client from the emulator.
 */
import { describe, expect, test } from "vitest";
import type { VoiceAgentClient } from "../../src/client";
import type { RunningEmulator } from "../../src/emulator";
import {
  addCall,
  analysisValue,
  type CallFacts,
  type CallSample,
  callState,
  emptySample,
  isSettled,
  judgeSample,
  metAndMissing,
  normalQuantile,
  type Requirement,
  sampleCalls,
  wilson,
  worst,
} from "../../src/evidence";
import { agentProvider } from "../../src/resources/agent/provider";
import { agentVersionProvider } from "../../src/resources/agentVersion/provider";
import { checkAndCreate, emulatorForFile, testContext } from "../provider/support";
import { setCallOutcomes, trafficCall } from "../support/control";

const SENTIMENT = "Default Analysis/User Sentiment";
const analysed = (sentiment: string | null, status = "completed"): CallFacts => ({
  status,
  custom_analysis: { "Default Analysis": { "User Sentiment": sentiment, Outcome: "done" } },
});

describe("callState: the one rule for which calls count", () => {
  test.each([
    ["started", null, "running"],
    ["in_progress", null, "running"],
    ["transfer_answered", null, "running"],
    ["no_answer", null, "never_connected"],
    ["busy", {}, "never_connected"],
    ["declined", null, "never_connected"],
    ["failed", { "Default Analysis": { "User Sentiment": "neutral" } }, "never_connected"],
    ["voicemail", {}, "voicemail"],
    ["completed", null, "awaiting_analysis"],
    ["transfer_failed", null, "awaiting_analysis"],
    ["completed", {}, "analysed"],
    ["transfer_completed", {}, "analysed"],
    ["hung_up_by_carrier", {}, "unknown_status"],
  ] as const)("%s with analysis %j is %s", (status, custom_analysis, state) => {
    expect(callState({ status, custom_analysis })).toBe(state);
  });

  test("a never-connected call is settled with a full analysis or none; a conversation waits for its analysis", () => {
    expect(isSettled({ status: "no_answer", custom_analysis: null })).toBe(true);
    expect(isSettled({ status: "no_answer", custom_analysis: { "Default Analysis": {} } })).toBe(true);
    expect(isSettled({ status: "completed", custom_analysis: null })).toBe(false);
    expect(isSettled({ status: "completed", custom_analysis: {} })).toBe(true);
    expect(isSettled({ status: "voicemail", custom_analysis: null })).toBe(false);
    expect(isSettled({ status: "in_progress", custom_analysis: null })).toBe(false);
    expect(isSettled({ status: "something_new", custom_analysis: null })).toBe(false);
    expect(isSettled({ status: "something_new", custom_analysis: {} })).toBe(true);
  });
});

describe("analysisValue", () => {
  test("a value; a missing group, a missing key and null are no value, and say which", () => {
    expect(analysisValue(analysed("negative"), SENTIMENT)).toEqual({ value: "negative" });
    expect(analysisValue(analysed(null), SENTIMENT)).toEqual({ missing: "null" });
    expect(analysisValue(analysed("negative"), "Default Analysis/User sentiment")).toEqual({
      missing: "no_analysis",
    });
    expect(analysisValue(analysed("negative"), "Quality/Resolved")).toEqual({ missing: "no_group" });
    expect(analysisValue({ custom_analysis: null }, SENTIMENT)).toEqual({ missing: "not_analysed" });
    expect(analysisValue({ custom_analysis: { "A/B": { C: false } } }, "A/B/C")).toEqual({ value: false });
  });
});

describe("wilson", () => {
  test("the probit and the interval match published values", () => {
    expect(normalQuantile(0.975)).toBeCloseTo(1.959963984540054, 12);
    expect(normalQuantile(0.005)).toBeCloseTo(-2.5758293035489, 10);
    expect(normalQuantile(1e-10)).toBeCloseTo(-6.361340902404056, 9);
    const half = wilson(5, 10, 0.95);
    expect(half.low).toBeCloseTo(0.2366, 4);
    expect(half.high).toBeCloseTo(0.7634, 4);
    const none = wilson(0, 10, 0.95);
    expect(none.low).toBe(0);
    expect(none.high).toBeCloseTo(0.2775, 4);
    expect(wilson(0, 0, 0.95)).toEqual({ low: 0, high: 1 });
    expect(() => wilson(3, 2, 0.95)).toThrow(/0 <= successes <= n/);
    expect(() => wilson(1, 2, 1)).toThrow(/confidence/);
  });
});

const scope = {
  agentId: "a",
  version: 3,
  origins: ["inbound", "widget"],
  since: "2026-01-01T00:00:00.000Z",
};
const NOW = Date.parse("2026-01-01T01:00:00.000Z");

function sampleOf(calls: CallFacts[], requirements: Requirement[], extra: Partial<CallSample> = {}) {
  const s = emptySample(scope, requirements, new Date(NOW).toISOString());
  for (const c of calls) addCall(s, requirements, c);
  return { ...s, ...extra };
}

describe("judgeSample: fail closed", () => {
  test("calls that never connected are no proof: minCalls is not met, and says what was left out", () => {
    const req = [{ minCalls: 1 }];
    const s = sampleOf(
      [
        { status: "failed", custom_analysis: analysed("neutral").custom_analysis },
        { status: "no_answer", custom_analysis: null },
        { status: "voicemail", custom_analysis: {} },
        { status: "completed", custom_analysis: null },
      ],
      req,
    );
    const j = judgeSample(s, req, NOW);
    expect(j.verdict).toBe("inconclusive");
    expect(j.findings[0]?.reason).toBe(
      "0 of 1 calls (origins inbound, widget); not counted: 2 never connected, 1 reached voicemail, 1 awaiting analysis",
    );
    const ok = judgeSample(sampleOf([analysed("neutral")], req), req, NOW);
    expect(ok.verdict).toBe("pass");
  });

  test("a rate with no measured call is not met; null, missing keys and a misspelt name are left out, not good", () => {
    const rate = { analysis: SENTIMENT, value: "negative", atMost: 0.5 };
    const none = judgeSample(sampleOf([], [rate]), [rate], NOW);
    expect(none.verdict).toBe("inconclusive");
    expect(none.findings[0]?.reason).toBe(`no call carries ${SENTIMENT} yet (at most 50%)`);
    const calls = [analysed(null), analysed(null), { status: "completed", custom_analysis: {} }];
    const nulls = judgeSample(sampleOf(calls, [rate]), [rate], NOW);
    expect(nulls.verdict).toBe("inconclusive");
    expect(nulls.findings[0]?.reason).toBe(
      `no call carries ${SENTIMENT} yet (at most 50%); 3 calls left out: 2 with a null value (nothing extracted), 1 without the group`,
    );
    const typo = { ...rate, analysis: "Default Analysis/User sentiment" };
    expect(judgeSample(sampleOf([analysed("negative")], [typo]), [typo], NOW).verdict).toBe("inconclusive");
  });

  test("the share is over the calls carrying a value; above the bound fails", () => {
    const rate = { analysis: SENTIMENT, value: "negative", atMost: 0.34 };
    const calls = [analysed("negative"), analysed("positive"), analysed(null)];
    const j = judgeSample(sampleOf(calls, [rate]), [rate], NOW);
    expect(j.verdict).toBe("fail");
    expect(j.findings[0]).toMatchObject({ observed: 0.5, bound: 0.34 });
    expect(j.findings[0]?.reason).toBe(
      `${SENTIMENT} = "negative" on 1 of 2 calls (50%, at most 34%); 1 call left out: 1 with a null value (nothing extracted)`,
    );
    const met = judgeSample(
      sampleOf([...calls, analysed("positive"), analysed("neutral")], [rate]),
      [rate],
      NOW,
    );
    expect(met.verdict).toBe("pass");
  });

  test("a sample cut short is inconclusive, never a pass", () => {
    const rate = { analysis: SENTIMENT, value: "negative", atMost: 0.5 };
    const j = judgeSample(sampleOf([analysed("positive")], [rate], { truncated: true }), [rate], NOW);
    expect(j.verdict).toBe("inconclusive");
    expect(j.findings[0]?.reason).toContain("the listing was cut short");
  });

  test("soak: unknown go-live time and too short are inconclusive", () => {
    const soak = [{ soakMinutes: 30 }];
    expect(judgeSample(sampleOf([], soak), soak, NOW).verdict).toBe("pass");
    const early = judgeSample(sampleOf([], soak), soak, Date.parse(scope.since) + 60_000);
    expect(early).toMatchObject({ verdict: "inconclusive", findings: [{ reason: "live 1 of 30 minutes" }] });
    const unknown = emptySample({ ...scope, since: null }, soak, "");
    expect(judgeSample(unknown, soak, NOW).findings[0]?.reason).toContain("unknown time");
  });

  test("a status rate counts over every finished call; with confidence, the Wilson interval decides", () => {
    const req = { status: ["failed", "no_answer"], atMost: 0.2 };
    const calls: CallFacts[] = [
      { status: "failed", custom_analysis: null },
      { status: "no_answer", custom_analysis: {} },
      { status: "in_progress", custom_analysis: null },
      analysed("positive"),
      { status: "voicemail", custom_analysis: {} },
    ];
    const j = judgeSample(sampleOf(calls, [req]), [req], NOW);
    expect(j.verdict).toBe("fail");
    expect(j.findings[0]?.reason).toBe(
      "status failed or no_answer on 2 of 4 finished calls (50%, at most 20%)",
    );
    expect(judgeSample(sampleOf([], [req]), [req], NOW).verdict).toBe("inconclusive");
    const sure = { ...req, confidence: 0.95 };
    // 2 of 4: the interval (15% to 85%) straddles 20%: too few calls to tell.
    expect(judgeSample(sampleOf(calls, [sure]), [sure], NOW).verdict).toBe("inconclusive");
    const many = Array.from({ length: 60 }, (_, i) =>
      i < 30 ? { status: "failed", custom_analysis: null } : analysed("positive"),
    );
    expect(judgeSample(sampleOf(many, [sure]), [sure], NOW).verdict).toBe("fail");
    const good = Array.from({ length: 60 }, () => analysed("positive"));
    const passed = judgeSample(sampleOf(good, [sure]), [sure], NOW);
    expect(passed.verdict).toBe("pass");
    expect(passed.findings[0]?.reason).toMatch(
      /0 of 60 finished calls \(0%; 95% interval 0% to 6%, at most 20%\)/,
    );
  });

  test("findings combine by the worst verdict; met and missing lines", () => {
    expect(worst([])).toBe("pass");
    expect(worst(["pass", "inconclusive"])).toBe("inconclusive");
    expect(worst(["error", "inconclusive"])).toBe("error");
    expect(worst(["error", "fail", "pass"])).toBe("fail");
    const req: Requirement[] = [{ minCalls: 1 }, { analysis: SENTIMENT, value: "negative", atMost: 0.1 }];
    const lines = metAndMissing(judgeSample(sampleOf([analysed("negative")], req), req, NOW));
    expect(lines).toEqual({
      met: ["1 calls (at least 1; origins inbound, widget)"],
      missing: [`${SENTIMENT} = "negative" on 1 of 1 calls (100%, at most 10%)`],
    });
  });
});

let emu: RunningEmulator;
let client: VoiceAgentClient;
emulatorForFile({ callSeconds: 0.2 }, (e, c) => {
  emu = e;
  client = c;
});

describe("sampleCalls through the client", () => {
  test("one version's calls of the origins since a time, tallied; older calls, other versions and other origins left out; a cap truncates", async () => {
    const agents = agentProvider(testContext);
    const versions = agentVersionProvider(testContext);
    const a = await checkAndCreate(agents, { name: "sampled", systemPrompt: "Help." });
    await checkAndCreate(versions, {
      agentId: a.outs.agentId,
      contentHash: a.outs.contentHash,
      draftVersion: a.outs.draftVersion,
      documentRevision: a.outs.documentRevision,
      live: true,
    });
    const agentId = a.outs.agentId as string;
    await setCallOutcomes(emu, [
      { match: { to_number: "+15550100001" }, status: "no_answer" },
      {
        match: { to_number: "+15550100002" },
        analysis: { "Default Analysis": { "User Sentiment": "negative" } },
      },
      { match: { to_number: "+15550100003" }, analysis: { "Default Analysis": { "User Sentiment": null } } },
    ]);
    // Before the window: not counted.
    await trafficCall(emu, { agent_id: agentId, direction: "inbound", to_number: "+15550100002" });
    await new Promise((r) => setTimeout(r, 50));
    const since = new Date().toISOString();
    for (const to of ["+15550100001", "+15550100002", "+15550100003", "+15550100004"])
      await trafficCall(emu, { agent_id: agentId, direction: "inbound", to_number: to });
    // Another origin: not listed.
    await trafficCall(emu, { agent_id: agentId, direction: "web", origin: "widget" });
    await new Promise((r) => setTimeout(r, 400));
    const rate = { analysis: SENTIMENT, value: "negative", atMost: 0.5 };
    const status = { status: ["no_answer"], atMost: 0.1 };
    const s = await sampleCalls(client, { agentId, version: 0, origins: ["inbound"], since }, [
      { minCalls: 1 },
      rate,
      status,
    ]);
    expect(s).toMatchObject({
      analysed: 3,
      neverConnected: 1,
      awaitingAnalysis: 0,
      running: 0,
      byStatus: { completed: 3, no_answer: 1 },
      truncated: false,
      tallies: {
        'analysis Default Analysis/User Sentiment = "negative"': {
          measured: 2,
          matching: 1,
          leftOut: { null: 1 },
        },
        "status no_answer": { measured: 4, matching: 1 },
      },
    });
    const other = await sampleCalls(client, { agentId, version: 1, origins: ["inbound"], since }, []);
    expect(other.analysed).toBe(0);
    const capped = await sampleCalls(client, { agentId, version: 0, origins: ["inbound"], since: null }, [], {
      maxCalls: 2,
    });
    expect(capped).toMatchObject({ truncated: true, analysed: 2 });
    const recent = await sampleCalls(
      client,
      { agentId, version: 0, origins: ["inbound"], since: null, lastMinutes: 1 },
      [],
      { now: () => Date.now() + 120_000 },
    );
    expect(recent.analysed + recent.neverConnected).toBe(0);
  });
});
