/** The package's commands, as a user runs them: `npx voice-agent-emulator`, `npx voice-agent-diff`. */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
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

  test("npx voice-agent-diff --help", () => {
    expect(execFileSync(bin("voice-agent-diff"), ["--help"], { encoding: "utf8" })).toContain(
      "usage: voice-agent-diff",
    );
  });

  test("voice-agent-emulator: complete --help, unknown flags refused, a non-loopback host needs --allow-remote", () => {
    const help = execFileSync(bin("voice-agent-emulator"), ["--help"], { encoding: "utf8" });
    for (const flag of [
      "--host",
      "--allow-remote",
      "--port",
      "--db",
      "--workspace",
      "--rate-limit",
      "--rate-window-seconds",
    ]) {
      expect(help).toContain(flag);
    }
    const wrong = spawnSync(bin("voice-agent-emulator"), ["--prot", "0"], { encoding: "utf8" });
    expect(wrong.status).toBe(2);
    const remote = spawnSync(bin("voice-agent-emulator"), ["--host", "0.0.0.0", "--port", "0"], {
      encoding: "utf8",
      timeout: 10_000,
    });
    expect(remote.status).toBe(2);
    expect(remote.stderr).toContain("--allow-remote");
  });

  // Node 20 is the default of many CI images; the machines here ship it as the system Node.
  const node20 = ["/usr/bin/node", "/usr/local/bin/node"].find(
    (p) => existsSync(p) && execFileSync(p, ["--version"], { encoding: "utf8" }).startsWith("v20."),
  );
  test.skipIf(!node20)("on Node 20 the emulator says which Node.js it needs, without a stack trace", () => {
    for (const script of ["dist/emulator/cli.js"]) {
      const run = spawnSync(node20 as string, [path.join(REPO_ROOT, script), "--help"], { encoding: "utf8" });
      expect(run.status).toBe(1);
      expect(run.stderr).toMatch(/needs Node\.js >= 22\.19; this is Node\.js 20\./);
      expect(run.stderr).not.toMatch(/\n\s+at /);
    }
  });
});
