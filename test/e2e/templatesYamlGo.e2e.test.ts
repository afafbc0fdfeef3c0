/**
 * The YAML and Go starter templates (templates/voice-agent-yaml, templates/voice-agent-go) as a user
 * starts from them: `pulumi new <template> --generate-only` makes the project (its name and
 * description in place, the template's own section gone), the plugin is installed from its packed
 * archive into the project's PULUMI_HOME (test/support/pluginPrograms.ts), the stack's two settings
 * name an emulator this file starts, and then the README's steps: for Go, the SDK taken from this
 * clone at the version it builds (`go mod edit -require=...@v<version> -replace=...`, `go mod tidy`,
 * as the README says before the SDK's first release); one `pulumi up`, and
 * `preview --expect-no-changes`. The service then holds the agent, its prompt
 * the template's prompt.md, published and live. In the Go project, the whole Go programs the docs
 * show then pass `go vet` against the same SDK.
 *
 * The Go half runs Pulumi's stock Go host (`pulumi-language-go`, ../shared/pulumi-stock): where it
 * or `go` is absent, as in a user's clone, it prints that it did not run; in CI that fails. The
 * host builds the program at each command; the builds share Go's cache with the toolchain's and the
 * Go e2e test's (no cgo, -trimpath).
 */
import { execFile, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { type Emulator, pluginStack, pluginVersion, serviceApi } from "../support/pluginPrograms";
import { type PulumiProject, pulumiEnvironment, REPO_ROOT, tempDir } from "../support/pulumi";
import { stockHostsOrSkip } from "../support/stock";

const SDK_MODULE = "github.com/pulumi-voice-agent/pulumi-voice-agent/sdk";

function run(file: string, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(file, args, { env: opts.env ?? process.env, cwd: opts.cwd }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/**
 * `pulumi new <template> --generate-only` into a fresh folder (removed after the file), its
 * name and description checked; returns the folder.
 */
async function generate(template: string, name: string, env: Record<string, string> = {}): Promise<string> {
  const work = tempDir("template-");
  cleanups.push(() => rmSync(work, { recursive: true, force: true }));
  const generated = path.join(work, name);
  mkdirSync(path.join(work, ".home"));
  const made = await run(
    "pulumi",
    [
      "new",
      path.join(REPO_ROOT, "templates", template),
      "--dir",
      generated,
      "--name",
      name,
      "--description",
      "Order support for the tea shop",
      "--generate-only",
      "--yes",
      "--non-interactive",
    ],
    // `pulumi new` loads the project's language host: the Go host's folder first on PATH for Go.
    { env: pulumiEnvironment({ PULUMI_HOME: path.join(work, ".home"), ...env }) },
  );
  expect(made.stderr).toBe("");
  expect(made.code).toBe(0);
  const project = readFileSync(path.join(generated, "Pulumi.yaml"), "utf8");
  expect(project).toMatch(new RegExp(`^name: ${name}\\ndescription: Order support for the tea shop\\n`));
  expect(project).not.toMatch(/^template:/m);
  expect(readFileSync(path.join(generated, "README.md"), "utf8")).toMatch(
    new RegExp(`^# ${name}\\n\\nOrder support for the tea shop\\n`),
  );
  return generated;
}

/** A stack of the generated project on the packed plugin and a fresh emulator, cleaned up after. */
async function stack(
  generated: string,
  env?: Record<string, string>,
): Promise<{ emu: Emulator; project: PulumiProject }> {
  const made = await pluginStack(generated, { passphrase: "templates-e2e", env });
  cleanups.push(async () => {
    made.project.cleanup();
    await made.emu.close();
  });
  return made;
}

/** What the service holds after the template's first `up`: the agent as the template declares it, live. */
async function expectDeployed(project: PulumiProject, emu: Emulator, template: string): Promise<void> {
  const api = serviceApi(() => emu.url);
  const out = await project.outputs();
  expect(out.liveVersion).toBe(0);
  const agent = await api("GET", `/v1/agents/${out.agentId}?version=live`);
  expect(agent).toMatchObject({
    name: "Order support",
    label: "1",
    is_live: true,
    greeting: { message: "Hello! How can I help you with your order today?" },
  });
  expect(agent.system_prompt).toBe(
    readFileSync(path.join(REPO_ROOT, "templates", template, "prompt.md"), "utf8"),
  );
  expect(agent.variables).toEqual(
    expect.arrayContaining([expect.objectContaining({ key: "order_id", default_value: "unknown" })]),
  );
  expect(out.dashboardUrl).toEqual(expect.stringContaining(out.agentId));
  expect((await api("GET", `/v1/agents/${out.agentId}`)).live_version).toBe(0);
}

describe("templates/voice-agent-yaml", () => {
  test("pulumi new, then the README's steps: up deploys the agent live; preview shows no change", async () => {
    const generated = await generate("voice-agent-yaml", "my-yaml-agents");
    // The plugin's download URL is named once, on the agent; the emulator line is in the README.
    expect(readFileSync(path.join(generated, "Pulumi.yaml"), "utf8")).toContain(
      "pluginDownloadURL: github://api.github.com/pulumi-voice-agent",
    );
    expect(readFileSync(path.join(generated, "README.md"), "utf8")).toContain("npx voice-agent-emulator");
    const { emu, project } = await stack(generated);
    await project.up();
    await project.preview({ expectNoChanges: true });
    await expectDeployed(project, emu, "voice-agent-yaml");
  }, 600_000);
});

const WHAT = "the Go template's end-to-end test (test/e2e/templatesYamlGo.e2e.test.ts)";
const hasGo = spawnSync("go", ["version"]).status === 0;
if (!hasGo && process.env.CI === "true") throw new Error(`${WHAT}: \`go\` not found, and CI must run it`);
if (!hasGo) console.log(`${WHAT}: did not run: \`go\` not found`);
const goBin = hasGo ? stockHostsOrSkip(["pulumi-language-go"], WHAT) : undefined;

describe.skipIf(!goBin)("templates/voice-agent-go", () => {
  test("pulumi new, the SDK from the clone, then the README's steps: up deploys the agent live; preview shows no change", async () => {
    const hostPath = { PATH: `${goBin}:${process.env.PATH}` };
    const generated = await generate("voice-agent-go", "my-go-agents", hostPath);
    expect(readFileSync(path.join(generated, "go.mod"), "utf8")).toMatch(/^module my-go-agents\n/);
    // Go builds as scripts/setup.sh and the Go e2e test build (no cgo, -trimpath): one build cache.
    const goEnv = { CGO_ENABLED: "0", GOFLAGS: "-trimpath -mod=mod -buildvcs=false" };
    const { emu, project } = await stack(generated, { ...hostPath, ...goEnv });
    // The README, before the SDK's first release: the SDK from a clone at the version it builds
    // (the plugin's, installed from its archive), then `go mod tidy`.
    const version = pluginVersion();
    for (const args of [
      [
        "mod",
        "edit",
        `-require=${SDK_MODULE}@v${version}`,
        `-replace=${SDK_MODULE}=${path.join(REPO_ROOT, "sdk")}`,
      ],
      ["mod", "tidy"],
    ]) {
      const done = await run("go", args, { cwd: project.dir, env: { ...process.env, ...goEnv } });
      expect(done.stderr.replace(/^go: (finding|downloading|found) .*\n/gm, "")).toBe("");
      expect(done.code).toBe(0);
    }
    expect(existsSync(path.join(project.dir, "go.sum"))).toBe(true);
    expect(readFileSync(path.join(project.dir, "go.mod"), "utf8")).toContain(`\t${SDK_MODULE} v${version}\n`);
    await project.up();
    await project.preview({ expectNoChanges: true });
    await expectDeployed(project, emu, "voice-agent-go");

    // The docs' whole Go programs (each resource's page, the overview, plugin.md) type-check against
    // the same SDK, in this module (its build cache warm): `go vet`, one package per program.
    const programs = readdirSync(path.join(REPO_ROOT, "docs"), { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".md"))
      .flatMap((f) =>
        [...readFileSync(path.join(REPO_ROOT, "docs", f), "utf8").matchAll(/^```go\n([\s\S]*?)^```$/gm)]
          .map((m) => m[1] as string)
          .filter((code) => /^(\/\/.*\n)*package main\n/.test(code))
          .map((code, i) => ({ dir: `${f.replace(/\W/g, "_")}_${i}`, code })),
      );
    expect(programs.length).toBeGreaterThan(6);
    for (const { dir, code } of programs) {
      mkdirSync(path.join(project.dir, "docs-programs", dir), { recursive: true });
      writeFileSync(path.join(project.dir, "docs-programs", dir, "main.go"), code);
    }
    const vet = await run("go", ["vet", "./docs-programs/..."], {
      cwd: project.dir,
      env: { ...process.env, ...goEnv },
    });
    expect(vet.stderr.replace(/^go: (finding|downloading|found) .*\n/gm, "")).toBe("");
    expect(vet.code).toBe(0);
  }, 900_000);
});
