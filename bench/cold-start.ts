/**
 * Provider cold start: from the start of the dynamic-provider process (the one `pulumi-resource-
 * pulumi-nodejs` execs) to its first request to the service, on a one-agent stack: during
 * `pulumi preview` of the agent to create (the first request is a catalogue read of its check; the
 * provider reads its settings from the program process) and during `pulumi refresh` (no program
 * runs: the provider runs `pulumi config --show-secrets`, then reads the agent).
 *
 *   npx ts-node --transpile-only bench/cold-start.ts [runs=5]
 *
 * Process start times come from /proc (`starttime`, 10 ms ticks, mapped to the wall clock through
 * /proc/uptime); the first request's time from the emulator's request log. The `pulumi config
 * --show-secrets` child the provider runs to read its credentials is timed the same way. Also
 * measured apart: loading the handlers in a bare Node process, and `pulumi config` alone.
 * Linux only. Bounded: about a minute.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import * as path from "node:path";
import {
  clearRequestLog,
  type Emulator,
  fmt,
  median,
  type PulumiProject,
  project,
  requestLog,
  startEmulator,
  timed,
} from "./lib";

const RUNS = Number(process.argv[2] ?? 5);
const TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

/** Wall-clock ms of boot, from /proc/uptime. */
function bootEpochMs(): number {
  const up = Number(readFileSync("/proc/uptime", "utf8").split(" ")[0]);
  return Date.now() - up * 1000;
}

interface Seen {
  pid: number;
  startMs: number;
  lastSeenMs: number;
  cmd: string;
}

/** Polls /proc for processes whose command line matches `pattern`, until stopped. */
function watch(pattern: RegExp, cwd: string): { stop(): Seen[] } {
  const boot = bootEpochMs();
  const seen = new Map<number, Seen>();
  const timer = setInterval(() => {
    const now = Date.now();
    for (const e of readdirSync("/proc")) {
      if (!/^\d+$/.test(e)) continue;
      const pid = Number(e);
      const known = seen.get(pid);
      if (known) {
        known.lastSeenMs = now;
        continue;
      }
      try {
        const cmd = readFileSync(`/proc/${e}/cmdline`, "utf8").replaceAll("\0", " ");
        if (!pattern.test(cmd)) continue;
        // Only processes of this project (the engine starts plugins in the project folder).
        if (readlinkSync(`/proc/${e}/cwd`) !== cwd) continue;
        const stat = readFileSync(`/proc/${e}/stat`, "utf8");
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        const startTicks = Number(fields[19]);
        seen.set(pid, { pid, startMs: boot + (startTicks / TICKS) * 1000, lastSeenMs: now, cmd });
      } catch {
        // gone
      }
    }
  }, 3);
  return {
    stop: () => {
      clearInterval(timer);
      return [...seen.values()];
    },
  };
}

interface Row {
  total: number;
  toConfig: number;
  config: number;
  afterConfig: number;
  configs: number;
}

/** One command: dynamic-provider start -> first request, and the `pulumi config` child if any. */
async function measure(emu: Emulator, p: PulumiProject, run: () => Promise<unknown>): Promise<Row> {
  await clearRequestLog(emu);
  const providers = watch(/cmd\/dynamic-provider/, p.dir);
  const configs = watch(/^pulumi config --json --show-secrets/, p.dir);
  await run();
  const prov = providers.stop();
  const conf = configs.stop().sort((a, b) => a.startMs - b.startMs);
  const first = (await requestLog(emu)).find((r) => r.path.startsWith("/v1"));
  const start = Math.min(...prov.map((x) => x.startMs));
  const firstAt = Date.parse(first?.at ?? "");
  const c = conf[0];
  return {
    total: firstAt - start,
    toConfig: c ? c.startMs - start : Number.NaN,
    config: c ? c.lastSeenMs - c.startMs : Number.NaN,
    afterConfig: c ? firstAt - c.lastSeenMs : Number.NaN,
    configs: conf.length,
  };
}

async function main(): Promise<void> {
  const emu = await startEmulator({ port: 0, rateLimitPerMinute: 0 });
  const program = `
import * as va from "pulumi-voice-agent";
new va.Agent("agent", { name: "Cold start", systemPrompt: "## Agent Purpose\\nHelp callers." });
`;
  const p = await project(emu, program);
  const previews: Row[] = [];
  const refreshes: Row[] = [];
  try {
    // `preview` of the agent to create: its check reads the catalogue first; the program runs, so
    // the provider reads the settings from it.
    for (let i = 0; i < RUNS; i++) {
      const row = await measure(emu, p, () => p.preview());
      previews.push(row);
      console.log(
        `preview ${i + 1}: provider start -> first request ${row.total.toFixed(0)} ms; ` +
          `${row.configs} \`pulumi config\` child(ren)`,
      );
    }
    // `refresh` runs no program: the provider runs `pulumi config`, then reads the agent.
    await p.up();
    for (let i = 0; i < RUNS; i++) {
      const row = await measure(emu, p, () => p.pulumi(["refresh", "--yes", "--skip-preview"]));
      refreshes.push(row);
      console.log(
        `refresh ${i + 1}: provider start -> first request ${row.total.toFixed(0)} ms ` +
          `(to \`pulumi config\` ${row.toConfig.toFixed(0)} ms, \`pulumi config\` ~${row.config.toFixed(0)} ms, ` +
          `then ${row.afterConfig.toFixed(0)} ms)`,
      );
    }
  } finally {
    p.cleanup();
    await emu.close();
  }

  // Pieces measured apart.
  const root = path.resolve(__dirname, "..");
  const bare = (code: string) =>
    Number(spawnSync(process.execPath, ["-e", code], { encoding: "utf8", cwd: root }).stdout.trim());
  const sdkLoads: number[] = [];
  const loads: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    sdkLoads.push(
      bare(`const t=performance.now();require("@pulumi/pulumi");console.log(performance.now()-t)`),
    );
    // The provider process has the SDK loaded already (its runtime needs it): what ours adds.
    loads.push(
      bare(
        `require("@pulumi/pulumi");const t=performance.now();require("./dist/provider/handlers").handler("agent");` +
          `require("./dist/spec");console.log(performance.now()-t)`,
      ),
    );
  }
  const nodeBare: number[] = [];
  const pulumiCfg: number[] = [];
  const q = await project(await startEmulator({ port: 0 }), program);
  try {
    for (let i = 0; i < RUNS; i++) {
      nodeBare.push((await timed(async () => spawnSync(process.execPath, ["-e", "0"]))).seconds * 1000);
      pulumiCfg.push(
        (
          await timed(async () =>
            spawnSync("pulumi", ["config", "--json", "--show-secrets", "--stack", q.stack], {
              cwd: q.dir,
              env: q.env,
            }),
          )
        ).seconds * 1000,
      );
    }
  } finally {
    q.cleanup();
  }
  const med = (rows: Row[], k: keyof Row) => fmt(median(rows.map((r) => r[k])), 0);
  console.log(`\nProvider cold start, median of ${RUNS} runs of each command on a one-agent stack\n`);
  console.log("| Measure | Median |");
  console.log("|---|---|");
  console.log(`| \`preview\`: dynamic-provider start -> first request | ${med(previews, "total")} ms |`);
  console.log(`| ... \`pulumi config\` children | ${med(previews, "configs")} |`);
  console.log(`| \`refresh\`: dynamic-provider start -> first request | ${med(refreshes, "total")} ms |`);
  console.log(`| ... of which: start -> \`pulumi config\` child starts | ${med(refreshes, "toConfig")} ms |`);
  console.log(`| ... of which: \`pulumi config --show-secrets\` child | ${med(refreshes, "config")} ms |`);
  console.log(`| ... of which: after it -> first request | ${med(refreshes, "afterConfig")} ms |`);
  console.log(`| apart: \`pulumi config --json --show-secrets\` alone | ${fmt(median(pulumiCfg), 0)} ms |`);
  console.log(
    `| apart: loading @pulumi/pulumi (any dynamic provider pays it) | ${fmt(median(sdkLoads), 0)} ms |`,
  );
  console.log(`| apart: loading our handlers, agent and spec after it | ${fmt(median(loads), 0)} ms |`);
  console.log(`| apart: bare \`node -e 0\` | ${fmt(median(nodeBare), 0)} ms |`);
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
