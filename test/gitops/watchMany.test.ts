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

/** `count` inbound calls to the agent's live version (or `version`), `negative` of them negative; waits until all are analysed. */
async function calls(agentId: string, count: number, negative: number, version?: number) {
  await traffic(emu, {
    agent_id: agentId,
    ...(version !== undefined ? { version } : {}),
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

  test("a listing longer than a pass's pages is read across passes: a page a pass, pointers kept for a round, a deploy of the stack read at once", async () => {
    // 250 agents: three pages of the listing; a pass may read one (agentPagesPerPass: 1).
    const made = await emu.control.createAgents("default", { count: 250, versions: 3, live_version: 1 });
    const ids = made.agents.map((a) => a.id);
    const listing = await client.agents.list({ limit: 100 }).toArray();
    const pageOf = (id: string) => Math.floor(listing.findIndex((a) => a.id === id) / 100) + 1;
    const [a, b, c] = [0, 1, 2].map((p) => ids.find((id) => pageOf(id) === p + 1) as string);
    const watched = [a, b, c].map((agentId) => ({ agentId: agentId as string, version: 1 }));
    const memory = newWatchMemory();
    const opts = { memory, agentPagesPerPass: 1 };
    const agentPaths = async () =>
      (await requestLog(emu))
        .filter((e) => e.method === "GET" && /^\/v1\/agents(\?|$)/.test(e.path))
        .map((e) => e.path);

    // The first pass reads the listing whole (down to the last watched agent) and each history once.
    await clearRequestLog(emu);
    let [r] = await watchStacks([refreshOf("prod", watched)], client, opts);
    expect(await requests()).toMatchObject({ agentPages: 3, history: 3 });
    expect(r?.results.map((x) => x.outcome)).toEqual(["inconclusive", "inconclusive", "inconclusive"]);

    // Then a page a pass, going on where the last stopped, round to the top: every agent's pointer
    // read once in three passes, no history read.
    const cursors: boolean[] = [];
    for (let i = 0; i < 4; i++) {
      await clearRequestLog(emu);
      [r] = await watchStacks([refreshOf("prod", watched)], client, opts);
      expect(await requests()).toMatchObject({ agentPages: 1, history: 0 });
      cursors.push(((await agentPaths())[0] as string).includes("cursor="));
      expect(r?.results.map((x) => x.outcome)).toEqual(["inconclusive", "inconclusive", "inconclusive"]);
    }
    expect(cursors).toEqual([false, true, true, false]);

    // A pointer moved in the dashboard (c, on the third page) shows when its page comes round:
    // within a round of passes, and without a history read.
    await client.versions.activate(c as string, 0);
    const seenAt: string[] = [];
    for (let i = 0; i < 3; i++) {
      await clearRequestLog(emu);
      [r] = await watchStacks([refreshOf("prod", watched)], client, opts);
      expect(await requests()).toMatchObject({ agentPages: 1, history: 0 });
      seenAt.push(r?.results[2]?.outcome as string);
    }
    expect(seenAt).toContain("not_live");
    expect(seenAt.at(-1)).toBe("not_live");
    expect(r?.results[2]?.action).toContain("version 0 is live");

    // A deploy of the stack puts version 2 of `a` live: the next pass reads a's history at once,
    // whichever page it reads, and judges version 2 from its row.
    await client.versions.activate(a as string, 2);
    const deployed = [{ agentId: a as string, version: 2 }, ...watched.slice(1)];
    await clearRequestLog(emu);
    [r] = await watchStacks([refreshOf("prod", deployed)], client, opts);
    expect(await requests()).toMatchObject({ agentPages: 1, history: 1 });
    expect(r?.results[0]).toMatchObject({ outcome: "inconclusive", version: 2 });

    // A held cursor the service refuses (here one of another list): from the top again, no pass lost.
    memory.agents.next = (await client.calls.listPage({ limit: 1 })).next_cursor ?? "not-a-cursor";
    await clearRequestLog(emu);
    [r] = await watchStacks([refreshOf("prod", deployed)], client, opts);
    const paths = await agentPaths();
    expect(paths).toHaveLength(2);
    expect(paths[1]).not.toContain("cursor=");
    expect(r?.results.map((x) => x.outcome)).toEqual(["inconclusive", "inconclusive", "not_live"]);
  });

  test("fewer watched agents than a pass's pages in a longer listing: each one's newest history row a pass, no agents page", async () => {
    const made = await emu.control.createAgents("default", { count: 250, versions: 2, live_version: 1 });
    const listing = await client.agents.list({ limit: 100 }).toArray();
    const last = listing[listing.length - 1]?.id as string;
    expect(made.agents.map((a) => a.id)).toContain(last);
    const memory = newWatchMemory();
    const opts = { memory, agentPagesPerPass: 2 };
    const refresh = refreshOf("prod", [{ agentId: last, version: 1 }]);
    await clearRequestLog(emu);
    await watchStacks([refresh], client, opts);
    expect(await requests()).toMatchObject({ agentPages: 3, history: 1 }); // whole, down to it
    await clearRequestLog(emu);
    let [r] = await watchStacks([refresh], client, opts);
    expect(await requests()).toMatchObject({ agentPages: 0, history: 1 });
    expect(r?.results[0]?.outcome).toBe("inconclusive");
    // A pointer moved in the dashboard shows at the next pass.
    await client.versions.activate(last, 0);
    await clearRequestLog(emu);
    [r] = await watchStacks([refresh], client, opts);
    expect(await requests()).toMatchObject({ agentPages: 0, history: 1 });
    expect(r?.results[0]).toMatchObject({ outcome: "not_live" });
  });

  test("a version nearing a fail is looked at between passes: the calls only, the pointers as the pass read them; a look rolls back, or leaves a deploy that moved the pointer to win", async () => {
    const [near, calm, moved] = await agents(3, "Looked");
    await calls((near as { agentId: string }).agentId, 30, 12); // 40 % against 20 %: past half way
    await calls((calm as { agentId: string }).agentId, 30, 3);
    await calls((moved as { agentId: string }).agentId, 30, 12);
    const memory = newWatchMemory();
    const refresh = refreshOf("prod", [near, calm, moved] as { agentId: string; version: number }[]);
    let [r] = await watchStacks([refresh], client, { memory });
    expect(r?.results.map((x) => x.outcome)).toEqual(["inconclusive", "inconclusive", "inconclusive"]);
    expect(memory.nearing).toBe(2);

    // A deploy moves `moved` to version 0 after the pass: the look does not see it (no agents page).
    await client.versions.activate((moved as { agentId: string }).agentId, 0);
    await calls((near as { agentId: string }).agentId, 10, 6);
    await calls((moved as { agentId: string }).agentId, 10, 6, 1); // calls placed on version 1 itself
    // With --dry-run, what it would do: `near` rolled back; `moved` fails on the pointer the pass
    // read, but the history read before anything is said shows the deploy, which wins.
    const [dry] = await watchStacks([refresh], client, { memory, look: true, dryRun: true });
    expect(dry?.results.map((x) => x.outcome)).toEqual(["would_roll_back", "inconclusive", "superseded"]);
    await clearRequestLog(emu);
    [r] = await watchStacks([refresh], client, { memory, look: true });
    const sent = await requests();
    expect(sent.agentPages).toBe(0);
    expect(sent.callPages).toBeGreaterThanOrEqual(1);
    expect(r?.results[0]).toMatchObject({ outcome: "rolled_back", target: 0 });
    expect((await client.agents.get((near as { agentId: string }).agentId)).live_version).toBe(0);
    // The dry run's history read is the pointer now: the look reports `moved` not live, and leaves it.
    expect(r?.results[2]).toMatchObject({ outcome: "not_live" });
    expect((await client.agents.get((moved as { agentId: string }).agentId)).live_version).toBe(0);
    [r] = await watchStacks([refresh], client, { memory });
    expect(r?.results[2]).toMatchObject({ outcome: "not_live" });
    expect(memory.nearing).toBe(0);
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

  test("an agents listing that cannot be read: incomplete (exit 5), nothing judged, the calls held kept", async () => {
    const vs = await agents(1, "No listing");
    await calls((vs[0] as { agentId: string }).agentId, 30, 3);
    const memory = newWatchMemory();
    const [first] = await watchStacks([refreshOf("prod", vs)], client, { memory });
    expect(first?.results[0]?.rates[0]?.measured).toBe(30);
    const spy = vi.spyOn(client.agents, "listPage").mockRejectedValueOnce(new Error("HTTP 503: gave up"));
    try {
      const [report] = await watchStacks([refreshOf("prod", vs)], client, { memory });
      expect(report?.results[0]).toMatchObject({ outcome: "error" });
      expect(report?.results[0]?.problem).toContain("the agents listing");
      expect(watchExitCode(report as never)).toBe(5);
    } finally {
      spy.mockRestore();
    }
    // The next pass goes on from what the watch held: the new calls only, every call counted once.
    await calls((vs[0] as { agentId: string }).agentId, 10, 1);
    await clearRequestLog(emu);
    const [next] = await watchStacks([refreshOf("prod", vs)], client, { memory });
    expect(next?.results[0]?.rates[0]?.measured).toBe(40);
    expect(await requests()).toMatchObject({ history: 0, callPages: 1 });
  });
});
