/**
 * The policy pack's cost: `pulumi preview` of 50 Agents with their AgentVersions (100 resources),
 * without a pack, with a minimal `@pulumi/policy` pack (one resource and one stack policy that do
 * nothing: what any Node.js policy pack costs, Pulumi's machinery alone), and with
 * `--policy-pack node_modules/pulumi-voice-agent/policy`, rounds interleaved (the order rotates each
 * round). Two previews: of the new stack (every resource to create, the first pull request) and of
 * the deployed stack unchanged (every later one). The package is installed from its tarball, as a
 * user has it; the packs run under the language host on PATH.
 *
 *   npx ts-node --transpile-only bench/policy.ts [agents=50] [rounds=3]
 *
 * Bounded: about 3 minutes with the defaults on 2 cores.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { agentsProgram, fmt, median, project, startEmulator, timed } from "./lib";

const N = Number(process.argv[2] ?? 50);
const ROUNDS = Number(process.argv[3] ?? 3);

type Variant = "none" | "minimal" | "ours";
const VARIANTS: Variant[] = ["none", "minimal", "ours"];

/** A pack that checks nothing, next to the installed package (so `@pulumi/policy` resolves). */
function minimalPack(dir: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, "PulumiPolicy.yaml"),
    "runtime:\n  name: nodejs\n  options:\n    typescript: false\n",
  );
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "minimal-pack", version: "1.0.0" }));
  writeFileSync(
    path.join(dir, "index.js"),
    `const { PolicyPack } = require("@pulumi/policy");
new PolicyPack("minimal", { policies: [
  { name: "nothing", description: "Checks nothing.", enforcementLevel: "advisory", validateResource: () => {} },
  { name: "nothing-stack", description: "Checks nothing.", enforcementLevel: "advisory", validateStack: () => {} },
] });
`,
  );
  return dir;
}

async function main(): Promise<void> {
  const emu = await startEmulator({ port: 0, rateLimitPerMinute: 0 });
  const p = await project(emu, agentsProgram(N, "Policy bench"), 100_000);
  const packs: Record<Variant, string[]> = {
    none: [],
    minimal: ["--policy-pack", minimalPack(path.join(p.dir, "..", `minimal-pack-${path.basename(p.dir)}`))],
    ours: ["--policy-pack", path.join(p.dir, "..", "node_modules", "pulumi-voice-agent", "policy")],
  };
  const samples = { create: new Map<Variant, number[]>(), noop: new Map<Variant, number[]>() };
  const measure = async (phase: "create" | "noop", round: number) => {
    const order = VARIANTS.map((_, i) => VARIANTS[(i + round) % VARIANTS.length] as Variant);
    const line: string[] = [];
    for (const variant of order) {
      const seconds = (await timed(() => p.pulumi(["preview", ...packs[variant]]))).seconds;
      samples[phase].set(variant, [...(samples[phase].get(variant) ?? []), seconds]);
      line.push(`${variant} ${fmt(seconds)} s`);
    }
    console.log(`round ${round + 1}, ${phase === "create" ? "new stack" : "deployed"}: ${line.join(", ")}`);
  };
  try {
    for (let round = 0; round < ROUNDS; round++) await measure("create", round);
    await p.up();
    for (let round = 0; round < ROUNDS; round++) await measure("noop", round);
  } finally {
    rmSync(packs.minimal[1] as string, { recursive: true, force: true });
    p.cleanup();
    await emu.close();
  }
  console.log(
    `\nPolicy pack cost, ${N} Agents + ${N} AgentVersions, median of ${ROUNDS} interleaved rounds (wall time of \`pulumi preview\`)\n`,
  );
  console.log(
    "| Preview | No pack | Minimal pack | This package's pack | Pack cost (of which Pulumi's machinery) |",
  );
  console.log("|---|---|---|---|---|");
  for (const [name, phase] of [
    ["new stack (all to create)", samples.create],
    ["deployed stack, unchanged", samples.noop],
  ] as const) {
    const [none, minimal, ours] = VARIANTS.map((v) => median(phase.get(v) ?? []));
    console.log(
      `| ${name} | ${fmt(none as number)} s | ${fmt(minimal as number)} s | ${fmt(ours as number)} s | ` +
        `+${fmt((ours as number) - (none as number))} s (+${fmt((minimal as number) - (none as number))} s) |`,
    );
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
