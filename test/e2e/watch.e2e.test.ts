/**
 * After go-live, as a user meets it: a fresh project with the package installed from its tarball,
 * its program type-checked, through the real engine against the emulator (calls of 0.2 s; real
 * traffic from `POST /_emulator/traffic`), under our language host
 * (the `e2e` project; vitest.config.mts). The installed `voice-agent-diff --watch` reads
 * `pulumi refresh --preview-only --json`:
 *
 * - a bad version going live with real traffic is rolled back by one pass (why in the notes of the
 *   version put back live);
 * - the next `pulumi up --refresh` leaves it off air (saying so) while an unrelated change in the same
 *   stack deploys, with no change left after; the drift alarm reports it with why;
 * - `reinstate: 1` puts it back; a person's rollback in the dashboard is respected the same way;
 * - an inconclusive version (5 calls, all negative) is reported and untouched;
 * - a healthy version whose true rate is half its bound is never rolled back over 50 seeded passes.
 */
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, expect, test } from "vitest";
import { closeDispatchers, VoiceAgentClient } from "../../src/client";
import type { TrafficRequest } from "../../src/emulator";
import { DEFAULT_API_KEY, type RunningEmulator, startEmulator } from "../../src/emulator";
import { parsePreview } from "../../src/gitops/preview";
import { watchExitCode, watchPass } from "../../src/gitops/watch";
import { traffic as placeTraffic } from "../support/control";
import { PulumiProject } from "../support/pulumi";

const NEGATIVE = { "Default Analysis": { "User Sentiment": "negative" } };

const program = (o: {
  support: string;
  steady: string;
  widget: string;
  other: string;
  reinstate: number;
}) => `
import * as va from "pulumi-voice-agent";

const watch: va.WatchArgs = {
  rates: [
    { analysis: "Default Analysis/User Sentiment", value: "negative", atMost: 0.2 },
    { status: ["failed", "no_answer"], atMost: 0.05 },
  ],
};
const support = new va.Agent("support", { name: "Watched support", systemPrompt: ${JSON.stringify(o.support)} });
const live = new va.AgentVersion("support-live", { agent: support, watch, reinstate: ${o.reinstate} });
new va.Widget("support-widget", { agentId: support.agentId, name: "Support widget", theme: { title: ${JSON.stringify(o.widget)} } });
const steady = new va.Agent("steady", { name: "Watched steady", systemPrompt: ${JSON.stringify(o.steady)} });
const steadyLive = new va.AgentVersion("steady-live", { agent: steady, watch });
const other = new va.Agent("other", { name: ${JSON.stringify(o.other)} });

export const supportId = support.agentId;
export const steadyId = steady.agentId;
export const otherId = other.agentId;
export const supportVersion = live.version;
export const steadyVersion = steadyLive.version;
export const rolledBack = live.rolledBack.apply((r) => r ?? null);
`;

const prompt = (purpose: string) => `## Agent Purpose\n${purpose}\n`;

let emu: RunningEmulator;
let client: VoiceAgentClient;
beforeAll(async () => {
  // No rate limit: the 50 passes list up to 1,500 calls each time (bench/watch.ts measures a pass at the limit).
  emu = await startEmulator({ port: 0, callSeconds: 0.2, rateLimitPerMinute: 0 });
  client = new VoiceAgentClient({ baseUrl: emu.url, apiKey: DEFAULT_API_KEY, rateLimitPerMinute: 100_000 });
});
afterAll(async () => {
  await closeDispatchers();
  await emu?.close();
});

/** Real traffic to an agent's live version (`POST /_emulator/traffic`), waited for until every call is analysed. */
async function traffic(body: TrafficRequest): Promise<void> {
  const answer = await placeTraffic(emu, body);
  expect(answer.count).toBe(body.count);
  const ids = new Set<string>(answer.calls.map((c) => c.id));
  for (let i = 0; i < 200; i++) {
    let open = 0;
    for await (const call of client.calls.list({ limit: 100 })) {
      if (ids.has(call.id) && call.custom_analysis === null) open++;
      if (!ids.has(call.id)) break; // newest first: the batch is on top
    }
    if (open === 0) return;
    await sleep(100);
  }
  throw new Error("the traffic did not finish");
}

/** `pulumi refresh --preview-only --json` into a file, then the installed `voice-agent-diff` on it. */
async function diff(p: PulumiProject, args: string[]) {
  const refresh = await p.pulumi(["refresh", "--preview-only", "--json"]);
  const file = path.join(p.dir, "refresh.json");
  writeFileSync(file, refresh.stdout);
  const cli = path.join(
    path.dirname(p.dir),
    "node_modules",
    "pulumi-voice-agent",
    "dist",
    "gitops",
    "cli.js",
  );
  const env = { ...process.env, VOICE_AGENT_BASE_URL: emu.url, VOICE_AGENT_API_KEY: DEFAULT_API_KEY };
  const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [cli, ...args, file], { env, cwd: p.dir }, (err, stdout, stderr) => {
      resolve({ code: err ? Number(err.code) : 0, stdout, stderr });
    });
  });
  expect(r.stdout + r.stderr).not.toContain(DEFAULT_API_KEY);
  return { ...r, refresh: file };
}

const liveOf = async (agentId: string) => (await client.agents.get(agentId)).live_version;

test("the watch rolls a bad version back; no deploy puts it back until reinstate; a dashboard rollback alike; inconclusive untouched; healthy never rolled back", async () => {
  const state = {
    support: prompt("Help with orders."),
    steady: prompt("Help with billing."),
    widget: "Ours",
    other: "Other agent",
    reinstate: 0,
  };
  const p = await PulumiProject.create({
    installed: true,
    name: "watch",
    program: program(state),
    config: { "voice-agent:baseUrl": emu.url },
    secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
  });
  try {
    await p.up();
    // Version 1 of both watched agents goes live; version 0 is the one a rollback puts back.
    Object.assign(state, {
      support: prompt("Help with orders, curtly."),
      steady: prompt("Help with billing and refunds."),
    });
    p.setProgram(program(state));
    await p.upAndSettle();
    const { supportId, steadyId, otherId } = await p.outputs();
    expect(await p.outputs()).toMatchObject({ supportVersion: 1, steadyVersion: 1, rolledBack: null });

    // (1) The bad version: half of 40 callers unhappy. One pass rolls it back.
    await traffic({ agent_id: supportId, count: 40, mix: [{ share: 0.5, analysis: NEGATIVE }] });
    const bad = await diff(p, ["--watch", "--json", path.join(p.dir, "watch.json")]);
    expect(bad.code).toBe(6);
    expect(bad.stderr).toBe("");
    expect(bad.stdout).toContain("#### ↩ AgentVersion `support-live`: rolled back");
    expect(bad.stdout).toMatch(
      /\| Default Analysis\/User Sentiment = "negative" \| 20 of 40 \| 50% \| [\d.]+% to [\d.]+% \| 20% \| \*\*fail\*\* \|/,
    );
    expect(bad.stdout).toContain("#### · AgentVersion `steady-live`: inconclusive"); // no traffic yet
    expect(await liveOf(supportId)).toBe(0);
    expect(await liveOf(steadyId)).toBe(1);
    const json = JSON.parse(readFileSync(path.join(p.dir, "watch.json"), "utf8"));
    const rolled = json.results.find((r: { name: string }) => r.name === "support-live");
    expect(rolled).toMatchObject({
      outcome: "rolled_back",
      version: 1,
      previous: 0,
      row: { action: "rollback", version: 0 },
    });
    const notes = (await client.agents.get(supportId, { version: 0 })).notes ?? "";
    expect(notes).toContain(
      `[voice-agent watch] ${rolled.row.at}: version 1 taken off air, version 0 put back live: `,
    );

    // The drift alarm reports it, with when, how and why.
    const drift = await diff(p, ["--drift"]);
    expect(drift.code).toBe(3);
    expect(drift.stdout).toContain(
      `It was taken off air by the deploy-history row of ${rolled.row.at}: \`rollback\` to version 0.`,
    );
    expect(drift.stdout).toContain(
      'Why (the watch): Default Analysis/User Sentiment = "negative" on 20 of 40 calls',
    );
    // So does Pulumi's own drift check: a refresh shows the AgentVersion changing (production
    // answers with another version), and keeps showing it until an `up` records it.
    for (let i = 0; i < 2; i++) {
      const seen = await p.refresh({ expectNoChanges: true, allowFailure: true });
      expect(seen.code, `${seen.stdout}${seen.stderr}`).not.toBe(0);
      expect(seen.stdout).toMatch(/support-live/);
    }

    // (2) An unrelated change (this agent's widget, another agent) with `up --refresh`: it deploys,
    // the rolled-back version stays off air and the deploy says so; nothing is left to change after.
    Object.assign(state, { widget: "Ours, v2", other: "Other agent, renamed" });
    p.setProgram(program(state));
    // (Its preview says so: the deploy that records the rollback; `up` prints its preview first.)
    const up = await p.pulumi(["up", "--yes", "--refresh"]);
    expect(up.stdout).toMatch(
      /version 1 stays off air: rolled back at \S+ to version 0, by the watch: Default Analysis\/User Sentiment = "negative" on 20 of 40 calls/,
    );
    expect(await liveOf(supportId)).toBe(0);
    expect((await client.widget.get(supportId)).theme.title).toBe("Ours, v2");
    expect((await client.agents.get(otherId)).name).toBe("Other agent, renamed");
    await p.preview({ expectNoChanges: true });
    await p.refresh({ expectNoChanges: true });
    await p.up();
    expect(await liveOf(supportId)).toBe(0);
    expect((await p.outputs()).rolledBack).toMatchObject({
      at: rolled.row.at,
      action: "rollback",
      to: 0,
      recorded: true,
    });
    // Recorded by that deploy: no longer news to the drift alarm either.
    const recorded = await diff(p, ["--drift"]);
    expect(recorded.code).toBe(0);

    // (3) reinstate: 1 puts it back live.
    state.reinstate = 1;
    p.setProgram(program(state));
    await p.upAndSettle();
    expect(await liveOf(supportId)).toBe(1);
    expect((await p.outputs()).rolledBack).toBeNull();

    // (4) A person's rollback in the dashboard is respected the same way: the refresh shows it, the
    // next `up` (no program change) records it, writing nothing; then preview and refresh are quiet.
    const row = await client.versions.activate(supportId, 0);
    const shown = await p.refresh({ expectNoChanges: true, allowFailure: true });
    expect(shown.code).not.toBe(0);
    const planned = await p.preview();
    expect(`${planned.stdout}${planned.stderr}`).toContain(
      `version 1 stays off air: rolled back at ${row.at} to version 0.`,
    );
    await p.up();
    expect(await liveOf(supportId)).toBe(0);
    expect((await p.outputs()).rolledBack).toEqual({ at: row.at, action: "rollback", to: 0, recorded: true });
    await p.preview({ expectNoChanges: true });
    await p.refresh({ expectNoChanges: true });
    state.widget = "Ours, v3";
    p.setProgram(program(state));
    await p.up();
    expect(await liveOf(supportId)).toBe(0);
    expect((await client.widget.get(supportId)).theme.title).toBe("Ours, v3");
    await p.preview({ expectNoChanges: true });

    // (5) Back on purpose (reinstate: 2); five calls, all negative: inconclusive, untouched.
    state.reinstate = 2;
    p.setProgram(program(state));
    await p.up();
    expect(await liveOf(supportId)).toBe(1);
    await traffic({ agent_id: supportId, count: 5, mix: [{ share: 1, analysis: NEGATIVE }] });
    const few = await diff(p, ["--watch"]);
    expect(few.code).toBe(0);
    expect(few.stdout).toContain("#### · AgentVersion `support-live`: inconclusive");
    expect(few.stdout).toContain(
      'User Sentiment measured on 5 of the 5 calls, "negative" on 5: too few to judge (at least 20 measured calls needed; at most 20%)',
    );
    expect(await liveOf(supportId)).toBe(1);

    // (6) The healthy version: a true negative share of 10% against a bound of 20%, 30 more callers
    // before each of 50 passes, each batch drawn with its own seed. Never rolled back.
    const refresh = parsePreview(JSON.parse(readFileSync(few.refresh, "utf8")));
    const outcomes = new Map<string, number>();
    for (let seed = 1; seed <= 50; seed++) {
      await traffic({ agent_id: steadyId, count: 30, seed, mix: [{ share: 0.1, analysis: NEGATIVE }] });
      const pass = await watchPass(refresh, client);
      const steadyResult = pass.results.find((r) => r.name === "steady-live");
      outcomes.set(steadyResult?.outcome ?? "?", (outcomes.get(steadyResult?.outcome ?? "?") ?? 0) + 1);
      expect(watchExitCode(pass)).not.toBe(6);
    }
    expect(outcomes.get("rolled_back")).toBeUndefined();
    expect(outcomes.get("healthy")).toBeGreaterThan(0);
    expect(await liveOf(steadyId)).toBe(1);
    const history = await client.versions.activations(steadyId).toArray();
    expect(history.filter((h) => h.action === "rollback")).toEqual([]);
  } finally {
    p.cleanup();
  }
}, 900_000);

/** One watched agent whose AgentVersion is named `resource` (a new name is a new AgentVersion). */
const single = (o: { prompt: string; resource: string; reinstate?: number }) => `
import * as va from "pulumi-voice-agent";

const watch: va.WatchArgs = {
  rates: [{ analysis: "Default Analysis/User Sentiment", value: "negative", atMost: 0.2 }],
};
const agent = new va.Agent("desk", { name: "Watched desk", systemPrompt: ${JSON.stringify(o.prompt)} });
const live = new va.AgentVersion(${JSON.stringify(o.resource)}, { agent, watch, reinstate: ${o.reinstate ?? 0} });

export const agentId = agent.agentId;
export const version = live.version;
export const isLive = live.isLive;
export const rolledBack = live.rolledBack.apply((r) => r ?? null);
`;

test("a rolled-back version is never live again without reinstate: refresh, revert, a second bad version (exit 7), re-apply, a new AgentVersion", async () => {
  const [good, bad] = [prompt("Greet guests."), prompt("Greet guests, curtly.")];
  const p = await PulumiProject.create({
    installed: true,
    name: "offair",
    program: single({ prompt: good, resource: "desk-live" }),
    config: { "voice-agent:baseUrl": emu.url },
    secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
  });
  try {
    await p.up();
    p.setProgram(single({ prompt: bad, resource: "desk-live" }));
    await p.upAndSettle({ quiet: true });
    const { agentId } = await p.outputs();
    expect(await p.outputs()).toMatchObject({ version: 1, isLive: true });

    // Version 1 goes bad: the watch puts version 0 back.
    await traffic({ agent_id: agentId, count: 40, mix: [{ share: 0.5, analysis: NEGATIVE }] });
    const first = await diff(p, ["--watch"]);
    expect(first.code).toBe(6);
    expect(await liveOf(agentId)).toBe(0);
    const rolledAt = (await client.versions.activations(agentId).toArray())[0]?.at;

    // Refresh, then a preview with no code change: no Agent update, the version stays off air (the
    // AgentVersion's update records it); the `up` writes nothing (no draft opened).
    await p.refresh();
    const quiet = await p.preview();
    expect(quiet.stdout + quiet.stderr).toContain(
      `version 1 stays off air: rolled back at ${rolledAt} to version 0, by the watch:`,
    );
    expect(quiet.stdout).not.toMatch(/systemPrompt/);
    await p.up();
    expect(await client.agents.get(agentId)).toMatchObject({
      version: 1,
      is_published: true,
      live_version: 0,
    });
    await p.preview({ expectNoChanges: true });
    await p.refresh({ expectNoChanges: true });

    // The team reverts the commit: the stack tracks version 0, live.
    p.setProgram(single({ prompt: good, resource: "desk-live" }));
    await p.upAndSettle({ quiet: true });
    expect(await p.outputs()).toMatchObject({ version: 0, isLive: true, rolledBack: null });

    // Version 0 exceeds its bound too: the version before it (1) was rolled back, so nothing is
    // safe to return to. Exit 7; version 0 stays live; version 1 never answers again.
    await traffic({ agent_id: agentId, count: 40, mix: [{ share: 0.5, analysis: NEGATIVE }] });
    const second = await diff(p, ["--watch"]);
    expect(second.code).toBe(7);
    expect(second.stdout).toContain("#### · AgentVersion `desk-live`: failing: nothing safe to return to");
    expect(second.stderr).toContain(
      `nothing safe to return to (version 1 was taken off air by a rollback at ${rolledAt})`,
    );
    expect(second.stderr).toContain("A person decides: fix forward");
    expect(await liveOf(agentId)).toBe(0);

    // The team re-applies the commit: version 1 (reused by content) stays off air, said at preview.
    p.setProgram(single({ prompt: bad, resource: "desk-live" }));
    const reapply = await p.preview();
    expect(reapply.stdout + reapply.stderr).toContain(
      `version 1 stays off air: rolled back at ${rolledAt} to version 0, by the watch:`,
    );
    await p.upAndSettle();
    expect(await liveOf(agentId)).toBe(0);
    expect(await p.outputs()).toMatchObject({
      version: 1,
      isLive: false,
      rolledBack: { at: rolledAt, to: 0 },
    });

    // A new AgentVersion resource for the same agent: the same.
    p.setProgram(single({ prompt: bad, resource: "desk-live-2" }));
    const renamed = await p.preview();
    expect(renamed.stdout + renamed.stderr).toContain(
      `version 1 stays off air: rolled back at ${rolledAt} to version 0`,
    );
    await p.upAndSettle();
    expect(await liveOf(agentId)).toBe(0);
    expect(await p.outputs()).toMatchObject({ version: 1, isLive: false });

    // On purpose: `reinstate: 1` puts it back.
    p.setProgram(single({ prompt: bad, resource: "desk-live-2", reinstate: 1 }));
    await p.upAndSettle({ quiet: true });
    expect(await liveOf(agentId)).toBe(1);
  } finally {
    p.cleanup();
  }
}, 900_000);
