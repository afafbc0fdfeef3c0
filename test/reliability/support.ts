/**
 * Shared pieces of the reliability tests: an emulator with its control API, projects driven by the
 * real Pulumi CLI, a CLI run we can kill, the "clean failure" check that decides whether an `up`
 * may be retried, and the secret scanner.
 */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import * as path from "node:path";
import { DEFAULT_API_KEY, startEmulator } from "../../src/emulator";
import { clearRequestLog, requestLog, setFaults } from "../support/control";
import { PulumiProject, type RunResult } from "../support/pulumi";

export type Emulator = Awaited<ReturnType<typeof startEmulator>>;

export {
  clearRequestLog,
  DEFAULT_API_KEY,
  PulumiProject,
  type RunResult,
  requestLog,
  setFaults,
  startEmulator,
};

/** A call to the emulator's public API with the default key; throws on a non-2xx answer. */
export async function api(
  emu: Emulator,
  method: string,
  route: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<any> {
  const res = await apiRaw(emu, method, route, body, headers);
  if (res.status >= 300) throw new Error(`${method} ${route}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** The same, returning status, body and request id whatever the status. */
export async function apiRaw(
  emu: Emulator,
  method: string,
  route: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; requestId: string | null }> {
  const res = await fetch(`${emu.url}${route}`, {
    method,
    headers: { authorization: `Bearer ${DEFAULT_API_KEY}`, "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text ? JSON.parse(text) : undefined,
    requestId: res.headers.get("x-request-id"),
  };
}

/** Every agent of the workspace (all pages). */
export async function listAgents(emu: Emulator): Promise<{ id: string; name: string }[]> {
  const out: { id: string; name: string }[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await api(
      emu,
      "GET",
      `/v1/agents?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    out.push(...page.data);
    if (!page.has_more) return out;
    cursor = page.next_cursor;
  }
}

/** A project on the emulator: base URL in config, the key as a secret, the client pace given. */
export function newProject(
  emu: Emulator,
  program: string,
  opts: { ratePerMinute?: number; env?: Record<string, string>; name?: string } = {},
): Promise<PulumiProject> {
  return PulumiProject.create({
    program,
    name: opts.name,
    env: opts.env,
    config: {
      "voice-agent:baseUrl": emu.url,
      ...(opts.ratePerMinute ? { "voice-agent:rateLimitPerMinute": String(opts.ratePerMinute) } : {}),
    },
    secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
  });
}

/**
 * A program of `count` agents named `<prefix> <i>`, each with an AgentVersion going live (unless
 * `versions` is false); each agent's prompt is `prompt` followed by its number. The benchmarks use
 * it too (bench/lib.ts).
 */
export function agentsProgram(
  count: number,
  prefix: string,
  opts: { versions?: boolean; prompt?: string; label?: string } = {},
): string {
  const prompt = opts.prompt ?? "Help callers with their orders.";
  const label = opts.label ? `, label: ${JSON.stringify(opts.label)}` : "";
  return `
import * as va from "pulumi-voice-agent";
const ids: any[] = [];
for (let i = 0; i < ${count}; i++) {
  const agent = new va.Agent(\`agent-\${i}\`, {
    name: \`${prefix} \${i}\`,
    systemPrompt: \`## Agent Purpose\\n${prompt} (agent \${i})\`,
    language: { default: "en-IN", additional: ["hi-IN"] },
    model: { model: "gpt-4o-mini", temperature: 0.2 },
  });
  ${opts.versions === false ? "" : `new va.AgentVersion("agent-" + i + "-live", { agent${label} });`}
  ids.push(agent.agentId);
}
export const agentIds = ids;
`;
}

/** A CLI run we can interrupt: its own process group, output collected. */
export interface SpawnedRun {
  pid: number;
  output(): string;
  done: Promise<RunResult & { signal: NodeJS.Signals | null }>;
  /** SIGKILL to the whole process group (CLI, language host, program, dynamic providers). */
  killGroup(): void;
  /** SIGKILL to the CLI alone, as when the machine's supervisor kills the job's main process. */
  killCli(): void;
}

export function spawnPulumi(project: PulumiProject, args: string[]): SpawnedRun {
  const child = spawn("pulumi", [...args, "--non-interactive", "--stack", project.stack], {
    cwd: project.dir,
    env: project.env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d) => {
    stdout += d;
  });
  child.stderr?.on("data", (d) => {
    stderr += d;
  });
  const done = new Promise<RunResult & { signal: NodeJS.Signals | null }>((resolve) => {
    child.on("close", (code, signal) => resolve({ code: code ?? -1, signal, stdout, stderr }));
  });
  return {
    pid: child.pid as number,
    output: () => stdout + stderr,
    done,
    killGroup: () => {
      try {
        process.kill(-(child.pid as number), "SIGKILL");
      } catch {
        // already gone
      }
    },
    killCli: () => {
      try {
        process.kill(child.pid as number, "SIGKILL");
      } catch {
        // already gone
      }
    },
  };
}

/**
 * The checks that make a failed `pulumi up` a clean failure, one Pulumi reported itself and that
 * may be retried: a non-zero exit with an `error:` diagnostic attributed to one of our resources,
 * no crash of the engine or of the provider process, and a state that exports and holds no pending
 * operation. Returns the error lines.
 */
export async function expectCleanFailure(project: PulumiProject, result: RunResult): Promise<string[]> {
  const text = result.stdout + result.stderr;
  assert.notEqual(result.code, 0, "the up was expected to fail");
  // Engine or plugin crashes are not clean.
  assert.doesNotMatch(text, /panic:|goroutine \d+ \[|SIGSEGV|unhandled rejection|Unhandled promise/i);
  assert.doesNotMatch(text, /error reading from server|transport is closing|plugin .* exited unexpectedly/i);
  // Pulumi names the failing resource and gives a reason.
  assert.match(text, /pulumi-nodejs:dynamic\/voice-agent:(Agent|AgentVersion|Widget)[^\n]*\n[\s\S]*error:/);
  const errors = text.split("\n").filter((l) => /error:/.test(l));
  assert.ok(errors.length > 0, "no error line");
  // The state is intact: it exports, and nothing was left half-done.
  const state = JSON.parse(await project.exportState(false));
  assert.deepEqual(state.deployment.pending_operations ?? [], [], "pending operations left in the state");
  return errors;
}

/** Texts to search for secrets: state exports, the command outputs given, and log files. */
export async function expectNoSecret(
  project: PulumiProject,
  secrets: string[],
  outputs: string[] = [],
): Promise<{ places: number; bytes: number }> {
  const texts: [string, string][] = [
    ["stack export", await project.exportState(false)],
    ["stack export --show-secrets", await project.exportState(true)],
    ...outputs.map((o, i): [string, string] => [`command output ${i}`, o]),
  ];
  for (const file of logFiles(project)) texts.push([file, readFileSync(file, "utf8")]);
  let bytes = 0;
  for (const [where, text] of texts) {
    bytes += text.length;
    for (const secret of secrets) {
      if (text.includes(secret)) throw new Error(`the secret ${secret.slice(0, 4)}... appears in ${where}`);
    }
  }
  return { places: texts.length, bytes };
}

/** Log files Pulumi may write for a project: $PULUMI_HOME/logs and the state folder's history. */
export function logFiles(project: PulumiProject): string[] {
  const roots = [path.join(project.dir, ".home"), path.join(project.dir, ".state")];
  const out: string[] = [];
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir)) {
      const full = path.join(dir, entry);
      const st = statSync(full);
      if (st.isDirectory()) {
        if (entry === "plugins" || entry === "node_modules") continue;
        walk(full);
      } else if (st.size < 64 * 1024 * 1024 && !/\.(gz|zip)$/.test(entry)) {
        out.push(full);
      }
    }
  };
  for (const r of roots) walk(r);
  return out;
}

/** Seconds since `t0` (performance.now()), with one decimal. */
export function since(t0: number): string {
  return ((performance.now() - t0) / 1000).toFixed(1);
}

/**
 * The documented recovery after an interrupted `pulumi up` (docs/reliability.md), Pulumi commands
 * only, no state surgery:
 *
 * 1. `pulumi cancel --yes`: removes the lock the killed update left in the backend.
 * 2. `pulumi refresh --yes --clear-pending-creates`: reads every resource back (a patch, publish or
 *    activation the service committed comes into the state, and the pending updates are cleared)
 *    and drops the pending creates.
 * 3. `pulumi up --yes`: runs the dropped creates again; each finds, by its create marker, the object
 *    the killed attempt had made, and adopts it instead of making another.
 *
 * Returns the three commands' output.
 */
export async function recoverAfterKill(
  project: PulumiProject,
): Promise<{ pending: string[]; outputs: string[] }> {
  const cancel = await project.pulumi(["cancel", "--yes"]);
  const pending = (project.deployment().pending_operations ?? []).map(
    (o) => `${o.type} ${o.resource.urn.split("::").pop()}`,
  );
  const refresh = await project.pulumi(["refresh", "--yes", "--clear-pending-creates"]);
  assert.deepEqual(project.deployment().pending_operations ?? [], [], "refresh left pending operations");
  const up = await project.up();
  return {
    pending,
    outputs: [cancel.stdout + cancel.stderr, refresh.stdout + refresh.stderr, up.stdout + up.stderr],
  };
}

/** The pids of `root` and every live process descended from it (Linux /proc). */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procStat(Number(entry));
    if (!stat || stat.state === "Z") continue;
    children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), Number(entry)]);
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    out.push(pid);
    for (const c of children.get(pid) ?? []) walk(c);
  };
  walk(root);
  return out;
}

/** Of `pids`, those still alive (a zombie is not alive: it runs nothing and holds nothing). */
export function stillAlive(pids: Iterable<number>): string[] {
  const out: string[] = [];
  for (const pid of pids) {
    const stat = procStat(pid);
    if (stat && stat.state !== "Z") out.push(`${pid} ${stat.comm}`);
  }
  return out;
}

/** The command line of process `pid`, arguments joined by spaces ("" once it exited). */
export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
  } catch {
    return "";
  }
}

/** The program process `pid` runs (`/proc/<pid>/exe`), or undefined once it exited. */
export function executable(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return undefined;
  }
}

function procStat(pid: number): { comm: string; state: string; ppid: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // pid (comm) state ppid ...; comm may hold spaces, so split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return {
      comm: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")),
      state: fields[0] ?? "",
      ppid: Number(fields[1]),
    };
  } catch {
    return undefined; // exited meanwhile
  }
}
