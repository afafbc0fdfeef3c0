/**
 * The watch process of `bench/watch.ts --agents=N` (bench/watch-scale.ts): what
 * `voice-agent-diff --watch --every 60` runs, one pass per message from the bench (the refresh
 * JSON, as the command reads it from its file each pass; or a look, as the command takes one while a
 * version nears a fail), with one `WatchMemory` from pass to pass.
 * Bundled by esbuild and run by plain Node.js, so that its peak memory is the watch's own (no
 * TypeScript compiler in the process). Answers each pass with its requests by kind, the outcomes,
 * the result for one agent the bench follows, and the process's memory.
 */
import { appendFileSync } from "node:fs";
import { VoiceAgentClient } from "../src/client";
import type { PreviewJson } from "../src/gitops/preview";
import { boundWatchHeap, newWatchMemory, watchStacks } from "../src/gitops/watch";

boundWatchHeap(); // as `voice-agent-diff --watch` does first thing
const c = new VoiceAgentClient({
  baseUrl: process.env.BENCH_URL as string,
  apiKey: process.env.BENCH_KEY as string,
  rateLimitPerMinute: Number(process.env.BENCH_RATE),
  userAgent: "pulumi-voice-agent (voice-agent-diff)", // as the command sends it
});
const memory = newWatchMemory();
// The process's memory by part, sampled through the run (peaks since the last answer): where the
// resident set goes (heap, buffers outside it, the rest: code, allocator).
const peaks = { rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 };
const sample = () => {
  const m = process.memoryUsage();
  for (const k of Object.keys(peaks) as (keyof typeof peaks)[]) peaks[k] = Math.max(peaks[k], m[k]);
};
setInterval(sample, 50).unref();
// BENCH_MEMLOG=file: a line a second of the memory by part and where the pass stands.
if (process.env.BENCH_MEMLOG) {
  const t0 = Date.now();
  setInterval(() => {
    const m = process.memoryUsage();
    const l = memory.last;
    appendFileSync(
      process.env.BENCH_MEMLOG as string,
      `${((Date.now() - t0) / 1000).toFixed(0)}s rss ${m.rss >> 20} heapTotal ${m.heapTotal >> 20} heapUsed ${m.heapUsed >> 20} external ${m.external >> 20} ab ${m.arrayBuffers >> 20} | agents ${l.agentPages} history ${l.historyReads} callPages ${memory.calls.last.pages}\n`,
    );
  }, 1000).unref();
}

process.on("message", async (m: { refresh: string; follow?: string; gc?: boolean; look?: boolean }) => {
  if (m.gc) {
    // The set the watch holds, once the garbage of the passes is collected (run with --expose-gc).
    (globalThis as { gc?: () => void }).gc?.();
    process.send?.({
      heapUsed: process.memoryUsage().heapUsed,
      rss: process.memoryUsage().rss,
      maxRss: process.resourceUsage().maxRSS * 1024,
    });
    return;
  }
  const started = Date.now();
  const [report] = await watchStacks([JSON.parse(m.refresh) as PreviewJson], c, {
    memory,
    look: m.look === true,
  });
  const ms = Date.now() - started;
  const outcomes: Record<string, number> = {};
  for (const r of report?.results ?? []) outcomes[r.outcome] = (outcomes[r.outcome] ?? 0) + 1;
  const followed = m.follow ? report?.results.find((r) => r.agentId === m.follow) : undefined;
  process.send?.({
    ms,
    last: memory.last,
    outcomes,
    followed: followed
      ? { outcome: followed.outcome, at: followed.row?.at ?? null, problem: followed.problem ?? null }
      : null,
    rss: process.memoryUsage().rss,
    heapUsed: process.memoryUsage().heapUsed,
    maxRss: process.resourceUsage().maxRSS * 1024,
    held: memory.calls.size(),
    nearing: memory.nearing,
    peaks: { ...peaks },
  });
  for (const k of Object.keys(peaks) as (keyof typeof peaks)[]) peaks[k] = 0;
});
process.on("disconnect", () => process.exit(0));
