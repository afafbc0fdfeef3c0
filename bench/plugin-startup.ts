/**
 * The provider plugin's start: from exec to its gRPC port printed on stdout (what the engine waits
 * for), `runs` times each, for
 * - the single executable of this machine's platform (`npm run plugin:pack -- --host`: Node.js
 *   22 pinned inside, the bundle with V8's code cache),
 * - the same without the code cache (`PVA_SEA_CODE_CACHE=off`),
 * - and the old way, `node dist/plugin/main.js` (the compiled package on the Node.js on PATH;
 *   skipped when dist/ is not built).
 *
 *   source scripts/env.sh && npx ts-node --transpile-only bench/plugin-startup.ts [runs=20]
 *
 * Prints the median and the 90th percentile of each, and the CPU time the process used until its
 * port (from /proc: what load on the machine does not inflate). docs/benchmarks.md records a run.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";

const ROOT = path.resolve(__dirname, "..");
const runs = Number(process.argv[2] ?? 20);

/** The host archive `pack.js` writes into `out` (with `env`), unpacked into a new folder: the executable. */
function packedExecutable(work: string, name: string, env: Record<string, string> = {}): string {
  const out = path.join(work, name);
  const line = execFileSync("node", ["scripts/plugin/pack.js", "--host", "--out", out], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, ...env },
  }).trim();
  const archive = path.join(ROOT, line.split(" ")[0] as string);
  execFileSync("tar", ["-xzf", archive, "-C", out]);
  return path.join(
    out,
    process.platform === "win32" ? "pulumi-resource-voice-agent.exe" : "pulumi-resource-voice-agent",
  );
}

/** The CPU seconds (user and system, all threads) process `pid` has used so far (Linux `/proc`). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime: fields 14 and 15 of stat(5), in clock ticks (100 a second).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Seconds from spawning `command` to a port on its stdout, and the CPU seconds it used until then. */
async function startOnce(command: string, args: string[]): Promise<{ wall: number; cpu: number }> {
  const t0 = performance.now();
  const child = spawn(command, [...args, "127.0.0.1:1"], { stdio: ["ignore", "pipe", "inherit"] });
  try {
    return await new Promise<{ wall: number; cpu: number }>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        if (/^\d+\s*$/m.test(out)) {
          resolve({ wall: (performance.now() - t0) / 1000, cpu: cpuSeconds(child.pid as number) });
        }
      });
      child.on("exit", (code) => reject(new Error(`${command} exited ${code} before its port`)));
    });
  } finally {
    child.kill("SIGTERM");
    if (child.exitCode === null) await new Promise((r) => child.once("exit", r));
  }
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] as number;
}

async function main(): Promise<void> {
  const work = mkdtempSync(path.join(tmpdir(), "pva-startup-"));
  try {
    const variants: [string, string, string[]][] = [
      ["single executable (code cache)", packedExecutable(work, "cached"), []],
      [
        "single executable (no code cache)",
        packedExecutable(work, "plain", { PVA_SEA_CODE_CACHE: "off" }),
        [],
      ],
    ];
    const main = path.join(ROOT, "dist/plugin/main.js");
    if (existsSync(main))
      variants.push([`node dist/plugin/main.js (Node ${process.version})`, process.execPath, [main]]);
    else
      console.error("dist/plugin/main.js not built (npm run build): the node+dist launcher is not measured");
    const times = new Map<string, { wall: number; cpu: number }[]>(variants.map(([name]) => [name, []]));
    // Interleaved, so a burst of load on the machine falls on every variant alike.
    for (let i = 0; i < runs; i++) {
      for (const [name, command, args] of variants) times.get(name)?.push(await startOnce(command, args));
    }
    console.log(
      "| plugin | exec to port: median | p90 | min | max | CPU used until then: median |\n|---|---|---|---|---|---|",
    );
    for (const [name, samples] of times) {
      const xs = samples.map((r) => r.wall);
      const cpu = quantile(
        samples.map((r) => r.cpu),
        0.5,
      );
      const f = (s: number) => `${s.toFixed(3)} s`;
      const wall = [quantile(xs, 0.5), quantile(xs, 0.9), Math.min(...xs), Math.max(...xs)].map(f);
      console.log(`| ${name} | ${wall.join(" | ")} | ${f(cpu)} |`);
    }
    console.log(
      `\n${runs} runs each; load average at the end: ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
