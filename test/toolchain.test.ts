/**
 * The toolchain setup.sh builds: the real Pulumi CLI at exactly the SDK's version, our Node.js
 * language host, and the dynamic-provider plugin, all offline.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, test } from "vitest";
import { REPO_ROOT, toolchainBin } from "./support/pulumi";

describe("toolchain", () => {
  test("`pulumi version` prints the version of the installed @pulumi/pulumi", () => {
    const sdk = JSON.parse(
      readFileSync(path.join(REPO_ROOT, "node_modules/@pulumi/pulumi/package.json"), "utf8"),
    );
    const cli = execFileSync(path.join(toolchainBin(), "pulumi"), ["version"], { encoding: "utf8" }).trim();
    expect(cli).toBe(`v${sdk.version}`);
  });

  test("the language host and the dynamic-provider plugin sit beside the CLI", () => {
    for (const bin of ["pulumi-language-nodejs", "pulumi-resource-pulumi-nodejs", "lazy-sdk.js"]) {
      expect(existsSync(path.join(toolchainBin(), bin))).toBe(true);
    }
  });

  test("the Go toolchain module pins the same Pulumi version as package.json", () => {
    const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));
    const gomod = readFileSync(path.join(REPO_ROOT, "toolchain/go.mod"), "utf8");
    const version = pkg.dependencies["@pulumi/pulumi"];
    expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(gomod).toContain(`github.com/pulumi/pulumi/pkg/v3 v${version}`);
    expect(gomod).toContain(`github.com/pulumi/pulumi/sdk/v3 v${version}`);
  });
});

describe("lazy-sdk.js: the SDK's rarely used modules load on first use", () => {
  /** Runs `code` in a Node.js process of this repository, with or without the preload; its JSON output. */
  function run(code: string, preload: boolean): Record<string, unknown> {
    const out = execFileSync(
      process.execPath,
      [...(preload ? ["--require", path.join(REPO_ROOT, "toolchain/lazy-sdk.js")] : []), "-e", code],
      { cwd: REPO_ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
    );
    return JSON.parse(out.trim().split("\n").pop() as string);
  }
  const loaded = `const loaded = (part) => Object.keys(require.cache).some((f) => f.includes(part));`;

  test("a program's and a provider's start load neither the closure serializer nor OpenTelemetry's SDK", () => {
    const code = `${loaded}
require("@pulumi/pulumi");
require("@pulumi/pulumi/cmd/run/tracing");
console.log(JSON.stringify({
  closure: loaded("runtime/closure/serializeClosure"),
  typescript: loaded("node_modules/typescript/"),
  otel: loaded("@opentelemetry/sdk-trace-node"),
}));`;
    expect(run(code, false)).toEqual({ closure: true, typescript: true, otel: true });
    expect(run(code, true)).toEqual({ closure: false, typescript: false, otel: false });
  });

  test("what they provide works as before: serializing a function, starting and stopping tracing", () => {
    const code = `${loaded}
const pulumi = require("@pulumi/pulumi");
const tracing = require("@pulumi/pulumi/cmd/run/tracing");
(async () => {
  const answer = 42;
  const serialized = await pulumi.runtime.serializeFunction(() => answer);
  const handler = require("require-from-string")(serialized.text).handler;
  tracing.start("http://127.0.0.1:9/api/v2/spans");
  const span = tracing.newSpan("lazy-sdk-test");
  const recording = span.isRecording();
  span.end();
  tracing.stop();
  console.log(JSON.stringify({
    result: handler(),
    paths: typeof (await pulumi.runtime.computeCodePaths()).size,
    recording,
    otel: loaded("@opentelemetry/sdk-trace-node"),
  }));
})();`;
    const expected = { result: 42, paths: "number", recording: true, otel: true };
    expect(run(code, false)).toEqual(expected);
    expect(run(code, true)).toEqual(expected);
  }, 60_000);

  test("the runner starts no debugger session; the serializer still names the file of a function it cannot serialize", () => {
    // A module of the program, loaded after the runner's start and before any serialization.
    const dir = mkdtempSync(path.join(REPO_ROOT, ".tmp", "lazy-sdk-"));
    try {
      writeFileSync(
        path.join(dir, "program.js"),
        "function* numbers() { yield 1; }\nconst it = numbers();\nexports.next = () => it.next();\n",
      );
      const code = `${loaded}
const Module = require("node:module");
const path = require("node:path");
// What cmd/run/index.js does before the program: wait for runtime/closure/v8Hooks to be ready.
const runnerFile = require.resolve("@pulumi/pulumi/cmd/run/index.js");
const runner = new Module(runnerFile, null);
runner.filename = runnerFile;
runner.paths = Module._nodeModulePaths(path.dirname(runnerFile));
(async () => {
  await runner.require("../../runtime/closure/v8Hooks").isInitializedAsync();
  const debuggerAtStart = loaded("runtime/closure/v8Hooks.js");
  const pulumi = require("@pulumi/pulumi");
  const { next } = require(${JSON.stringify(path.join(dir, "program.js"))});
  const error = await pulumi.runtime.serializeFunction(next).then(() => "", (e) => e.message);
  console.log(JSON.stringify({ debuggerAtStart, error: error.split("\\n")[0] }));
})();`;
      const error = "Error serializing '() => it.next()': program.js(3,15)";
      expect(run(code, false)).toEqual({ debuggerAtStart: true, error });
      expect(run(code, true)).toEqual({ debuggerAtStart: false, error });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  test("the dynamic-provider process writes Node's compile cache when the engine ends it (SIGINT), and still ends by that signal", async () => {
    /** Starts the provider as the plugin script does, waits for its port, ends it as the engine does. */
    async function startAndEnd(preload: boolean): Promise<{ signal: string | null; cached: number }> {
      const cache = mkdtempSync(path.join(REPO_ROOT, ".tmp", "compile-cache-"));
      try {
        const child = spawn(
          process.execPath,
          [
            ...(preload ? ["--require", path.join(REPO_ROOT, "toolchain/lazy-sdk.js")] : []),
            path.join(REPO_ROOT, "node_modules/@pulumi/pulumi/cmd/dynamic-provider/index.js"),
            "127.0.0.1:1",
          ],
          { env: { ...process.env, NODE_COMPILE_CACHE: cache }, stdio: ["ignore", "pipe", "inherit"] },
        );
        const ended = new Promise<string | null>((resolve) =>
          child.on("close", (_code, signal) => resolve(signal)),
        );
        await new Promise<void>((resolve) => child.stdout?.once("data", () => resolve()));
        child.kill("SIGINT");
        const signal = await ended;
        const cached = readdirSync(cache, { recursive: true, withFileTypes: true }).filter((e) =>
          e.isFile(),
        ).length;
        return { signal, cached };
      } finally {
        rmSync(cache, { recursive: true, force: true });
      }
    }
    expect(await startAndEnd(false)).toEqual({ signal: "SIGINT", cached: 0 });
    const { signal, cached } = await startAndEnd(true);
    expect(signal).toBe("SIGINT");
    expect(cached).toBeGreaterThan(50);
  }, 60_000);
});
