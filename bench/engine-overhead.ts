/**
 * Engine overhead: `pulumi up` of 50 agents against the same stack shape built from a no-op dynamic
 * resource (a provider whose create returns its inputs at once), in one run, rounds interleaved.
 * Two shapes: 50 Agents alone, and 50 Agents each with an AgentVersion (100 resources, each
 * version depending on its agent). Also the no-op `up` that follows each create, and a `preview`
 * of the unchanged stack (what a reviewer waits for on every pull request).
 *
 *   npx ts-node --transpile-only bench/engine-overhead.ts [agents=50] [rounds=3] [--host=stock]
 *
 * `--host=stock` runs both stacks under Pulumi's stock Node.js language host and launcher, as users
 * run them (`bash scripts/stock-host.sh` first; no preload, no compile cache); the default is this
 * project's toolchain. The programs run transpile-only under both (`PVA_STOCK_TYPECHECK=true`
 * type-checks them at every run under the stock host, as Pulumi does by default).
 *
 * The emulator's rate limit is off and the client pace raised, so the figures compare the provider
 * with a resource that does nothing, not with the service's pacing (bench/ratelimit-refresh.ts
 * covers that). Bounded: about 3 minutes with the defaults.
 */
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import {
  agentsProgram,
  DEFAULT_API_KEY,
  type Emulator,
  fmt,
  median,
  noopProgram,
  PulumiProject,
  project,
  pulumiHost,
  startEmulator,
  timed,
} from "./lib";

const flags = process.argv.slice(2).filter((a) => a.startsWith("--"));
const [agents, rounds] = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const N = Number(agents ?? 50);
const ROUNDS = Number(rounds ?? 3);
if (flags.includes("--host=stock")) process.env.PVA_PULUMI_HOST = "stock";
else if (flags.some((f) => f !== "--host=ours"))
  throw new Error(`unknown flag in ${flags.join(" ")}: --host=stock or --host=ours`);

interface Sample {
  create: number;
  noop: number;
  preview: number;
}

async function once(emu: Emulator, program: string, real: boolean): Promise<Sample> {
  const p = real
    ? await project(emu, program, 100_000)
    : await PulumiProject.create({
        installed: true,
        program,
        config: { "voice-agent:baseUrl": emu.url },
        secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
      });
  try {
    const create = (await timed(() => p.up())).seconds;
    const noop = (await timed(() => p.up())).seconds;
    const preview = (await timed(() => p.preview())).seconds;
    return { create, noop, preview };
  } finally {
    p.cleanup();
  }
}

async function main(): Promise<void> {
  const emu = await startEmulator({ port: 0, rateLimitPerMinute: 0 });
  const shapes = [
    { name: `${N} Agents`, versions: false },
    { name: `${N} Agents + ${N} AgentVersions`, versions: true },
  ];
  const results: Record<string, { ours: Sample[]; noop: Sample[] }> = {};
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      for (const shape of shapes) {
        results[shape.name] ??= { ours: [], noop: [] };
        const r = results[shape.name] as { ours: Sample[]; noop: Sample[] };
        const n = await once(emu, noopProgram(N, shape.versions), false);
        const o = await once(emu, agentsProgram(N, `Overhead r${round}`, { versions: shape.versions }), true);
        r.noop.push(n);
        r.ours.push(o);
        console.log(
          `round ${round}, ${shape.name}: ours ${fmt(o.create)} s (no-op up ${fmt(o.noop)} s, preview ${fmt(o.preview)} s), ` +
            `no-op resource ${fmt(n.create)} s (no-op up ${fmt(n.noop)} s, preview ${fmt(n.preview)} s)`,
        );
      }
    }
  } finally {
    await emu.close();
  }
  console.log(
    `\nEngine overhead under ${pulumiHost() === "stock" ? "Pulumi's stock language host" : "this project's language host"}, ` +
      `median of ${ROUNDS} interleaved rounds (wall time of \`pulumi up\`)\n`,
  );
  console.log(
    "| Stack | Ours: create up | No-op resource | Ratio | Ours: no-op up | No-op resource | Ratio | Ours: preview | No-op resource | Ratio |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|");
  const ratios: string[] = [];
  for (const [name, r] of Object.entries(results)) {
    const cells = (["create", "noop", "preview"] as const).map((k) => {
      const o = median(r.ours.map((s) => s[k]));
      const n = median(r.noop.map((s) => s[k]));
      ratios.push(`${name}, ${k === "noop" ? "no-op up" : k}: ${fmt(o / n)}`);
      return `${fmt(o)} s | ${fmt(n)} s | ${fmt(o / n)}`;
    });
    console.log(`| ${name} | ${cells.join(" | ")} |`);
  }
  const s = providerTextCost();
  console.log(
    `\nThe provider text in the program process: Pulumi's closure serializer (what pulumi.dynamic.Resource runs) ` +
      `takes ${fmt(s.serializer, 0)} ms for the first provider object; ours writes the same kind of text in ` +
      `${fmt(s.ours, 2)} ms for ${N} resources.`,
  );
  console.log(`\nRatios (ours / no-op resource, medians of ${ROUNDS} interleaved rounds; goal <= 1.10):`);
  for (const line of ratios) console.log(line);
}

/**
 * What writing `__provider` costs the program process: Pulumi's closure serializer run once on a
 * provider object (what `pulumi.dynamic.Resource` does for each new object; it caches by identity),
 * against this package's `providerText` for N resources.
 */
function providerTextCost(): { serializer: number; ours: number } {
  const code = `
const pulumi = require("@pulumi/pulumi");
const { providerText } = require("./dist/resources/providerText");
const provider = require("./dist/resources/agent/kind");
(async () => {
  let t = performance.now();
  await pulumi.runtime.serializeFunction(() => provider, { allowSecrets: false });
  const serializer = performance.now() - t;
  t = performance.now();
  for (let i = 0; i < ${N}; i++) providerText("agent");
  const ours = performance.now() - t;
  console.log(JSON.stringify({ serializer, ours }));
})();`;
  const out = spawnSync(process.execPath, ["-e", code], {
    cwd: path.resolve(__dirname, ".."),
    encoding: "utf8",
  });
  return JSON.parse(out.stdout.trim().split("\n").pop() as string);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
