/**
 * What verified go-live costs: a prompt change deployed by `pulumi up` with an AgentVersion
 * without `verify`, with one test call and with three, against the emulator with calls of
 * `callSeconds` (the service's calls last minutes; the emulator's default is about a second).
 * Per variant: the median wall time of the `up` and its requests to the service, by kind. The
 * package is installed from its tarball, as a user has it; rounds interleaved.
 *
 *   npx ts-node --transpile-only bench/verify.ts [rounds=3] [callSeconds=1]
 *
 * Bounded: about 2 minutes with the defaults on 2 cores.
 */
import { clearRequestLog, requestLog } from "../test/support/control";
import { fmt, median, project, startEmulator, timed } from "./lib";

const ROUNDS = Number(process.argv[2] ?? 3);
const CALL_SECONDS = Number(process.argv[3] ?? 1);

const VARIANTS = { unverified: 0, "1 test call": 1, "3 test calls": 3 } as const;
type Variant = keyof typeof VARIANTS;

function program(calls: number, revision: number): string {
  const verify =
    calls === 0
      ? ""
      : `\n  verify: { calls: [${Array.from(
          { length: calls },
          (_, i) =>
            `{ toNumber: "+1415555${String(100 + i).padStart(4, "0")}", expect: { analysis: { "Default Analysis": { "User Sentiment": ["positive", "neutral"] } } } }`,
        ).join(", ")}] },`;
  return `
import * as va from "pulumi-voice-agent";
const agent = new va.Agent("support", { name: "Bench", systemPrompt: "## Agent Purpose\\nHelp (revision ${revision})." });
new va.AgentVersion("support-live", { agent,${verify} });
`;
}

async function main(): Promise<void> {
  const emu = await startEmulator({ port: 0, rateLimitPerMinute: 0, callSeconds: CALL_SECONDS });
  const names = Object.keys(VARIANTS) as Variant[];
  const projects = new Map<Variant, Awaited<ReturnType<typeof project>>>();
  const seconds = new Map<Variant, number[]>(names.map((n) => [n, []]));
  const requests = new Map<Variant, Record<string, number>[]>(names.map((n) => [n, []]));
  try {
    for (const name of names) {
      const p = await project(emu, program(VARIANTS[name], 0));
      await p.up();
      projects.set(name, p);
    }
    for (let round = 1; round <= ROUNDS; round++) {
      const order = names.map((_, i) => names[(i + round) % names.length] as Variant);
      for (const name of order) {
        const p = projects.get(name)!;
        p.setProgram(program(VARIANTS[name], round));
        await clearRequestLog(emu);
        const { seconds: s } = await timed(() => p.up());
        seconds.get(name)!.push(s);
        const kinds: Record<string, number> = {};
        for (const e of await requestLog(emu)) {
          const path = e.path.split("?")[0] as string;
          const kind =
            e.method === "POST" && path === "/v1/calls"
              ? "place call"
              : e.method === "GET" && path.startsWith("/v1/calls/")
                ? "read call"
                : path.endsWith("/activations") && e.method === "GET"
                  ? "read deploy history"
                  : /^(PATCH|POST)/.test(e.method)
                    ? "patch, publish, activate"
                    : "checks' catalogue reads";
          kinds[kind] = (kinds[kind] ?? 0) + 1;
        }
        requests.get(name)!.push(kinds);
      }
    }
  } finally {
    for (const p of projects.values()) p.cleanup();
    await emu.close();
  }
  const base = median(seconds.get("unverified")!);
  console.log(`calls of ${CALL_SECONDS} s, ${ROUNDS} rounds, median per prompt change:`);
  console.log("| variant | up (s) | vs unverified | requests | of which |");
  console.log("|---|---|---|---|---|");
  for (const name of names) {
    const s = median(seconds.get(name)!);
    const runs = requests.get(name)!;
    const total = median(runs.map((k) => Object.values(k).reduce((a, b) => a + b, 0)));
    const kinds = [...new Set(runs.flatMap((k) => Object.keys(k)))].sort();
    const detail = kinds.map((k) => `${k} ${median(runs.map((r) => r[k] ?? 0))}`).join(", ");
    console.log(`| ${name} | ${fmt(s)} | +${fmt(s - base)} | ${total} | ${detail} |`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
