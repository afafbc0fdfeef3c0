/**
 * Scale: a workspace of N agents (each with an AgentVersion live) against the emulator at the
 * service's rate limit (300 requests a minute per key), the package installed from its tarball.
 * Phases, each after a fresh rate window (the emulator's windows cleared, `--wait` waits a minute
 * instead): create, change every agent's prompt, a no-op preview (against the same count of no-op
 * dynamic resources, created first), and `refresh --skip-preview`.
 *
 *   npx ts-node --transpile-only bench/scale.ts [--agents=500] [--host=stock] [--wait] [--parallel=P] [--log=DIR]
 *
 * `--log=DIR` writes each phase's request log to DIR/<phase>.json and prints its requests per 10 s
 * (where a phase loses time against its bound).
 * `--parallel=P` passes `--parallel P` to every command (Pulumi's default is unbounded: the engine
 * hands the provider every operation at once, and the provider holds each until the pace lets it go).
 *
 * Per phase: requests (the emulator's log; those answered 429 in brackets), wall time, seconds
 * from the command's start to the first request and from the last request to the command's end,
 * the rate bound (with a fresh window a moving-window limit admits the first 300 requests at once,
 * so the last of n requests cannot go before floor((n - 1) / 300) minutes) and the ratio of the
 * wall time to it, and the peak memory (VmHWM, the resident-set high-water mark, from /proc) of the
 * program's Node.js process and of the dynamic-provider process. Linux only (reads /proc). About
 * 20 minutes with 500 agents.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import * as path from "node:path";
import { clearRateLimit } from "../test/support/control";
import {
  agentsProgram,
  clearRequestLog,
  type Emulator,
  fmt,
  noopProgram,
  type PulumiProject,
  project,
  pulumiHost,
  type Role,
  requestLog,
  startEmulator,
  watchMemory,
} from "./lib";

const LIMIT = 300;
const flags = process.argv.slice(2);
let N = 500;
let wait = false;
let parallel: string[] = [];
let logDir: string | undefined;
for (const f of flags) {
  if (f.startsWith("--agents=")) N = Number(f.slice("--agents=".length));
  else if (f.startsWith("--parallel="))
    parallel = ["--parallel", String(Number(f.slice("--parallel=".length)))];
  else if (f === "--host=stock") process.env.PVA_PULUMI_HOST = "stock";
  else if (f === "--wait") wait = true;
  else if (f.startsWith("--log=")) logDir = f.slice("--log=".length);
  else if (f !== "--host=ours")
    throw new Error(`unknown flag ${f}: --agents=N, --host=stock|ours, --wait, --parallel=P, --log=DIR`);
}
if (!Number.isInteger(N) || N < 1) throw new Error("--agents: a positive whole number");

interface Row {
  phase: string;
  requests?: number;
  refused?: number;
  wall: number;
  before?: number;
  after?: number;
  bound?: number;
  memory: Record<Role, number>;
  load: string;
}

async function freshWindow(emu: Emulator): Promise<void> {
  if (wait) await new Promise((r) => setTimeout(r, 61_000));
  else await clearRateLimit(emu);
  await clearRequestLog(emu);
}

async function phase(
  name: string,
  p: PulumiProject,
  run: () => Promise<unknown>,
  emu?: Emulator,
): Promise<Row> {
  if (emu) await freshWindow(emu);
  const load0 = loadavg()[0] as number;
  const mem = watchMemory(p.dir);
  const t0 = Date.now();
  await run();
  const t1 = Date.now();
  const memory = mem.stop();
  const load = `${fmt(load0, 1)}→${fmt(loadavg()[0] as number, 1)}`;
  const row: Row = { phase: name, wall: (t1 - t0) / 1000, memory, load };
  if (emu) {
    const log = (await requestLog(emu)).filter((r) => r.path.startsWith("/v1"));
    if (logDir) {
      // Each request's method, path, status and instant, and the admissions per 10 s from the start.
      mkdirSync(logDir, { recursive: true });
      const slug = name.replace(/[^a-z0-9]+/gi, "-").toLowerCase();
      writeFileSync(
        path.join(logDir, `${slug}.json`),
        JSON.stringify(log.map((r) => ({ method: r.method, path: r.path, status: r.status, at: r.at }))),
      );
      const per10: number[] = [];
      for (const r of log) {
        const bucket = Math.floor((Date.parse(r.at) - t0) / 10_000);
        per10[bucket] = (per10[bucket] ?? 0) + 1;
      }
      console.log(`${name}: admitted per 10 s: ${Array.from(per10, (x) => x ?? 0).join(" ")}`);
    }
    row.requests = log.length;
    row.refused = log.filter((r) => r.status === 429).length;
    if (log.length > 0) {
      row.before = (Date.parse(log[0]?.at as string) - t0) / 1000;
      row.after = (t1 - Date.parse(log[log.length - 1]?.at as string)) / 1000;
      const admitted = log.length - row.refused;
      row.bound = Math.floor((admitted - 1) / LIMIT) * 60;
    }
  }
  console.log(`${name}: ${fmt(row.wall, 1)} s, ${row.requests ?? 0} requests (load ${load})`);
  return row;
}

function table(rows: Row[]): string {
  const cell = (x: number | undefined, d = 1) => (x === undefined ? "" : fmt(x, d));
  const lines = [
    "| phase | requests (429) | wall | before first request | after last request | rate bound | ratio | program peak | provider peak | load (1 min) |",
    "|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of rows) {
    const ratio = r.bound ? fmt(r.wall / r.bound, 2) : "";
    lines.push(
      `| ${r.phase} | ${r.requests === undefined ? "" : `${r.requests} (${r.refused})`} | ${cell(r.wall)} s | ` +
        `${r.before === undefined ? "" : `${cell(r.before)} s`} | ${r.after === undefined ? "" : `${cell(r.after)} s`} | ` +
        `${r.bound ? `${r.bound} s` : ""} | ${ratio} | ${fmt(r.memory.program, 0)} MB | ` +
        `${r.memory.provider ? `${fmt(r.memory.provider, 0)} MB` : ""} | ${r.load} |`,
    );
  }
  return lines.join("\n");
}

async function main(): Promise<void> {
  const emu = await startEmulator({ port: 0, rateLimitPerMinute: LIMIT });
  const rows: Row[] = [];
  const noop = await project(emu, noopProgram(N, true));
  const ours = await project(emu, agentsProgram(N, "Scale"));
  const started = new Date().toISOString();
  try {
    const up = (p: PulumiProject) => p.pulumi(["up", "--yes", "--skip-preview", ...parallel]);
    const preview = (p: PulumiProject) => p.pulumi(["preview", "--expect-no-changes", ...parallel]);
    const refresh = (p: PulumiProject) =>
      p.pulumi(["refresh", "--yes", "--skip-preview", "--expect-no-changes", ...parallel]);
    rows.push(await phase(`no-op resources (${2 * N}): create`, noop, () => up(noop)));
    rows.push(await phase(`ours (${N} + ${N}): create`, ours, () => up(ours), emu));
    const stateBytes = (await ours.exportState(false)).length;
    ours.setProgram(agentsProgram(N, "Scale", { prompt: "Help callers with their returns." }));
    rows.push(await phase("ours: change every agent's prompt", ours, () => up(ours), emu));
    rows.push(await phase("ours: no-op preview", ours, () => preview(ours), emu));
    rows.push(await phase("no-op resources: no-op preview", noop, () => preview(noop)));
    rows.push(await phase("ours: refresh --skip-preview", ours, () => refresh(ours), emu));
    rows.push(await phase("no-op resources: refresh --skip-preview", noop, () => refresh(noop)));
    const n = rows.find((r) => r.phase.startsWith("no-op resources: no-op preview")) as Row;
    const o = rows.find((r) => r.phase === "ours: no-op preview") as Row;
    const nc = rows[0] as Row;
    const oc = rows[1] as Row;
    console.log(
      `\n${N} agents, each with an AgentVersion live, against the emulator at ${LIMIT} requests a minute; ` +
        `${pulumiHost() === "stock" ? "Pulumi's stock language host" : "this project's language host"}; ` +
        `${started} to ${new Date().toISOString()}; phases separated by ${wait ? "a minute's wait" : "a cleared rate window"}` +
        `${parallel.length ? `; ${parallel.join(" ")}` : ""}.\n`,
    );
    console.log(table(rows));
    console.log(
      `\nNo-op preview: ours / no-op resources ${fmt(o.wall / n.wall, 2)}. ` +
        `Program peak on create: ours / no-op resources ${fmt(oc.memory.program / nc.memory.program, 2)}. ` +
        `State after create: ${fmt(stateBytes / 1024, 0)} KB, ${fmt(stateBytes / (2 * N), 0)} bytes per resource.`,
    );
  } finally {
    noop.cleanup();
    ours.cleanup();
    await emu.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
