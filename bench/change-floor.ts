/**
 * The floor of a rate-bound change: how fast the engine itself goes, and what that allows.
 *
 * N agents (500 by default), each with an AgentVersion live, against an emulator without a rate
 * limit (the client paced at 1,000,000 a minute); every agent's prompt changed once, timed, with
 * each request's instant from the emulator's log. The same count of no-op dynamic resources
 * (`noopProgram` with an `update`), changed the same way, gives the engine's own time per step for a
 * stack of that size.
 *
 * A moving window of L requests per W seconds lets request k + L go no sooner than W after request
 * k, so the last of R requests goes no sooner than t(r) + floor((R - 1) / L) * W, where
 * r = R - floor((R - 1) / L) * L and t(r) is when the engine, unhindered, sends its r-th request
 * (its start-up included). That is the best any pacing can do with this engine: the script prints it
 * as a ratio to the rate bound (floor((R - 1) / L) * W, as bench/scale.ts reports it).
 *
 *   npx ts-node --transpile-only bench/change-floor.ts [--agents=500] [--host=stock]
 *
 * About 12 minutes with 500 agents.
 */
import {
  agentsProgram,
  classify,
  clearRequestLog,
  fmt,
  noopProgram,
  project,
  requestLog,
  startEmulator,
  timed,
} from "./lib";

let N = 500;
for (const f of process.argv.slice(2)) {
  if (f.startsWith("--agents=")) N = Number(f.slice("--agents=".length));
  else if (f === "--host=stock") process.env.PVA_PULUMI_HOST = "stock";
  else if (f !== "--host=ours") throw new Error(`unknown flag ${f}: --agents=N, --host=stock|ours`);
}
if (!Number.isInteger(N) || N < 1) throw new Error("--agents: a positive whole number");

const LIMIT = 300;
const WINDOW_S = 60;

async function main(): Promise<void> {
  // No rate limit: the engine's own pace is what is measured.
  const emu = await startEmulator({ port: 0, rateLimitPerMinute: 1_000_000 });
  try {
    // Ours: create, then change every prompt, with the request log of the change.
    const ours = await project(emu, agentsProgram(N, "Floor"), 1_000_000);
    await ours.pulumi(["up", "--yes", "--skip-preview"]);
    const stateBytes = (await ours.exportState()).length;
    await clearRequestLog(emu);
    ours.setProgram(agentsProgram(N, "Floor", { prompt: "Changed." }));
    const started = Date.now();
    const change = await timed(() => ours.pulumi(["up", "--yes", "--skip-preview"]));
    const log = (await requestLog(emu)).filter((r) => r.path.startsWith("/v1"));
    const at = log.map((r) => (Date.parse(r.at) - started) / 1000);
    const R = log.length;
    const windows = Math.floor((R - 1) / LIMIT);
    const r = R - windows * LIMIT;
    const tr = at[r - 1] as number;
    const bound = windows * WINDOW_S;
    const kinds = new Map<string, number>();
    for (const e of log) kinds.set(classify(e), (kinds.get(classify(e)) ?? 0) + 1);
    const steps = 2 * N;

    // The same count of no-op resources, changed the same way.
    const noop = await project(emu, noopProgram(N, true, "Help callers."));
    await noop.pulumi(["up", "--yes", "--skip-preview"]);
    noop.setProgram(noopProgram(N, true, "Help callers now."));
    const noopChange = await timed(() => noop.pulumi(["up", "--yes", "--skip-preview"]));

    console.log(
      `${N} agents + ${N} versions, this project's ${process.env.PVA_PULUMI_HOST === "stock" ? "stock" : "own"} ` +
        `language host; ${new Date(started).toISOString()}; state ${stateBytes} bytes as exported.\n`,
    );
    console.log("| change of every prompt, unpaced | ours | no-op resources |");
    console.log("|---|---|---|");
    console.log(`| wall | ${fmt(change.seconds, 1)} s | ${fmt(noopChange.seconds, 1)} s |`);
    console.log(
      `| per update step (${steps} steps) | ${fmt((change.seconds / steps) * 1000, 0)} ms | ${fmt((noopChange.seconds / steps) * 1000, 0)} ms |`,
    );
    console.log(`| requests | ${R} (${[...kinds].map(([k, n]) => `${n} ${k}`).join(", ")}) | none |`);
    console.log(`| first request | ${fmt(at[0] as number, 1)} s | |`);
    console.log(
      `| requests per second, unhindered | ${fmt(R / ((at[R - 1] as number) - (at[0] as number)), 1)} | |`,
    );
    console.log(
      `\nAt ${LIMIT} a minute: rate bound ${bound} s; r = ${r}, t(r) = ${fmt(tr, 1)} s; ` +
        `floor ${fmt(tr + bound, 1)} s = **${fmt((tr + bound) / bound)}** of the bound.`,
    );
  } finally {
    await emu.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
