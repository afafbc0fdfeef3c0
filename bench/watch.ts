/**
 * What the watch (`voice-agent-diff --watch`) costs and how fast it acts, against the emulator:
 *
 * 1. Time to rollback: a bad version goes live (a true negative share of `badShare` against a bound
 *    of 20%), callers arrive at 30 calls a minute (each call lasting `callMinutes`), and a pass runs
 *    every 60 s from a random phase: the time from the bad version's activation to the previous
 *    version back on air (the rollback's deploy-history row). Run in compressed time (every
 *    duration divided by `scale`; the figure is scaled back), over `trials` seeded trials.
 * 2. Requests per pass per watched agent: a pass over 1, 10 and 50 watched agents (30 calls each in
 *    the window), its requests by kind from the emulator's log.
 * 3. A pass over 500 watched agents at the rate limit (300 requests a minute, enforced by the
 *    emulator, the client pacing itself): its wall time and requests.
 *
 * The watch is driven in process (`watchPass`, what the command runs), on a refresh JSON shaped as
 * Pulumi prints it for a stack of such AgentVersions; the agents and versions are made through the
 * API (a pass's cost does not depend on how they were deployed).
 *
 *   npx ts-node --transpile-only bench/watch.ts [trials=5] [scale=30] [badShare=0.4] [callMinutes=1]
 *   npx ts-node --transpile-only bench/watch.ts --agents=5000 [--scale=10] [--hours=24] [--minutes=10] [--trials=10]
 *
 * With `--agents=N`: the watch at scale, a watch holding what it read from pass to pass
 * (bench/watch-scale.ts).
 *
 * Bounded: about 5 minutes with the defaults on 2 cores.
 */

import * as path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { closeDispatchers, VoiceAgentClient } from "../src/client";
import type { TrafficRequest } from "../src/emulator";
import { mulberry32 } from "../src/emulator/faults";
import type { PreviewJson } from "../src/gitops/preview";
import { watchPass } from "../src/gitops/watch";
import { TYPE_PREFIX } from "../src/resources/typeNames";
import { traffic as placeTraffic, resetEmulator } from "../test/support/control";
import {
  clearRequestLog,
  countCalls,
  DEFAULT_API_KEY,
  type Emulator,
  fmt,
  median,
  requestLog,
  scratchDir,
  startEmulator,
  timed,
} from "./lib";

const TRIALS = Number(process.argv[2] ?? 5);
const SCALE = Number(process.argv[3] ?? 30);
const BAD_SHARE = Number(process.argv[4] ?? 0.4);
const CALL_MINUTES = Number(process.argv[5] ?? 1);

const WATCH = { rates: [{ analysis: "Default Analysis/User Sentiment", value: "negative", atMost: 0.2 }] };
const NEGATIVE = { "Default Analysis": { "User Sentiment": "negative" } };

/** `n` agents, each with versions 0 and 1 published and version 1 live: the watched AgentVersions' state. */
async function agents(c: VoiceAgentClient, n: number, tag: string) {
  const out: { agentId: string; version: number }[] = [];
  for (let i = 0; i < n; i++) {
    const a = await c.agents.create({
      name: `Watch bench ${tag} ${i}`,
      system_prompt: "## Agent Purpose\nv0",
    });
    await c.versions.publish(a.id, 0);
    await c.versions.activate(a.id, 0);
    await c.agents.patch(a.id, { system_prompt: "## Agent Purpose\nv1" });
    await c.versions.publish(a.id, 1);
    out.push({ agentId: a.id, version: 1 });
  }
  return out;
}

/** The refresh JSON of a stack whose AgentVersions put these versions live, watched. */
function refreshOf(versions: { agentId: string; version: number }[]): PreviewJson {
  return {
    steps: [
      { op: "refresh", urn: "urn:pulumi:prod::bench::pulumi:pulumi:Stack::bench-prod" },
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
          urn: `urn:pulumi:prod::bench::${TYPE_PREFIX}AgentVersion::v-${i}`,
          oldState: state,
          newState: state,
        };
      }),
    ],
  };
}

async function traffic(emu: Emulator, body: TrafficRequest): Promise<void> {
  await placeTraffic(emu, body);
}

/** 1. Time from the bad version's activation to the previous version back live, in (scaled-back) seconds. */
async function timeToRollback(): Promise<void> {
  const minute = 60_000 / SCALE;
  const emu = await startEmulator({
    port: 0,
    rateLimitPerMinute: 0,
    callSeconds: (CALL_MINUTES * 60) / SCALE,
  });
  const c = new VoiceAgentClient({
    baseUrl: emu.url,
    apiKey: DEFAULT_API_KEY,
    rateLimitPerMinute: 1_000_000,
  });
  const times: number[] = [];
  const passes: number[] = [];
  const passSeconds: number[] = [];
  try {
    for (let trial = 1; trial <= TRIALS; trial++) {
      const random = mulberry32(trial);
      const [v] = await agents(c, 1, `ttr ${trial}`);
      const { agentId } = v!;
      const live = await c.versions.activate(agentId, 1); // the bad version goes live
      const t0 = Date.parse(live.at);
      const refresh = refreshOf([v!]);
      let done = false;
      // Callers: one every 2 s (30 a minute), each drawn with the trial's seed.
      const callers = (async () => {
        for (let i = 0; !done; i++) {
          await traffic(emu, {
            agent_id: agentId,
            version: 1,
            count: 1,
            seed: trial * 100_000 + i,
            mix: [{ share: BAD_SHARE, analysis: NEGATIVE }],
          }).catch(() => undefined);
          await sleep(minute / 30);
        }
      })();
      // Passes every minute from a random phase.
      await sleep(random() * minute);
      let n = 0;
      for (;;) {
        n++;
        const { seconds, value } = await timed(() => watchPass(refresh, c));
        passSeconds.push(seconds);
        const r = value.results[0];
        if (r?.outcome === "rolled_back" && r.row) {
          times.push(((Date.parse(r.row.at) - t0) / 1000) * SCALE);
          passes.push(n);
          break;
        }
        if (n > 60) throw new Error("no rollback within an hour");
        await sleep(minute - seconds * 1000);
      }
      done = true;
      await callers;
    }
  } finally {
    await emu.close();
  }
  const s = [...times].sort((a, b) => a - b);
  console.log(
    `time to rollback (true negative share ${BAD_SHARE * 100}%, bound 20%, 30 calls/min, calls of ${CALL_MINUTES} min, a pass every 60 s; ${TRIALS} trials, time / ${SCALE}):`,
  );
  console.log(
    `  median ${fmt(median(times), 0)} s, min ${fmt(s[0] ?? 0, 0)} s, max ${fmt(s.at(-1) ?? 0, 0)} s; passes until rollback ${passes.join(", ")}`,
  );
  console.log(`  one pass's wall time (unscaled): median ${fmt(median(passSeconds) * 1000, 0)} ms`);
}

/** Requests by kind, the calls listing's pages and the deploy-history reads named as such. */
function kinds(byKind: Record<string, number>): string {
  const out = new Map<string, number>();
  for (const [k, v] of Object.entries(byKind)) {
    const kind = k.startsWith("GET /v1/calls")
      ? "calls listing pages"
      : k.endsWith("/activations")
        ? "deploy-history reads"
        : k;
    out.set(kind, (out.get(kind) ?? 0) + v);
  }
  return [...out].map(([k, v]) => `${v} ${k}`).join(", ");
}

/** 2. Requests of one pass over `n` watched agents with 30 calls each. */
async function requestsPerPass(emu: Emulator, c: VoiceAgentClient, n: number): Promise<void> {
  await resetEmulator(emu);
  const versions = await agents(c, n, `rpp ${n}`);
  for (const v of versions) {
    await c.versions.activate(v.agentId, 1);
    await traffic(emu, {
      agent_id: v.agentId,
      count: 30,
      seed: n,
      mix: [{ share: 0.1, analysis: NEGATIVE }],
    });
  }
  await sleep(1500); // every call finished and analysed (calls of 0.5 s)
  await clearRequestLog(emu);
  const { seconds } = await timed(() => watchPass(refreshOf(versions), c));
  const counted = countCalls(await requestLog(emu));
  const total = counted.reads + counted.writes;
  console.log(
    `  ${n} watched agents, ${30 * n} calls: ${total} requests (${fmt(total / n, 2)} per agent; ${kinds(counted.byKind)}), ${fmt(seconds, 2)} s`,
  );
}

/** 3. A pass over 500 watched agents, the emulator enforcing 300 requests a minute. */
async function passAtTheLimit(): Promise<void> {
  const db = path.join(scratchDir(), "watch-500.db");
  const build = await startEmulator({ port: 0, db, rateLimitPerMinute: 0, callSeconds: 0.5 });
  const fast = new VoiceAgentClient({
    baseUrl: build.url,
    apiKey: DEFAULT_API_KEY,
    rateLimitPerMinute: 1_000_000,
  });
  const versions = await agents(fast, 500, "limit");
  for (const v of versions) await fast.versions.activate(v.agentId, 1);
  for (const v of versions.slice(0, 50))
    await traffic(build, {
      agent_id: v.agentId,
      count: 30,
      seed: 1,
      mix: [{ share: 0.1, analysis: NEGATIVE }],
    });
  await sleep(1500);
  await build.close();
  await closeDispatchers();
  const emu = await startEmulator({ port: 0, db, rateLimitPerMinute: 300, callSeconds: 0.5 });
  try {
    const c = new VoiceAgentClient({ baseUrl: emu.url, apiKey: DEFAULT_API_KEY });
    await clearRequestLog(emu);
    const { seconds, value } = await timed(() => watchPass(refreshOf(versions), c));
    const log = await requestLog(emu);
    const counted = countCalls(log);
    const outcomes = new Map<string, number>();
    for (const r of value.results) outcomes.set(r.outcome, (outcomes.get(r.outcome) ?? 0) + 1);
    console.log(
      `a pass over 500 watched agents (1,500 calls of 50 of them) at 300 requests/min: ${fmt(seconds, 1)} s, ` +
        `${counted.reads + counted.writes} requests (${kinds(counted.byKind)}), ${log.filter((e) => e.status === 429).length} answered 429; ` +
        `outcomes ${[...outcomes].map(([k, v]) => `${v} ${k}`).join(", ")}`,
    );
  } finally {
    await emu.close();
  }
}

async function main(): Promise<void> {
  if (process.argv.some((a) => a.startsWith("--agents="))) {
    // The watch at scale: its own process layout (bench/watch-scale.ts).
    await (require("./watch-scale") as typeof import("./watch-scale")).watchAtScale();
    return;
  }
  await timeToRollback();
  console.log("requests per pass:");
  const emu = await startEmulator({ port: 0, rateLimitPerMinute: 0, callSeconds: 0.5 });
  try {
    const c = new VoiceAgentClient({
      baseUrl: emu.url,
      apiKey: DEFAULT_API_KEY,
      rateLimitPerMinute: 1_000_000,
    });
    for (const n of [1, 10, 50]) await requestsPerPass(emu, c, n);
  } finally {
    await emu.close();
  }
  await passAtTheLimit();
  await closeDispatchers();
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
