/**
 * The watch from pass to pass (a `WatchMemory`, as `--every` keeps it) and over several stacks
 * (`watchStacks`), against the emulator: a later pass reads the agents listing and the calls that are
 * new, and the deploy history only of an agent whose live pointer moved; several stacks share one
 * agents listing and one calls listing, with a report per stack; a listing that cannot be read
 * makes the pass incomplete (exit 5), never a verdict on part of the calls, and the next pass
 * counts every call.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { beforeEach, describe, expect, test, vi } from "vitest";
import type { VoiceAgentClient } from "../../src/client";
import type { RunningEmulator } from "../../src/emulator";
import type { PreviewJson } from "../../src/gitops/preview";
import { newWatchMemory, renderWatch, watchExitCode, watchStacks } from "../../src/gitops/watch";
import { TYPE_PREFIX } from "../../src/resources/typeNames";
import { emulatorForFile } from "../provider/support";
import { clearRequestLog, requestLog, resetEmulator, traffic } from "../support/control";

let emu: RunningEmulator;
let client: VoiceAgentClient;
emulatorForFile({ callSeconds: 0.05 }, (e, c) => {
  emu = e;
  client = c;
});
beforeEach(async () => {
  await resetEmulator(emu);
});

const WATCH = { rates: [{ analysis: "Default Analysis/User Sentiment", value: "negative", atMost: 0.2 }] };
const NEGATIVE = { "Default Analysis": { "User Sentiment": "negative" } };

/** `n` agents with versions 0 and 1 published, version 1 live (put live by the stack). */
async function agents(n: number, tag: string) {
  const out: { agentId: string; version: number }[] = [];
  for (let i = 0; i < n; i++) {
    const a = await client.agents.create({ name: `${tag} ${i}`, system_prompt: "## Agent Purpose\nv0" });
    await client.versions.publish(a.id, 0);
    await client.versions.activate(a.id, 0);
    await client.agents.patch(a.id, { system_prompt: "## Agent Purpose\nv1" });
    await client.versions.publish(a.id, 1);
    await client.versions.activate(a.id, 1);
    out.push({ agentId: a.id, version: 1 });
  }
  return out;
}

/** Stack `stack`'s refresh JSON: its AgentVersions put these versions live, watched. */
function refreshOf(stack: string, versions: { agentId: string; version: number }[]): PreviewJson {
  return {
    steps: [
      { op: "refresh", urn: `urn:pulumi:${stack}::watch::pulumi:pulumi:Stack::watch-${stack}` },
      ...versions.map((v, i) => {
        const inputs = { agentId: v.agentId, live: true, watch: WATCH, draftVersion: 1, documentRevision: 1 };
        const state = {
          type: `${TYPE_PREFIX}AgentVersion`,
          id: `${v.agentId}/0`,
          inputs,
          outputs: { ...inputs, version: v.version, isLive: true },
        };
        return {
          op: "refresh",
          urn: `urn:pulumi:${stack}::watch::${TYPE_PREFIX}AgentVersion::v-${i}`,
          oldState: state,
          newState: state,
        };
      }),
    ],
  };
}

/** `count` inbound calls to the agent's live version, `negative` of them negative; waits until all are analysed. */
async function calls(agentId: string, count: number, negative: number) {
  await traffic(emu, {
    agent_id: agentId,
    count,
    origin: "inbound",
    mix: [{ share: negative / count, analysis: NEGATIVE }],
  });
  for (let i = 0; i < 100; i++) {
    const page = await client.calls.listPage({ limit: 100 });
    if (page.data.every((c) => c.custom_analysis !== null)) return;
    await sleep(50);
  }
  throw new Error("the calls did not finish");
}

/** The requests since the log was cleared, by kind. */
async function requests() {
  const log = (await requestLog(emu)).filter((e) => e.method === "GET");
  return {
    agentPages: log.filter((e) => /^\/v1\/agents(\?|$)/.test(e.path)).length,
    history: log.filter((e) => e.path.includes("/activations")).length,
    callPages: log.filter((e) => /^\/v1\/calls(\?|$)/.test(e.path)).length,
    callReads: log.filter((e) => /^\/v1\/calls\/[^/?]+$/.test(e.path)).length,
  };
}

describe("a watch that holds what it read", () => {
  test("a later pass reads the agents listing and the new calls; the history only where the pointer moved", async () => {
    const vs = await agents(3, "Held");
    for (const v of vs) await calls(v.agentId, 30, 3);
    const memory = newWatchMemory();
    const refresh = refreshOf("prod", vs);

    await clearRequestLog(emu);
    const [first] = await watchStacks([refresh], client, { memory });
    expect(await requests()).toEqual({ agentPages: 1, history: 3, callPages: 1, callReads: 0 });
    expect(first?.results.map((r) => r.rates[0]?.measured)).toEqual([30, 30, 30]);

    // Nothing new: one page of agents, one page of calls (the newest, down to the last pass's top).
    await clearRequestLog(emu);
    const [second] = await watchStacks([refresh], client, { memory });
    expect(await requests()).toEqual({ agentPages: 1, history: 0, callPages: 1, callReads: 0 });
    expect(second?.results.map((r) => [r.outcome, r.rates[0]?.measured])).toEqual(
      first?.results.map((r) => [r.outcome, r.rates[0]?.measured]),
    );

    // New calls to one agent: counted on top of what is held, each once.
    await calls((vs[0] as { agentId: string }).agentId, 30, 3);
    await clearRequestLog(emu);
    const [third] = await watchStacks([refresh], client, { memory });
    expect(third?.results.map((r) => r.rates[0]?.measured)).toEqual([60, 30, 30]);
    expect((await requests()).history).toBe(0);

    // A deploy moves one agent's pointer to a version nobody watches: not live any more, and no
    // history read (there is nothing to judge).
    const moved = (vs[1] as { agentId: string }).agentId;
    await client.versions.activate(moved, 0);
    await clearRequestLog(emu);
    const [fourth] = await watchStacks([refresh], client, { memory });
    expect((await requests()).history).toBe(0);
    expect(fourth?.results[1]).toMatchObject({ outcome: "not_live" });
    expect(fourth?.results[1]?.action).toContain("not live any more (version 0 is live)");
    // Back to the watched version: a new row, read once, and its calls count from it.
    await client.versions.activate(moved, 1);
    await clearRequestLog(emu);
    const [fifth] = await watchStacks([refresh], client, { memory });
    expect((await requests()).history).toBe(1);
    expect(fifth?.results[1]).toMatchObject({ outcome: "inconclusive" });
    expect(fifth?.results[1]?.rates[0]?.measured).toBe(0);
    await clearRequestLog(emu);
    await watchStacks([refresh], client, { memory });
    expect((await requests()).history).toBe(0);
  });

  test("one watch for two stacks: one agents listing and one calls listing, a report per stack", async () => {
    const a = await agents(2, "Stack A");
    const b = await agents(1, "Stack B");
    for (const v of a) await calls(v.agentId, 30, 0);
    await calls((b[0] as { agentId: string }).agentId, 30, 20);
    await clearRequestLog(emu);
    const reports = await watchStacks([refreshOf("prod-a", a), refreshOf("prod-b", b)], client, {
      memory: newWatchMemory(),
    });
    expect(await requests()).toMatchObject({ agentPages: 1, callPages: 1 });
    expect(reports.map((r) => r.stack)).toEqual(["prod-a", "prod-b"]);
    // 30 calls, none negative: not yet enough to call it healthy (about 50 are), nothing done.
    expect(reports[0]?.results.map((r) => [r.outcome, r.rates[0]?.measured])).toEqual([
      ["inconclusive", 30],
      ["inconclusive", 30],
    ]);
    expect(reports[1]?.results[0]).toMatchObject({ outcome: "rolled_back", target: 0 });
    expect(reports.map(watchExitCode)).toEqual([0, 6]);
    expect(renderWatch(reports[1] as never)).toContain("### Voice agents: watch of stack `prod-b`");
  });

  test("a calls page that cannot be read: every live watched version an error (exit 5), none judged; the next pass counts every call", async () => {
    const vs = await agents(2, "Unreadable");
    for (const v of vs) await calls(v.agentId, 30, 20);
    const memory = newWatchMemory();
    const refresh = refreshOf("prod", vs);
    const spy = vi.spyOn(client.calls, "listPage").mockRejectedValueOnce(new Error("HTTP 503: gave up"));
    try {
      const [report] = await watchStacks([refresh], client, { memory, dryRun: true });
      expect(report?.results.map((r) => r.outcome)).toEqual(["error", "error"]);
      expect(report?.results[0]?.problem).toContain("the calls could not be read: HTTP 503");
      expect(watchExitCode(report as never)).toBe(5);
    } finally {
      spy.mockRestore();
    }
    const [next] = await watchStacks([refresh], client, { memory, dryRun: true });
    expect(next?.results.map((r) => [r.outcome, r.rates[0]?.measured])).toEqual([
      ["would_roll_back", 30],
      ["would_roll_back", 30],
    ]);
  });

  test("an agents listing that cannot be read: incomplete (exit 5), nothing judged", async () => {
    const vs = await agents(1, "No listing");
    const spy = vi.spyOn(client.agents, "listPage").mockRejectedValueOnce(new Error("HTTP 503: gave up"));
    try {
      const [report] = await watchStacks([refreshOf("prod", vs)], client, { memory: newWatchMemory() });
      expect(report?.results[0]).toMatchObject({ outcome: "error" });
      expect(report?.results[0]?.problem).toContain("the agents listing");
      expect(watchExitCode(report as never)).toBe(5);
    } finally {
      spy.mockRestore();
    }
  });
});
