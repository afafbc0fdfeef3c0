/**
 * Promotion at the provider level, against the emulator: the AgentVersion's check (preview) and
 * create (`up`) with `promote`, a staging and a production agent in one workspace, and a staging
 * agent in another workspace reached with `promote.apiKey`.
 */
import { beforeAll, describe, expect, test } from "vitest";
import { VoiceAgentClient } from "../../src/client";
import type { RunningEmulator } from "../../src/emulator";
import { contextFor } from "../../src/provider/context";
import { UNKNOWN } from "../../src/provider/normalize";
import { agentProvider } from "../../src/resources/agent/provider";
import { type Proof, shortfallWarning } from "../../src/resources/agentVersion/proof";
import { agentVersionProvider } from "../../src/resources/agentVersion/provider";
import { clearRequestLog, requestLog, setCallOutcomes, trafficCall } from "../support/control";
import { checkAndCreate, emulatorForFile, testContext } from "./support";

const agents = agentProvider(testContext);
const versions = agentVersionProvider(testContext);

const OTHER_KEY = "va_test_staging_other";
let emu: RunningEmulator;
let client: VoiceAgentClient;

emulatorForFile(
  {
    workspaces: [
      { name: "default", key: "va_test_local" },
      { name: "other", key: OTHER_KEY },
    ],
  },
  (e, c) => {
    emu = e;
    client = c;
  },
);

const PROMPT = "## Agent Purpose\nHelp with orders.\n## Call Flow\nAsk for the order number.";
const config = {
  name: "support",
  systemPrompt: PROMPT,
  variables: [{ key: "region", defaultValue: "north" }],
};

/** The AgentVersion's inputs for an Agent's outputs, with `promote`. */
function versionInputs(agentOuts: Record<string, any>, extra: Record<string, unknown> = {}) {
  const promoteConfig: Record<string, unknown> = {};
  for (const k of ["name", "systemPrompt", "variables", "knowledgeBaseIds"])
    if (agentOuts[k] !== undefined) promoteConfig[k] = agentOuts[k];
  return {
    agentId: agentOuts.agentId,
    contentHash: agentOuts.contentHash,
    draftVersion: agentOuts.draftVersion,
    documentRevision: agentOuts.documentRevision,
    draftPublished: agentOuts.draftPublished,
    draftHash: agentOuts.draftHash,
    latestVersion: agentOuts.latestVersion,
    knownUpTo: -1,
    live: true,
    promoteConfig,
    ...extra,
  };
}

/** An agent made and put live, as the staging stack's `up` does. */
async function liveAgent(inputs: Record<string, unknown>) {
  const a = await checkAndCreate(agents, inputs);
  await checkAndCreate(versions, versionInputs(a.outs));
  return a;
}

const reasons = (r: { failures?: { reason: string }[] }) => (r.failures ?? []).map((f) => f.reason);

describe("promote", () => {
  let staging: Awaited<ReturnType<typeof liveAgent>>;
  beforeAll(async () => {
    staging = await liveAgent(config);
  });

  test("a different prompt is refused at preview and at up: staging's version and both lines named", async () => {
    const prod = await checkAndCreate(agents, {
      ...config,
      systemPrompt: PROMPT.replace("order number", "order id"),
    });
    const inputs = versionInputs(prod.outs, { promote: { from: staging.id } });
    const [reason, ...rest] = reasons(await versions.check({}, inputs));
    expect(rest).toEqual([]);
    expect(reason).toContain(`staging's live version 0 of agent ${staging.id}`);
    expect(reason).toContain(
      `systemPrompt: staging line 4: "Ask for the order number.", production line 4: "Ask for the order id."`,
    );
    expect(reason).toContain("promote.ignore");
    await expect(versions.create(inputs)).rejects.toThrow(/Nothing was published or put live/);
    const after = await client.agents.get(prod.id);
    expect(after.is_published).toBe(false);
    expect(after.live_version).toBeNull();
  });

  test("a staging agent with no live version is refused", async () => {
    const draftOnly = await checkAndCreate(agents, config);
    const prod = await checkAndCreate(agents, config);
    const [reason] = reasons(
      await versions.check({}, versionInputs(prod.outs, { promote: { from: draftOnly.id } })),
    );
    expect(reason).toContain(`staging agent ${draftOnly.id} has no live version`);
  });

  test("too short a soak passes preview with the proof recorded, is refused at up naming what is missing; accepted once it holds", async () => {
    const prod = await checkAndCreate(agents, config);
    // The prompt was published a moment ago: 0.05 minutes (3 s) of soak is not met yet.
    const inputs = versionInputs(prod.outs, {
      promote: { from: staging.id, soakMinutes: 0.05, minCalls: 0 },
    });
    const early = await versions.check({}, inputs);
    // Proof accumulates until the deploy: the preview passes, with what staging has shown so far.
    expect(reasons(early)).toEqual([]);
    expect(early.inputs.promoteProof).toMatchObject({
      fromAgentId: staging.id,
      fromVersion: 0,
      soakMinutes: 0.05,
    });
    expect(shortfallWarning(early.inputs.promoteProof as Proof)).toMatch(
      new RegExp(
        `^promotion from agent ${staging.id} version 0 not yet proven: live 0(\\.0\\d)? of 0\\.05 minutes; \`pulumi up\` will refuse until it is$`,
      ),
    );
    await expect(versions.create(early.inputs)).rejects.toThrow(
      /has not proven itself yet: live 0(\.0\d)? of 0\.05 minutes\. Nothing was published or put live: what is live stays live/,
    );
    const refused = await client.agents.get(prod.id);
    expect(refused.is_published).toBe(false);
    expect(refused.live_version).toBeNull();
    await new Promise((r) => setTimeout(r, 3100));
    const checked = await versions.check({}, inputs);
    expect(reasons(checked)).toEqual([]);
    expect(shortfallWarning(checked.inputs.promoteProof as Proof)).toBeUndefined();
    const created = await versions.create(checked.inputs);
    const outs = created.outs as Record<string, any>;
    expect(outs.isLive).toBe(true);
    expect(outs.promotion).toMatchObject({ fromAgentId: staging.id, fromVersion: 0, calls: 0 });
    // Same configuration, same environment-independent digest: the Agents' and the promotion's.
    expect(outs.promotion.configDigest).toBe(staging.outs.configDigest);
    expect(prod.outs.configDigest).toBe(staging.outs.configDigest);
    expect(outs.notes).toContain(`Promoted from agent ${staging.id} version 0`);
    // A later change that publishes in place (update) is enforced the same way: production's
    // draft now holds another prompt, and nothing is published or put live.
    const changed = await agents.update(prod.id, prod.outs, {
      ...prod.inputs,
      systemPrompt: PROMPT.replace("order number", "order id"),
    });
    const next = versionInputs(changed.outs as Record<string, any>, { promote: { from: staging.id } });
    await expect(versions.update(created.id, outs, next)).rejects.toThrow(
      /systemPrompt: staging line 4: "Ask for the order number\.", production line 4: "Ask for the order id\."[\s\S]*Nothing was published or put live/,
    );
    expect((await client.agents.get(prod.id, { version: "live" })).version).toBe(outs.version);
    // A change staging does not need to prove (an ignored field) with a proof that falls short:
    // the preview passes, `up` refuses, and the earlier live version stays live.
    const renamed = await agents.update(prod.id, changed.outs, { ...prod.inputs, name: "support prod" });
    const short = versionInputs(renamed.outs as Record<string, any>, {
      promote: { from: staging.id, ignore: ["name"], minCalls: 1 },
    });
    const shortCheck = await versions.check(outs, short);
    expect(reasons(shortCheck)).toEqual([]);
    expect(shortfallWarning(shortCheck.inputs.promoteProof as Proof)).toContain(
      "not yet proven: 0 of 1 calls",
    );
    await expect(versions.update(created.id, outs, shortCheck.inputs)).rejects.toThrow(
      /has not proven itself yet: 0 of 1 calls \(origins [a-z, ]+\)\. Nothing was published or put live/,
    );
    expect((await client.agents.get(prod.id, { version: "live" })).version).toBe(outs.version);
    // A no-op preview of the promoted version reads nothing.
    await clearRequestLog(emu);
    expect(reasons(await versions.check(checked.inputs, inputs))).toEqual([]);
    expect(await requestLog(emu)).toEqual([]);
  }, 20_000);

  test("a missing knowledge base is named by name; ignore honours a list element by its key", async () => {
    const kb = await client.knowledgeBases.create({ name: "Returns FAQ" });
    const withKb = await liveAgent({ ...config, knowledgeBaseIds: [kb.id] });
    const prod = await checkAndCreate(agents, {
      ...config,
      variables: [{ key: "region", defaultValue: "south" }],
    });
    const [reason] = reasons(
      await versions.check({}, versionInputs(prod.outs, { promote: { from: withKb.id } })),
    );
    expect(reason).toContain('knowledgeBaseIds (by name): staging ["Returns FAQ"], production []');
    expect(reason).toContain('variables[region].defaultValue: staging "north", production "south"');
    const ignored = versionInputs(prod.outs, {
      promote: { from: withKb.id, ignore: ["knowledgeBaseIds", "variables[region].defaultValue"] },
    });
    expect(reasons(await versions.check({}, ignored))).toEqual([]);
  });

  test("bad input is refused by field; an unknown `from` is never reported missing and reads nothing", async () => {
    const prod = await checkAndCreate(agents, config);
    const bad = await versions.check(
      {},
      versionInputs(prod.outs, {
        promote: {
          from: staging.id,
          minCals: 3,
          soakMinutes: -1,
          ignore: ["nmae"],
          rates: [{ analysis: "x" }],
        },
      }),
    );
    const found = reasons(bad).join("\n");
    expect(found).toContain("promote.minCals: not a field of promote");
    expect(found).toContain("promote.soakMinutes: must be a number of minutes >= 0");
    expect(found).toContain('promote.ignore[0]: "nmae" is not a path');
    expect(found).toContain('promote.rates[0].analysis: must be "<group>/<analysis>"');
    expect(found).toContain("promote.rates[0].atMost: required");
    const pinned = reasons(
      await versions.check({}, versionInputs(prod.outs, { pinnedVersion: 0, promote: { from: staging.id } })),
    );
    expect(pinned.join("\n")).toContain("a pinned version (`version`) publishes nothing");
    await clearRequestLog(emu);
    expect(
      reasons(await versions.check({}, versionInputs(prod.outs, { promote: { from: UNKNOWN } }))),
    ).toEqual([]);
    expect(await requestLog(emu)).toEqual([]);
  });

  test("a new production agent at preview: every known field compared, an unknown one left out alone", async () => {
    // The agent is created in the same deploy (its id unknown), and its knowledge base too.
    const fresh = (promoteConfig: unknown) => ({
      ...versionInputs(
        { agentId: UNKNOWN, contentHash: UNKNOWN },
        { promote: { from: staging.id, minCalls: 0 } },
      ),
      promoteConfig,
    });
    const differing = await versions.check(
      {},
      fresh({
        ...config,
        systemPrompt: PROMPT.replace("order number", "order id"),
        knowledgeBaseIds: [UNKNOWN],
      }),
    );
    const [reason, ...rest] = reasons(differing);
    expect(rest).toEqual([]);
    expect(reason).toContain("in 1 field:");
    expect(reason).toContain(
      `systemPrompt: staging line 4: "Ask for the order number.", production line 4: "Ask for the order id."`,
    );
    expect(reasons(await versions.check({}, fresh({ ...config, knowledgeBaseIds: [UNKNOWN] })))).toEqual([]);
    // Nothing of the configuration known yet: nothing is reported different.
    expect(reasons(await versions.check({}, fresh(UNKNOWN)))).toEqual([]);
  });

  test("staging in another workspace, reached with promote.apiKey: knowledge bases compared by name", async () => {
    const other = new VoiceAgentClient({ baseUrl: emu.url, apiKey: OTHER_KEY });
    const kbOther = await other.knowledgeBases.create({ name: "Returns FAQ" });
    const otherContext = contextFor(other);
    const made = await checkAndCreate(agentProvider(otherContext), {
      ...config,
      knowledgeBaseIds: [kbOther.id],
    });
    await checkAndCreate(agentVersionProvider(otherContext), versionInputs(made.outs));
    const kb = await client.knowledgeBases.create({ name: "Returns FAQ" });
    const prod = await checkAndCreate(agents, { ...config, knowledgeBaseIds: [kb.id] });
    const promote = { from: made.id, apiKey: OTHER_KEY };
    expect(reasons(await versions.check({}, versionInputs(prod.outs, { promote })))).toEqual([]);
    // Without the key, staging's agent is not in this workspace: said so, with what to check.
    const [reason] = reasons(
      await versions.check({}, versionInputs(prod.outs, { promote: { from: made.id } })),
    );
    expect(reason).toContain(`has no agent ${made.id}`);
    expect(reason).not.toContain(OTHER_KEY);
    // A wrong key: said so, without the key.
    const [refused] = reasons(
      await versions.check(
        {},
        versionInputs(prod.outs, { promote: { from: made.id, apiKey: "va_test_wrong" } }),
      ),
    );
    expect(refused).toContain("refused the key in promote.apiKey (HTTP 401)");
    expect(refused).not.toContain("va_test_wrong");
  });
});

/** Inbound calls to `agentId`, one per number, settled (finished and analysed) on return. */
async function callAgent(agentId: string, numbers: string[]): Promise<void> {
  for (const to_number of numbers)
    await trafficCall(emu, { agent_id: agentId, direction: "inbound", to_number });
  await new Promise((r) => setTimeout(r, 1300));
}

describe("promote fails closed", () => {
  test("calls that never connected are no proof: refused at up, saying so", async () => {
    const staging = await liveAgent(config);
    // Under either answer of the service: a never-connected call analysed to nulls (the
    // emulator's), or one carrying a full analysis (a rule's values).
    await setCallOutcomes(emu, [
      {
        match: { agent_id: staging.id, to_number: "+15550100001" },
        status: "no_answer",
        analysis: { "Default Analysis": { "User Sentiment": "positive" } },
      },
      { match: { agent_id: staging.id }, status: "failed" },
    ]);
    await callAgent(staging.id, ["+15550100001", "+15550100002"]);
    await setCallOutcomes(emu, []);
    const prod = await checkAndCreate(agents, config);
    const inputs = versionInputs(prod.outs, { promote: { from: staging.id, minCalls: 1 } });
    const checked = await versions.check({}, inputs);
    expect(reasons(checked)).toEqual([]);
    await expect(versions.create(checked.inputs)).rejects.toThrow(
      /has not proven itself yet: 0 of 1 calls \(origins [a-z, ]+\); not counted: 2 never connected\. Nothing was published or put live/,
    );
    expect((await client.agents.get(prod.id)).live_version).toBeNull();
  }, 20_000);

  test("minCalls defaults to 1: no call, no promotion", async () => {
    const staging = await liveAgent(config);
    const prod = await checkAndCreate(agents, config);
    const checked = await versions.check({}, versionInputs(prod.outs, { promote: { from: staging.id } }));
    expect(shortfallWarning(checked.inputs.promoteProof as Proof)).toContain("not yet proven: 0 of 1 calls");
    await expect(versions.create(checked.inputs)).rejects.toThrow(/0 of 1 calls/);
    expect((await client.agents.get(prod.id)).live_version).toBeNull();
  });

  test("a rate with no measured call is not met, with minCalls 0 or with every value null", async () => {
    const staging = await liveAgent(config);
    const prod = await checkAndCreate(agents, config);
    const rate = { analysis: "Default Analysis/User Sentiment", value: "negative", atMost: 0.5 };
    const noCalls = await versions.check(
      {},
      versionInputs(prod.outs, { promote: { from: staging.id, minCalls: 0, rates: [rate] } }),
    );
    expect(reasons(noCalls)).toEqual([]);
    await expect(versions.create(noCalls.inputs)).rejects.toThrow(
      /no call carries Default Analysis\/User Sentiment yet \(at most 50%\)/,
    );
    // Calls whose analysis extracted nothing (null): left out, and said so; still not met.
    await setCallOutcomes(emu, [
      { match: { agent_id: staging.id }, analysis: { "Default Analysis": { "User Sentiment": null } } },
    ]);
    await callAgent(staging.id, ["+15550100003", "+15550100004"]);
    await setCallOutcomes(emu, []);
    const nulls = await versions.check(
      {},
      versionInputs(prod.outs, { promote: { from: staging.id, minCalls: 2, rates: [rate] } }),
    );
    await expect(versions.create(nulls.inputs)).rejects.toThrow(
      /no call carries Default Analysis\/User Sentiment yet \(at most 50%\); 2 calls left out: 2 with a null value \(nothing extracted\)\. Met: 2 calls/,
    );
    expect((await client.agents.get(prod.id)).live_version).toBeNull();
  }, 20_000);

  test("a misspelt rate analysis is refused at preview by field, naming the closest analysis staging has", async () => {
    const staging = await liveAgent(config);
    const prod = await checkAndCreate(agents, config);
    const rates = [
      { analysis: "Default Analysis/User Sentiment", value: "negative", atMost: 0.5 },
      { analysis: "Default Analysis/User sentiment", value: "negative", atMost: 0.5 },
    ];
    await clearRequestLog(emu);
    const checked = await versions.check(
      {},
      versionInputs(prod.outs, { promote: { from: staging.id, rates } }),
    );
    expect(checked.failures?.map((f) => f.property)).toEqual(["promote.rates[1].analysis"]);
    expect(reasons(checked)[0]).toContain(
      `promote.rates[1].analysis: staging's live version 0 of agent ${staging.id} produces no analysis "Default Analysis/User sentiment"`,
    );
    expect(reasons(checked)[0]).toContain('the closest it has is "Default Analysis/User Sentiment"');
    // A preview writes nothing.
    expect((await requestLog(emu)).filter((e) => e.method !== "GET")).toEqual([]);
  });

  test("a rate's value staging's analysis never takes is refused at preview by field, listing what it takes", async () => {
    const staging = await liveAgent(config);
    const prod = await checkAndCreate(agents, config);
    const rates = [{ analysis: "Default Analysis/User Sentiment", value: "Negative", atMost: 0.2 }];
    const checked = await versions.check(
      {},
      versionInputs(prod.outs, { promote: { from: staging.id, rates } }),
    );
    expect(checked.failures?.map((f) => f.property)).toEqual(["promote.rates[0].value"]);
    expect(reasons(checked)[0]).toContain(
      'promote.rates[0].value: "Negative" is not a value of Default Analysis/User Sentiment: an enum of "positive", "neutral", "negative" (compared exactly, as calls carry them); did you mean "negative"?',
    );
  });

  test("a late `live: true` is checked like a publish: refused after staging moved on", async () => {
    const stagingAgent = await checkAndCreate(agents, config);
    const stagingLive = await checkAndCreate(versions, versionInputs(stagingAgent.outs));
    await callAgent(stagingAgent.id, ["+15550100005"]);
    const prod = await checkAndCreate(agents, config);
    const held = versionInputs(prod.outs, { live: false, promote: { from: stagingAgent.id } });
    const created = await checkAndCreate(versions, held);
    expect(created.outs.isLive).toBe(false);
    // Staging moves on: another prompt goes live there (no calls yet).
    const moved = await agents.update(stagingAgent.id, stagingAgent.outs, {
      ...stagingAgent.inputs,
      systemPrompt: PROMPT.replace("order number", "order id"),
    });
    await versions.update(stagingLive.id, stagingLive.outs, versionInputs(moved.outs as Record<string, any>));
    const late = { ...held, live: true };
    const checked = await versions.check(created.inputs, late);
    expect(reasons(checked).join("\n")).toContain(
      `systemPrompt: staging line 4: "Ask for the order id.", production line 4: "Ask for the order number."`,
    );
    await expect(versions.update(created.id, created.outs, late)).rejects.toThrow(
      /differs from staging's live version 1[\s\S]*Nothing was published or put live/,
    );
    expect((await client.agents.get(prod.id)).live_version).toBeNull();
  }, 20_000);

  test("a raised reinstate is checked at preview like a publish: a version staging moved on from is refused", async () => {
    const stagingAgent = await checkAndCreate(agents, config);
    const stagingLive = await checkAndCreate(versions, versionInputs(stagingAgent.outs));
    await callAgent(stagingAgent.id, ["+15550100008"]);
    const prod = await checkAndCreate(agents, config);
    const live = versionInputs(prod.outs, { promote: { from: stagingAgent.id } });
    const created = await checkAndCreate(versions, live);
    expect(created.outs.isLive).toBe(true);
    await client.versions.activate(prod.id, null); // taken off air (the watch, a person)
    const moved = await agents.update(stagingAgent.id, stagingAgent.outs, {
      ...stagingAgent.inputs,
      systemPrompt: PROMPT.replace("order number", "order id"),
    });
    await versions.update(stagingLive.id, stagingLive.outs, versionInputs(moved.outs as Record<string, any>));
    const checked = await versions.check(created.inputs, { ...live, reinstate: 1 });
    expect(reasons(checked).join("\n")).toContain("systemPrompt: staging line 4");
  }, 20_000);

  test("a rate is judged only over minCalls calls that carry its value: 1 of 10 refused naming the rate and the count; 10 of 10 accepted", async () => {
    const staging = await liveAgent(config);
    const sentiment = (v: string | null) => [
      { match: { agent_id: staging.id }, analysis: { "Default Analysis": { "User Sentiment": v } } },
    ];
    const numbers = (from: number) =>
      Array.from({ length: 9 }, (_, i) => `+155501002${String(from + i).padStart(2, "0")}`);
    await setCallOutcomes(emu, sentiment(null));
    await callAgent(staging.id, numbers(0));
    await setCallOutcomes(emu, sentiment("neutral"));
    await callAgent(staging.id, ["+15550100299"]);
    const prod = await checkAndCreate(agents, config);
    const rate = { analysis: "Default Analysis/User Sentiment", value: "negative", atMost: 0.2 };
    const promote = { from: staging.id, minCalls: 10, rates: [rate] };
    const few = await versions.check({}, versionInputs(prod.outs, { promote }));
    expect(reasons(few)).toEqual([]);
    expect(shortfallWarning(few.inputs.promoteProof as Proof)).toContain(
      "Default Analysis/User Sentiment measured on 1 of the 10 calls",
    );
    await expect(versions.create(few.inputs)).rejects.toThrow(
      /User Sentiment measured on 1 of the 10 calls, "negative" on 0: too few to judge \(at least 10 measured calls needed; at most 20%\)[\s\S]*Nothing was published or put live/,
    );
    expect((await client.agents.get(prod.id)).live_version).toBeNull();
    // Nine more neutral calls: 10 measured, none negative, within 20%: promoted.
    await callAgent(staging.id, numbers(10));
    await setCallOutcomes(emu, []);
    const enough = await versions.check({}, versionInputs(prod.outs, { promote }));
    expect(shortfallWarning(enough.inputs.promoteProof as Proof)).toBeUndefined();
    const created = await versions.create(enough.inputs);
    expect((created.outs as Record<string, any>).promotion).toMatchObject({
      calls: 19,
      rates: [{ share: 0, measured: 10, atMost: 0.2 }],
    });
    // With confidence 0.95, 0 of 10 is not enough to tell (Wilson's top is 27.8%): not met.
    const strict = await versions.check(
      {},
      versionInputs(prod.outs, { promote: { ...promote, confidence: 0.95 } }),
    );
    expect(shortfallWarning(strict.inputs.promoteProof as Proof)).toContain("interval 0% to 27.8%");
  }, 60_000);

  test("real proof is accepted: answered, analysed calls within the rate", async () => {
    const staging = await liveAgent(config);
    await callAgent(staging.id, ["+15550100006", "+15550100007"]);
    const prod = await checkAndCreate(agents, config);
    const rate = { analysis: "Default Analysis/User Sentiment", value: "negative", atMost: 0.1 };
    const checked = await versions.check(
      {},
      versionInputs(prod.outs, { promote: { from: staging.id, minCalls: 2, rates: [rate] } }),
    );
    expect(shortfallWarning(checked.inputs.promoteProof as Proof)).toBeUndefined();
    const created = await versions.create(checked.inputs);
    expect((created.outs as Record<string, any>).promotion).toMatchObject({
      calls: 2,
      rates: [{ share: 0, measured: 2, atMost: 0.1 }],
    });
    expect((await client.agents.get(prod.id)).live_version).toBe(
      (created.outs as Record<string, any>).version,
    );
  }, 20_000);
});
