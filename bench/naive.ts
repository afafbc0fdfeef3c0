/**
 * The same job as a naive sequential script: change the prompt of N agents and put the change live
 * (read, patch, publish, activate each agent in turn with plain fetch), against `pulumi up` of the
 * stack holding those agents (Agent + AgentVersion each). Both start from the same service state
 * (one SQLite file, copied) in a fresh emulator at the default 300 requests per minute, and again
 * with the rate limit off (pure overhead).
 *
 *   npx ts-node --transpile-only bench/naive.ts [agents=50]
 *
 * The naive script has no pacing, retries, conflict checks beyond If-Match, drift detection or
 * content-addressed reuse; with more than 75 agents it would meet 429s at 300/min and stop.
 * Bounded: about 3 minutes.
 */
import { copyFileSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import {
  agentsProgram,
  countCalls,
  DEFAULT_API_KEY,
  type Emulator,
  fmt,
  project,
  requestLog,
  scratchDir,
  startEmulator,
  timed,
} from "./lib";

const N = Number(process.argv[2] ?? 50);
const NEW_PROMPT = "Help callers with their returns.";

/** The naive script: one agent after the other, four plain requests each. */
async function naive(emu: Emulator, ids: string[]): Promise<number> {
  const headers = { authorization: `Bearer ${DEFAULT_API_KEY}`, "content-type": "application/json" };
  let failures = 0;
  for (const [i, id] of ids.entries()) {
    const current = (await (await fetch(`${emu.url}/v1/agents/${id}`, { headers })).json()) as any;
    const patched = await fetch(`${emu.url}/v1/agents/${id}`, {
      method: "PATCH",
      headers: { ...headers, "if-match": String(current.document_revision) },
      body: JSON.stringify({ system_prompt: `## Agent Purpose\n${NEW_PROMPT} (agent ${i})` }),
    });
    const draft = (await patched.json()) as any;
    const published = await fetch(`${emu.url}/v1/agents/${id}/versions/${draft.version}/publish`, {
      method: "POST",
      headers: { ...headers, "if-match": String(draft.document_revision) },
      body: "{}",
    });
    await published.text();
    const live = await fetch(`${emu.url}/v1/agents/${id}/activations`, {
      method: "POST",
      headers,
      body: JSON.stringify({ version: draft.version }),
    });
    await live.text();
    if (!patched.ok || !published.ok || !live.ok) failures++;
  }
  return failures;
}

async function main(): Promise<void> {
  const dir = scratchDir();
  const base = path.join(dir, "base.db");
  const setupEmu = await startEmulator({ port: 0, db: base, rateLimitPerMinute: 0 });
  const p = await project(setupEmu, agentsProgram(N, "Naive"), 100_000);
  const rows: string[] = [];
  try {
    await p.up();
    const ids = (await p.outputs()).agentIds as string[];
    await setupEmu.close();
    await p.pulumi(["config", "rm", "voice-agent:rateLimitPerMinute"]);
    const baseState = await p.exportState(false);
    const stateFile = path.join(p.dir, "base-state.json");
    writeFileSync(stateFile, baseState);

    for (const limit of [300, 0]) {
      // Ours: the stack's prompt changes; `pulumi up` patches, publishes and puts each version live.
      const dbOurs = path.join(dir, `ours-${limit}.db`);
      copyFileSync(base, dbOurs);
      const emuOurs = await startEmulator({ port: 0, db: dbOurs, rateLimitPerMinute: limit });
      await p.pulumi(["stack", "import", "--file", stateFile]);
      await p.pulumi(["config", "set", "voice-agent:baseUrl", emuOurs.url]);
      if (limit === 0) await p.pulumi(["config", "set", "voice-agent:rateLimitPerMinute", "100000"]);
      p.setProgram(agentsProgram(N, "Naive", { prompt: NEW_PROMPT }));
      const ours = await timed(() => p.up());
      const oursCalls = countCalls(await requestLog(emuOurs));
      await emuOurs.close();
      p.setProgram(agentsProgram(N, "Naive"));

      // Naive: the same change from the same state.
      const dbNaive = path.join(dir, `naive-${limit}.db`);
      copyFileSync(base, dbNaive);
      const emuNaive = await startEmulator({ port: 0, db: dbNaive, rateLimitPerMinute: limit });
      const script = await timed(() => naive(emuNaive, ids));
      const naiveLog = await requestLog(emuNaive);
      const naiveCalls = countCalls(naiveLog);
      const live = await fetch(`${emuNaive.url}/v1/agents/${ids[0]}?version=live`, {
        headers: { authorization: `Bearer ${DEFAULT_API_KEY}` },
      });
      const ok = ((await live.json()) as any).system_prompt.includes("returns") && script.value === 0;
      await emuNaive.close();

      const label = limit ? `${limit}/min (default)` : "off";
      rows.push(
        `| ${label} | ${fmt(ours.seconds, 1)} s (${oursCalls.reads + oursCalls.writes} calls) | ` +
          `${fmt(script.seconds, 2)} s (${naiveCalls.reads + naiveCalls.writes} calls${ok ? "" : ", FAILED"}) | ${fmt(ours.seconds / script.seconds, 1)} |`,
      );
      console.log(rows.at(-1));
    }
  } finally {
    p.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    `\nChange the prompt of ${N} agents and put it live: \`pulumi up\` vs a naive sequential script\n`,
  );
  console.log("| Rate limit | pulumi up (ours) | Naive script | Ours / naive |");
  console.log("|---|---|---|---|");
  for (const r of rows) console.log(r);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
