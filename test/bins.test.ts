/**
 * The package's commands, as a user runs them: `npx voice-agent-emulator`, `npx voice-agent-diff`,
 * `npx voice-agent-export`.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { connect } from "node:net";
import * as path from "node:path";
import { describe, expect, test } from "vitest";
import { REPO_ROOT } from "./support/pulumi";

const bin = (name: string) => path.join(REPO_ROOT, "node_modules/.bin", name);

describe("commands", () => {
  test("npx voice-agent-emulator --port 0 prints where it listens, and serves the API", async () => {
    const child = spawn(bin("voice-agent-emulator"), ["--port", "0"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      const first = await new Promise<string>((resolve, reject) => {
        let text = "";
        child.stdout.on("data", (chunk) => {
          text += chunk;
          if (text.includes("\n")) resolve(text.split("\n")[0] as string);
        });
        child.on("exit", (code) => reject(new Error(`exited ${code}`)));
      });
      expect(first).toMatch(/^voice-agent emulator listening on http:\/\/127\.0\.0\.1:\d+$/);
      const url = first.replace("voice-agent emulator listening on ", "");
      const res = await fetch(`${url}/v1/models`, { headers: { authorization: "Bearer va_test_local" } });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-request-id")).toBeTruthy();
    } finally {
      child.kill();
    }
  });

  /** Whether anything accepts a connection on 127.0.0.1:`port`. */
  const listening = (port: number) =>
    new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => resolve(socket.destroy() !== undefined));
      socket.once("error", () => resolve(false));
    });
  /** Whether any process of process group `group` is left. */
  const groupAlive = (group: number) => {
    try {
      process.kill(-group, 0);
      return true;
    } catch {
      return false;
    }
  };

  // A terminal's Ctrl-C sends SIGINT to the whole foreground group; `kill PID`, a process manager or a
  // test's `child.kill()` sends SIGTERM to npx alone, which npm hands to the `sh -c` it runs the
  // command in (and that shell does not pass on).
  test.each([
    ["SIGINT", "the group (Ctrl-C)"],
    ["SIGTERM", "npx alone (kill PID)"],
    ["SIGTERM", "the group"],
  ] as const)(
    "npx voice-agent-emulator stops on %s sent to %s: its port closes, no process is left",
    async (signal, to) => {
      // Its own process group, so that every process npx starts can be found (and cleaned up) by it.
      const child = spawn("npx", ["voice-agent-emulator", "--port", "0"], {
        cwd: REPO_ROOT,
        detached: true,
        stdio: ["ignore", "pipe", "inherit"],
      });
      const group = child.pid as number;
      try {
        const first = await new Promise<string>((resolve, reject) => {
          let text = "";
          child.stdout.on("data", (chunk) => {
            text += chunk;
            if (text.includes("\n")) resolve(text.split("\n")[0] as string);
          });
          child.on("exit", (code) => reject(new Error(`exited ${code}`)));
        });
        const port = Number(/:(\d+)$/.exec(first)?.[1]);
        expect(await listening(port)).toBe(true);
        process.kill(to.startsWith("npx") ? group : -group, signal);
        const deadline = Date.now() + 15_000;
        while (groupAlive(group) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
        expect(groupAlive(group)).toBe(false);
        expect(await listening(port)).toBe(false);
      } finally {
        if (groupAlive(group)) process.kill(-group, "SIGKILL");
      }
    },
  );

  test("npx voice-agent-diff --help", () => {
    expect(execFileSync(bin("voice-agent-diff"), ["--help"], { encoding: "utf8" })).toContain(
      "usage: voice-agent-diff",
    );
  });

  test("npx voice-agent-export --help", () => {
    expect(execFileSync(bin("voice-agent-export"), ["--help"], { encoding: "utf8" })).toContain(
      "usage: voice-agent-export --out DIR",
    );
  });

  /** The folder of a system Node.js older than 22 (outside scripts/env.sh), when there is one. */
  const oldNodeDir = ["/usr/bin", "/usr/local/bin"].find((dir) => {
    const node = path.join(dir, "node");
    if (!existsSync(node)) return false;
    return Number(/^v(\d+)\./.exec(execFileSync(node, ["--version"], { encoding: "utf8" }))?.[1]) < 22;
  });

  test.skipIf(!oldNodeDir).each(["voice-agent-emulator", "voice-agent-diff", "voice-agent-export"])(
    "npx %s --help on Node.js 20: which Node.js it needs, no stack trace",
    (name) => {
      const r = spawnSync(bin(name), ["--help"], {
        encoding: "utf8",
        env: { ...process.env, PATH: `${oldNodeDir}:${process.env.PATH}` },
      });
      expect(r.status).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(new RegExp(`^${name}: needs Node\\.js >= 22\\.19; this is Node\\.js 20\\.`));
      expect(r.stderr).not.toMatch(/^\s+at /m);
    },
  );
});
