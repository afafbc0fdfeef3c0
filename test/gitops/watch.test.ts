/**
 * The watch's pass (`watchPass`) against the emulator, on a refresh JSON shaped as Pulumi writes it:
 * a bad live version is rolled back to the version before it (its reason in that version's notes,
 * read back by the AgentVersion's refresh); too few calls are inconclusive and untouched; a healthy
 * version is kept; `--dry-run` changes nothing; a deploy that moved the pointer meanwhile wins;
 * nothing to roll back to is reported, never acted on; versions the stack did not put live are
 * never touched; no call is ever placed. Then the Markdown report and the exit codes.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { beforeEach, describe, expect, test, vi } from "vitest";
import type { VoiceAgentClient } from "../../src/client";
import type { RunningEmulator } from "../../src/emulator";
import type { PreviewJson } from "../../src/gitops/preview";
import { renderWatch, watchExitCode, watchPass } from "../../src/gitops/watch";
import { agentProvider } from "../../src/resources/agent/provider";
import { agentVersionProvider } from "../../src/resources/agentVersion/provider";
import { TYPE_PREFIX } from "../../src/resources/typeNames";
import { checkAndCreate, emulatorForFile, testContext, versionInputs } from "../provider/support";
import { clearRequestLog, requestLog, resetEmulator, setCallOutcomes, trafficCall } from "../support/control";

const agents = agentProvider(testContext);
const versions = agentVersionProvider(testContext);

let emu: RunningEmulator;
let client: VoiceAgentClient;
emulatorForFile({ callSeconds: 0.05 }, (e, c) => {
  emu = e;
  client = c;
});
beforeEach(async () => {
  await resetEmulator(emu);
});

type Props = Record<string, any>;
const WATCH = { rates: [{ analysis: "Default Analysis/User Sentiment", value: "negative", atMost: 0.2 }] };

/** An agent whose stack put version 0, then (unless `one`) version 1 live, watched: the AgentVersion's state. */
async function deployed(name: string, extra: Props = { watch: WATCH }, one = false) {
  const a = await checkAndCreate(agents, { name, systemPrompt: "## Agent Purpose\nv0" });
  const v0 = await checkAndCreate(versions, versionInputs(a.outs, extra));
  if (one) return { agentId: a.id as string, id: v0.id, outs: v0.outs as Props, inputs: v0.inputs };
  const news = (await agents.check(a.inputs, { ...a.inputs, systemPrompt: "## Agent Purpose\nv1" })).inputs;
  const a1 = await agents.update(a.id, a.outs, news);
  const inputs = versionInputs(a1.outs as Props, extra);
  const v1 = await versions.update(v0.id, v0.outs, inputs);
  return { agentId: a.id as string, id: v0.id, outs: v1.outs as Props, inputs };
}

/** The refresh JSON of a stack holding these AgentVersions (name → state), as `pulumi refresh --preview-only --json` prints it. */
function refreshOf(resources: Record<string, { id: string; inputs: Props; outs: Props }>): PreviewJson {
  return {
    steps: [
      { op: "refresh", urn: "urn:pulumi:prod::watch::pulumi:pulumi:Stack::watch-prod" },
      ...Object.entries(resources).map(([name, r]) => ({
        op: "refresh",
        urn: `urn:pulumi:prod::watch::${TYPE_PREFIX}AgentVersion::${name}`,
        oldState: { type: `${TYPE_PREFIX}AgentVersion`, id: r.id, inputs: r.inputs, outputs: r.outs },
        newState: { type: `${TYPE_PREFIX}AgentVersion`, id: r.id, inputs: r.inputs, outputs: r.outs },
      })),
    ],
  };
}

/** `n` inbound calls to the agent's live version, the first `negative` of them with a negative sentiment; waits until all are analysed. */
async function traffic(agentId: string, n: number, negative: number, origin = "inbound") {
  for (let i = 0; i < n; i++) {
    await setCallOutcomes(emu, [
      {
        match: { agent_id: agentId },
        analysis: { "Default Analysis": { "User Sentiment": i < negative ? "negative" : "positive" } },
      },
    ]);
    await trafficCall(emu, { agent_id: agentId, direction: "inbound", origin } as never);
  }
  await setCallOutcomes(emu, []);
  for (let i = 0; i < 100; i++) {
    const page = await client.calls.listPage({ limit: 100 });
    if (page.data.every((c) => c.custom_analysis !== null)) return;
    await sleep(50);
  }
  throw new Error("the calls did not finish");
}

describe("a pass", () => {
  test("a bad version is rolled back to the version before it, its reason in that version's notes", async () => {
    const s = await deployed("Bad agent");
    await traffic(s.agentId, 30, 15);
    await clearRequestLog(emu);
    const report = await watchPass(refreshOf({ "support-live": s }), client);
    const [r] = report.results;
    expect(r).toMatchObject({ outcome: "rolled_back", version: 1, previous: 0, agentId: s.agentId });
    expect(r?.rates[0]).toMatchObject({
      matching: 15,
      measured: 30,
      share: 0.5,
      atMost: 0.2,
      verdict: "fail",
    });
    expect(r?.rates[0]?.low).toBeGreaterThan(0.2);
    expect(watchExitCode(report)).toBe(6);
    expect((await client.agents.get(s.agentId)).live_version).toBe(0);
    const history = await client.versions.activations(s.agentId).toArray();
    expect(history[0]).toMatchObject({ action: "rollback", version: 0, previous_version: 1 });
    // No call placed, and the only writes: the activation and version 0's notes.
    const writes = (await requestLog(emu))
      .filter((e) => e.method !== "GET")
      .map((e) => `${e.method} ${e.path}`);
    expect(writes).toEqual([
      `POST /v1/agents/${s.agentId}/activations`,
      `PATCH /v1/agents/${s.agentId}?version=0`,
    ]);
    const notes = (await client.agents.get(s.agentId, { version: 0 })).notes ?? "";
    expect(notes).toContain(
      `[voice-agent watch] ${history[0]?.at}: version 1 taken off air, version 0 put back live: `,
    );
    expect(notes).toContain('Default Analysis/User Sentiment = "negative" on 15 of 30 calls');

    // The next refresh of the AgentVersion records it, with the watch's reason.
    const read = await versions.read(s.id, s.outs);
    expect(read.props?.rolledBack).toMatchObject({ at: history[0]?.at, action: "rollback", to: 0 });
    expect(read.props?.rolledBack.reason).toContain("on 15 of 30 calls");

    const md = renderWatch(report);
    expect(md).toContain("### Voice agents: watch of stack `prod`");
    expect(md).toContain("**1 rolled back** (1 watched version;");
    expect(md).toContain("#### ↩ AgentVersion `support-live`: rolled back");
    expect(md).toMatch(
      /\| Default Analysis\/User Sentiment = "negative" \| 15 of 30 \| 50% \| [\d.]+% to [\d.]+% \| 20% \| \*\*fail\*\* \|/,
    );
    expect(md).toContain("**Did**: put version 0 back live at");

    // A second pass: the version is not live any more, nothing is done.
    const again = await watchPass(refreshOf({ "support-live": s }), client);
    expect(again.results[0]).toMatchObject({ outcome: "not_live" });
    expect(watchExitCode(again)).toBe(0);
  });

  test("five calls, all negative: inconclusive, untouched, the report says what is missing", async () => {
    const s = await deployed("Few calls");
    await traffic(s.agentId, 5, 5);
    const report = await watchPass(refreshOf({ "support-live": s }), client);
    expect(report.results[0]).toMatchObject({ outcome: "inconclusive" });
    expect(watchExitCode(report)).toBe(0);
    expect((await client.agents.get(s.agentId)).live_version).toBe(1);
    expect(renderWatch(report)).toContain(
      "too few to judge (at least 20 measured calls needed; at most 20%)",
    );
  });

  test("healthy: kept; calls of test origins (api, dashboard, demo) and of earlier versions are not judged", async () => {
    const s = await deployed("Healthy");
    // 50 calls, none negative: the confidence sequence puts the share below 20% (25 would not yet).
    await traffic(s.agentId, 50, 0);
    await traffic(s.agentId, 10, 10, "api");
    // A person trying the agent in the dashboard or a demo is a test too: not judged by default.
    await traffic(s.agentId, 10, 10, "dashboard");
    await traffic(s.agentId, 10, 10, "demo");
    const report = await watchPass(refreshOf({ "support-live": s }), client);
    expect(report.results[0]).toMatchObject({
      outcome: "healthy",
      calls: { analysed: 50, origins: ["widget", "batch", "inbound"] },
    });
    expect(report.results[0]?.rates[0]).toMatchObject({ matching: 0, measured: 50, verdict: "pass" });
    expect(watchExitCode(report)).toBe(0);
  });

  test("a rate on a group the live version does not attach: not measured, said, exit 5", async () => {
    const group = await client.analysis.create({
      name: "QA",
      items: [{ name: "Resolved", type: "boolean" }],
    });
    expect(group.name).toBe("QA");
    const watch = {
      rates: [
        { analysis: "Default Analysis/User Sentiment", value: "negative", atMost: 0.2 },
        { analysis: "QA/Resolved", value: false, atMost: 0.2 },
      ],
    };
    // Deployed when preview could not tell (the group created alongside, its id unknown).
    const s = await deployed("Unattached");
    await traffic(s.agentId, 25, 0);
    const report = await watchPass(
      refreshOf({ "support-live": { ...s, inputs: { ...s.inputs, watch } } }),
      client,
    );
    expect(report.results[0]).toMatchObject({
      outcome: "inconclusive",
      problem: "not measured: the version does not attach QA (attach it to the Agent, or change the rate)",
    });
    expect(watchExitCode(report)).toBe(5);
    expect((await client.agents.get(s.agentId)).live_version).toBe(1);
  });

  test("many versions without evidence: the library read once a pass, each published version once a watch", async () => {
    const stack = {
      a: await deployed("Quiet A"),
      b: await deployed("Quiet B"),
      c: await deployed("Quiet C"),
    };
    const attached = new Map<string, readonly string[]>();
    const reads = async () => {
      const log = (await requestLog(emu)).filter((e) => e.method === "GET");
      return {
        library: log.filter((e) => e.path.startsWith("/v1/custom-analysis")).length,
        versions: log.filter((e) => /^\/v1\/agents\/[^/?]+\?version=/.test(e.path)).length,
      };
    };
    for (const pass of [1, 2]) {
      await clearRequestLog(emu);
      const report = await watchPass(refreshOf(stack), client, { attached });
      // No call measured: inconclusive, the rate's group attached, so no "not measured" problem.
      expect(report.results.map((r) => [r.outcome, r.problem])).toEqual(
        Array.from({ length: 3 }, () => ["inconclusive", undefined]),
      );
      expect(await reads()).toEqual({ library: 1, versions: pass === 1 ? 3 : 0 });
    }
    // Without the map (a single pass, as before): every version read again.
    await clearRequestLog(emu);
    await watchPass(refreshOf(stack), client);
    expect(await reads()).toEqual({ library: 1, versions: 3 });
  });

  test("--dry-run says what it would do and changes nothing", async () => {
    const s = await deployed("Dry run");
    await traffic(s.agentId, 30, 20);
    await clearRequestLog(emu);
    const report = await watchPass(refreshOf({ "support-live": s }), client, { dryRun: true });
    expect(report.results[0]).toMatchObject({
      outcome: "would_roll_back",
      action: "would put version 0 back live",
    });
    expect(watchExitCode(report)).toBe(6);
    expect((await requestLog(emu)).filter((e) => e.method !== "GET")).toEqual([]);
    expect(renderWatch(report)).toContain("Dry run: nothing was changed.");
  });

  test("a deploy that moved the pointer right before the activation wins, and is reported", async () => {
    const s = await deployed("Race");
    await traffic(s.agentId, 30, 20);
    // The deploy: version 0 put live by someone else between the pass's two history reads.
    const get = client.agents.get.bind(client.agents);
    const getSpy = vi
      .spyOn(client.agents, "get")
      .mockImplementation(async (...args: Parameters<typeof get>) => {
        const out = await get(...args);
        if (args[1]?.version === 0) await client.versions.activate(s.agentId, 0);
        return out;
      });
    try {
      const report = await watchPass(refreshOf({ "support-live": s }), client);
      expect(report.results[0]).toMatchObject({ outcome: "superseded" });
      expect(report.results[0]?.action).toMatch(
        /the live pointer moved since this pass read it \(rollback to version 0 at .*\): that deploy wins/,
      );
      expect(watchExitCode(report)).toBe(0);
    } finally {
      getSpy.mockRestore();
    }
    const history = await client.versions.activations(s.agentId).toArray();
    expect(history.filter((h) => h.previous_version === 1)).toHaveLength(1);
  });

  test("nothing to roll back to (the first version ever live): reported, stays live, exit 7", async () => {
    const s = await deployed("First", { watch: WATCH }, true);
    await traffic(s.agentId, 30, 20);
    const report = await watchPass(refreshOf({ "support-live": s }), client);
    expect(report.results[0]).toMatchObject({ outcome: "failing", version: 0, previous: null });
    expect(report.results[0]?.problem).toContain("nothing safe to return to (the agent was off air before");
    expect(report.results[0]?.problem).toContain("A person decides: fix forward");
    expect(watchExitCode(report)).toBe(7);
    expect(renderWatch(report)).toContain(
      "#### · AgentVersion `support-live`: failing: nothing safe to return to",
    );
    expect((await client.agents.get(s.agentId)).live_version).toBe(0);
  });

  test("never back to a version a rollback took off air: after the revert, version 0 fails with nothing safe (exit 7)", async () => {
    const s = await deployed("Flip back");
    // Version 1 was taken off air by a rollback (the watch's, or a person's), and the team
    // reverted: the stack tracks version 0, whose row names version 1 as the one before it.
    const back = await client.versions.activate(s.agentId, 0);
    const v0 = await versions.read(s.id, { ...s.outs, version: 0, isLive: true });
    await traffic(s.agentId, 30, 20);
    const report = await watchPass(refreshOf({ "support-live": { ...s, outs: v0.props as Props } }), client);
    expect(report.results[0]).toMatchObject({ outcome: "failing", version: 0, previous: 1 });
    expect(report.results[0]?.problem).toContain(
      `nothing safe to return to (version 1 was taken off air by a rollback at ${back.at})`,
    );
    expect(watchExitCode(report)).toBe(7);
    expect((await client.agents.get(s.agentId)).live_version).toBe(0);
  });

  test("the newest safe version: a rolled-back one between is skipped", async () => {
    const s = await deployed("Skip");
    // Version 1 rolled back to 0; then version 2 goes live from 0, then 3 from 2 (a chain 0, 1, 0, 2, 3).
    await client.versions.activate(s.agentId, 0);
    for (const n of [2, 3]) {
      await client.agents.patch(s.agentId, { system_prompt: `## Agent Purpose\nv${n}` });
      await client.versions.publish(s.agentId, n);
      await client.versions.activate(s.agentId, n);
    }
    // Version 2 is rolled back to, then 3 again: 2 was taken off air by an activation, not a rollback.
    const outs = (await versions.read(s.id, { ...s.outs, version: 3, isLive: true })).props as Props;
    await traffic(s.agentId, 30, 20);
    const report = await watchPass(refreshOf({ "support-live": { ...s, outs } }), client, { dryRun: true });
    expect(report.results[0]).toMatchObject({ outcome: "would_roll_back", previous: 2, target: 2 });
    // With 2 rolled back as well, the next safe one is 0 (1 is skipped: a rollback took it off air).
    await client.versions.activate(s.agentId, 2);
    await client.versions.activate(s.agentId, 0);
    await client.versions.activate(s.agentId, 3);
    await traffic(s.agentId, 30, 20);
    const again = await watchPass(refreshOf({ "support-live": { ...s, outs } }), client, { dryRun: true });
    expect(again.results[0]).toMatchObject({ outcome: "would_roll_back", previous: 0, target: 0 });
  });

  test("a deploy landing between the last read and the activation: reported, no notes on the wrong version", async () => {
    const s = await deployed("Landed");
    await client.agents.patch(s.agentId, { system_prompt: "## Agent Purpose\nv2" });
    await client.versions.publish(s.agentId, 2);
    await traffic(s.agentId, 30, 20);
    const activate = client.versions.activate.bind(client.versions);
    const spy = vi
      .spyOn(client.versions, "activate")
      .mockImplementation(async (agentId: string, version: number | null) => {
        // The deploy's activation lands first, inside the one-request window.
        if (version === 0) await activate(agentId, 2);
        return activate(agentId, version);
      });
    try {
      const report = await watchPass(refreshOf({ "support-live": s }), client);
      expect(report.results[0]).toMatchObject({ outcome: "rolled_back", version: 1, target: 0 });
      expect(report.results[0]?.problem).toContain(
        "the activation took version 2 off air, not version 1: a deploy put it live between",
      );
      expect(report.results[0]?.action).toContain("no notes were written");
    } finally {
      spy.mockRestore();
    }
    expect((await client.agents.get(s.agentId, { version: 0 })).notes ?? "").not.toContain(
      "[voice-agent watch]",
    );
  });

  test("only versions this stack put live and asks live are judged; a watch that cannot be read is an error", async () => {
    const parked = await deployed("Parked");
    const unwatched = await deployed("Unwatched", {});
    const secret = await deployed("Secret");
    await traffic(parked.agentId, 30, 30);
    const report = await watchPass(
      refreshOf({
        parked: { ...parked, outs: { ...parked.outs, live: false } },
        unwatched,
        secret: { ...secret, inputs: { ...secret.inputs, watch: "[secret]" } },
      }),
      client,
    );
    expect(report.results.map((r) => [r.name, r.outcome])).toEqual([
      ["parked", "not_live"],
      ["secret", "error"],
    ]);
    expect(watchExitCode(report)).toBe(5);
    expect((await client.agents.get(parked.agentId)).live_version).toBe(1);
  });
});

describe("off air is our own record, whatever label the service gave the row", () => {
  /**
   * Versions 0, 1 and 2 put live in turn by the stack (watched), then a person pins `version: 0`
   * (2 -> 0, which the service labels `rollback`): the AgentVersion's state and its inputs.
   */
  async function pinnedBack(name: string) {
    const a = await checkAndCreate(agents, { name, systemPrompt: "## Agent Purpose\nv0" });
    let agent = { outs: a.outs as Props, inputs: a.inputs as Props };
    const v = await checkAndCreate(versions, versionInputs(agent.outs, { watch: WATCH }));
    let outs = v.outs as Props;
    for (const n of [1, 2]) {
      const news = (
        await agents.check(agent.inputs, { ...agent.inputs, systemPrompt: `## Agent Purpose\nv${n}` })
      ).inputs as Props;
      agent = { outs: (await agents.update(a.id, agent.outs, news)).outs as Props, inputs: news };
      outs = (await versions.update(v.id, outs, versionInputs(agent.outs, { watch: WATCH }))).outs as Props;
    }
    expect(outs).toMatchObject({ version: 2, isLive: true });
    const inputs = versionInputs(agent.outs, { watch: WATCH, pinnedVersion: 0 });
    const pinned = (await versions.update(v.id, outs, inputs)).outs as Props;
    expect(pinned).toMatchObject({ version: 0, isLive: true, origin: "pinned" });
    const [row] = await client.versions.activations(a.id).toArray();
    expect(row).toMatchObject({ action: "rollback", version: 0, previous_version: 2 });
    return { agentId: a.id as string, id: v.id, inputs, outs: pinned };
  }

  /** Version 0 fails: the watch skips 2 (rolled back) and puts 1 live, a row the service labels `activate`. */
  async function zeroFails(s: Awaited<ReturnType<typeof pinnedBack>>) {
    await traffic(s.agentId, 30, 20);
    const first = await watchPass(refreshOf({ support: s }), client);
    expect(first.results[0]).toMatchObject({
      outcome: "rolled_back",
      version: 0,
      target: 1,
      row: { action: "activate", previous_version: 0, version: 1 },
    });
    return first.results[0]?.row?.at as string;
  }

  test("the v0/v1/v2 pin sequence never puts version 0 back: the watch's line in version 1's notes says it failed (exit 7)", async () => {
    const s = await pinnedBack("Pinned back");
    const at = await zeroFails(s);
    // The team keeps what the watch chose (`version: 1`), without a refresh between: the stack's
    // state holds no record of version 0 taken off air, only the watch's notes do.
    const one = (await versions.update(s.id, s.outs, { ...s.inputs, pinnedVersion: 1 })).outs as Props;
    expect(one).toMatchObject({ version: 1, isLive: true });
    expect(one.offAir).toBeUndefined();
    // Version 1 fails too: 0 was judged failing, 2 was rolled back. Nothing is safe: nothing is done.
    await traffic(s.agentId, 30, 20);
    await clearRequestLog(emu);
    const second = await watchPass(refreshOf({ support: { ...s, outs: one } }), client);
    expect(second.results[0]).toMatchObject({ outcome: "failing", version: 1, previous: 0 });
    expect(second.results[0]?.problem).toContain(
      `version 0 was judged failing by the watch and taken off air at ${at}`,
    );
    expect(second.results[0]?.problem).toContain("version 2 was taken off air by a rollback at");
    expect(watchExitCode(second)).toBe(7);
    expect((await requestLog(emu)).filter((e) => e.method !== "GET")).toEqual([]);
    expect((await client.agents.get(s.agentId)).live_version).toBe(1);
  });

  test("the stack's own record keeps version 0 off air even when the watch's line is gone from the notes", async () => {
    const s = await pinnedBack("Recorded");
    const at = await zeroFails(s);
    // The refresh records version 0 taken off air while the stack had it live (a row labelled `activate`).
    const off = await versions.read(s.id, s.outs);
    expect(off.props).toMatchObject({
      version: 0,
      isLive: false,
      rolledBack: { at, action: "activate", to: 1 },
    });
    expect(Object.values(off.props?.offAir ?? {})).toContain(0);
    const checked = await versions.check(off.inputs as Props, { ...s.inputs, pinnedVersion: 1 });
    expect(checked.failures ?? []).toEqual([]);
    const one = (await versions.update(s.id, off.props as Props, checked.inputs as Props)).outs as Props;
    expect(one).toMatchObject({ version: 1, isLive: true });
    // A person clears version 1's notes (the watch's line with them).
    await client.agents.patch(s.agentId, { notes: "" }, { version: 1 });
    await traffic(s.agentId, 30, 20);
    const second = await watchPass(refreshOf({ support: { ...s, outs: one } }), client);
    expect(second.results[0]).toMatchObject({ outcome: "failing", version: 1 });
    expect(second.results[0]?.problem).toContain(
      `version 0 was taken off air at ${at} (\`activate\`) while this stack had it live`,
    );
    expect(watchExitCode(second)).toBe(7);
    expect((await client.agents.get(s.agentId)).live_version).toBe(1);
  });
});

describe("a record that cannot be read", () => {
  test("the notes that say whether a version was judged failing cannot be read: not judged, nothing done (exit 5)", async () => {
    const s = await deployed("Unreadable");
    await traffic(s.agentId, 30, 20);
    // Version 0 went off air by the row that put 1 live (`activate`): only 1's notes can tell.
    const get = client.agents.get.bind(client.agents);
    const spy = vi.spyOn(client.agents, "get").mockImplementation(async (...args: Parameters<typeof get>) => {
      if (args[1]?.version === 1) throw new Error("connection reset");
      return get(...args);
    });
    let report: Awaited<ReturnType<typeof watchPass>>;
    try {
      report = await watchPass(refreshOf({ "support-live": s }), client);
    } finally {
      spy.mockRestore();
    }
    expect(report.results[0]).toMatchObject({ outcome: "error", version: 1 });
    expect(report.results[0]?.problem).toContain(
      "the notes of version 1 (where the watch records what it judged failing) could not be read: connection reset",
    );
    expect(watchExitCode(report)).toBe(5);
    expect((await client.agents.get(s.agentId)).live_version).toBe(1);
  });
});

describe("the watch's notes write is a compare-and-set", () => {
  /** A person's edit of version 0's notes before each of the watch's writes there (`times` of them). */
  function personEdits(agentId: string, times: number) {
    const patch = client.agents.patch.bind(client.agents);
    let edits = 0;
    return vi.spyOn(client.agents, "patch").mockImplementation(async (...args: Parameters<typeof patch>) => {
      if (args[2]?.ifMatch !== undefined && args[2]?.version === 0 && edits < times)
        await patch(agentId, { notes: `Checked by Ana (${++edits})` }, { version: 0 });
      return patch(...args);
    });
  }

  test("notes edited between the watch's read and its write: read again and merged, the person's text kept", async () => {
    const s = await deployed("Notes race");
    await traffic(s.agentId, 30, 20);
    const spy = personEdits(s.agentId, 1);
    let report: Awaited<ReturnType<typeof watchPass>>;
    try {
      await clearRequestLog(emu);
      report = await watchPass(refreshOf({ "support-live": s }), client);
    } finally {
      spy.mockRestore();
    }
    expect(report.results[0]).toMatchObject({ outcome: "rolled_back", target: 0 });
    expect(report.results[0]?.problem).toBeUndefined();
    const notes = (await client.agents.get(s.agentId, { version: 0 })).notes ?? "";
    expect(notes).toMatch(
      /^Checked by Ana \(1\)\n\n\[voice-agent watch\] .*: version 1 taken off air, version 0 put back live: /,
    );
    // The watch's first write was refused (409), then it wrote the merge.
    const writes = (await requestLog(emu))
      .filter((e) => e.method === "PATCH" && e.path.endsWith("?version=0"))
      .map((e) => e.status);
    expect(writes).toEqual([200, 409, 200]);
  });

  test("notes that keep changing: nothing overwritten, the problem says which line to add by hand", async () => {
    const s = await deployed("Notes busy");
    await traffic(s.agentId, 30, 20);
    const spy = personEdits(s.agentId, 3);
    let report: Awaited<ReturnType<typeof watchPass>>;
    try {
      report = await watchPass(refreshOf({ "support-live": s }), client);
    } finally {
      spy.mockRestore();
    }
    expect(report.results[0]).toMatchObject({ outcome: "rolled_back", target: 0 });
    expect(report.results[0]?.problem).toContain(
      "why could not be written into version 0's notes: they changed while the watch wrote them (3 times",
    );
    expect(report.results[0]?.problem).toContain(
      "Nothing of them was overwritten; add this line to version 0's notes by hand: [voice-agent watch] ",
    );
    expect((await client.agents.get(s.agentId, { version: 0 })).notes).toBe("Checked by Ana (3)");
    expect((await client.agents.get(s.agentId)).live_version).toBe(0);
  });
});
