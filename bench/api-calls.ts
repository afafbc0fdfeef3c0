/**
 * API calls per operation, counted from the emulator's request log, for a stack of N agents each
 * with an AgentVersion going live (default N = 10, so the once-per-process catalogue reads of the
 * preview checks are visible separately from the per-resource calls).
 *
 *   npx ts-node --transpile-only bench/api-calls.ts [agents=10]
 *
 * Operations: create (agent + version live), no-op `up`, no-op `preview`, `refresh`, a prompt
 * change (agent patch, then publish and go live), a second prompt change, a revert (reuse +
 * rollback), a refresh after it, a label change, and after 10 more releases a change and a revert
 * to a version far back (the calls do not grow with the history). Bounded: about two minutes.
 */
import {
  agentsProgram,
  clearRequestLog,
  countCalls,
  type Emulator,
  project,
  requestLog,
  startEmulator,
  timed,
} from "./lib";

const N = Number(process.argv[2] ?? 10);

interface Row {
  operation: string;
  seconds: number;
  reads: number;
  writes: number;
  byKind: Record<string, number>;
}

async function measure(emu: Emulator, operation: string, fn: () => Promise<unknown>): Promise<Row> {
  await clearRequestLog(emu);
  const { seconds } = await timed(fn);
  const c = countCalls(await requestLog(emu));
  return { operation, seconds, ...c };
}

async function main(): Promise<void> {
  const emu = await startEmulator({ port: 0, rateLimitPerMinute: 0 });
  const p = await project(emu, agentsProgram(N, "Calls"), 100_000);
  const rows: Row[] = [];
  try {
    rows.push(await measure(emu, "create (up: agent + version live)", () => p.up()));
    rows.push(await measure(emu, "no-op up", () => p.up()));
    rows.push(await measure(emu, "no-op preview", () => p.preview({ expectNoChanges: true })));
    const refresh = () => p.pulumi(["refresh", "--yes", "--skip-preview", "--expect-no-changes"]);
    rows.push(await measure(emu, "refresh --skip-preview", refresh));
    // What a user's `pulumi refresh --yes` does: a preview pass, then the refresh (p.refresh() of
    // the harness skips the preview pass, as the row above).
    const refreshDefault = () => p.pulumi(["refresh", "--yes", "--expect-no-changes"]);
    rows.push(await measure(emu, "refresh (default: preview pass, then refresh)", refreshDefault));
    p.setProgram(agentsProgram(N, "Calls", { prompt: "Help callers with their returns." }));
    rows.push(await measure(emu, "prompt change (patch, publish, go live)", () => p.up()));
    p.setProgram(agentsProgram(N, "Calls", { prompt: "Help callers with their exchanges." }));
    rows.push(await measure(emu, "second prompt change", () => p.up()));
    p.setProgram(agentsProgram(N, "Calls", { prompt: "Help callers with their returns." }));
    rows.push(await measure(emu, "revert (reuse published version, rollback)", () => p.up()));
    rows.push(await measure(emu, "refresh --skip-preview after a rollback", refresh));
    p.setProgram(agentsProgram(N, "Calls", { prompt: "Help callers with their returns.", label: "r2" }));
    rows.push(await measure(emu, "label change (in place)", () => p.up()));
    // A configuration change right after a label change (the label raised the published version's
    // document_revision; the Agent writes through since no managed field changed).
    p.setProgram(agentsProgram(N, "Calls", { prompt: "Help callers with their exchanges.", label: "r2" }));
    rows.push(await measure(emu, "prompt change after a label change (reuse)", () => p.up()));
    // A long history: 10 more releases; a change and a revert still read the same.
    for (let i = 0; i < 10; i++) {
      p.setProgram(agentsProgram(N, "Calls", { prompt: `Help callers, release ${i}.` }));
      await p.up();
    }
    p.setProgram(agentsProgram(N, "Calls", { prompt: "Help callers, release 10." }));
    rows.push(await measure(emu, "prompt change after 10 more releases", () => p.up()));
    p.setProgram(agentsProgram(N, "Calls", { prompt: "Help callers with their returns." }));
    rows.push(await measure(emu, "revert to a release 12 versions back", () => p.up()));
    await p.destroy();
  } finally {
    p.cleanup();
    await emu.close();
  }

  console.log(`\nAPI calls per operation, ${N} agents each with an AgentVersion (emulator request log)\n`);
  console.log("| Operation | Wall s | Reads | Writes | Reads/agent | Writes/agent | Calls |");
  console.log("|---|---|---|---|---|---|---|");
  for (const r of rows) {
    const calls = Object.entries(r.byKind)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${v}`)
      .join("; ");
    console.log(
      `| ${r.operation} | ${r.seconds.toFixed(1)} | ${r.reads} | ${r.writes} | ${(r.reads / N).toFixed(2)} | ${(r.writes / N).toFixed(2)} | ${calls} |`,
    );
  }
  const noop = rows.find((r) => r.operation === "no-op up");
  if (noop && noop.writes !== 0) {
    console.log(`\nno-op up made ${noop.writes} writes (aim: 0)`);
    process.exitCode = 1;
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
