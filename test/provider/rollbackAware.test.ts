/**
 * Rollback-aware deploys at the provider level: a version the AgentVersion put live that was taken
 * off air afterwards (a rollback in the dashboard or by the watch, a deactivation) is recorded by
 * `read` (`rolledBack`), left off air by `diff` and by an `update` that finds it so, put back by a
 * raised `reinstate`, and replaced as usual by a new configuration. `watch` and `reinstate` are
 * checked at preview, each problem named by its field.
 */
import { beforeEach, describe, expect, test } from "vitest";
import type { VoiceAgentClient } from "../../src/client";
import type { RunningEmulator } from "../../src/emulator";
import { UNKNOWN } from "../../src/provider/normalize";
import { agentProvider } from "../../src/resources/agent/provider";
import { OUTCOME_FIELDS, OUTCOME_KEY } from "../../src/resources/agentVersion/layout";
import { previewNote } from "../../src/resources/agentVersion/plan";
import { agentVersionDynamicProvider, agentVersionProvider } from "../../src/resources/agentVersion/provider";
import { rollbackLine, rollbackNote } from "../../src/resources/agentVersion/rollback";
import { analysisGroupProvider } from "../../src/resources/analysisGroup/provider";
import { clearRequestLog, requestLog, resetEmulator } from "../support/control";
import { checkAndCreate, emulatorForFile, testContext, versionInputs } from "./support";

const agents = agentProvider(testContext);
const versions = agentVersionProvider(testContext);

let emu: RunningEmulator;
let client: VoiceAgentClient;
emulatorForFile({}, (e, c) => {
  emu = e;
  client = c;
});
beforeEach(async () => {
  await resetEmulator(emu);
});

type Props = Record<string, any>;

/** An agent with versions 0 and 1 published by the stack, version 1 live: the AgentVersion's state. */
async function twoVersions(extra: Props = {}) {
  const base = { name: "Rollback-aware agent", systemPrompt: "## Agent Purpose\nv0" };
  const a = await checkAndCreate(agents, base);
  const v0 = await checkAndCreate(versions, versionInputs(a.outs, extra));
  const news = (await agents.check(a.inputs, { ...a.inputs, systemPrompt: "## Agent Purpose\nv1" })).inputs;
  const a1 = await agents.update(a.id, a.outs, news);
  const inputs = versionInputs(a1.outs as Props, extra);
  expect((await versions.diff(v0.id, v0.outs, inputs)).changes).toBe(true);
  const v1 = await versions.update(v0.id, v0.outs, inputs);
  expect(v1.outs).toMatchObject({ version: 1, isLive: true });
  return {
    agentId: a.id as string,
    id: v0.id,
    inputs,
    outs: v1.outs as Props,
    agent: { ...a1, inputs: news },
  };
}

describe("the dynamic resource's state", () => {
  test("keeps the outcome in one output; a state written before (at the top level) reads alike, and a rollback since is still kept off air", async () => {
    const dynamic = agentVersionDynamicProvider(testContext);
    // The handlers' layout: what every earlier release wrote in a dynamic resource's state.
    const s = await twoVersions();
    const outcomeOf = (props: Props | undefined) => {
      for (const field of OUTCOME_FIELDS) expect(props, field).not.toHaveProperty(field);
      return props?.[OUTCOME_KEY];
    };
    expect((await dynamic.diff(s.id, s.outs, s.inputs)).changes).toBe(false);
    const refreshed = await dynamic.read(s.id, s.outs);
    expect(refreshed.props).toMatchObject({ version: 1, isLive: true });
    expect(outcomeOf(refreshed.props)).toEqual({
      origin: "published",
      activation: "activate",
      blockedReasons: [],
    });
    expect((await dynamic.diff(s.id, refreshed.props as Props, s.inputs)).changes).toBe(false);

    // Taken off air since: the refresh records it in the outcome, and no deploy puts it back.
    const row = await client.versions.activate(s.agentId, 0);
    const off = await dynamic.read(s.id, refreshed.props as Props);
    expect(outcomeOf(off.props)).toMatchObject({
      rolledBack: { at: row.at, action: "rollback", to: 0, recorded: false },
    });
    // The refresh shows it (the engine diffs the state it read against the program's inputs).
    expect((await dynamic.diff(s.id, off.props as Props, s.inputs)).changes).toBe(true);
    // A label change writes the label only: the version stays off air, its outcome kept.
    const labelled = { ...s.inputs, label: "Release 1" };
    const checked = await dynamic.check(off.inputs as Props, labelled);
    expect(checked.failures ?? []).toEqual([]);
    const updated = await dynamic.update(s.id, off.props as Props, checked.inputs as Props);
    expect(updated.outs).toMatchObject({ version: 1, isLive: false, label: "Release 1" });
    expect(outcomeOf(updated.outs)).toMatchObject({
      origin: "published",
      rolledBack: { action: "rollback", to: 0, recorded: true },
    });
    expect((await client.agents.get(s.agentId)).live_version).toBe(0);
    // Recorded by that deploy: quiet from then on.
    expect((await dynamic.diff(s.id, updated.outs as Props, checked.inputs as Props)).changes).toBe(false);
  });
});

describe("a version taken off air after this stack put it live", () => {
  test("refresh records the row that did it and the watch's reason; no deploy puts it back", async () => {
    const s = await twoVersions();
    const row = await client.versions.activate(s.agentId, 0);
    // The watch writes why into the notes of the version it put back live.
    const line = rollbackLine(row.at, 1, 0, "Default Analysis/User Sentiment = negative on 12 of 30 calls");
    await client.agents.patch(s.agentId, { notes: rollbackNote("Release 0", line) }, { version: 0 });

    const read = await versions.read(s.id, s.outs);
    expect(read.inputs?.live).toBe(true);
    expect(read.props).toMatchObject({
      version: 1,
      isLive: false,
      rolledBack: {
        at: row.at,
        action: "rollback",
        to: 0,
        reason: "Default Analysis/User Sentiment = negative on 12 of 30 calls",
      },
    });
    expect(read.props?.rolledBack.recorded).toBe(false);
    // The refresh shows the change: the engine diffs the state it read against the program's inputs
    // (pulumi#16146), so `refresh --expect-no-changes` fails and a drift alarm sees production moved.
    expect((await versions.diff(s.id, read.props as Props, s.inputs)).changes).toBe(true);

    // A second refresh finds the same row: it keeps the reason without reading the notes again, and
    // still shows it until a deploy records it.
    await clearRequestLog(emu);
    const again = await versions.read(s.id, read.props as Props);
    expect(again.props?.rolledBack).toEqual(read.props?.rolledBack);
    const log = (await requestLog(emu)).map((r) => `${r.method} ${r.path.replace(/[0-9a-f-]{36}/, ":id")}`);
    expect(log).toEqual(["GET /v1/agents/:id?version=1", "GET /v1/agents/:id/activations"]);
    expect((await versions.diff(s.id, again.props as Props, s.inputs)).changes).toBe(true);

    // The next `up` (the same program): its preview says the version stays off air, and the update
    // records the rollback writing nothing to the service.
    const checked = await versions.check(again.inputs as Props, s.inputs);
    expect(checked.failures ?? []).toEqual([]);
    expect(checked.inputs).toMatchObject({ version: 1, isLive: false, rolledBack: { at: row.at, to: 0 } });
    expect(previewNote(checked.inputs as Props, "v")?.message).toMatch(
      new RegExp(`^version 1 stays off air: .*${row.at}`),
    );
    await clearRequestLog(emu);
    const updated = await versions.update(s.id, again.props as Props, checked.inputs as Props);
    const writes = (await requestLog(emu)).filter((r) => r.method !== "GET");
    expect(writes).toEqual([]);
    expect(updated.outs).toMatchObject({ isLive: false, rolledBack: { at: row.at, recorded: true } });
    expect((await client.agents.get(s.agentId)).live_version).toBe(0);

    // From then on preview and refresh are quiet: no change, no line, and a no-op check reads nothing.
    expect((await versions.diff(s.id, updated.outs as Props, checked.inputs as Props)).changes).toBe(false);
    expect(previewNote(updated.outs as Props, "v")).toBeUndefined();
    await clearRequestLog(emu);
    const quiet = await versions.check(checked.inputs as Props, s.inputs);
    expect(await requestLog(emu)).toEqual([]);
    expect((await versions.diff(s.id, updated.outs as Props, quiet.inputs as Props)).changes).toBe(false);
    const reread = await versions.read(s.id, updated.outs as Props);
    expect(reread.props?.rolledBack.recorded).toBe(true);
    expect((await versions.diff(s.id, reread.props as Props, checked.inputs as Props)).changes).toBe(false);

    // Another rollback elsewhere later (back live, then off air again): shown again, once.
    await client.versions.activate(s.agentId, 1);
    const later = await client.versions.activate(s.agentId, 0);
    const next = await versions.read(s.id, reread.props as Props);
    expect(next.props?.rolledBack).toMatchObject({ at: later.at, recorded: false });
    expect((await versions.diff(s.id, next.props as Props, checked.inputs as Props)).changes).toBe(true);
  });

  test("the recording deploy's preview names the version when neither live nor the draft holds it (a draft open again)", async () => {
    const s = await twoVersions();
    // Someone opens a draft in the dashboard (and undoes the edit), then puts version 0 back live.
    await client.agents.patch(s.agentId, { name: "Rollback-aware agent, renamed" });
    await client.agents.patch(s.agentId, { name: "Rollback-aware agent" });
    const row = await client.versions.activate(s.agentId, 0);
    const read = await versions.read(s.id, s.outs);
    expect(read.props?.rolledBack).toMatchObject({ at: row.at, recorded: false });
    // The program's view after the refresh: the Agent as read now (its draft the open one).
    const agentNow = await agents.read(s.agentId, s.agent.outs);
    const news = versionInputs(agentNow.props as Props);
    expect(news.draftVersion).toBe(2);
    const checked = await versions.check(read.inputs as Props, news);
    expect(checked.inputs).toMatchObject({ version: 1, isLive: false, rolledBack: { at: row.at, to: 0 } });
    expect(previewNote(checked.inputs as Props, "v")?.message).toMatch(
      /^version 1 stays off air: rolled back at/,
    );
  });

  test("an update without a refresh (a label change) finds it off air and leaves it there", async () => {
    const s = await twoVersions();
    const row = await client.versions.activate(s.agentId, null); // taken off air in the dashboard
    const relabel = { ...s.inputs, label: "hotfix" };
    expect((await versions.diff(s.id, s.outs, relabel)).changes).toBe(true);
    const updated = await versions.update(s.id, s.outs, relabel);
    expect(updated.outs).toMatchObject({
      isLive: false,
      label: "hotfix",
      rolledBack: { at: row.at, action: "deactivate", to: null },
    });
    expect((await client.agents.get(s.agentId)).live_version).toBeNull();
    expect((await versions.diff(s.id, updated.outs as Props, relabel)).changes).toBe(false);
  });

  test("the preview of a change to that AgentVersion (a label) still says it stays off air", async () => {
    const s = await twoVersions();
    const row = await client.versions.activate(s.agentId, 0); // a rollback in the dashboard
    const checked = await versions.check(s.inputs, { ...s.inputs, label: "hotfix" });
    // The engine previews the update with these as its outputs: the program warns of rolledBack.
    expect(checked.inputs).toMatchObject({
      version: 1,
      isLive: false,
      rolledBack: { at: row.at, action: "rollback", to: 0 },
    });
    // Asked back live (reinstate raised): not said to stay off air.
    const back = await versions.check(s.inputs, { ...s.inputs, reinstate: 1 });
    expect(back.inputs).toMatchObject({ version: 1, isLive: true });
    expect(back.inputs.rolledBack).toBeUndefined();
  });

  test("raising reinstate puts it back live; lowering it again changes nothing", async () => {
    const s = await twoVersions();
    await client.versions.activate(s.agentId, 0);
    const read = await versions.read(s.id, s.outs);
    const reinstate = { ...s.inputs, reinstate: 1 };
    const checked = await versions.check(read.props as Props, reinstate);
    expect(checked.failures ?? []).toEqual([]);
    expect((await versions.diff(s.id, read.props as Props, reinstate)).changes).toBe(true);
    const back = await versions.update(s.id, read.props as Props, reinstate);
    expect(back.outs).toMatchObject({ version: 1, isLive: true, activation: "activate" });
    expect(back.outs).not.toHaveProperty("rolledBack");
    expect((await client.agents.get(s.agentId)).live_version).toBe(1);

    // Taken off again: reinstate 1 is already recorded, so it stays off air until raised to 2.
    await client.versions.activate(s.agentId, 0);
    const read2 = await versions.read(s.id, back.outs as Props);
    expect(read2.props?.rolledBack).toMatchObject({ action: "rollback", to: 0, recorded: false });
    // Shown by that refresh (not yet recorded); the update that records it leaves it off air.
    expect((await versions.diff(s.id, read2.props as Props, reinstate)).changes).toBe(true);
    const recorded = await versions.update(s.id, read2.props as Props, reinstate);
    expect(recorded.outs).toMatchObject({ isLive: false, rolledBack: { to: 0, recorded: true } });
    expect((await client.agents.get(s.agentId)).live_version).toBe(0);
    expect((await versions.diff(s.id, recorded.outs as Props, reinstate)).changes).toBe(false);
    const lowered = { ...s.inputs, reinstate: 0 };
    const kept = await versions.update(s.id, read2.props as Props, lowered);
    expect(kept.outs).toMatchObject({ isLive: false, rolledBack: { to: 0 } });
    expect((await client.agents.get(s.agentId)).live_version).toBe(0);
  });

  test("a new configuration publishes and goes live as usual", async () => {
    const s = await twoVersions();
    await client.versions.activate(s.agentId, 0);
    const read = await versions.read(s.id, s.outs);
    // The Agent's refresh reads the live version 0; the program's new prompt opens draft 2.
    const agentRead = await agents.read(s.agentId, s.agent.outs as Props);
    const news = (
      await agents.check(agentRead.inputs as Props, {
        ...s.agent.inputs,
        systemPrompt: "## Agent Purpose\nv2",
      })
    ).inputs;
    const a2 = await agents.update(s.agentId, agentRead.props as Props, news);
    const inputs = versionInputs(a2.outs as Props);
    expect((await versions.diff(s.id, read.props as Props, inputs)).changes).toBe(true);
    const v2 = await versions.update(s.id, read.props as Props, inputs);
    expect(v2.outs).toMatchObject({ version: 2, isLive: true, origin: "published" });
    expect(v2.outs).not.toHaveProperty("rolledBack");
  });

  test("back live by someone else: the record goes, nothing to do", async () => {
    const s = await twoVersions();
    await client.versions.activate(s.agentId, 0);
    const read = await versions.read(s.id, s.outs);
    await client.versions.activate(s.agentId, 1);
    const again = await versions.read(s.id, read.props as Props);
    expect(again.props).toMatchObject({ isLive: true });
    expect(again.props).not.toHaveProperty("rolledBack");
    expect((await versions.diff(s.id, again.props as Props, s.inputs)).changes).toBe(false);
  });

  test("a version published with live: false is not rolled back; live: true then puts it live", async () => {
    const s = await twoVersions();
    const parked = { ...s.inputs, live: false };
    const off = await versions.update(s.id, s.outs, parked);
    // live: false does not move the pointer: version 1 is still live; take it off as a person would.
    await client.versions.activate(s.agentId, 0);
    const read = await versions.read(s.id, off.outs as Props);
    expect(read.props).not.toHaveProperty("rolledBack");
    const on = await versions.update(s.id, read.props as Props, s.inputs);
    expect(on.outs).toMatchObject({ isLive: true });
  });
});

describe("check: watch and reinstate", () => {
  const watch = { rates: [{ analysis: "Default Analysis/User Sentiment", value: "negative", atMost: 0.2 }] };

  test("a valid watch with both kinds of rate passes", async () => {
    const r = await versions.check(
      {},
      {
        agentId: UNKNOWN,
        draftVersion: 0,
        documentRevision: 1,
        watch: {
          rates: [
            ...watch.rates,
            { status: ["failed", "no_answer"], atMost: 0.05 },
            { status: "busy", atMost: 0.1 },
          ],
          minCalls: 30,
          windowMinutes: 60,
          origins: ["inbound", "widget"],
          confidence: 0.9,
        },
        reinstate: 2,
      },
    );
    expect(r.failures ?? []).toEqual([]);
  });

  test("each problem names its field; unknown keys are refused; unknowns at preview are left alone", async () => {
    const r = await versions.check(
      {},
      {
        agentId: UNKNOWN,
        draftVersion: 0,
        documentRevision: 1,
        watch: {
          rates: [
            { analysis: "Sentiment", value: "negative", atMost: 1.5 },
            { status: [], atMost: 0.1 },
            { analysis: "Default Analysis/Outcome", value: "resolved", atMost: 0.1, atLeast: 0.5 },
          ],
          minCalls: 0,
          confidence: 1,
          window: 5,
        },
        reinstate: -1,
      },
    );
    const reasons = (r.failures ?? []).map((f) => `${f.property}: ${f.reason}`).join("\n");
    expect(reasons).toMatch(/^watch\.rates\[0\]\.analysis: .*"<group>\/<analysis>"/m);
    expect(reasons).toMatch(/^watch\.rates\[0\]\.atMost: /m);
    expect(reasons).toMatch(/^watch\.rates\[1\]\.status: /m);
    expect(reasons).toMatch(/^watch\.rates\[2\]\.atLeast: .*extra_forbidden/m);
    expect(reasons).toMatch(/^watch\.minCalls: /m);
    expect(reasons).toMatch(/^watch\.confidence: /m);
    expect(reasons).toMatch(/^watch\.window: .*extra_forbidden/m);
    expect(reasons).toMatch(/^reinstate: reinstate: must be an integer >= 0/m);

    const unknown = await versions.check(
      {},
      {
        agentId: UNKNOWN,
        draftVersion: 0,
        documentRevision: 1,
        watch: { rates: [{ analysis: UNKNOWN, value: "negative", atMost: UNKNOWN }], minCalls: UNKNOWN },
        reinstate: UNKNOWN,
      },
    );
    expect(unknown.failures ?? []).toEqual([]);
  });

  test("a rate naming an analysis no group of the workspace has is refused at preview, with the closest", async () => {
    const misspelt = {
      rates: [{ analysis: "Default Analysis/User Sentimnet", value: "negative", atMost: 0.2 }],
    };
    const r = await versions.check(
      {},
      { agentId: UNKNOWN, draftVersion: 0, documentRevision: 1, watch: misspelt },
    );
    expect(r.failures).toEqual([
      {
        property: "watch.rates[0].analysis",
        reason: expect.stringContaining(
          'no enabled analysis group of this workspace has an enabled analysis "Default Analysis/User Sentimnet" (names are compared exactly, as calls key them); the closest is "Default Analysis/User Sentiment"',
        ),
      },
    ]);
    // Unchanged since the last deploy: not read again (a no-op preview reads nothing).
    await clearRequestLog(emu);
    await versions.check({ watch }, { agentId: UNKNOWN, draftVersion: 0, documentRevision: 1, watch });
    expect(await requestLog(emu)).toEqual([]);
  });

  test("a rate on an analysis an AnalysisGroup of this deployment declares is not refused at preview", async () => {
    // The group is created in the same deploy: the workspace holds no "QA/Resolved" yet.
    const groups = analysisGroupProvider(testContext);
    const declared = await groups.check({}, { name: "QA", items: [{ name: "Resolved", type: "boolean" }] });
    expect(declared.failures ?? []).toEqual([]);
    const rate = (analysis: string) => ({ rates: [{ analysis, value: false, atMost: 0.2 }] });
    const ok = await versions.check(
      {},
      { agentId: UNKNOWN, draftVersion: 0, documentRevision: 1, watch: rate("QA/Resolved") },
    );
    expect(ok.failures ?? []).toEqual([]);
    const typo = await versions.check(
      {},
      { agentId: UNKNOWN, draftVersion: 0, documentRevision: 1, watch: rate("QA/Resolvd") },
    );
    expect(typo.failures?.map((f) => f.property)).toEqual(["watch.rates[0].analysis"]);
  });

  test("a rate's value must be one its analysis takes, a status one of a finished call's: refused at preview naming the field and what is allowed", async () => {
    const groups = analysisGroupProvider(testContext);
    await groups.check({}, { name: "QA", items: [{ name: "Resolved", type: "boolean" }] });
    const r = await versions.check(
      {},
      {
        agentId: UNKNOWN,
        draftVersion: 0,
        documentRevision: 1,
        watch: {
          rates: [
            { analysis: "Default Analysis/User Sentiment", value: "Negative", atMost: 0.2 },
            { status: ["failed", "no-answer"], atMost: 0.05 },
            { analysis: "QA/Resolved", value: "false", atMost: 0.2 },
            { analysis: "Default Analysis/Outcome", value: "resolved", atMost: 0.2 },
          ],
        },
      },
    );
    expect(r.failures?.map((f) => f.property)).toEqual([
      "watch.rates[1].status[1]",
      "watch.rates[0].value",
      "watch.rates[2].value",
    ]);
    expect(r.failures?.[0]?.reason).toContain(
      'watch.rates[1].status[1]: "no-answer" is not a status of a finished call; one of completed, voicemail, no_answer, busy, declined, failed, transfer_completed, transfer_failed (did you mean "no_answer"?)',
    );
    // The values are read against the library (and this deployment's groups), in their words.
    expect(r.failures?.slice(1)).toEqual([
      {
        property: "watch.rates[0].value",
        reason:
          'watch.rates[0].value: "Negative" is not a value of Default Analysis/User Sentiment: an enum of "positive", "neutral", "negative" (compared exactly, as calls carry them); did you mean "negative"?: the rate could never fire',
      },
      {
        property: "watch.rates[2].value",
        reason:
          'watch.rates[2].value: "false" is not a value of QA/Resolved: it holds a boolean (true or false), so no call carries "false": the rate could never fire',
      },
    ]);
  });

  test("a rate on a group the version does not attach is refused at preview when known; unknown ids are left alone", async () => {
    const s = await twoVersions();
    const rate = { rates: [{ analysis: "Default Analysis/User Sentiment", value: "negative", atMost: 0.2 }] };
    // The Agent declares no group: the version attaches what the agent has (Default Analysis).
    const attached = await versions.check({}, { ...s.inputs, watch: rate });
    expect(attached.failures ?? []).toEqual([]);
    const none = await versions.check({}, { ...s.inputs, watch: rate, attachedGroupIds: [] });
    expect(none.failures).toEqual([
      {
        property: "watch.rates[0].analysis",
        reason: expect.stringContaining(
          'watch.rates[0].analysis: the version does not attach the analysis group "Default Analysis" (it attaches none)',
        ),
      },
    ]);
    const unknown = await versions.check({}, { ...s.inputs, watch: rate, attachedGroupIds: [UNKNOWN] });
    expect(unknown.failures ?? []).toEqual([]);
  });

  test("a verification's expected analysis value must be one the analysis takes", async () => {
    const r = await versions.check(
      {},
      {
        agentId: UNKNOWN,
        draftVersion: 0,
        documentRevision: 1,
        verify: {
          calls: [
            {
              toNumber: "+15550100001",
              expect: {
                analysis: {
                  "Default Analysis": { "User Sentiment": ["positive", "Neutral"], Outcome: "resolved" },
                },
              },
            },
            {
              toNumber: "+15550100002",
              expect: { analysis: { "Default Analysis": { "User Sentiment": UNKNOWN } } },
            },
          ],
        },
      },
    );
    expect(r.failures).toEqual([
      {
        property: 'verify.calls[0].expect.analysis["Default Analysis"]["User Sentiment"][1]',
        reason: expect.stringContaining(
          '"Neutral" is not a value of Default Analysis/User Sentiment: an enum of "positive", "neutral", "negative" (compared exactly, as calls carry them); did you mean "neutral"?: the test call could never pass',
        ),
      },
    ]);
  });

  test("a change of watch alone is recorded: no request", async () => {
    const s = await twoVersions();
    const watched = { ...s.inputs, watch };
    expect((await versions.diff(s.id, s.outs, watched)).changes).toBe(true);
    await clearRequestLog(emu);
    const updated = await versions.update(s.id, s.outs, watched);
    expect(updated.outs).toMatchObject({ watch, isLive: true });
    const writes = (await requestLog(emu)).filter((r) => r.method !== "GET");
    expect(writes).toEqual([]);
  });
});

describe("taken off air is a fact of the service, not of one resource's state", () => {
  /** Version 1 rolled back to 0 (as the watch does, its reason in version 0's notes), refreshed. */
  async function rolledBack() {
    const s = await twoVersions();
    const row = await client.versions.activate(s.agentId, 0);
    const line = rollbackLine(row.at, 1, 0, "Default Analysis/User Sentiment = negative on 12 of 30 calls");
    await client.agents.patch(s.agentId, { notes: rollbackNote(null, line) }, { version: 0 });
    const agent = await agents.read(s.agentId, s.agent.outs as Props);
    const version = await versions.read(s.id, s.outs);
    return { ...s, row, agent: { outs: agent.props as Props, inputs: s.agent.inputs }, version };
  }

  /** The Agent's `up` of `prompt`, and the AgentVersion's checked inputs for it. */
  async function deploy(
    agent: { outs: Props; inputs: Props },
    olds: Props,
    prompt: string,
    extra: Props = {},
  ) {
    const news = (await agents.check(agent.inputs, { ...agent.inputs, systemPrompt: prompt })).inputs;
    const written = await agents.update(agent.outs.agentId, agent.outs, news);
    const checked = await versions.check(olds, versionInputs(written.outs as Props, extra));
    expect(checked.failures ?? []).toEqual([]);
    return { agent: { outs: written.outs as Props, inputs: news }, inputs: checked.inputs };
  }

  test("after a rollback, refresh then preview: no Agent change (no draft opened); the version stays off air", async () => {
    const s = await rolledBack();
    expect(s.agent.outs.systemPrompt).toBe("## Agent Purpose\nv1");
    expect((await agents.diff(s.agentId, s.agent.outs, s.agent.inputs)).changes).toBe(false);
    // The version's refresh shows the rollback (once, until an `up` records it); it stays off air.
    expect((await versions.diff(s.id, s.version.props as Props, s.inputs)).changes).toBe(true);
    expect(s.version.props).toMatchObject({
      version: 1,
      isLive: false,
      rolledBack: { at: s.row.at, recorded: false },
    });
  });

  test("a revert then a re-apply: the rolled-back version stays off air, said at preview; reinstate puts it back", async () => {
    const s = await rolledBack();
    const olds = s.version.inputs as Props;
    // The revert: version 0 (live already) is reused.
    const revert = await deploy(s.agent, olds, "## Agent Purpose\nv0");
    const reverted = await versions.update(s.id, s.version.props as Props, revert.inputs);
    expect(reverted.outs).toMatchObject({ version: 0, isLive: true });

    // The re-apply's preview: the Agent changes, so what it records is unknown to the AgentVersion.
    const reapply = (
      await agents.check(revert.agent.inputs, {
        ...revert.agent.inputs,
        systemPrompt: "## Agent Purpose\nv1",
      })
    ).inputs;
    const unknown = Object.fromEntries(
      [
        "knownVersion",
        "knownUpTo",
        "draftVersion",
        "documentRevision",
        "draftPublished",
        "draftHash",
        "latestVersion",
      ].map((k) => [k, UNKNOWN]),
    );
    const preview = await versions.check(revert.inputs, {
      ...versionInputs(revert.agent.outs),
      ...unknown,
      contentHash: UNKNOWN,
      __contentHash: reapply.__contentHash,
    });
    expect(preview.inputs).toMatchObject({
      version: 1,
      isLive: false,
      rolledBack: {
        at: s.row.at,
        action: "rollback",
        to: 0,
        reason: expect.stringContaining("on 12 of 30 calls"),
      },
    });

    // The re-apply's `up`: version 1 is found by its configuration, and stays off air.
    const up = await deploy(revert.agent, revert.inputs, "## Agent Purpose\nv1");
    const kept = await versions.update(s.id, reverted.outs as Props, up.inputs);
    expect(kept.outs).toMatchObject({
      version: 1,
      isLive: false,
      rolledBack: { at: s.row.at, action: "rollback" },
    });
    expect((await client.agents.get(s.agentId)).live_version).toBe(0);
    expect((await versions.diff(s.id, kept.outs as Props, up.inputs)).changes).toBe(false);

    // Raised `reinstate`: back live on purpose.
    const back = await versions.update(s.id, kept.outs as Props, { ...up.inputs, reinstate: 1 });
    expect(back.outs).toMatchObject({ version: 1, isLive: true });
    expect((await client.agents.get(s.agentId)).live_version).toBe(1);
  });

  test("a new AgentVersion for the same agent finds the rolled-back version and leaves it off air; a pin is allowed", async () => {
    const s = await twoVersions();
    const row = await client.versions.activate(s.agentId, 0);
    // The refresh that follows a rollback: the Agent still holds version 1's configuration.
    const agent = (await agents.read(s.agentId, s.agent.outs as Props)).props as Props;
    const fresh = await versions.check({}, versionInputs(agent));
    expect(fresh.inputs).toMatchObject({ version: 1, isLive: false, rolledBack: { at: row.at } });
    const created = await versions.create(fresh.inputs);
    expect(created.outs).toMatchObject({
      version: 1,
      isLive: false,
      rolledBack: { at: row.at, action: "rollback" },
    });
    expect((await client.agents.get(s.agentId)).live_version).toBe(0);
    // The program asking by name (`version: 1`) is allowed.
    const pinned = await checkAndCreate(versions, {
      ...versionInputs(s.agent.outs as Props),
      pinnedVersion: 1,
    });
    expect(pinned.outs).toMatchObject({ version: 1, isLive: true, origin: "pinned" });
  });
});

describe("the watch's rollback to a newer version (a row the service labels `activate`)", () => {
  test("a revert to the configuration of a version the watch judged failing does not reuse it; reinstate does", async () => {
    // Versions 0 and 1 by the stack; a person pins `version: 0` (1 -> 0, `rollback`).
    const s = await twoVersions();
    const pin = { ...s.inputs, pinnedVersion: 0 };
    const pinned = await versions.update(s.id, s.outs, pin);
    expect(pinned.outs).toMatchObject({ version: 0, isLive: true, origin: "pinned" });
    // Version 0 fails: the watch puts 1 back live (0 -> 1, labelled `activate`), why in 1's notes.
    const row = await client.versions.activate(s.agentId, 1);
    expect(row).toMatchObject({ action: "activate", previous_version: 0, version: 1 });
    const line = rollbackLine(row.at, 0, 1, "Default Analysis/User Sentiment = negative on 20 of 30 calls");
    await client.agents.patch(s.agentId, { notes: rollbackNote(null, line) }, { version: 1 });

    // The revert to version 0's configuration, the pin removed: found by its configuration, it
    // stays off air (said at preview, and by `up`).
    const news = (
      await agents.check(s.agent.inputs, { ...s.agent.inputs, systemPrompt: "## Agent Purpose\nv0" })
    ).inputs;
    const written = await agents.update(s.agentId, s.agent.outs, news);
    const checked = await versions.check(s.inputs, versionInputs(written.outs as Props));
    expect(checked.failures ?? []).toEqual([]);
    expect(checked.inputs).toMatchObject({
      version: 0,
      isLive: false,
      rolledBack: { at: row.at, action: "activate", to: 1, reason: expect.stringContaining("20 of 30") },
    });
    const up = await versions.update(s.id, pinned.outs as Props, checked.inputs as Props);
    expect(up.outs).toMatchObject({
      version: 0,
      isLive: false,
      origin: "reused",
      rolledBack: { at: row.at, action: "activate", to: 1 },
    });
    expect((await client.agents.get(s.agentId)).live_version).toBe(1);
    expect((await versions.diff(s.id, up.outs as Props, checked.inputs as Props)).changes).toBe(false);

    // Raised `reinstate`: back live on purpose, and no longer recorded off air.
    const back = await versions.update(s.id, up.outs as Props, {
      ...(checked.inputs as Props),
      reinstate: 1,
    });
    expect(back.outs).toMatchObject({ version: 0, isLive: true });
    expect(Object.values((back.outs as Props).offAir ?? {})).not.toContain(0);
    expect((await client.agents.get(s.agentId)).live_version).toBe(0);
  });

  test("a version another activation took off air while this stack had it live is recorded, and not reused", async () => {
    const s = await twoVersions();
    const pinned = await versions.update(s.id, s.outs, { ...s.inputs, pinnedVersion: 0 });
    // A person activates version 1 in the dashboard (0 -> 1, `activate`), no note of the watch.
    const row = await client.versions.activate(s.agentId, 1);
    const refreshed = await versions.read(s.id, pinned.outs as Props);
    expect(refreshed.props).toMatchObject({
      version: 0,
      isLive: false,
      rolledBack: { at: row.at, action: "activate" },
    });
    expect(Object.values((refreshed.props as Props).offAir ?? {})).toContain(0);
    const news = (
      await agents.check(s.agent.inputs, { ...s.agent.inputs, systemPrompt: "## Agent Purpose\nv0" })
    ).inputs;
    const written = await agents.update(s.agentId, s.agent.outs, news);
    const checked = await versions.check(refreshed.inputs as Props, versionInputs(written.outs as Props));
    expect(checked.inputs).toMatchObject({ version: 0, isLive: false, rolledBack: { action: "activate" } });
    const up = await versions.update(s.id, refreshed.props as Props, checked.inputs as Props);
    expect(up.outs).toMatchObject({
      version: 0,
      isLive: false,
      rolledBack: { at: row.at, action: "activate" },
    });
    expect((await client.agents.get(s.agentId)).live_version).toBe(1);
  });
});
