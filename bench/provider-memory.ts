/**
 * What the dynamic-provider process holds as the agent count grows: for each N, `up` (create N
 * agents with their AgentVersions) then `refresh --skip-preview`, ours against an emulator without
 * a rate limit (and the client paced at 100,000 a minute, so it is quick), and the same for 2N no-op
 * dynamic resources (`noopProgram`). The provider process is traced by bench/provider-memtrace.js
 * (preloaded through NODE_OPTIONS in the provider process only): peak RSS, peak heap used, the
 * most gRPC calls in flight, and the heap left after a forced full collection once every step of the
 * command is done.
 *
 *   npm run build && npx ts-node --transpile-only bench/provider-memory.ts [--agents=50,200,500]
 *     [--probe=MB] [--paced] [--ours-only] [--snapshot]
 *
 * `--probe=MB`: in our refreshes, the first time the heap used reaches MB, force a full collection
 * and record what it left (what of the heap was garbage). `--paced`: also refresh ours with the
 * client at the service's 300 requests a minute (minutes). `--ours-only`: skip the no-op resources.
 * `--snapshot`: also write heap snapshots of the provider (at the probe and when it settles) in the
 * folder printed with each row.
 */
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import {
  agentsProgram,
  DEFAULT_API_KEY,
  fmt,
  noopProgram,
  PulumiProject,
  project,
  startEmulator,
} from "./lib";

const flags = process.argv.slice(2);
let counts = [50, 200, 500];
let snapshot = false;
let probe: number | undefined;
let paced = false;
let oursOnly = false;
for (const f of flags) {
  if (f.startsWith("--agents=")) counts = f.slice("--agents=".length).split(",").map(Number);
  else if (f.startsWith("--probe=")) probe = Number(f.slice("--probe=".length));
  else if (f === "--paced") paced = true;
  else if (f === "--ours-only") oursOnly = true;
  else if (f === "--snapshot") snapshot = true;
  else throw new Error(`unknown flag ${f}: --agents=N,M,... --snapshot --probe=MB --paced --ours-only`);
}

interface Trace {
  pid: number;
  calls: Record<string, number>;
  inflightMax: number;
  max: { rss: number; heapUsed: number; heapTotal: number; external: number };
  settled: { t: number; heapUsedAfterGc: number; rssAfterGc: number; snapshot?: string }[];
  gcs: Record<string, number>;
  maxAfterMajor?: number;
  probe?: { t: number; inflight: number; heapUsedBefore: number; heapUsedAfterGc: number; rss: number };
}

const MB = (b: number) => fmt(b / 1e6, 0);

async function traced(p: PulumiProject, args: string[], label: string, probeMb?: number): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), "va-memtrace-"));
  const env: Record<string, string> = {
    NODE_OPTIONS: `--require ${path.resolve(__dirname, "provider-memtrace.js")}`,
    PVA_MEMTRACE_DIR: dir,
    ...(snapshot ? { PVA_MEMTRACE_SNAPSHOT: "1" } : {}),
    ...(probeMb ? { PVA_MEMTRACE_PROBE_MB: String(probeMb) } : {}),
    ...(process.env.PVA_MEMTRACE_ALLOC ? { PVA_MEMTRACE_ALLOC: "1" } : {}),
  };
  const t0 = Date.now();
  await p.pulumi(args, { env });
  const wall = (Date.now() - t0) / 1000;
  const traces = readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .map((f) => JSON.parse(readFileSync(path.join(dir, f), "utf8")) as Trace);
  const t = traces.sort((a, b) => b.max.rss - a.max.rss)[0];
  if (!t) throw new Error(`${label}: no provider trace in ${dir}`);
  const last = t.settled[t.settled.length - 1];
  const row =
    `| ${label} | ${fmt(wall, 1)} s | ${t.inflightMax} | ${MB(t.max.rss)} MB | ${MB(t.max.heapUsed)} MB | ` +
    `${MB(t.max.heapTotal)} MB | ${MB(t.max.external)} MB | ${last ? `${MB(last.heapUsedAfterGc)} MB` : ""} | ` +
    `${last ? `${MB(last.rssAfterGc)} MB` : ""} |`;
  console.log(
    row,
    JSON.stringify({ dir, calls: t.calls, gcs: t.gcs, maxAfterMajor: t.maxAfterMajor, probe: t.probe }),
  );
  return row;
}

async function main(): Promise<void> {
  const emu = await startEmulator({ port: 0, rateLimitPerMinute: 0 });
  const rows = [
    "| command | wall | calls in flight (most) | peak RSS | peak heap used | peak heap total | peak external | heap used after GC, settled | RSS then |",
    "|---|---|---|---|---|---|---|---|---|",
  ];
  try {
    for (const n of counts) {
      const ours = await project(emu, agentsProgram(n, `Mem${n}`), 100_000);
      const noop = await PulumiProject.create({
        installed: true,
        program: noopProgram(n, true),
        config: { "voice-agent:baseUrl": emu.url },
        secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
      });
      try {
        rows.push(await traced(ours, ["up", "--yes", "--skip-preview"], `ours ${n}+${n}: up`));
        rows.push(
          await traced(
            ours,
            ["refresh", "--yes", "--skip-preview", "--expect-no-changes"],
            `ours ${n}+${n}: refresh`,
            probe,
          ),
        );
        if (paced) {
          await ours.pulumi(["config", "set", "voice-agent:rateLimitPerMinute", "300"]);
          rows.push(
            await traced(
              ours,
              ["refresh", "--yes", "--skip-preview", "--expect-no-changes"],
              `ours ${n}+${n}: refresh at 300/min`,
              probe,
            ),
          );
        }
        if (oursOnly) continue;
        rows.push(await traced(noop, ["up", "--yes", "--skip-preview"], `no-op ${2 * n}: up`));
        rows.push(
          await traced(
            noop,
            ["refresh", "--yes", "--skip-preview", "--expect-no-changes"],
            `no-op ${2 * n}: refresh`,
          ),
        );
      } finally {
        ours.cleanup();
        noop.cleanup();
      }
    }
  } finally {
    await emu.close();
  }
  console.log(`\n${rows.join("\n")}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
