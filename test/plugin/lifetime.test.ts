/**
 * The provider plugin's process lives and dies with its engine: when the engine is killed (SIGKILL:
 * nothing tells the plugin), the plugin exits, by the same watch as the dynamic provider's
 * (`src/provider/lifetime.ts`). A stand-in engine starts the plugin's entry point (`main.ts`, as the
 * tarball's launcher `exec`s it), waits for its port, and is killed; no plugin process is left.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { expect, test } from "vitest";

const ROOT = path.resolve(__dirname, "../..");

/** Running: it exists and is not a zombie (an exited process its new parent has not reaped yet). */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
};

test("the plugin exits when its engine is killed (SIGKILL): no plugin process is left after 15 s", async () => {
  // The engine: starts the plugin with an engine address (nothing listens there: the plugin only
  // logs to it), and says the plugin's pid once the plugin has printed its port (it serves).
  const plugin = [
    "-r",
    require.resolve("ts-node/register/transpile-only"),
    path.join(ROOT, "src/plugin/main.ts"),
    "127.0.0.1:1",
  ];
  const engineCode = `
    const p = require("node:child_process").spawn(${JSON.stringify(process.execPath)}, ${JSON.stringify(plugin)},
      { cwd: ${JSON.stringify(ROOT)}, stdio: ["ignore", "pipe", "inherit"] });
    p.stdout.once("data", (b) => console.log("plugin " + p.pid + " port " + String(b).trim()));
    setInterval(() => {}, 60_000);`;
  const engine = spawn(process.execPath, ["-e", engineCode], { stdio: ["ignore", "pipe", "inherit"] });
  let pid: number | undefined;
  try {
    pid = await new Promise<number>((resolve, reject) => {
      let out = "";
      engine.stdout.on("data", (b: Buffer) => {
        out += b.toString();
        const m = /plugin (\d+) port (\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      engine.once("exit", () => reject(new Error(`the engine ended first: ${out}`)));
    });
    expect(alive(pid)).toBe(true);
    engine.kill("SIGKILL");
    const t0 = performance.now();
    while (alive(pid) && performance.now() - t0 < 15_000) await sleep(100);
    expect(alive(pid)).toBe(false);
  } finally {
    if (engine.exitCode === null && engine.signalCode === null) engine.kill("SIGKILL");
    if (pid !== undefined && alive(pid)) process.kill(pid, "SIGKILL");
  }
}, 60_000);
