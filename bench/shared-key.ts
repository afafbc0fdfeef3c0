/**
 * One key, many pipelines: 1, 2 or 3 processes on one API key against the emulator at the
 * service's limit (300 requests a minute per key), the package installed from its tarball.
 *
 * - 1: one project of N agents (each with an AgentVersion live): `up` creates them, then an `up`
 *   changes every agent's prompt.
 * - 2: two such projects (two teams' stacks), each phase started at the same moment in both.
 * - 3: the same two, and meanwhile a third process, `voice-agent-diff --watch --every 10`, judging
 *   W watched live versions of the same workspace (per pass: one history read each, a listing of
 *   calls and, while no call measures a rate, the analysis library; each version's attached groups
 *   once). Its requests are told by the User-Agent `voice-agent-diff` sends.
 *
 *   npx ts-node --transpile-only bench/shared-key.ts [--agents=150] [--processes=1,2,3] [--watched=10] [--every=10]
 *
 * Per run and phase: the requests the emulator admitted and those it answered 429 (and their share
 * of all), the wall time until every deploy was done, the rate bound of the admitted requests (with
 * a fresh moving window the first 300 go at once, so the last of n cannot go before
 * floor((n - 1) / 300) minutes), the ratio, when each deploy ended, and the 1-minute load average
 * before and after. Each phase starts from a fresh rate window (`POST /_emulator/rate-limit/clear`).
 * Exits 1 when a deploy fails.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import * as path from "node:path";
import { closeDispatchers, VoiceAgentClient } from "../src/client";
import type { PreviewJson } from "../src/gitops/preview";
import { TYPE_PREFIX } from "../src/resources/typeNames";
import { clearRateLimit } from "../test/support/control";
import {
  agentsProgram,
  clearRequestLog,
  DEFAULT_API_KEY,
  type Emulator,
  fmt,
  type PulumiProject,
  project,
  requestLog,
  scratchDir,
  startEmulator,
} from "./lib";

const LIMIT = 300;
const opt = (name: string, fallback: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const N = Number(opt("agents", "150"));
const PROCESSES = opt("processes", "1,2,3").split(",").map(Number);
const WATCHED = Number(opt("watched", "10"));
const EVERY = Number(opt("every", "10"));

const WATCH = { rates: [{ analysis: "Default Analysis/User Sentiment", value: "negative", atMost: 0.2 }] };

/** W agents with version 1 live (made before the phases; their requests are not counted). */
async function watchedRefresh(emu: Emulator, dir: string): Promise<string> {
  const c = new VoiceAgentClient({ baseUrl: emu.url, apiKey: DEFAULT_API_KEY });
  const steps: PreviewJson["steps"] = [
    { op: "refresh", urn: "urn:pulumi:prod::bench::pulumi:pulumi:Stack::bench-prod" },
  ];
  for (let i = 0; i < WATCHED; i++) {
    const a = await c.agents.create({ name: `Watched ${i}`, system_prompt: "## Agent Purpose\nv1" });
    await c.versions.publish(a.id, 0);
    await c.versions.activate(a.id, 0);
    const inputs = { agentId: a.id, live: true, watch: WATCH, draftVersion: 0, documentRevision: 1 };
    const state = {
      type: `${TYPE_PREFIX}AgentVersion`,
      id: `${a.id}/0`,
      inputs,
      outputs: { ...inputs, version: 0, isLive: true },
    };
    steps.push({
      op: "refresh",
      urn: `urn:pulumi:prod::bench::${TYPE_PREFIX}AgentVersion::w-${i}`,
      oldState: state,
      newState: state,
    });
  }
  await closeDispatchers();
  const file = path.join(dir, "refresh.json");
  writeFileSync(file, JSON.stringify({ steps }));
  return file;
}

/** `voice-agent-diff --watch --every EVERY` on the refresh JSON, as a CI job would run it. */
function startWatch(emu: Emulator, refresh: string): ChildProcess {
  const cli = path.join(__dirname, "..", "dist", "gitops", "cli.js");
  return spawn(process.execPath, [cli, "--watch", "--every", String(EVERY), refresh], {
    env: { ...process.env, VOICE_AGENT_BASE_URL: emu.url, VOICE_AGENT_API_KEY: DEFAULT_API_KEY },
    stdio: ["ignore", "ignore", "inherit"],
  });
}

interface Row {
  run: string;
  phase: string;
  admitted: number;
  refused: number;
  watchRequests: number;
  /** Of `refused`, the watch's. */
  watchRefused: number;
  wall: number;
  bound: number;
  ends: number[];
  load: string;
}

async function phase(run: string, name: string, emu: Emulator, teams: PulumiProject[]): Promise<Row> {
  await clearRateLimit(emu);
  await clearRequestLog(emu);
  const load0 = loadavg()[0] as number;
  const t0 = performance.now();
  const ends: number[] = [];
  const results = await Promise.all(
    teams.map(async (p) => {
      const r = await p.up({ allowFailure: true });
      ends.push((performance.now() - t0) / 1000);
      return r;
    }),
  );
  const wall = (performance.now() - t0) / 1000;
  for (const r of results) {
    if (r.code !== 0)
      throw new Error(`${run} ${name}: a deploy failed\n${`${r.stdout}\n${r.stderr}`.slice(-3000)}`);
  }
  const log = (await requestLog(emu)).filter((r) => r.path.startsWith("/v1"));
  const refused = log.filter((r) => r.status === 429).length;
  const admitted = log.length - refused;
  // The watch's requests, by the User-Agent `voice-agent-diff` sends.
  const byWatch = log.filter((r) => r.user_agent?.includes("voice-agent-diff"));
  const watchRequests = byWatch.length;
  const watchRefused = byWatch.filter((r) => r.status === 429).length;
  const row: Row = {
    run,
    phase: name,
    admitted,
    refused,
    watchRequests,
    watchRefused,
    wall,
    bound: Math.floor((admitted - 1) / LIMIT) * 60,
    ends: ends.sort((a, b) => a - b),
    load: `${fmt(load0, 1)}→${fmt(loadavg()[0] as number, 1)}`,
  };
  console.log(JSON.stringify(row));
  return row;
}

async function main(): Promise<void> {
  const emu = await startEmulator({ port: 0, rateLimitPerMinute: LIMIT });
  const rows: Row[] = [];
  const started = new Date().toISOString();
  const all: PulumiProject[] = [];
  try {
    for (const processes of PROCESSES) {
      const names = processes === 1 ? ["solo"] : [`p${processes}-team-a`, `p${processes}-team-b`];
      const teams = await Promise.all(names.map((name) => project(emu, agentsProgram(N, name))));
      all.push(...teams);
      const watch = processes === 3 ? startWatch(emu, await watchedRefresh(emu, scratchDir())) : undefined;
      const run =
        processes === 3
          ? `2 × ${N} agents + a watch of ${WATCHED} every ${EVERY} s`
          : processes === 2
            ? `2 × ${N} agents`
            : `1 × ${N} agents`;
      try {
        rows.push(await phase(run, "create", emu, teams));
        for (const [i, p] of teams.entries()) {
          p.setProgram(agentsProgram(N, names[i] as string, { prompt: "Help callers with their returns." }));
        }
        rows.push(await phase(run, "change every agent", emu, teams));
      } finally {
        // SIGTERM ends the watch after its pass in progress: wait for it, before the emulator goes.
        if (watch && watch.exitCode === null && watch.signalCode === null) {
          const exited = new Promise((resolve) => watch.once("exit", resolve));
          watch.kill("SIGTERM");
          const late = setTimeout(() => watch.kill("SIGKILL"), 60_000);
          await exited;
          clearTimeout(late);
        }
      }
    }
    console.log(`\n${started} to ${new Date().toISOString()}, ${LIMIT} requests a minute per key.\n`);
    console.log(
      "| processes on the key | phase | requests admitted | answered 429 | share 429 | both done | rate bound | ratio | deploys ended | load (1 min) |",
    );
    console.log("|---|---|---|---|---|---|---|---|---|---|");
    for (const r of rows) {
      const share = (100 * r.refused) / (r.admitted + r.refused);
      console.log(
        `| ${r.run}${r.watchRequests ? ` (watch: ${r.watchRequests} requests, ${r.watchRefused} answered 429)` : ""} | ${r.phase} | ${r.admitted} | ${r.refused} | ` +
          `${fmt(share, 1)} % | ${fmt(r.wall, 1)} s | ${r.bound} s | **${fmt(r.wall / r.bound, 2)}** | ` +
          `${r.ends.map((e) => `${fmt(e, 1)} s`).join(", ")} | ${r.load} |`,
      );
    }
  } finally {
    for (const p of all) p.cleanup();
    await emu.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
