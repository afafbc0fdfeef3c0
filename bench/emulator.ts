/**
 * Emulator throughput over loopback: agent reads and agent patches per second, with undici and a
 * bounded number of requests in flight. Run: `npx ts-node --transpile-only bench/emulator.ts`
 * (options: `--seconds N` per phase, default 3; `--concurrency N`, default 8; `--db` to persist).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, request } from "undici";
import { DEFAULT_API_KEY, startEmulator } from "../src/emulator";

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : Number.NaN;
  return Number.isFinite(v) && v > 0 ? v : fallback;
}

async function phase(
  label: string,
  seconds: number,
  concurrency: number,
  once: (i: number) => Promise<number>,
): Promise<number> {
  const deadline = Date.now() + seconds * 1000;
  let done = 0;
  let failures = 0;
  const latencies: number[] = [];
  const worker = async (w: number) => {
    let i = w;
    while (Date.now() < deadline) {
      const t0 = performance.now();
      const status = await once(i);
      latencies.push(performance.now() - t0);
      if (status >= 400) failures++;
      done++;
      i += concurrency;
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  const p = (q: number) =>
    (latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0).toFixed(2);
  const rate = done / elapsed;
  console.log(
    `${label.padEnd(22)} ${rate.toFixed(0).padStart(7)} req/s  (${done} requests in ${elapsed.toFixed(2)} s, ` +
      `p50 ${p(0.5)} ms, p99 ${p(0.99)} ms, ${failures} failures)`,
  );
  if (failures) process.exitCode = 1;
  return rate;
}

async function main(): Promise<void> {
  const seconds = arg("seconds", 3);
  const concurrency = arg("concurrency", 8);
  const useDb = process.argv.includes("--db");
  const dir = useDb ? mkdtempSync(join(tmpdir(), "va-bench-")) : undefined;
  const emu = await startEmulator({ rateLimitPerMinute: 0, db: dir ? join(dir, "bench.db") : undefined });
  const dispatcher = new Agent({ connections: concurrency, pipelining: 1 });
  const headers = { authorization: `Bearer ${DEFAULT_API_KEY}`, "content-type": "application/json" };
  try {
    const created = await request(`${emu.url}/v1/agents`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        name: "Bench agent",
        system_prompt: "You answer questions about opening hours.",
      }),
      dispatcher,
    });
    const agent = (await created.body.json()) as { id: string };
    const url = `${emu.url}/v1/agents/${agent.id}`;
    console.log(
      `emulator ${emu.url} (${useDb ? "SQLite" : "in memory"}), ${concurrency} connections, ${seconds} s per phase`,
    );
    await phase("agent reads (GET)", seconds, concurrency, async () => {
      const r = await request(url, { method: "GET", headers, dispatcher });
      await r.body.dump();
      return r.statusCode;
    });
    await phase("agent patches (PATCH)", seconds, concurrency, async (i) => {
      const r = await request(url, {
        method: "PATCH",
        headers,
        body: JSON.stringify({ system_prompt: `Revision ${i}: you answer questions about opening hours.` }),
        dispatcher,
      });
      await r.body.dump();
      return r.statusCode;
    });
  } finally {
    await dispatcher.close();
    await emu.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
