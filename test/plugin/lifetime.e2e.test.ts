/**
 * The provider plugin dies with a real engine: a YAML `pulumi up` on the plugin installed from its
 * tarball, its step waiting on the service (a server on 127.0.0.1 that never answers), has its
 * engine (the `pulumi` process) killed with SIGKILL; within 15 s no plugin process is left. (The
 * plugin's own watch: `src/provider/lifetime.ts`; `lifetime.test.ts` here checks it with a stand-in
 * engine.)
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, expect, test } from "vitest";
import { type Emulator, pluginStack } from "../support/pluginPrograms";
import type { PulumiProject } from "../support/pulumi";

const PROGRAM = `name: plugin-lifetime
runtime: yaml
resources:
  faq:
    type: voice-agent:index:KnowledgeBase
    properties:
      name: FAQ
      documents:
        - name: returns
          url: https://shop.example.com/returns
`;

/** Running: it exists and is not a zombie. */
const alive = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
};

/** The processes working in `dir` (their current directory), with their command lines. */
function processesIn(dir: string): { pid: number; cmd: string }[] {
  const out: { pid: number; cmd: string }[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!readlinkSync(`/proc/${entry}/cwd`).startsWith(dir)) continue;
      const cmd = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ");
      if (alive(Number(entry))) out.push({ pid: Number(entry), cmd });
    } catch {
      // gone, or another user's
    }
  }
  return out;
}

let emu: Emulator | undefined;
let project: PulumiProject | undefined;
let silent: Server | undefined;
const sockets = new Set<Socket>();
afterAll(async () => {
  if (project) for (const p of processesIn(project.dir)) process.kill(p.pid, "SIGKILL");
  project?.cleanup();
  await emu?.close();
  for (const s of sockets) s.destroy();
  await new Promise((r) => silent?.close(r) ?? r(undefined));
});

test("after SIGKILL of the engine (`pulumi up` mid-step), no plugin process is left after 15 s", async () => {
  const source = mkdtempSync(path.join(tmpdir(), "pva-plugin-lifetime-"));
  try {
    writeFileSync(path.join(source, "Pulumi.yaml"), PROGRAM);
    ({ emu, project } = await pluginStack(source, { passphrase: "plugin-lifetime" }));
  } finally {
    rmSync(source, { recursive: true, force: true });
  }
  // The service the plugin talks to never answers: the step is under way when the engine is killed.
  let asked!: () => void;
  const stepUnderWay = new Promise<void>((resolve) => {
    asked = resolve;
  });
  silent = createServer(() => asked());
  silent.on("connection", (s) => sockets.add(s));
  await new Promise<void>((resolve) => silent?.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
  await project.pulumi(["config", "set", "voice-agent:baseUrl", url]);

  const engine = spawn(
    "pulumi",
    ["up", "--yes", "--skip-preview", "--non-interactive", "--stack", project.stack],
    {
      cwd: project.dir,
      env: project.env,
      stdio: "ignore",
    },
  );
  try {
    await Promise.race([
      stepUnderWay,
      sleep(90_000).then(() => {
        throw new Error("the plugin never asked the service");
      }),
    ]);
    // The plugin's process: its single executable (`npm run plugin:pack`).
    const plugins = processesIn(project.dir).filter((p) => p.cmd.includes("pulumi-resource-voice-agent"));
    // The engine's plugin host has started it (once for the schema the YAML host reads, once for
    // the step): every one must go.
    expect(plugins.length).toBeGreaterThan(0);
    engine.kill("SIGKILL");
    const t0 = performance.now();
    while (plugins.some((p) => alive(p.pid)) && performance.now() - t0 < 15_000) await sleep(100);
    expect(plugins.filter((p) => alive(p.pid))).toEqual([]);
  } finally {
    if (engine.exitCode === null && engine.signalCode === null) engine.kill("SIGKILL");
  }
}, 240_000);
