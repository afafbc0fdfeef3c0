/**
 * Pacing benchmark: 600 reads through one client against an emulator limited to 300 per minute.
 *
 *   npx ts-node --transpile-only bench/client-ratelimit.ts [reads=600] [limit=300] [concurrency=16]
 *
 * Reports the wall time against the 120 s bound and the number of 429 answers the emulator gave
 * (counted from its request log). Exits 1 when over the bound or when any 429 was answered.
 */
import { closeDispatchers, VoiceAgentClient } from "../src/client";
import { startEmulator } from "../src/emulator";
import { clearRequestLog, requestLog } from "../test/support/control";

const READS = Number(process.argv[2] ?? 600);
const LIMIT = Number(process.argv[3] ?? 300);
const CONCURRENCY = Number(process.argv[4] ?? 16);
const BOUND_S = 120;

async function main(): Promise<void> {
  const emu = await startEmulator({ port: 0, rateLimitPerMinute: LIMIT });
  try {
    await clearRequestLog(emu);
    const client = new VoiceAgentClient({
      baseUrl: emu.url,
      apiKey: "va_test_local",
      rateLimitPerMinute: LIMIT,
    });
    const reads = [
      () => client.agents.listPage({ limit: 5 }),
      () => client.catalogue.models(),
      () => client.catalogue.voices(),
      () => client.catalogue.languages(),
    ];
    let next = 0;
    let done = 0;
    const started = performance.now();
    const progress = setInterval(() => {
      console.log(`  ${done}/${READS} reads after ${((performance.now() - started) / 1000).toFixed(1)} s`);
    }, 10_000);
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < READS) {
          const i = next++;
          await (reads[i % reads.length] as () => Promise<unknown>)();
          done++;
        }
      }),
    );
    clearInterval(progress);
    const wallS = (performance.now() - started) / 1000;
    const log = await requestLog(emu);
    const api = log.filter((r) => r.path.startsWith("/v1/"));
    const tooMany = api.filter((r) => r.status === 429).length;
    console.log(
      JSON.stringify(
        {
          reads: READS,
          serverLimitPerMinute: LIMIT,
          concurrency: CONCURRENCY,
          wallSeconds: Number(wallS.toFixed(2)),
          boundSeconds: BOUND_S,
          withinBound: wallS <= BOUND_S,
          requestsSeen: api.length,
          answers429: tooMany,
        },
        null,
        2,
      ),
    );
    if (wallS > BOUND_S || tooMany > 0) process.exitCode = 1;
  } finally {
    await closeDispatchers();
    await emu.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
