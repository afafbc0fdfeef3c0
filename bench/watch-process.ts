/**
 * The watch process of `bench/watch.ts --agents=N` (bench/watch-scale.ts): what
 * `voice-agent-diff --watch --every 60` runs, one pass per message from the bench (the refresh
 * JSON, as the command reads it from its file each pass), with one `WatchMemory` from pass to pass.
 * Bundled by esbuild and run by plain Node.js, so that its peak memory is the watch's own (no
 * TypeScript compiler in the process). Answers each pass with its requests by kind, the outcomes,
 * the result for one agent the bench follows, and the process's memory.
 */
import { VoiceAgentClient } from "../src/client";
import type { PreviewJson } from "../src/gitops/preview";
import { newWatchMemory, watchStacks } from "../src/gitops/watch";

const c = new VoiceAgentClient({
  baseUrl: process.env.BENCH_URL as string,
  apiKey: process.env.BENCH_KEY as string,
  rateLimitPerMinute: Number(process.env.BENCH_RATE),
  userAgent: "pulumi-voice-agent (voice-agent-diff)", // as the command sends it
});
const memory = newWatchMemory();

process.on("message", async (m: { refresh: string; follow?: string; gc?: boolean }) => {
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
  const [report] = await watchStacks([JSON.parse(m.refresh) as PreviewJson], c, { memory });
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
  });
});
process.on("disconnect", () => process.exit(0));
