/**
 * AgentVersion's `verify`: the input's check, the test calls' keys, how a finished call is judged,
 * and a verification against the emulator (calls of 0.2 s).
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { AgentDetailT, CallT, VoiceAgentClient } from "../../src/client";
import type { RunningEmulator } from "../../src/emulator";
import { isSettled } from "../../src/evidence/calls";
import { UNKNOWN } from "../../src/provider/unknowns";
import {
  judge,
  occurrences,
  parseVerify,
  testCallKey,
  VerificationFailed,
  type VerifyCall,
  type VerifySpec,
  verifyBeforeLive,
  verifyFailures,
} from "../../src/resources/agentVersion/verify";
import { clearRequestLog, controlCall, requestLog, retireModel } from "../support/control";
import { emulatorForFile } from "./support";

const reasons = (value: unknown) => verifyFailures(value).map((f) => f.reason);
const properties = (value: unknown) => verifyFailures(value).map((f) => f.property);

describe("verify: check", () => {
  it("accepts the documented shape, and no verify at all", () => {
    expect(verifyFailures(undefined)).toEqual([]);
    expect(
      verifyFailures({
        calls: [
          {
            toNumber: "+14155550100",
            variables: { customer_name: "Ada", tier: "2" },
            metadata: { suite: "smoke", tags: ["a"] },
            expect: {
              status: ["completed", "voicemail"],
              analysis: {
                "Default Analysis": {
                  "User Sentiment": ["positive", "neutral"],
                  Outcome: { pattern: "^resolved" },
                },
                Checks: { "Said goodbye": true, Score: 3 },
              },
            },
          },
          { toNumber: "+442071838750" },
        ],
        timeoutSeconds: 120,
        attempt: 2,
      }),
    ).toEqual([]);
  });

  it("names each bad field", () => {
    const failures = verifyFailures({
      calls: [
        {
          toNumber: "+1 415 555 0100",
          expect: { status: [], analysis: { G: { a: { pattern: "(unclosed" }, b: [], c: { regex: "x" } } } },
        },
      ],
      timeoutSeconds: 0,
      attempt: 1.5,
    });
    expect(failures.map((f) => f.property).sort()).toEqual(
      [
        "verify.attempt",
        "verify.calls[0].expect.analysis.G.a.pattern",
        "verify.calls[0].expect.analysis.G.b",
        "verify.calls[0].expect.analysis.G.c.pattern",
        "verify.calls[0].expect.analysis.G.c.regex",
        "verify.calls[0].expect.status",
        "verify.calls[0].toNumber",
        "verify.timeoutSeconds",
      ].sort(),
    );
    const byField = Object.fromEntries(failures.map((f) => [f.property, f.reason]));
    expect(byField["verify.calls[0].toNumber"]).toMatch(/E\.164.*\(\+14155550100\?\)/);
    expect(byField["verify.calls[0].expect.analysis.G.a.pattern"]).toMatch(/not a valid regular expression/);
    expect(byField["verify.calls[0].expect.analysis.G.b"]).toMatch(/must not be empty/);
    expect(byField["verify.calls[0].expect.analysis.G.c.regex"]).toMatch(/unknown key/);
    expect(byField["verify.timeoutSeconds"]).toMatch(/greater than 0/);
  });

  it("refuses unknown and misspelt keys, an empty list and a missing number", () => {
    expect(properties({ calls: [{ toNumber: "+14155550100", expected: {} }], timeout: 5 }).sort()).toEqual([
      "verify.calls[0].expected",
      "verify.timeout",
    ]);
    expect(reasons({ calls: [] })).toEqual([
      expect.stringMatching(/^verify\.calls: List should have at least 1 item/),
    ]);
    expect(properties({ calls: [{}] })).toEqual(["verify.calls[0].toNumber"]);
    expect(properties({ calls: [{ toNumber: "+14155550100", expect: { sentiment: "positive" } }] })).toEqual([
      "verify.calls[0].expect.sentiment",
    ]);
    expect(properties("yes")).toEqual(["verify"]);
  });

  it("leaves values unknown at preview alone, and still checks the rest", () => {
    expect(verifyFailures({ calls: [{ toNumber: UNKNOWN }] })).toEqual([]);
    expect(verifyFailures({ calls: UNKNOWN })).toEqual([]);
    expect(verifyFailures(UNKNOWN)).toEqual([]);
    expect(
      verifyFailures({
        calls: [{ toNumber: UNKNOWN, expect: { analysis: { G: { a: UNKNOWN } } } }],
        timeoutSeconds: UNKNOWN,
      }),
    ).toEqual([]);
    expect(properties({ calls: [{ toNumber: UNKNOWN, bogus: 1 }, { toNumber: "0800" }] }).sort()).toEqual([
      "verify.calls[0].bogus",
      "verify.calls[1].toNumber",
    ]);
  });

  it("parses what passed check", () => {
    expect(parseVerify(undefined)).toBeUndefined();
    expect(parseVerify({ calls: [{ toNumber: "+14155550100" }] })).toEqual({
      calls: [{ toNumber: "+14155550100" }],
    });
  });
});

describe("verify: Idempotency-Key of a test call", () => {
  const call: VerifyCall = { toNumber: "+14155550100", variables: { a: "1" } };
  const base = { agentId: "ag", versionId: "v1", occasion: "act1", attempt: 0 };
  const key = (over: Partial<typeof base> & { occurrence?: number; call?: VerifyCall } = {}) =>
    testCallKey({ ...base, ...over }, over.occurrence ?? 0, over.call ?? call);

  it("is a UUID that is the same for the same check of the same version", () => {
    expect(key()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(key()).toBe(key());
    // The expectation judges the call: changing it does not place another.
    expect(key({ call: { ...call, expect: { status: "voicemail" } } })).toBe(key());
    // Key order of variables means nothing.
    expect(key({ call: { toNumber: "+14155550100", variables: { b: "1", a: "1" } } })).toBe(
      key({ call: { toNumber: "+14155550100", variables: { a: "1", b: "1" } } }),
    );
  });

  it("depends on what is placed, not on its position: identical calls are told apart by occurrence", () => {
    const other: VerifyCall = { toNumber: "+14155550199" };
    // A call added in front re-places nothing: each keeps its occurrence among identical calls.
    expect(occurrences([call, other])).toEqual([0, 0]);
    expect(occurrences([other, call, other])).toEqual([0, 0, 1]);
    expect(occurrences([{ ...call, expect: { status: "busy" } }, call])).toEqual([0, 1]);
  });

  it("changes with the agent, the version, the occasion, the occurrence, what is placed and the attempt", () => {
    const all = [
      key(),
      key({ agentId: "other" }),
      key({ versionId: "v2" }),
      key({ occasion: "act2" }),
      key({ occurrence: 1 }),
      key({ call: { ...call, toNumber: "+14155550101" } }),
      key({ call: { ...call, variables: { a: "2" } } }),
      key({ call: { ...call, metadata: { run: 1 } } }),
      key({ attempt: 1 }),
    ];
    expect(new Set(all).size).toBe(all.length);
  });
});

const finished = (over: Partial<CallT> = {}): CallT => ({
  id: "c1",
  agent_id: "ag",
  agent_version: 1,
  status: "completed",
  direction: "outbound",
  origin: "api",
  from_number: "+14155550000",
  to_number: "+14155550100",
  duration_seconds: 12,
  created_at: "2026-11-25T09:00:00Z",
  connected_at: "2026-11-25T09:00:01Z",
  ended_at: "2026-11-25T09:00:13Z",
  metadata: null,
  variables: null,
  cost: { currency: "USD", total: 0.02, rate_per_min: 0.1 },
  custom_analysis: {
    "Default Analysis": { "User Sentiment": "neutral", Outcome: "resolved: refund", Language: "en" },
  },
  transcript: { turns: [] },
  transfer: null,
  recording_url: null,
  dashboard_url: "https://dashboard.example/calls/c1",
  ...over,
});

describe("verify: judging a call", () => {
  it("waits for a finished call whose analysis is in", () => {
    expect(isSettled(finished())).toBe(true);
    expect(isSettled(finished({ status: "in_progress", custom_analysis: null }))).toBe(false);
    expect(isSettled(finished({ custom_analysis: null }))).toBe(false);
    // An open set: a status we do not know settles once analysed.
    expect(isSettled(finished({ status: "screened" }))).toBe(true);
    // A call that never connected is settled whether the service analyses it or not.
    expect(isSettled(finished({ status: "no_answer", custom_analysis: null }))).toBe(true);
  });

  it("fails a call answered by another version than the one it was pinned to", () => {
    expect(judge(finished({ agent_version: 1 }), { toNumber: "+1" }, 1).shortfalls).toEqual([]);
    expect(judge(finished({ agent_version: 0 }), { toNumber: "+1" }, 1).shortfalls).toEqual([
      { what: "version", expected: "version 1 (the call was pinned to it)", got: "version 0" },
    ]);
  });

  it("expects completed by default, and the listed statuses otherwise", () => {
    expect(judge(finished(), { toNumber: "+1" }).shortfalls).toEqual([]);
    expect(judge(finished({ status: "no_answer" }), { toNumber: "+1" }).shortfalls).toEqual([
      { what: "status", expected: '"completed"', got: '"no_answer"' },
    ]);
    expect(
      judge(finished({ status: "voicemail" }), {
        toNumber: "+1",
        expect: { status: ["completed", "voicemail"] },
      }).shortfalls,
    ).toEqual([]);
  });

  it("checks exact values, lists and patterns, and says what the call gave", () => {
    const spec: VerifyCall = {
      toNumber: "+1",
      expect: {
        analysis: {
          "Default Analysis": {
            "User Sentiment": ["positive", "neutral"],
            Outcome: { pattern: "^resolved" },
            Language: "de",
          },
          Missing: { x: 1 },
        },
      },
    };
    const { shortfalls, checked } = judge(finished(), spec);
    expect(shortfalls).toEqual([
      { what: 'analysis "Default Analysis" / "Language"', expected: '"de"', got: '"en"' },
      {
        what: 'analysis "Missing" / "x"',
        expected: "1",
        got: 'no value (the call has no analysis group "Missing")',
      },
    ]);
    expect(checked).toEqual({
      "Default Analysis": { "User Sentiment": "neutral", Outcome: "resolved: refund", Language: "en" },
      Missing: { x: null },
    });
    expect(
      judge(finished(), { toNumber: "+1", expect: { analysis: { "Default Analysis": { Tone: "calm" } } } })
        .shortfalls[0]?.got,
    ).toBe('no value (the group has no analysis "Tone")');
    expect(
      judge(finished({ custom_analysis: { G: { n: 3, ok: true } } }), {
        toNumber: "+1",
        expect: { analysis: { G: { n: { pattern: "^[0-5]$" }, ok: true } } },
      }).shortfalls,
    ).toEqual([]);
  });
});

describe("verify: a verification against the emulator", () => {
  let emu: RunningEmulator;
  let c: VoiceAgentClient;
  let agentId: string;
  let v1: AgentDetailT;
  emulatorForFile({ callSeconds: 0.2 }, (e, client) => {
    emu = e;
    c = client;
  });
  const rules = async (r: unknown[]) => {
    expect((await controlCall(emu, "PUT", "/_emulator/call-outcomes", { rules: r })).status).toBe(200);
  };
  const posts = async () =>
    (await requestLog(emu)).filter((e) => e.method === "POST" && e.path === "/v1/calls");

  beforeAll(async () => {
    const agent = await c.agents.create({ name: "Verify", system_prompt: "Help." });
    agentId = agent.id;
    await c.versions.publish(agentId, 0);
    await c.versions.activate(agentId, 0);
    await c.agents.patch(agentId, { system_prompt: "Help more." });
    v1 = await c.versions.publish(agentId, 1);
  });

  const spec: VerifySpec = {
    calls: [
      {
        toNumber: "+14155550111",
        expect: { analysis: { "Default Analysis": { "User Sentiment": ["neutral"] } } },
      },
      { toNumber: "+14155550112", expect: { status: ["completed", "voicemail"] } },
    ],
  };

  it("places the calls pinned to the version, waits for their analysis, and records what passed", async () => {
    await rules([]);
    await clearRequestLog(emu);
    const result = await verifyBeforeLive(c, agentId, spec, v1);
    expect(result).toMatchObject({ version: 1, attempt: 0, passed: true });
    expect(result?.calls.map((x) => [x.toNumber, x.status, x.passed])).toEqual([
      ["+14155550111", "completed", true],
      ["+14155550112", "completed", true],
    ]);
    expect(result?.calls[0]?.analysis).toEqual({ "Default Analysis": { "User Sentiment": "neutral" } });
    for (const call of result?.calls ?? []) expect((await c.calls.get(call.id)).agent_version).toBe(1);
    expect(await posts()).toHaveLength(2);
    // Nothing went live: that is the caller's step.
    expect((await c.agents.get(agentId)).live_version).toBe(0);
    // The same check again (a retried up): the same calls, none placed.
    const again = await verifyBeforeLive(c, agentId, spec, v1);
    expect(again?.calls.map((x) => x.id)).toEqual(result?.calls.map((x) => x.id));
    expect(
      (await c.calls.list({ origin: "api" }).toArray()).filter((x) => x.agent_version === 1),
    ).toHaveLength(2);
    await expect(verifyBeforeLive(c, agentId, undefined, v1)).resolves.toBeUndefined();
    // Another version's activations in between (a dashboard rollback) and a call added in front:
    // the two calls already placed are answered again; only the new one is placed.
    await c.versions.activate(agentId, null);
    await c.versions.activate(agentId, 0);
    await clearRequestLog(emu);
    const added = { ...spec, calls: [{ toNumber: "+14155550113" }, ...spec.calls] };
    const third = await verifyBeforeLive(c, agentId, added, v1);
    expect(third?.calls.slice(1).map((x) => x.id)).toEqual(result?.calls.map((x) => x.id));
    expect(
      (await c.calls.list({ origin: "api" }).toArray()).filter((x) => x.agent_version === 1),
    ).toHaveLength(3);
  });

  it("fails naming the version, the call, its link and each expectation with what it gave", async () => {
    await rules([
      {
        match: { to_number: "+14155550111" },
        status: "busy",
        analysis: { "Default Analysis": { "User Sentiment": "negative" } },
      },
    ]);
    const err = await verifyBeforeLive(c, agentId, { ...spec, attempt: 1 }, v1).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VerificationFailed);
    const failed = (await c.calls.list({ origin: "api" }).toArray()).find(
      (x) => x.to_number === "+14155550111",
    );
    const message = (err as Error).message;
    expect(message).toContain(`Verification of version 1 of agent ${agentId} failed: 1 of 2 test calls`);
    expect(message).toContain(`test call 0 to +14155550111: ${failed?.id} ${failed?.dashboard_url}`);
    expect(message).toContain('status: expected "completed", got "busy"');
    expect(message).toContain(
      'analysis "Default Analysis" / "User Sentiment": expected "neutral", got "negative"',
    );
    expect(message).toContain("version 0 stays live");
    expect(message).toContain("raise verify.attempt");
    expect(message).not.toContain("+14155550112:");
  });

  it("times out naming the calls that had not finished", async () => {
    await rules([]);
    const err = await verifyBeforeLive(c, agentId, { ...spec, attempt: 2, timeoutSeconds: 0.05 }, v1).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(VerificationFailed);
    const message = (err as Error).message;
    expect(message).toContain(`Verification of version 1 of agent ${agentId} timed out after 0.05 s: 2 of 2`);
    expect(message).toMatch(/test call 0 to \+14155550111: [0-9a-f-]{36} \(status "(started|in_progress)"\)/);
    expect(message).toContain("none is placed again");
  });

  it("stops waiting when the engine cancels (the plugin's Cancel), and the next up judges the same calls", async () => {
    await rules([]);
    const stop = new AbortController();
    // A wait of the deadline's length (10 minutes): only the cancel ends it.
    const timing = { signal: stop.signal, wait: () => new Promise<void>(() => undefined) };
    const t0 = performance.now();
    const verifying = verifyBeforeLive(
      c,
      agentId,
      { ...spec, attempt: 6, timeoutSeconds: 600 },
      v1,
      timing,
    ).catch((e: unknown) => e);
    setTimeout(() => stop.abort(), 200);
    const err = await verifying;
    expect(performance.now() - t0).toBeLessThan(5_000);
    expect(err).toBeInstanceOf(VerificationFailed);
    const message = (err as Error).message;
    expect(message).toContain(`Verification of version 1 of agent ${agentId} cancelled by the Pulumi engine`);
    expect(message).toContain("none is placed again");
    const placed = async () =>
      (await c.calls.list({ origin: "api" }).toArray()).filter((x) => x.agent_version === 1).map((x) => x.id);
    const before = await placed();
    const next = await verifyBeforeLive(c, agentId, { ...spec, attempt: 6 }, v1);
    expect(next).toMatchObject({ passed: true });
    // The same calls (their ids in the cancel's message), none placed anew.
    for (const call of next?.calls ?? []) expect(message).toContain(call.id);
    expect((await placed()).sort()).toEqual(before.sort());
  }, 20_000);

  it("refuses a call the service refuses, naming the test call", async () => {
    await c.agents.patch(agentId, { system_prompt: "Draft only." });
    const draft = await c.agents.get(agentId, { version: 2 });
    await expect(verifyBeforeLive(c, agentId, spec, draft)).rejects.toThrow(
      /Verification of version 2 of agent .*: test call 0 \(to \+14155550111\) could not be placed: .*version 0 stays live/s,
    );
  });
  it("fails for a blocked version with its blocked reasons, placing no call", async () => {
    const model = v1.model?.model ?? "gpt-4o-mini";
    await retireModel(emu, model);
    const blocked = await c.agents.get(agentId, { version: 1 });
    expect(blocked.blocked_reasons.length).toBeGreaterThan(0);
    await clearRequestLog(emu);
    const err = await verifyBeforeLive(c, agentId, { ...spec, attempt: 3 }, blocked).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VerificationFailed);
    expect((err as Error).message).toContain(
      `Verification of version 1 of agent ${agentId}: the version is blocked and cannot take a test call or go live: ${blocked.blocked_reasons[0]}`,
    );
    expect(await posts()).toEqual([]);
  });

  it("reads the deploy history only back to the version's creation: one page, however long the history", async () => {
    await rules([]);
    const agent = await c.agents.create({
      name: "Long history",
      system_prompt: "Help.",
      model: { model: "gpt-4o" },
    });
    await c.versions.publish(agent.id, 0);
    for (let i = 0; i < 13; i++) {
      await c.versions.activate(agent.id, 0);
      await c.versions.activate(agent.id, null);
    }
    await c.agents.patch(agent.id, { system_prompt: "Help more." });
    const fresh = await c.versions.publish(agent.id, 1);
    await clearRequestLog(emu);
    await verifyBeforeLive(c, agent.id, { calls: [{ toNumber: "+14155550119" }] }, fresh);
    const history = (await requestLog(emu)).filter(
      (e) => e.method === "GET" && e.path.includes("/activations"),
    );
    expect(history).toHaveLength(1);
  });
});
