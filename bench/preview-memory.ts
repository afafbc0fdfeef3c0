/**
 * The no-op preview of N agents (each with an AgentVersion live) against the same count of no-op
 * dynamic resources, over several rounds: a program's peak resident memory follows when V8 happens
 * to collect, so one preview of each (as `bench/scale.ts` runs) can differ by 15 % between runs of
 * the same code. Here the two previews alternate `--rounds` times and the medians are compared.
 *
 *   npx ts-node --transpile-only bench/preview-memory.ts [--agents=500] [--rounds=5] [--host=stock]
 *
 * The stacks are created against an emulator without a rate limit (the client paced at 1,000,000 a
 * minute): the preview sends no request, so the limit does not matter to what is measured. Per
 * round: the wall time and the peak memory (VmHWM) of the program and the dynamic-provider process
 * of each preview. About 7 minutes with 500 agents.
 */
import { loadavg } from "node:os";
import {
  agentsProgram,
  fmt,
  median,
  noopProgram,
  project,
  pulumiHost,
  startEmulator,
  timed,
  watchMemory,
} from "./lib";

let N = 500;
let rounds = 5;
for (const f of process.argv.slice(2)) {
  if (f.startsWith("--agents=")) N = Number(f.slice("--agents=".length));
  else if (f.startsWith("--rounds=")) rounds = Number(f.slice("--rounds=".length));
  else if (f === "--host=stock") process.env.PVA_PULUMI_HOST = "stock";
  else if (f !== "--host=ours")
    throw new Error(`unknown flag ${f}: --agents=N, --rounds=R, --host=stock|ours`);
}
if (!Number.isInteger(N) || N < 1 || !Number.isInteger(rounds) || rounds < 1)
  throw new Error("--agents and --rounds: positive whole numbers");

async function main(): Promise<void> {
  const emu = await startEmulator({ port: 0 });
  const noop = await project(emu, noopProgram(N, true));
  const ours = await project(emu, agentsProgram(N, "Preview"), 1_000_000);
  const started = new Date().toISOString();
  try {
    for (const p of [noop, ours]) await p.pulumi(["up", "--yes", "--skip-preview"]);
    const runs: Record<"ours" | "noop", { wall: number; program: number; provider: number }[]> = {
      ours: [],
      noop: [],
    };
    for (let i = 0; i < rounds; i++) {
      for (const [label, p] of [
        ["ours", ours],
        ["noop", noop],
      ] as const) {
        const load = fmt(loadavg()[0] as number, 1);
        const mem = watchMemory(p.dir);
        const { seconds } = await timed(() => p.pulumi(["preview", "--expect-no-changes"]));
        const peak = mem.stop();
        runs[label].push({ wall: seconds, ...peak });
        console.log(
          `round ${i + 1} ${label}: ${fmt(seconds, 1)} s, program ${fmt(peak.program, 0)} MB, provider ${fmt(peak.provider, 0)} MB (load ${load})`,
        );
      }
    }
    const med = (label: "ours" | "noop", k: "wall" | "program" | "provider") =>
      median(runs[label].map((r) => r[k]));
    console.log(
      `\n${N} agents + ${N} versions against ${2 * N} no-op dynamic resources, ${rounds} rounds, ` +
        `${pulumiHost() === "stock" ? "Pulumi's stock language host" : "this project's language host"}; ` +
        `${started} to ${new Date().toISOString()}.\n`,
    );
    console.log("| no-op preview, median | ours | no-op resources | ratio |\n|---|---|---|---|");
    for (const [k, unit, d] of [
      ["wall", "s", 1],
      ["program", "MB", 0],
      ["provider", "MB", 0],
    ] as const) {
      console.log(
        `| ${k === "wall" ? "wall" : `${k} peak`} | ${fmt(med("ours", k), d)} ${unit} | ${fmt(med("noop", k), d)} ${unit} | ` +
          `${fmt(med("ours", k) / med("noop", k), 2)} |`,
      );
    }
    const programs = (label: "ours" | "noop") => runs[label].map((r) => fmt(r.program, 0)).join(", ");
    console.log(`\nProgram peaks, ours: ${programs("ours")} MB; no-op resources: ${programs("noop")} MB.`);
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
