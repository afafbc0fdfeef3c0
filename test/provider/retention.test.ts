/**
 * What the provider keeps once a resource's step is done: nothing. The handlers of the provider
 * process (Agent and AgentVersion, on one client, as in `pulumi up` and `refresh`) run the whole
 * life of many agents (check, create, read, diff, update, delete), and the heap left after a full
 * garbage collection must not grow with their count, nor may any state they were handed or
 * returned stay reachable. The emulator runs in its own process, so its records are not counted.
 */
import { type ChildProcess, spawn } from "node:child_process";
import * as path from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, expect, test, vi } from "vitest";
import { VoiceAgentClient } from "../../src/client";
import { closeDispatchers } from "../../src/client/transport";
import { DEFAULT_API_KEY } from "../../src/emulator";
import { contextFor } from "../../src/provider/context";
import type { Props, ResourceHandler } from "../../src/provider/resource";
import { agentProvider } from "../../src/resources/agent/provider";
import { agentVersionProvider } from "../../src/resources/agentVersion/provider";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

let emulator: ChildProcess | undefined;
let agents: ResourceHandler;
let versions: ResourceHandler;

beforeAll(async () => {
  const child = spawn(
    process.execPath,
    ["-r", "ts-node/register/transpile-only", "src/emulator/cli.ts", "--port", "0", "--rate-limit", "0"],
    { cwd: path.resolve(__dirname, "../.."), stdio: ["ignore", "pipe", "inherit"] },
  );
  emulator = child;
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d: Buffer) => {
      out += d;
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve(m[1] as string);
    });
    child.on("exit", (code) => reject(new Error(`the emulator exited (${code}): ${out}`)));
  });
  const ctx = contextFor(
    new VoiceAgentClient({ baseUrl: url, apiKey: DEFAULT_API_KEY, rateLimitPerMinute: 1e6 }),
  );
  agents = agentProvider(ctx);
  versions = agentVersionProvider(ctx);
});

afterAll(async () => {
  await closeDispatchers();
  emulator?.kill();
});

/** The objects the engine would hand over and get back for one agent's life, to watch. */
type Seen = object[];

/** One agent and its live version, from check to delete, as the engine runs them. */
async function life(i: number, seen?: Seen): Promise<void> {
  const news: Props = {
    name: `Retention ${i}`,
    systemPrompt: `## Agent Purpose\nHelp with orders. (agent ${i})`,
    language: { default: "en-IN", additional: ["hi-IN"] },
    model: { model: "gpt-4o-mini", temperature: 0.2 },
    createMarker: `pulumi-voice-agent:create:${i.toString(16).padStart(32, "0")}`,
  };
  const checked = (await agents.check({}, news)).inputs as Props;
  const agent = await agents.create(checked);
  const outs = agent.outs as Props;
  const vNews = (
    await versions.check(
      {},
      {
        agentId: agent.id,
        contentHash: outs.contentHash,
        draftVersion: outs.draftVersion,
        documentRevision: outs.documentRevision,
        draftPublished: outs.draftPublished,
        draftHash: outs.draftHash,
        latestVersion: outs.latestVersion,
        knownUpTo: -1,
        live: true,
      },
    )
  ).inputs as Props;
  const version = await versions.create(vNews);
  const read = await agents.read(agent.id, outs);
  const vRead = await versions.read(version.id, version.outs as Props);
  const changed = (await agents.check(outs, { ...news, systemPrompt: `${news.systemPrompt} Be brief.` }))
    .inputs as Props;
  const diff = await agents.diff(agent.id, read.props as Props, changed);
  expect(diff.changes).toBe(true);
  const updated = await agents.update(agent.id, read.props as Props, changed);
  await versions.delete(version.id, vRead.props as Props);
  await agents.delete(agent.id, updated.outs as Props);
  seen?.push(news, checked, outs, vNews, version.outs as Props, read, vRead, changed, updated);
}

/** Weak references to what the engine handed over and got back in `count` agents' lives. */
async function watched(from: number, count: number): Promise<WeakRef<object>[]> {
  const refs: WeakRef<object>[] = [];
  for (let i = from; i < from + count; i++) {
    const seen: Seen = [];
    await life(i, seen);
    for (const o of seen) refs.push(new WeakRef(o));
  }
  return refs;
}

/** The heap left after full collections, in bytes. */
function liveHeap(): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

test("the handlers keep nothing per resource once its steps are done", { timeout: 240_000 }, async () => {
  // Each delete says the agent stays in the dashboard (the service has no delete): not wanted here.
  const quiet = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
  try {
    // Warm up: modules loaded, functions compiled, the connection pool open.
    let done = 0;
    while (done < 100) await life(done++);
    const before = liveHeap();
    const n = 500;
    while (done < 100 + n) await life(done++);
    const growth = liveHeap() - before;
    // Measured between -0.3 and +0.7 MB (the compiler's code and caches come and go, the client's
    // pacer remembers the last minute's requests). A handler keeping 4 KB per resource (an agent's
    // state is about 3 KB) would grow the heap by 2 MB here.
    expect(growth, `heap growth over ${n} agents: ${(growth / 1e6).toFixed(2)} MB`).toBeLessThan(2e6);

    // Nothing the engine handed over or got back stays reachable from the provider.
    const refs = await watched(done, 10);
    await new Promise((r) => setImmediate(r));
    liveHeap();
    expect(refs.filter((r) => r.deref() !== undefined)).toHaveLength(0);
  } finally {
    quiet.mockRestore();
  }
});
