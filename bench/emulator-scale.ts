/**
 * The emulator at the watch's scale (issue 51): 5,000 agents (versions 0 and 1 published, 1 live,
 * a deploy history of two rows) and 500,000 calls spread over a simulated day (20,000 an hour,
 * lengths 30 s to 10 min, analysed up to 30 min after they end, 10% with a negative sentiment),
 * filled through the control API; then page latencies over HTTP: the agents listing (100 a page),
 * the calls listing's first page, a walk of the whole calls listing by cursor (every call exactly
 * once), and filtered pages (`direction`, and an `origin` no call has: the whole list scanned). The
 * emulator and an undici client share one process, so the figures include the client's cost.
 *
 *   node --expose-gc -r ts-node/register/transpile-only bench/emulator-scale.ts [--agents 5000] [--calls 500000] [--db]
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

const pct = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
};
const ms = (x: number) => `${x.toFixed(1)} ms`;
const mb = (x: number) => `${(x / 1e6).toFixed(0)} MB`;

function memory(): { heap: number; rss: number } {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, rss: m.rss };
}

async function main(): Promise<void> {
  const agents = arg("agents", 5000);
  const calls = arg("calls", 500_000);
  const dir = process.argv.includes("--db") ? mkdtempSync(join(tmpdir(), "va-scale-")) : undefined;
  const before = memory();
  const emu = await startEmulator({ rateLimitPerMinute: 0, db: dir ? join(dir, "scale.db") : undefined });
  const dispatcher = new Agent({ connections: 1 });
  const get = async (
    path: string,
  ): Promise<{
    ms: number;
    body: { data: { id: string; created_at: string }[]; has_more: boolean; next_cursor: string | null };
  }> => {
    const t0 = performance.now();
    const res = await request(`${emu.url}${path}`, {
      dispatcher,
      headers: { authorization: `Bearer ${DEFAULT_API_KEY}` },
    });
    const body = (await res.body.json()) as Awaited<ReturnType<typeof get>>["body"];
    if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${JSON.stringify(body)}`);
    return { ms: performance.now() - t0, body };
  };
  try {
    let t0 = performance.now();
    const made = await emu.control.createAgents("default", {
      count: agents,
      versions: 2,
      live_version: 1,
      since_seconds: 2 * 86_400,
    });
    const agentsSeconds = (performance.now() - t0) / 1000;
    t0 = performance.now();
    // In requests of at most 100,000 calls, each spread over its own part of the day, oldest first
    // (the listing is in placing order: a backdated request may not begin before the newest call).
    const day = 86_400;
    const parts = Math.ceil(calls / 100_000);
    for (let part = 0; part < parts; part++) {
      const n = Math.min(100_000, calls - part * 100_000);
      await emu.control.traffic({
        workspace: "default",
        count: n,
        seed: part + 1,
        spread_seconds: day / parts,
        until_seconds_ago: day - ((part + 1) * day) / parts,
        call_seconds: { min: 30, max: 600 },
        analysis_delay_seconds: { min: 0, max: 1800 },
        mix: [{ share: 0.1, analysis: { "Default Analysis": { "User Sentiment": "negative" } } }],
        list_calls: false,
      });
    }
    const callsSeconds = (performance.now() - t0) / 1000;
    const after = memory();
    console.log(
      `fill: ${made.count} agents in ${agentsSeconds.toFixed(2)} s, ${calls} calls in ${callsSeconds.toFixed(2)} s` +
        ` (${Math.round(calls / callsSeconds)} calls/s)${dir ? ", with --db" : ""}`,
    );
    console.log(
      `memory: heap ${mb(after.heap)} (${mb(after.heap - before.heap)} more than before the fill), rss ${mb(after.rss)}` +
        ` (~${Math.round((after.heap - before.heap) / calls)} bytes of heap a call, agents included)`,
    );

    // Agents listing: every page of 100.
    const agentMs: number[] = [];
    let cursor: string | null = null;
    let seen = 0;
    do {
      const r: Awaited<ReturnType<typeof get>> = await get(
        `/v1/agents?limit=100${cursor ? `&cursor=${cursor}` : ""}`,
      );
      agentMs.push(r.ms);
      seen += r.body.data.length;
      cursor = r.body.next_cursor;
    } while (cursor);
    if (seen !== agents + 0) console.log(`  (agents listed: ${seen})`);
    console.log(
      `GET /v1/agents?limit=100, all ${agentMs.length} pages: p50 ${ms(pct(agentMs, 0.5))}, p95 ${ms(pct(agentMs, 0.95))}`,
    );

    // First page of calls, repeated.
    const first: number[] = [];
    for (let i = 0; i < 50; i++) first.push((await get("/v1/calls?limit=100")).ms);
    console.log(
      `GET /v1/calls?limit=100 (first page) x50: p50 ${ms(pct(first, 0.5))}, p95 ${ms(pct(first, 0.95))}`,
    );
    const dflt: number[] = [];
    for (let i = 0; i < 50; i++) dflt.push((await get("/v1/calls")).ms);
    console.log(`GET /v1/calls (20 a page) x50: p50 ${ms(pct(dflt, 0.5))}, p95 ${ms(pct(dflt, 0.95))}`);

    // The whole listing by cursor.
    const walk: number[] = [];
    const ids = new Set<string>();
    let last = Number.POSITIVE_INFINITY;
    let ordered = true;
    cursor = null;
    const w0 = performance.now();
    do {
      const r: Awaited<ReturnType<typeof get>> = await get(
        `/v1/calls?limit=100${cursor ? `&cursor=${cursor}` : ""}`,
      );
      walk.push(r.ms);
      for (const c of r.body.data) {
        ids.add(c.id);
        const t = Date.parse(c.created_at);
        if (t > last) ordered = false;
        last = t;
      }
      cursor = r.body.next_cursor;
    } while (cursor);
    console.log(
      `walk of every call by cursor (${walk.length} pages of 100, ${((performance.now() - w0) / 1000).toFixed(1)} s): ` +
        `p50 ${ms(pct(walk, 0.5))}, p95 ${ms(pct(walk, 0.95))}, max ${ms(pct(walk, 1))}; ` +
        `${ids.size} distinct calls of ${calls}, newest first: ${ordered}`,
    );
    const filtered: number[] = [];
    for (let i = 0; i < 20; i++) filtered.push((await get("/v1/calls?limit=100&direction=inbound")).ms);
    const none: number[] = [];
    for (let i = 0; i < 10; i++) none.push((await get("/v1/calls?limit=100&origin=batch")).ms);
    console.log(
      `filtered: direction=inbound (every call matches) p50 ${ms(pct(filtered, 0.5))}; ` +
        `origin=batch (no call matches: the whole list scanned) p50 ${ms(pct(none, 0.5))}`,
    );

    // Live traffic at 20,000 calls an hour, 30 times faster (a request a second of 167 calls spread
    // over every live agent, lengths and analysis delays compressed alike): what one request costs.
    const tick: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t = performance.now();
      await emu.control.traffic({
        workspace: "default",
        count: 167,
        call_seconds: { min: 1, max: 20 },
        analysis_delay_seconds: { min: 0, max: 60 },
        list_calls: false,
      });
      tick.push(performance.now() - t);
    }
    console.log(
      `live traffic: POST /_emulator/traffic of 167 calls over ${agents} agents: p50 ${ms(pct(tick, 0.5))}, p95 ${ms(pct(tick, 0.95))}`,
    );
  } finally {
    await dispatcher.close();
    await emu.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
