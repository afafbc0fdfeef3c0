/**
 * Time to export a workspace with `voice-agent-export`, against the emulator at its default rate
 * limit (300 requests per minute per key, the service's).
 *
 *   npx ts-node --transpile-only bench/export.ts [agents=50] [runs=3]
 *
 * The workspace is made against an unlimited emulator on a SQLite file (random agent
 * configurations, fixed seed: about 40% never published, 30% published and live, 30% live with a
 * draft ahead; three knowledge bases, three analysis groups besides the Default one), which is
 * then opened again at the default rate limit, so that making it costs the measured key nothing.
 * Each run is the built command (`dist/export/cli.js`, `npm run build` first) as a user runs it,
 * in its own process, into an empty folder; the figures are its wall time and the requests it
 * made, from the emulator's request log (no 429 may appear: the client paces itself).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import * as path from "node:path";
import { VoiceAgentClient } from "../src/client";
import { DEFAULT_RATE_LIMIT } from "../src/emulator";
import { seedRandomAgents } from "../test/support/workspace";
import { clearRequestLog, DEFAULT_API_KEY, fmt, median, requestLog, scratchDir, startEmulator } from "./lib";

const AGENTS = Number(process.argv[2] ?? 50);
const RUNS = Number(process.argv[3] ?? 3);
const CLI = path.resolve(__dirname, "../dist/export/cli.js");

function exportOnce(url: string, out: string): Promise<{ seconds: number; stdout: string }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [CLI, "--out", out],
      { env: { ...process.env, VOICE_AGENT_BASE_URL: url, VOICE_AGENT_API_KEY: DEFAULT_API_KEY } },
      (err, stdout, stderr) =>
        err
          ? reject(new Error(`export failed: ${stderr}`, { cause: err }))
          : resolve({ seconds: (performance.now() - t0) / 1000, stdout }),
    );
  });
}

async function main(): Promise<void> {
  const dir = scratchDir();
  const db = path.join(dir, "workspace.db");
  try {
    const unlimited = await startEmulator({ port: 0, db, rateLimitPerMinute: 0 });
    const c = new VoiceAgentClient({
      baseUrl: unlimited.url,
      apiKey: DEFAULT_API_KEY,
      rateLimitPerMinute: 1e6,
    });
    const kbs = [];
    const groups = [];
    for (let i = 0; i < 3; i++) {
      kbs.push(
        (
          await c.knowledgeBases.create({
            name: `Docs ${i}`,
            documents: [
              { name: "faq", text: `Answers ${i}.` },
              { name: "site", url: `https://shop${i}.example.com/help` },
            ],
          })
        ).id,
      );
      groups.push(
        (await c.analysis.create({ name: `Group ${i}`, items: [{ name: "Score", type: "number" }] })).id,
      );
    }
    await seedRandomAgents(c, 50_050, AGENTS, { knowledgeBaseIds: kbs, analysisGroupIds: groups });
    await unlimited.close();

    const emu = await startEmulator({ port: 0, db, rateLimitPerMinute: DEFAULT_RATE_LIMIT });
    const seconds: number[] = [];
    let requests = 0;
    let tooMany = 0;
    let summary = "";
    let inWindow = 0;
    for (let run = 0; run < RUNS; run++) {
      await clearRequestLog(emu);
      const out = mkdtempSync(path.join(dir, "out-"));
      const r = await exportOnce(emu.url, path.join(out, "voice-agents"));
      const log = (await requestLog(emu)).filter((e) => e.path.startsWith("/v1/"));
      if (log.some((e) => e.method !== "GET")) throw new Error("the export wrote to the service");
      seconds.push(r.seconds);
      requests = log.length;
      tooMany += log.filter((e) => e.status === 429).length;
      summary = r.stdout.split("\n")[0] ?? "";
      const prompts = readdirSync(path.join(out, "voice-agents", "prompts")).length;
      console.log(`  run ${run + 1}: ${fmt(r.seconds)} s, ${log.length} requests, ${prompts} prompt files`);
      // Each run is a new process whose pacing knows nothing of the runs before: let the server's
      // moving window empty before a run that would not fit in what is left of it.
      inWindow += log.length;
      if (run < RUNS - 1 && inWindow + log.length > DEFAULT_RATE_LIMIT) {
        await new Promise((t) => setTimeout(t, 61_000));
        inWindow = 0;
      }
    }
    await emu.close();
    console.log(
      JSON.stringify(
        {
          agents: AGENTS,
          rateLimitPerMinute: DEFAULT_RATE_LIMIT,
          exported: summary,
          requestsPerExport: requests,
          answered429: tooMany,
          secondsMedian: Number(fmt(median(seconds))),
          secondsEach: seconds.map((s) => Number(fmt(s))),
        },
        null,
        2,
      ),
    );
    if (tooMany > 0) process.exitCode = 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
