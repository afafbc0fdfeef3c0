/**
 * The provider process ends with its engine: when the engine is killed (SIGKILL, nothing stops the
 * provider), the watch in `src/provider/lifetime.ts` exits it within a second or two, whether the
 * engine started it directly (`exec` from our launcher) or through a launcher shell that stays
 * between them: a `sh -c` command line, or a script run through its `#!/bin/sh` line as Pulumi's own
 * `pulumi-resource-pulumi-nodejs` is (its command name is then the script's, `pulumi-resource`, not
 * `sh`). Checked by process id.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import ts from "typescript";
import { afterAll, beforeAll, expect, test } from "vitest";

let dir: string;
let providerScript: string;
let launcherScript: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "pva-lifetime-"));
  const source = readFileSync(path.resolve(__dirname, "../../src/provider/lifetime.ts"), "utf8");
  const js = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS } }).outputText;
  writeFileSync(path.join(dir, "lifetime.js"), js);
  // A stand-in for @pulumi/pulumi/cmd/dynamic-provider/index.js: starts the watch, prints its pid,
  // and would otherwise live forever (as the gRPC server keeps the real one alive).
  mkdirSync(path.join(dir, "dynamic-provider"));
  providerScript = path.join(dir, "dynamic-provider", "index.js");
  writeFileSync(
    providerScript,
    `require(${JSON.stringify(path.join(dir, "lifetime.js"))}).exitWithEngine();\n` +
      "console.log(`provider ${process.pid}`);\nsetInterval(() => {}, 60_000);\n",
  );
  // Pulumi's stock launcher, as it is: a `#!/bin/sh` script that runs `node` without `exec`.
  launcherScript = path.join(dir, "pulumi-resource-pulumi-nodejs");
  writeFileSync(
    launcherScript,
    `#!/bin/sh\n${JSON.stringify(process.execPath)} ${JSON.stringify(providerScript)} $@\n`,
    { mode: 0o755 },
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

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

/** Starts an "engine" that launches the provider with `launch`, kills the engine, and returns the provider's pid. */
async function providerAfterEngineKilled(launch: Launch): Promise<{ pid: number; aliveBefore: boolean }> {
  const node = JSON.stringify(process.execPath);
  const [file, args] =
    launch === "a #!/bin/sh script"
      ? [launcherScript, ["127.0.0.1:1"]]
      : [
          "sh",
          [
            "-c",
            launch === "exec"
              ? `exec ${node} ${JSON.stringify(providerScript)} 127.0.0.1:1`
              : `${node} ${JSON.stringify(providerScript)} 127.0.0.1:1; true`,
          ],
        ];
  const engineCode = `require("node:child_process").spawn(${JSON.stringify(file)}, ${JSON.stringify(args)}, { stdio: "inherit" }); setInterval(() => {}, 60_000);`;
  const engine = spawn(process.execPath, ["-e", engineCode], { stdio: ["ignore", "pipe", "inherit"] });
  const pid = await new Promise<number>((resolve, reject) => {
    let out = "";
    engine.stdout.on("data", (b: Buffer) => {
      out += b.toString();
      const m = /provider (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    engine.once("exit", () => reject(new Error(`the engine ended first: ${out}`)));
  });
  await sleep(700);
  const aliveBefore = alive(pid);
  engine.kill("SIGKILL");
  return { pid, aliveBefore };
}

type Launch = "exec" | "sh -c" | "a #!/bin/sh script";

for (const launch of ["exec", "sh -c", "a #!/bin/sh script"] as const) {
  test(`the provider exits within 2 s of its engine's SIGKILL (launched by ${launch})`, async () => {
    const { pid, aliveBefore } = await providerAfterEngineKilled(launch);
    try {
      expect(aliveBefore).toBe(true);
      const t0 = performance.now();
      while (alive(pid) && performance.now() - t0 < 5_000) await sleep(50);
      expect(alive(pid)).toBe(false);
      expect(performance.now() - t0).toBeLessThan(2_000);
    } finally {
      if (alive(pid)) process.kill(pid, "SIGKILL");
    }
  });
}
