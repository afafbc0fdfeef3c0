/**
 * The toolchain setup.sh builds: the real Pulumi CLI at exactly the SDK's version, our Node.js
 * language host, and the dynamic-provider plugin, all offline.
 */
import { execFileSync, spawn } from "node:child_process";
import { appendFileSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { spawnPulumi, stillAlive } from "./reliability/support";
import { expectQuiet, PulumiProject, REPO_ROOT, tempDir, toolchainBin } from "./support/pulumi";

/**
 * Starts a plugin's Node.js process (`script`: the runner and its arguments) with or without the
 * preload and a compile cache of its own, waits for its port, and ends it as the engine does
 * (SIGINT): the signal that ended it and the number of files in its compile cache.
 */
async function startAndEnd(
  preload: boolean,
  script: string[],
): Promise<{ signal: string | null; cached: number }> {
  const cache = tempDir("compile-cache-");
  try {
    const child = spawn(
      process.execPath,
      [...(preload ? ["--require", path.join(REPO_ROOT, "toolchain/lazy-sdk.js")] : []), ...script],
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
    const version = pkg.devDependencies["@pulumi/pulumi"];
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
    const dir = tempDir("lazy-sdk-");
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
    const provider = [
      path.join(REPO_ROOT, "node_modules/@pulumi/pulumi/cmd/dynamic-provider/index.js"),
      "127.0.0.1:1",
    ];
    expect(await startAndEnd(false, provider)).toEqual({ signal: "SIGINT", cached: 0 });
    const { signal, cached } = await startAndEnd(true, provider);
    expect(signal).toBe("SIGINT");
    expect(cached).toBeGreaterThan(50);
  }, 60_000);
});

describe("policy packs: `pulumi preview --policy-pack` runs a Node.js pack through our language host", () => {
  // A pack as `pulumi policy new` makes one (PulumiPolicy.yaml, package.json, the PolicyPack), in
  // the repository's .tmp folder so that @pulumi/policy resolves from its node_modules. Its one
  // mandatory policy reads the stack's configuration and name, which reach the pack's process only
  // through the environment our host sets from the engine's ConfigureStack call.
  let pack: string;
  beforeAll(() => {
    pack = tempDir("policy-pack-");
    writeFileSync(path.join(pack, "PulumiPolicy.yaml"), "runtime: nodejs\n");
    writeFileSync(path.join(pack, "package.json"), JSON.stringify({ name: "tiny", version: "0.0.1" }));
    writeFileSync(
      path.join(pack, "index.js"),
      `const pulumi = require("@pulumi/pulumi");
const { PolicyPack } = require("@pulumi/policy");
new PolicyPack("tiny", {
  policies: [{
    name: "no-forbidden-names",
    description: "No resource name starts with the stack's forbiddenPrefix.",
    enforcementLevel: "mandatory",
    validateResource: (resource, reportViolation) => {
      const prefix = new pulumi.Config().require("forbiddenPrefix");
      if (resource.name.startsWith(prefix)) {
        reportViolation(\`\${resource.name} starts with \${prefix} on stack \${pulumi.getStack()}\`);
      }
    },
  }],
});
`,
    );
  });
  afterAll(() => rmSync(pack, { recursive: true, force: true }));

  /** Live processes running the pack (its folder is their last argument), as "pid command line". */
  function packProcesses(): string[] {
    const found: string[] = [];
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      let cmdline: string;
      try {
        cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      } catch {
        continue; // exited meanwhile
      }
      const args = cmdline.split("\0").filter((arg) => arg !== "");
      if (args.at(-1) === pack && stillAlive([Number(entry)]).length > 0) {
        found.push(`${entry} ${cmdline.replaceAll("\0", " ")}`);
      }
    }
    return found;
  }

  /** Waits until no process runs the pack (up to `ms`); the ones still running then. */
  async function packProcessesAfter(ms: number): Promise<string[]> {
    const deadline = Date.now() + ms;
    while (packProcesses().length > 0 && Date.now() < deadline) await sleep(100);
    return packProcesses();
  }

  /** Kills what a failed test left running. */
  function killPackProcesses(): void {
    for (const line of packProcesses()) process.kill(Number(line.split(" ")[0]), "SIGKILL");
  }

  const bucket = (name: string) =>
    `import * as pulumi from "@pulumi/pulumi";\nnew pulumi.ComponentResource("test:index:Bucket", "${name}", {});\n`;

  test("a mandatory violation fails the preview with the policy's message; a program within the policy previews; the pack's process ends with the preview", async () => {
    const project = await PulumiProject.create({
      program: bucket("public-assets"),
      config: { "e2e:forbiddenPrefix": "public-" },
    });
    try {
      const failed = await project.pulumi(["preview", "--policy-pack", pack], { allowFailure: true });
      expect(failed.code, failed.stdout + failed.stderr).not.toBe(0);
      expect(failed.stdout).toContain("[mandatory]  no-forbidden-names  (test:index:Bucket: public-assets)");
      expect(failed.stdout).toContain("public-assets starts with public- on stack test");
      expect(await packProcessesAfter(5_000)).toEqual([]);

      project.setProgram(bucket("assets"));
      const passed = await project.pulumi(["preview", "--policy-pack", pack]);
      expect(passed.stdout).toContain("✅ tiny@v0.0.1");
      expect(passed.stdout).not.toContain("no-forbidden-names");
      expectQuiet(passed);
      expect(await packProcessesAfter(5_000)).toEqual([]);
    } finally {
      killPackProcesses();
      project.cleanup();
    }
  }, 120_000);

  test("the pack's process, ended by SIGINT as our host ends it, writes Node's compile cache with the preload", async () => {
    // The runner as our host names it (its folder), the engine's address, the pack.
    const runner = [
      path.join(REPO_ROOT, "node_modules/@pulumi/pulumi/cmd/run-policy-pack"),
      "127.0.0.1:1",
      pack,
    ];
    expect(await startAndEnd(false, runner)).toEqual({ signal: "SIGINT", cached: 0 });
    const { signal, cached } = await startAndEnd(true, runner);
    expect(signal).toBe("SIGINT");
    expect(cached).toBeGreaterThan(50);
  }, 60_000);

  test("the pack's process ends when the engine is killed (SIGKILL) in the middle of a preview", async () => {
    // The program registers its resource (which the pack analyzes), then runs for a minute.
    const project = await PulumiProject.create({
      program: `${bucket("assets")}export const done = new Promise((resolve) => setTimeout(() => resolve(1), 60_000));\n`,
      config: { "e2e:forbiddenPrefix": "public-" },
    });
    const run = spawnPulumi(project, ["preview", "--policy-pack", pack]);
    try {
      const deadline = Date.now() + 60_000;
      while (!run.output().includes("test:index:Bucket assets") && Date.now() < deadline) await sleep(100);
      expect(run.output()).toContain("test:index:Bucket assets");
      expect(packProcesses()).toHaveLength(1);
      run.killCli();
      await run.done;
      expect(await packProcessesAfter(5_000)).toEqual([]);
    } finally {
      run.killGroup();
      killPackProcesses();
      project.cleanup();
    }
  }, 120_000);
});

describe("a provider written in Node.js (PulumiPlugin.yaml) runs through our language host", () => {
  test("`pulumi up` creates a resource of a provider the project names by path", async () => {
    const plugin = tempDir("provider-plugin-");
    writeFileSync(path.join(plugin, "PulumiPlugin.yaml"), "runtime: nodejs\n");
    writeFileSync(path.join(plugin, "package.json"), JSON.stringify({ name: "tiny", version: "0.0.1" }));
    writeFileSync(
      path.join(plugin, "index.js"),
      `require("@pulumi/pulumi/provider").main(
  { version: "0.0.1", create: async (_urn, inputs) => ({ id: \`thing-\${inputs.size}\`, outs: inputs }) },
  process.argv.slice(2),
);
`,
    );
    const project = await PulumiProject.create({
      program: `import * as pulumi from "@pulumi/pulumi";\nnew pulumi.CustomResource("tiny:index:Thing", "thing", { size: 3 });\n`,
    });
    try {
      appendFileSync(
        path.join(project.dir, "Pulumi.yaml"),
        `plugins:\n  providers:\n    - name: tiny\n      path: ${JSON.stringify(plugin)}\n`,
      );
      await project.up();
      const thing = project.deployment().resources?.find((r) => r.type === "tiny:index:Thing");
      expect(thing?.id).toBe("thing-3");
      expect(thing?.outputs).toEqual({ size: 3 });
    } finally {
      project.cleanup();
      rmSync(plugin, { recursive: true, force: true });
    }
  }, 120_000);
});
