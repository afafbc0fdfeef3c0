/**
 * The policy pack's cost: `pulumi preview` of 50 Agents with their AgentVersions (100 resources),
 * with and without `--policy-pack node_modules/pulumi-voice-agent/policy`, rounds interleaved (the
 * order alternates each round). Two previews: of the new stack (every resource to create, the first
 * pull request) and of the deployed stack unchanged (every later one). The package is installed
 * from its tarball, as a user has it; the pack runs under the language host on PATH.
 *
 *   npx ts-node --transpile-only bench/policy.ts [agents=50] [rounds=5]
 *
 * Bounded: about 3 minutes with the defaults on 2 cores.
 */
import * as path from "node:path";
import { agentsProgram, fmt, median, project, startEmulator, timed } from "./lib";

const N = Number(process.argv[2] ?? 50);
const ROUNDS = Number(process.argv[3] ?? 5);

async function main(): Promise<void> {
  const emu = await startEmulator({ port: 0, rateLimitPerMinute: 0 });
  const p = await project(emu, agentsProgram(N, "Policy bench"), 100_000);
  const pack = path.join(p.dir, "..", "node_modules", "pulumi-voice-agent", "policy");
  const preview = async (withPack: boolean) =>
    (await timed(() => p.pulumi(["preview", ...(withPack ? ["--policy-pack", pack] : [])]))).seconds;
  const samples = {
    create: { without: [] as number[], with: [] as number[] },
    noop: { without: [] as number[], with: [] as number[] },
  };
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      for (const withPack of round % 2 ? [false, true] : [true, false]) {
        samples.create[withPack ? "with" : "without"].push(await preview(withPack));
      }
    }
    await p.up();
    for (let round = 1; round <= ROUNDS; round++) {
      for (const withPack of round % 2 ? [false, true] : [true, false]) {
        samples.noop[withPack ? "with" : "without"].push(await preview(withPack));
      }
      console.log(
        `round ${round}: new stack ${fmt(samples.create.without[round - 1] ?? 0)} s / with pack ${fmt(samples.create.with[round - 1] ?? 0)} s; ` +
          `deployed ${fmt(samples.noop.without[round - 1] ?? 0)} s / with pack ${fmt(samples.noop.with[round - 1] ?? 0)} s`,
      );
    }
  } finally {
    p.cleanup();
    await emu.close();
  }
  console.log(
    `\nPolicy pack cost, ${N} Agents + ${N} AgentVersions, median of ${ROUNDS} interleaved rounds (wall time of \`pulumi preview\`)\n`,
  );
  console.log("| Preview | Without the pack | With the pack | Cost |");
  console.log("|---|---|---|---|");
  for (const [name, s] of [
    ["new stack (all to create)", samples.create],
    ["deployed stack, unchanged", samples.noop],
  ] as const) {
    const a = median(s.without);
    const b = median(s.with);
    console.log(`| ${name} | ${fmt(a)} s | ${fmt(b)} s | +${fmt(b - a)} s |`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
