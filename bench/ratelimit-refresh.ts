/**
 * Rate-limit bound: `pulumi refresh` of a stack of 300 resources (150 Agents, each with an
 * AgentVersion) against the emulator at its default 300 requests per minute, with the client at its
 * default pace (300 per minute).
 *
 *   npx ts-node --transpile-only bench/ratelimit-refresh.ts [agents=150]
 *
 * The stack is built against an unlimited emulator on a SQLite file; the same file is then served
 * by a fresh emulator at 300/min (empty window). Two refreshes follow back to back:
 *  1. with the window empty: the moving window admits 300 requests at once, so no wait is due;
 *  2. right after, with the window full of refresh 1's reads: each read must wait for a slot, so
 *     300 reads need at least ~60 s (the bound). The provider process is new (each `pulumi`
 *     command starts its own), so its pacer does not know refresh 1's reads: the server's 429s and
 *     Retry-After do the pacing, and must not surface as errors.
 * Each agent read takes one call, two when the live version is not the latest (after a rollback:
 * see `workingVersion` in src/resources/agent.ts); none here. Bounded: about 4 minutes.
 */
import { rmSync } from "node:fs";
import * as path from "node:path";
import { agentsProgram, countCalls, fmt, project, requestLog, scratchDir, startEmulator, timed } from "./lib";

const AGENTS = Number(process.argv[2] ?? 150);
const LIMIT = 300;

async function main(): Promise<void> {
  const dir = scratchDir();
  const db = path.join(dir, "emulator.db");
  const setupEmu = await startEmulator({ port: 0, db, rateLimitPerMinute: 0 });
  const p = await project(setupEmu, agentsProgram(AGENTS, "Bound"), 100_000);
  try {
    const setup = await timed(() => p.up());
    console.log(
      `setup: ${AGENTS} agents + ${AGENTS} versions created in ${fmt(setup.seconds, 1)} s (no limit)`,
    );
    await setupEmu.close();

    const emu = await startEmulator({ port: 0, db, rateLimitPerMinute: LIMIT });
    await p.pulumi(["config", "set", "voice-agent:baseUrl", emu.url]);
    await p.pulumi(["config", "rm", "voice-agent:rateLimitPerMinute"]);
    const resources = JSON.parse(await p.exportState(false)).deployment.resources.filter((r: any) =>
      r.type.startsWith("pulumi-nodejs:dynamic/voice-agent:"),
    ).length;

    const rows: string[] = [];
    let seen = 0;
    for (const label of ["1: window empty", "2: window full (bound ~60 s)"]) {
      const run = await timed(() =>
        p.pulumi(["refresh", "--yes", "--skip-preview", "--expect-no-changes"], { allowFailure: true }),
      );
      const log = (await requestLog(emu)).slice(seen);
      seen += log.length;
      const c = countCalls(log.filter((r) => r.status !== 429));
      const tooMany = log.filter((r) => r.status === 429).length;
      const ok = run.value.code === 0;
      // Status 429 or the reason code in an error, not "429" inside an id or a duration.
      const errors429 =
        (run.value.stdout + run.value.stderr).match(/rate_limited|\b429\b(?![.\d])|too many requests/gi)
          ?.length ?? 0;
      const first = Date.parse(log[0]?.at ?? "");
      const last = Date.parse(log.at(-1)?.at ?? "");
      rows.push(
        `| ${label} | ${fmt(run.seconds, 1)} s | ${fmt((last - first) / 1000, 1)} s | ${c.reads} | ${tooMany} | ` +
          `${ok ? "exit 0" : `exit ${run.value.code}`}, ${errors429} mention(s) of 429 in the output |`,
      );
      console.log(rows.at(-1));
      if (!ok) console.log(run.value.stdout.slice(-3000), run.value.stderr.slice(-2000));
    }
    console.log(
      `\nRefresh of ${resources} resources, emulator and client at ${LIMIT}/min (bound: the second refresh's ` +
        `reads cannot all fit before the first refresh's leave the 60 s window)\n`,
    );
    console.log("| Refresh | Wall time | First to last request | Reads answered | 429 answers | Outcome |");
    console.log("|---|---|---|---|---|---|");
    for (const r of rows) console.log(r);
    await emu.close();
  } finally {
    p.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
