/**
 * The emulator's start time to its first answer, as a user's tests see it: in-process
 * (`startEmulator()` until `GET /_emulator/health` answers, as a vitest `globalSetup` does), and the
 * command (`node dist/emulator/cli.js --port 0`, from the process's launch until the same route
 * answers; the URL is read from its first stdout line), each with and without a seed of 20 agents.
 *
 *   npx ts-node --transpile-only bench/emulator-start.ts [runs=10]
 *
 * Needs the build (`npm run build`). Bounded: a few seconds.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { createInterface } from "node:readline";
import { type EmulatorSeed, startEmulator } from "../src/emulator";
import { fmt, median } from "./lib";

const RUNS = Number(process.argv[2] ?? 10);
const CLI = path.resolve(__dirname, "../dist/emulator/cli.js");

const seed: EmulatorSeed = {
  workspaces: {
    default: { agents: Array.from({ length: 20 }, (_, i) => ({ name: `Agent ${i}`, live: true })) },
  },
};

async function inProcess(withSeed: boolean): Promise<number> {
  const t0 = performance.now();
  const emu = await startEmulator({ port: 0, ...(withSeed ? { seed } : {}) });
  await emu.control.health();
  const ms = performance.now() - t0;
  await emu.close();
  return ms;
}

function command(seedFile?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [CLI, "--port", "0", ...(seedFile ? ["--seed", seedFile] : [])], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    child.once("error", reject);
    const lines = createInterface({ input: child.stdout });
    lines.once("line", (line) => {
      const url = /listening on (\S+)/.exec(line)?.[1];
      if (!url) return reject(new Error(`unexpected first line: ${line}`));
      void fetch(`${url}/_emulator/health`)
        .then((res) => {
          if (res.status !== 200) throw new Error(`health: ${res.status}`);
          const ms = performance.now() - t0;
          child.once("exit", () => resolve(ms));
          child.kill("SIGTERM");
        })
        .catch((err) => {
          child.kill("SIGKILL");
          reject(err);
        });
    });
  });
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), "emulator-start-"));
  const seedFile = path.join(dir, "seed.json");
  writeFileSync(seedFile, JSON.stringify(seed));
  try {
    await inProcess(false); // warm the module cache, as a test process that imported the package has it
    const rows: [string, () => Promise<number>][] = [
      ["in-process startEmulator() → first answer", () => inProcess(false)],
      ["in-process, seed of 20 live agents", () => inProcess(true)],
      ["command launch → first answer", () => command()],
      ["command, --seed of 20 live agents", () => command(seedFile)],
    ];
    for (const [label, run] of rows) {
      const ms: number[] = [];
      for (let i = 0; i < RUNS; i++) ms.push(await run());
      console.log(
        `${label.padEnd(44)} median ${fmt(median(ms), 1)} ms  (min ${fmt(Math.min(...ms), 1)}, max ${fmt(Math.max(...ms), 1)}; ${RUNS} runs)`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
