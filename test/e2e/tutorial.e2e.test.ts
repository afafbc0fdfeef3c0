/**
 * docs/tutorial.md, run as a reader runs it: its `sh` blocks, in order and as written, in one bash
 * session, in a fresh folder outside the repository holding the packed tarball; only the emulator's
 * port 8787 becomes a free one. The tutorial cannot rot: a command that stops working fails here.
 */
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { homedir, tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { blocksOfPage, packTarball, pulumiEnvironment } from "../support/pulumi";

let work: string;
/** The bash session's process group, stopped whatever happens (a timeout included). */
let group: number | undefined;
const stopGroup = () => {
  try {
    if (group !== undefined) process.kill(-group, "SIGKILL");
  } catch {
    // nothing left: `kill $EMULATOR` stopped the emulator
  }
};
beforeAll(() => {
  work = mkdtempSync(path.join(tmpdir(), "pva-tutorial-"));
});
afterAll(() => {
  stopGroup();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** A port nothing listens on now. */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

test("docs/tutorial.md's commands, as written, from the packed tarball in a fresh folder", async () => {
  const blocks = blocksOfPage("docs/tutorial.md", "sh");
  expect(blocks.length).toBeGreaterThan(8);
  const packed = path.join(work, "packed");
  mkdirSync(packed);
  const tarball = path.join(packed, packTarball(packed));
  const port = await freePort();
  const script = blocks.map((b) => b.replaceAll("8787", String(port))).join("\n");
  const home = path.join(work, "home");
  mkdirSync(home);
  // Where the tutorial has the reader put it, under the name `npm pack` gives it.
  cpSync(tarball, path.join(work, "pulumi-voice-agent-0.2.0.tgz"));
  const env = pulumiEnvironment({
    HOME: home,
    PULUMI_HOME: path.join(home, ".pulumi"),
    // npm's cache stays the machine's (the packages, not the reader's settings).
    npm_config_cache: process.env.npm_config_cache ?? path.join(homedir(), ".npm"),
  });
  for (const k of [
    "PULUMI_BACKEND_URL",
    "PULUMI_CONFIG_PASSPHRASE",
    "VOICE_AGENT_BASE_URL",
    "VOICE_AGENT_API_KEY",
  ])
    delete env[k];
  // Its own process group: whatever the script leaves running is found and stopped.
  const bash = spawn("bash", ["-e", "-o", "pipefail", "-c", script], {
    cwd: work,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  group = bash.pid;
  let out = "";
  bash.stdout.on("data", (c) => {
    out += c;
  });
  bash.stderr.on("data", (c) => {
    out += c;
  });
  // "exit", not "close": an emulator the script left running would hold its output open.
  const code = await new Promise<number | null>((resolve) => bash.on("exit", resolve));
  stopGroup();
  expect(code, out).toBe(0);
  expect(out).toMatch(/voice-agent emulator listening on http:\/\/127\.0\.0\.1:\d+/);
  expect(out).toContain("No drift");
  const watch = readFileSync(path.join(work, "voice-agents", "watch.md"), "utf8");
  expect(watch).toMatch(/AgentVersion `support-live`: rolled back/);
  expect(watch).toMatch(/put version 0 back live/);
  // `pulumi stack output version`: 1 after the change, 0 after the revert.
  expect(out.split("\n").filter((l) => /^[01]$/.test(l))).toEqual(["1", "0"]);
  // About 4 minutes on an idle 2-core machine; npm install and ten Pulumi commands under load take longer.
}, 1_800_000);
