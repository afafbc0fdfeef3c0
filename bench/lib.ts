/**
 * Shared pieces of the provider benchmarks: emulators (optionally on a SQLite file, so a stack built
 * against an unlimited emulator can be measured against a rate-limited one), Pulumi projects driven
 * by the real CLI (the e2e harness), request-log classification and small statistics.
 *
 * Run the benchmarks after `source scripts/env.sh && npm run build` (programs import the compiled
 * package). Each prints its figures; docs/performance.md records them.
 */
import { mkdtempSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { DEFAULT_API_KEY, type LogEntry, startEmulator } from "../src/emulator";
import { agentsProgram } from "../test/reliability/support";
import { clearRequestLog, requestLog } from "../test/support/control";
import { PulumiProject, pulumiHost } from "../test/support/pulumi";

export type Emulator = Awaited<ReturnType<typeof startEmulator>>;
export {
  agentsProgram,
  clearRequestLog,
  DEFAULT_API_KEY,
  PulumiProject,
  pulumiHost,
  requestLog,
  startEmulator,
};

/**
 * The same shape as `agentsProgram`, from a dynamic resource that does nothing: `count` "agents",
 * each with a "version" depending on it when `versions`. Its provider's create returns its inputs.
 * With `prompt`, the agents' prompt is that text, and the provider has an `update` that returns its
 * inputs with the prompt as `contentHash`, so that a changed prompt updates each agent and, through
 * its hash, its version (without `prompt` the provider is exactly the create-only one).
 */
export function noopProgram(count: number, versions: boolean, prompt?: string): string {
  const update =
    prompt === undefined
      ? ""
      : `
  async update(_id: string, _olds: any, news: any) {
    return { outs: { ...news, agentId: "noop", contentHash: news.systemPrompt ?? news.contentHash } };
  },`;
  return `
import * as pulumi from "@pulumi/pulumi";
const provider: pulumi.dynamic.ResourceProvider = {${update}
  async create(inputs: any) {
    return { id: Math.random().toString(36).slice(2), outs: { ...inputs, agentId: "noop", contentHash: "h" } };
  },
};
class Noop extends pulumi.dynamic.Resource {
  declare readonly agentId: pulumi.Output<string>;
  declare readonly contentHash: pulumi.Output<string>;
  constructor(name: string, props: Record<string, unknown>, opts?: pulumi.CustomResourceOptions) {
    super(provider, name, { agentId: undefined, contentHash: undefined, ...props }, opts);
  }
}
const ids: any[] = [];
for (let i = 0; i < ${count}; i++) {
  const agent = new Noop("agent-" + i, {
    name: "Noop " + i,
    systemPrompt: "## Agent Purpose\\n${prompt ?? "Help callers with their orders."} (agent " + i + ")",
    language: { default: "en-IN", additional: ["hi-IN"] },
    model: { model: "gpt-4o-mini", temperature: 0.2 },
  });
  ${versions ? `new Noop("agent-" + i + "-live", { agent: agent.agentId, contentHash: agent.contentHash, live: true }, { dependsOn: agent });` : ""}
  ids.push(agent.agentId);
}
export const agentIds = ids;
`;
}

/** A scratch folder for emulator databases. */
export function scratchDir(): string {
  return mkdtempSync(path.join(tmpdir(), "va-bench-"));
}

/**
 * A project on `emu` with the key as a secret; `pace` sets `voice-agent:rateLimitPerMinute`. The
 * package is installed in the project's `node_modules` from its tarball, as a user has it.
 */
export function project(emu: Emulator, program: string, pace?: number): Promise<PulumiProject> {
  return PulumiProject.create({
    installed: true,
    program,
    config: {
      "voice-agent:baseUrl": emu.url,
      ...(pace ? { "voice-agent:rateLimitPerMinute": String(pace) } : {}),
    },
    secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
  });
}

/** Runs `fn` and returns its wall time in seconds with its result. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ seconds: number; value: T }> {
  const t0 = performance.now();
  const value = await fn();
  return { seconds: (performance.now() - t0) / 1000, value };
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

export const fmt = (x: number, digits = 2): string => x.toFixed(digits);

const CATALOGUE =
  /^\/v1\/(models|voices|transcribers|languages|tts-capabilities|numbers|whatsapp\/|knowledge-bases(\?|$)|custom-analysis(\?|$))/;

/** What a logged request was, for counting calls per operation. */
export function classify(r: LogEntry): string {
  const p = r.path;
  if (CATALOGUE.test(p)) return "catalogue/holdings read (preview checks)";
  if (r.method === "GET" && /^\/v1\/agents(\?|$)/.test(p)) return "GET list agents";
  if (r.method === "POST" && /^\/v1\/agents(\?|$)/.test(p)) return "POST create agent";
  if (r.method === "GET" && /\/versions(\?|$)/.test(p)) return "GET list versions";
  if (r.method === "GET" && /\/versions\/\d+/.test(p)) return "GET version";
  if (r.method === "GET" && /\/v1\/agents\/[^/?]+\?version=/.test(p)) return "GET agent ?version=";
  if (r.method === "GET" && /\/v1\/agents\/[^/?]+$/.test(p)) return "GET agent (latest)";
  if (r.method === "PATCH" && /\/v1\/agents\/[^/?]+\?version=/.test(p))
    return "PATCH agent ?version= (label/notes)";
  if (r.method === "PATCH" && /\/v1\/agents\/[^/?]+$/.test(p)) return "PATCH agent (configuration)";
  if (r.method === "POST" && p.endsWith("/publish")) return "POST publish";
  if (r.method === "POST" && /\/activations$/.test(p)) return "POST activation";
  return `${r.method} ${p.replace(/[0-9a-f-]{36}/g, "{id}")}`;
}

/** Counts by class, with totals of reads and writes. */
export function countCalls(log: LogEntry[]): {
  reads: number;
  writes: number;
  byKind: Record<string, number>;
} {
  const byKind: Record<string, number> = {};
  let reads = 0;
  let writes = 0;
  for (const r of log) {
    if (!r.path.startsWith("/v1")) continue;
    const k = classify(r);
    byKind[k] = (byKind[k] ?? 0) + 1;
    if (r.method === "GET") reads++;
    else writes++;
  }
  return { reads, writes, byKind };
}

/** The processes whose peak memory the benchmarks read. */
export type Role = "program" | "provider";

/**
 * Peak resident memory of the Node.js processes a command starts in the project's folder: the
 * program (`@pulumi/pulumi/cmd/run`) and the dynamic provider (`cmd/dynamic-provider`), read from
 * /proc every 100 ms (VmHWM only grows, so the last reading of a process is its peak but for its
 * last 100 ms).
 */
export function watchMemory(dir: string): { stop(): Record<Role, number> } {
  const peaks = new Map<string, { role: Role; kb: number }>();
  const read = () => {
    for (const pid of readdirSync("/proc")) {
      if (!/^\d+$/.test(pid)) continue;
      try {
        if (!readlinkSync(`/proc/${pid}/cwd`).startsWith(dir)) continue;
        const known = peaks.get(pid);
        let role = known?.role;
        if (!role) {
          const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
          if (cmd.includes("cmd/dynamic-provider")) role = "provider";
          else if (cmd.includes("@pulumi/pulumi/cmd/run") || cmd.includes("pulumi/cmd/run")) role = "program";
          else continue;
        }
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
        if (m) peaks.set(pid, { role, kb: Math.max(known?.kb ?? 0, Number(m[1])) });
      } catch {
        // The process ended between the listing and the read.
      }
    }
  };
  const timer = setInterval(read, 100);
  return {
    stop() {
      clearInterval(timer);
      read();
      const out: Record<Role, number> = { program: 0, provider: 0 };
      for (const { role, kb } of peaks.values()) out[role] = Math.max(out[role], kb / 1024);
      return out;
    },
  };
}
