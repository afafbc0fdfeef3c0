/**
 * A change of many agents finds where each stands in the agent list (`summaries.ts`), not by one
 * read per agent, and stays exactly as safe: a moved revision falls back to the read, an edit made
 * outside Pulumi is refused with nothing written, and a patch whose answer does not show the draft
 * it opened from the stack's own version is compared with that version before anything is
 * published.
 */
import { beforeEach, expect, test } from "vitest";
import type { VoiceAgentClient } from "../../src/client";
import type { RunningEmulator } from "../../src/emulator";
import { agentProvider } from "../../src/resources/agent/provider";
import { forgetListings, UPDATES_PER_PAGE } from "../../src/resources/agent/summaries";
import { clearRequestLog, requestLog, resetEmulator } from "../support/control";
import { checkAndCreate, emulatorForFile, testContext } from "./support";

const agents = agentProvider(testContext);
let emu: RunningEmulator;
let client: VoiceAgentClient;
emulatorForFile({}, (e, c) => {
  emu = e;
  client = c;
});
beforeEach(async () => {
  await resetEmulator(emu);
  forgetListings(); // each test is a deployment of its own, in a provider process of its own
});

const prompt = (s: string) => `## Agent Purpose\n${s}\n`;

type Made = Awaited<ReturnType<typeof checkAndCreate>>;

/** `n` agents, each with version 0 published and live, as a stack leaves them after its first `up`. */
async function liveAgents(n: number, tag: string): Promise<Made[]> {
  const made = [];
  for (let i = 0; i < n; i++) {
    const a = await checkAndCreate(agents, { name: `${tag} ${i}`, systemPrompt: prompt(`${tag} ${i}`) });
    await client.versions.publish(a.id, 0);
    await client.versions.activate(a.id, 0);
    made.push(a);
  }
  return made;
}

/** The next deploy's check of each agent with a new prompt (`diff` must find a change). */
async function planned(made: Made[]) {
  const out = [];
  for (const [i, a] of made.entries()) {
    const news = (await agents.check(a.inputs, { ...a.inputs, systemPrompt: prompt(`changed ${i}`) })).inputs;
    expect((await agents.diff(a.id, a.outs, news)).changes).toBe(true);
    out.push({ ...a, news });
  }
  return out;
}

/** The updates a deployment runs before the one a test looks at: enough to list the agents. */
async function earlierUpdates(n = UPDATES_PER_PAGE - 1) {
  for (const p of await planned(await liveAgents(n, "Earlier"))) await agents.update(p.id, p.outs, p.news);
}

// The log holds each request's path with its query.
const reads = (log: { method: string; path: string }[]) =>
  log.filter((r) => r.method === "GET" && /^\/v1\/agents\/[^/?]+(\?|$)/.test(r.path));
const listings = (log: { method: string; path: string }[]) =>
  log.filter((r) => r.method === "GET" && /^\/v1\/agents(\?|$)/.test(r.path));

test("a change of many agents reads the first few, then one page of the agent list serves the rest", async () => {
  const changes = await planned(await liveAgents(3 * UPDATES_PER_PAGE, "Many"));
  await clearRequestLog(emu);
  const results = await Promise.all(changes.map((p) => agents.update(p.id, p.outs, p.news)));
  const log = await requestLog(emu);
  expect(reads(log)).toHaveLength(UPDATES_PER_PAGE - 1);
  expect(listings(log)).toHaveLength(1);
  expect(log.filter((r) => r.method === "PATCH")).toHaveLength(changes.length);
  for (const [i, r] of results.entries()) {
    expect(r.outs).toMatchObject({
      draftVersion: 1,
      draftPublished: false,
      systemPrompt: prompt(`changed ${i}`),
    });
    expect(await client.agents.get(changes[i]!.id)).toMatchObject({
      version: 1,
      is_published: false,
      live_version: 0,
      system_prompt: prompt(`changed ${i}`),
    });
  }
});

test("a change of fewer agents than a page is worth reads each one and lists nothing", async () => {
  const changes = await planned(await liveAgents(UPDATES_PER_PAGE - 1, "Few"));
  await clearRequestLog(emu);
  for (const p of changes) await agents.update(p.id, p.outs, p.news);
  const log = await requestLog(emu);
  expect(listings(log)).toEqual([]);
  expect(reads(log)).toHaveLength(changes.length);
});

test("a label edited on the live version since: the revision moved, the update reads the agent and writes", async () => {
  const [p] = await planned(await liveAgents(1, "Label"));
  await client.agents.patch(p!.id, { label: "named in the dashboard" }, { version: 0 });
  await earlierUpdates();
  await clearRequestLog(emu);
  const r = await agents.update(p!.id, p!.outs, p!.news);
  expect(r.outs).toMatchObject({ draftVersion: 1, systemPrompt: prompt("changed 0") });
  const log = await requestLog(emu);
  // The listing, the patch refused on the revision (409), the read, the patch.
  expect(listings(log)).toHaveLength(1);
  expect(log.filter((x) => x.method === "PATCH").map((x) => x.status)).toEqual([409, 200]);
  expect(reads(log)).toHaveLength(1);
});

test("a draft opened elsewhere from the live version: refused as changed outside Pulumi, nothing written", async () => {
  const [p] = await planned(await liveAgents(1, "Draft"));
  await client.agents.patch(p!.id, { system_prompt: prompt("edited in the dashboard") });
  await earlierUpdates();
  await clearRequestLog(emu);
  await expect(agents.update(p!.id, p!.outs, p!.news)).rejects.toThrow(
    /was changed outside Pulumi: its working draft is at revision \d+, but this stack last saw revision \d+\. Nothing was written\./,
  );
  expect(listings(await requestLog(emu))).toHaveLength(1);
  expect(await client.agents.get(p!.id)).toMatchObject({
    version: 1,
    system_prompt: prompt("edited in the dashboard"),
  });
});

test("a listing up to a minute old: a version put live and a draft opened from it since, at the same revision, are refused before anything is published", async () => {
  // Version 1 is the stack's own, live; version 0 is older.
  const [made] = await liveAgents(1, "Stale");
  const v1 = await client.agents.patch(made!.id, { system_prompt: prompt("own") });
  await client.versions.publish(made!.id, v1.version);
  await client.versions.activate(made!.id, v1.version);
  const read = await agents.read(made!.id, made!.outs);
  expect(read.props).toMatchObject({ draftVersion: 1, systemPrompt: prompt("own") });
  const [p] = await planned([{ id: made!.id, outs: read.props ?? {}, inputs: read.inputs ?? {} }]);

  // The deployment's earlier updates list the agents: this one is live and latest at version 1.
  await earlierUpdates(UPDATES_PER_PAGE);
  // Then, outside Pulumi: version 0 goes live again, and a draft opened from it is renamed, at the
  // revision the stack last saw of version 1.
  await client.versions.activate(p!.id, 0);
  const renamed = await client.agents.patch(p!.id, { name: "Renamed elsewhere" });
  expect(renamed).toMatchObject({ version: 2, document_revision: v1.document_revision });

  await clearRequestLog(emu);
  await expect(agents.update(p!.id, p!.outs, p!.news)).rejects.toThrow(
    /the change was written onto draft version 2, which does not hold version 1's configuration \(it differs in name\)/,
  );
  // Written without a read first (the listing's summary), then version 1 read to compare.
  expect(listings(await requestLog(emu))).toEqual([]);
  expect(reads(await requestLog(emu)).map((r) => r.path)).toEqual([`/v1/agents/${p!.id}?version=1`]);
  expect(await client.agents.get(p!.id, { version: "live" })).toMatchObject({ version: 0 });
  expect(await client.agents.get(p!.id)).toMatchObject({
    version: 2,
    is_published: false,
    name: "Renamed elsewhere",
  });
});
