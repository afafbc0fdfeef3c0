/**
 * The watch at scale (`bench/watch.ts --agents=5000`): one watch (`watchStacks` with a
 * `WatchMemory`, what `voice-agent-diff --watch --every 60` runs) over N watched agents of one
 * workspace, against the emulator in its own process with its rate limit enforced (300 requests
 * a minute per key), 20,000 calls an hour spread over the agents, a pass a minute:
 *
 * 1. the first pass, nothing held: its requests and time, the 429s;
 * 2. steady state: requests per pass (agents pages, history reads, calls pages, single call reads),
 *    429s, and, meanwhile, a deploy of 50 agents through a second client sharing the key: its time
 *    against its rate bound (its requests over what the key leaves it: the limit less the watch's
 *    requests in that time);
 * 3. a bad version (a true negative share of 40 % against a bound of 20 %) put live on one agent
 *    among the N, its callers at 30 calls a minute: the time to the previous version back live, over
 *    `trials` seeded trials;
 * 4. the watch process's peak resident memory (VmHWM): after a day of calls (the backlog the
 *    first pass reads) and every pass since. The watch runs in a process of its own
 *    (bench/watch-process.ts, bundled by esbuild, run by plain Node.js), as the command does.
 *
 * Time is compressed by `scale` (every duration divided by it, the rate limit's window too: 300
 * requests per 60/scale seconds), and figures are scaled back to real minutes.
 *
 *   npx ts-node --transpile-only bench/watch.ts --agents=5000 [--scale=10] [--hours=24] [--minutes=10] [--trials=10]
 *     [--call-minutes=1 | --call-minutes=1-3] [--analysis-minutes=0] [--first-only] [--watch-heap=MB]
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import * as path from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { closeDispatchers, VoiceAgentClient } from "../src/client";
import { EmulatorControl } from "../src/emulator/controlClient";
import type { PreviewJson } from "../src/gitops/preview";
import type { WatchMemory } from "../src/gitops/watch";
import { TYPE_PREFIX } from "../src/resources/typeNames";

const KEY = "va_test_local";
const WATCH = { rates: [{ analysis: "Default Analysis/User Sentiment", value: "negative", atMost: 0.2 }] };
const NEGATIVE = { "Default Analysis": { "User Sentiment": "negative" } };
const LIMIT = 300;
const CALLS_PER_HOUR = 20_000;

interface Options {
  agents: number;
  scale: number;
  hours: number;
  minutes: number;
  trials: number;
}

function arg(name: string, fallback: number): number {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? Number(hit.slice(name.length + 3)) : fallback;
}

/** The emulator CLI in a child process (its memory apart from the watch's); its URL. */
async function emulatorProcess(scale: number): Promise<{ url: string; child: ChildProcess }> {
  const root = path.resolve(__dirname, "..");
  const child = spawn(
    process.execPath,
    [
      "--max-old-space-size=4096",
      "-r",
      "ts-node/register/transpile-only",
      path.join(root, "src/emulator/cli.ts"),
      "--port",
      "0",
      "--rate-limit",
      String(LIMIT),
      "--rate-window-seconds",
      String(60 / scale),
    ],
    { cwd: root, stdio: ["ignore", "pipe", "inherit"] },
  );
  const lines = createInterface({ input: child.stdout as NonNullable<ChildProcess["stdout"]> });
  for await (const line of lines) {
    const m = /listening on (http:\/\/\S+)/.exec(line);
    if (m) return { url: m[1] as string, child };
  }
  throw new Error("the emulator did not start");
}

/** The refresh JSON of one stack whose AgentVersions put these versions live, watched. */
function refreshOf(versions: Map<string, number>): PreviewJson {
  return {
    steps: [
      { op: "refresh", urn: "urn:pulumi:prod::bench::pulumi:pulumi:Stack::bench-prod" },
      ...[...versions].map(([agentId, version], i) => {
        const inputs = { agentId, live: true, watch: WATCH, draftVersion: 1, documentRevision: 1 };
        const state = {
          type: `${TYPE_PREFIX}AgentVersion`,
          id: `${agentId}/0`,
          inputs,
          outputs: { ...inputs, version, isLive: true },
        };
        return {
          op: "refresh",
          urn: `urn:pulumi:prod::bench::${TYPE_PREFIX}AgentVersion::v-${i}`,
          oldState: state,
          newState: state,
        };
      }),
    ],
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length === 0
    ? Number.NaN
    : s.length % 2
      ? (s[m] as number)
      : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const mb = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MB`;
const requestsOf = (last: WatchMemory["last"]) =>
  last.agentPages + last.historyReads + last.callPages + last.callReads;

/** What the watch process answers for a pass (bench/watch-process.ts). */
interface PassAnswer {
  ms: number;
  last: WatchMemory["last"];
  outcomes: Record<string, number>;
  followed: { outcome: string; at: string | null; problem: string | null } | null;
  rss: number;
  heapUsed: number;
  maxRss: number;
  held: { tracks: number; samples: number; pending: number };
  /** Versions nearing a fail: the command looks again in a quarter of the period. */
  nearing: number;
  /** Peaks since the previous answer, sampled every 50 ms: rss, heapTotal, heapUsed, external, arrayBuffers. */
  peaks: Record<"rss" | "heapTotal" | "heapUsed" | "external" | "arrayBuffers", number>;
}

/** The peaks of a pass by part, for the log. */
const parts = (p: PassAnswer["peaks"]) =>
  `peak rss ${mb(p.rss)}, heap total ${mb(p.heapTotal)}, heap used ${mb(p.heapUsed)}, external ${mb(p.external)}, array buffers ${mb(p.arrayBuffers)}`;

/** The watch in a process of its own: bundled, run by plain Node.js; one pass per call of `pass`. */
function watchProcess(url: string, rate: number) {
  const root = path.resolve(__dirname, "..");
  const out = path.join(root, ".tmp", "bench", "watch-process.js");
  execFileSync(
    path.join(root, "node_modules", ".bin", "esbuild"),
    [
      path.join(root, "bench", "watch-process.ts"),
      "--bundle",
      "--platform=node",
      "--target=node22",
      "--packages=external",
      `--outfile=${out}`,
      "--log-level=warning",
    ],
    { stdio: "inherit" },
  );
  // Plain Node.js: no loader inherited from the bench's own process (ts-node).
  // `--watch-heap=MB`: the watch process's old-space limit (NODE_OPTIONS=--max-old-space-size=MB).
  const heap = arg("watch-heap", 0);
  const child = spawn(
    process.execPath,
    ["--expose-gc", ...(heap > 0 ? [`--max-old-space-size=${heap}`] : []), out],
    {
      env: { ...process.env, BENCH_URL: url, BENCH_KEY: KEY, BENCH_RATE: String(rate) },
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    },
  );
  let waiting: ((a: PassAnswer) => void) | undefined;
  child.on("message", (m) => waiting?.(m as PassAnswer));
  return {
    child,
    held(): Promise<{ heapUsed: number; rss: number; maxRss: number }> {
      return new Promise((resolve) => {
        waiting = resolve as never;
        child.send({ refresh: "", gc: true });
      });
    },
    /** The peaks by part over every pass so far. */
    peaks: { rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 } as PassAnswer["peaks"],
    pass(refresh: PreviewJson, follow?: string, look = false): Promise<PassAnswer> {
      return new Promise((resolve) => {
        waiting = (a: PassAnswer) => {
          for (const k of Object.keys(this.peaks) as (keyof PassAnswer["peaks"])[])
            this.peaks[k] = Math.max(this.peaks[k], a.peaks[k]);
          resolve(a);
        };
        child.send({ refresh: JSON.stringify(refresh), look, ...(follow ? { follow } : {}) });
      });
    },
  };
}

export async function watchAtScale(): Promise<void> {
  const o: Options = {
    agents: arg("agents", 5000),
    scale: arg("scale", 10),
    hours: arg("hours", 24),
    minutes: arg("minutes", 10),
    trials: arg("trials", 10),
  };
  const minute = 60_000 / o.scale; // one compressed minute, in real ms
  // Calls of `--call-minutes` (one value, or a range MIN-MAX), analysed up to `--analysis-minutes`
  // after they end (default: within the call, as the emulator does).
  const [shortest, longest] = (process.argv.find((a) => a.startsWith("--call-minutes="))?.slice(15) ?? "1")
    .split("-")
    .map(Number);
  const callSeconds = {
    min: ((shortest as number) * 60) / o.scale,
    max: (((longest ?? shortest) as number) * 60) / o.scale,
  };
  const analysisDelay = { min: 0, max: (arg("analysis-minutes", 0) * 60) / o.scale };
  const { url, child } = await emulatorProcess(o.scale);
  const control = new EmulatorControl(url);
  // The key's rate, compressed with time: 300 a (compressed) minute.
  const watcher = watchProcess(url, LIMIT * o.scale);
  const deployer = new VoiceAgentClient({ baseUrl: url, apiKey: KEY, rateLimitPerMinute: LIMIT * o.scale });
  const WATCH_UA = "pulumi-voice-agent (voice-agent-diff)";
  /** The watch's requests since the log was cleared (every kind: the listings, history, group checks, rollbacks) and the 429s. */
  const logged = async () => {
    const log = (await control.requests()).filter((e) => e.path.startsWith("/v1"));
    const watch = log.filter((e) => e.user_agent === WATCH_UA);
    return { watch: watch.length, r429: log.filter((e) => e.status === 429).length };
  };
  try {
    const since = (o.hours * 3600) / o.scale;
    const made = await control.createAgents("default", {
      count: o.agents,
      versions: 2,
      live_version: 1,
      since_seconds: since + 1,
    });
    const versions = new Map(made.agents.map((a) => [a.id, 1]));
    const ids = made.agents.map((a) => a.id);
    const backlog = Math.round(CALLS_PER_HOUR * o.hours);
    const t0 = Date.now();
    await control.traffic({
      workspace: "default",
      count: backlog,
      spread_seconds: since,
      seed: 1,
      mix: [{ share: 0.1, analysis: NEGATIVE }],
      call_seconds: callSeconds,
      analysis_delay_seconds: analysisDelay,
      list_calls: false,
    });
    console.log(
      `watch at scale: ${o.agents} watched agents, ${backlog} calls over ${o.hours} h (each ${shortest}${longest ? `-${longest}` : ""} min, analysed up to ${arg("analysis-minutes", 0)} min after) (placed in ${((Date.now() - t0) / 1000).toFixed(1)} s), ` +
        `time / ${o.scale}, rate limit ${LIMIT} a minute enforced`,
    );
    const pass = async (follow?: string, look = false) => {
      await control.clearRequests();
      const a = await watcher.pass(refreshOf(versions), follow, look);
      const l = await logged();
      return {
        a,
        seconds: (a.ms / 1000) * o.scale,
        requests: l.watch,
        counted: requestsOf(a.last),
        r429: l.r429,
      };
    };

    // 1. The first pass: nothing held.
    const first = await pass();
    const l = first.a.last;
    console.log(
      `1. first pass: ${first.requests} requests (${l.agentPages} agents pages, ${l.historyReads} history reads, ` +
        `${l.callPages} calls pages, ${l.callReads} call reads, ${first.requests - first.counted} others: group checks, requests sent again after a 429), ${(first.seconds / 60).toFixed(1)} min, ${first.r429} answered 429; ` +
        `outcomes ${Object.entries(first.a.outcomes)
          .map(([k, v]) => `${v} ${k}`)
          .join(", ")}; the watch process's peak RSS ${mb(first.a.maxRss)} (${parts(first.a.peaks)})`,
    );

    if (process.argv.includes("--first-only")) return;

    // Traffic from now on: 20,000 calls an hour, placed each compressed minute.
    let stop = false;
    let seed = 1000;
    const traffic = (async () => {
      while (!stop) {
        const next = Date.now() + minute;
        await control
          .traffic({
            workspace: "default",
            count: Math.round(CALLS_PER_HOUR / 60),
            seed: seed++,
            mix: [{ share: 0.1, analysis: NEGATIVE }],
            call_seconds: callSeconds,
            analysis_delay_seconds: analysisDelay,
            list_calls: false,
          })
          .catch((err: unknown) => console.error(`traffic: ${(err as Error).message}`));
        await sleep(Math.max(0, next - Date.now()));
      }
    })();

    // 2. Steady state, a pass a minute; a deploy of 50 agents in the middle.
    const steady: { requests: number; seconds: number; r429: number }[] = [];
    let last: PassAnswer = first.a;
    let deploy: Promise<{ seconds: number; requests: number }> | undefined;
    const deployed = ids.slice(-50);
    for (let m = 0; m < o.minutes; m++) {
      const next = Date.now() + minute;
      if (m === Math.floor(o.minutes / 2))
        deploy = (async () => {
          const started = Date.now();
          await Promise.all(
            deployed.map(async (id) => {
              await deployer.agents.patch(id, { system_prompt: "## Agent Purpose\nv2 of the bench" });
              await deployer.versions.publish(id, 2);
              await deployer.versions.activate(id, 2);
            }),
          );
          return { seconds: ((Date.now() - started) / 1000) * o.scale, requests: deployed.length * 3 };
        })();
      const p = await pass();
      last = p.a;
      steady.push({ requests: p.requests, seconds: p.seconds, r429: p.r429 });
      await sleep(Math.max(0, next - Date.now()));
    }
    const d = await (deploy as Promise<{ seconds: number; requests: number }>);
    // The watch's steady share of the key: its median requests a pass, a pass a minute.
    const watchPerMinute = median(steady.map((s) => s.requests));
    const bound = (d.requests / (LIMIT - watchPerMinute)) * 60;
    console.log(
      `2. steady state (${steady.length} passes, a pass a minute): requests a pass ${steady.map((s) => s.requests).join(", ")} ` +
        `(median ${median(steady.map((s) => s.requests))}, max ${Math.max(...steady.map((s) => s.requests))}); ` +
        `pass time median ${median(steady.map((s) => s.seconds)).toFixed(1)} s; answered 429: ${steady.reduce((a, s) => a + s.r429, 0)}`,
    );
    console.log(
      `   deploy of ${deployed.length} agents (${d.requests} requests) sharing the key: ${d.seconds.toFixed(1)} s; ` +
        `its rate bound ${bound.toFixed(1)} s (${d.requests} requests at ${LIMIT} - ${watchPerMinute} a minute): ${(d.seconds / bound).toFixed(2)} of it`,
    );
    for (const id of deployed) versions.delete(id); // the stack's refresh after that deploy is another stack's business

    // 3. A bad version among the N: the time to the previous version back live.
    const times: number[] = [];
    const looks: { requests: number; seconds: number; r429: number }[] = [];
    for (let trial = 1; trial <= o.trials; trial++) {
      const agentId = ids[trial * 7] as string;
      const draft = await deployer.agents.patch(agentId, { system_prompt: `## Agent Purpose\nbad ${trial}` });
      const bad = (await deployer.versions.publish(agentId, draft.version)).version;
      const live = await deployer.versions.activate(agentId, bad);
      versions.set(agentId, bad);
      let done = false;
      const callers = (async () => {
        for (let i = 0; !done; i++) {
          await control
            .traffic({
              agent_id: agentId,
              version: bad,
              count: 1,
              seed: trial * 100_000 + i,
              origin: "inbound",
              mix: [{ share: 0.4, analysis: NEGATIVE }],
              call_seconds: { min: 60 / o.scale, max: 60 / o.scale },
            })
            .catch(() => undefined);
          await sleep(minute / 30);
        }
      })();
      await sleep(Math.random() * minute);
      let rolled: number | undefined;
      // A pass a minute; while the version nears a fail, a look (the calls only) each quarter of
      // it, as `--every 60` schedules them.
      let untilPass = 0;
      for (let n = 0; n < 30 && rolled === undefined; ) {
        const look = untilPass > 0;
        if (!look) {
          untilPass = minute;
          n++;
        }
        const started = Date.now();
        const p = await pass(agentId, look);
        last = p.a;
        (look ? looks : steady).push({ requests: p.requests, seconds: p.seconds, r429: p.r429 });
        const r = p.a.followed;
        if (r?.outcome === "rolled_back" && r.at) {
          rolled = ((Date.parse(r.at) - Date.parse(live.at)) / 1000) * o.scale;
          break;
        }
        const wait = p.a.nearing > 0 ? Math.min(untilPass, minute / 4) : untilPass;
        untilPass -= wait;
        await sleep(Math.max(0, started + wait - Date.now()));
      }
      done = true;
      await callers;
      versions.set(agentId, 1);
      if (rolled === undefined) throw new Error(`trial ${trial}: no rollback within 30 passes`);
      times.push(rolled);
    }
    const sorted = [...times].sort((a, b) => a - b);
    console.log(
      `3. a bad version among ${o.agents} (40% negative against 20%, 30 calls a minute of 1 minute): time to the previous version back live ` +
        `median ${median(times).toFixed(0)} s (min ${sorted[0]?.toFixed(0)}, max ${sorted.at(-1)?.toFixed(0)}) over ${times.length} trials [${times.map((t) => t.toFixed(0)).join(", ")}]; ` +
        `${looks.length} looks between passes (requests each: median ${median(looks.map((x) => x.requests))}, max ${Math.max(0, ...looks.map((x) => x.requests))}; answered 429: ${looks.reduce((a, x) => a + x.r429, 0)})`,
    );
    stop = true;
    await traffic;
    const held = last.held;
    const gc = await watcher.held();
    console.log(
      `4. the watch process: peak RSS ${mb(last.maxRss)} over the day's calls and ${steady.length + 1} passes (after the first pass: ${mb(first.a.maxRss)}); ` +
        `held now: ${held.tracks} tracks, ${held.samples} window tallies, ${held.pending} calls pending; heap used ${mb(last.heapUsed)}, ${mb(gc.heapUsed)} once collected (RSS then ${mb(gc.rss)}); over every pass: ${parts(watcher.peaks)}; ` +
        `requests a pass over every pass since the first: max ${Math.max(...steady.map((s) => s.requests))}, 429s ${steady.reduce((a, s) => a + s.r429, 0)}`,
    );
  } finally {
    watcher.child.disconnect();
    child.kill("SIGTERM");
    await closeDispatchers();
  }
}
