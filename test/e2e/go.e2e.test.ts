/**
 * A Go program on the provider plugin, end to end through the real CLI and Pulumi's stock Go
 * language host (`pulumi-language-go` from ../shared/pulumi-stock, beside the CLI:
 * scripts/stock-host.sh), with the Go SDK generated from schema.json (sdk/go, `npm run plugin:sdk`)
 * and the plugin installed from its tarball. The program is docs/plugin.md's `main.go`, so the page
 * cannot drift from what runs: up, then preview and refresh with no change; a prompt change previews
 * the AgentVersion changing and goes live (the service holds the new prompt, live); the key is never
 * in the state; destroy.
 *
 * Where ../shared/pulumi-stock (or `go`) is absent, as in a user's clone, it prints that it did not
 * run; in CI (CI=true) that fails. The program is built once (`go build`, the Pulumi Go SDK from the
 * Go module proxy through the module cache) and run as a binary (the Go host's `binary` option), not
 * built anew by the host at every command.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { DEFAULT_API_KEY } from "../../src/emulator";
import {
  type Emulator,
  expectPromptChangeGoesLive,
  pluginStack,
  serviceApi,
  writeGoModule,
} from "../support/pluginPrograms";
import { filesOfPage, type PulumiProject } from "../support/pulumi";
import { stockHostsOrSkip } from "../support/stock";

let emu: Emulator;
let project: PulumiProject;

const WHAT = "the Go end-to-end test (test/e2e/go.e2e.test.ts)";
const hasGo = spawnSync("go", ["version"]).status === 0;
if (!hasGo && process.env.CI === "true") throw new Error(`${WHAT}: \`go\` not found, and CI must run it`);
if (!hasGo) console.log(`${WHAT}: did not run: \`go\` not found`);
const bin = hasGo ? stockHostsOrSkip(["pulumi-language-go"], WHAT) : undefined;

const api = serviceApi(() => emu.url);

/** The program's prompt (it names no tool or variable: the program declares none). */
const PROMPT = [
  "## Agent Purpose",
  "Help Acme customers track their orders and arrange returns.",
  "",
  "## Response Style",
  "Warm and brief. One question at a time.",
  "",
].join("\n");

/** The Go project: docs/plugin.md's main.go, its prompt.md, the SDK from sdk/ by `replace`. */
function writeProgram(dir: string): void {
  const main = filesOfPage("docs/plugin.md").get("main.go");
  if (!main) throw new Error("docs/plugin.md shows no `// main.go` block");
  writeFileSync(path.join(dir, "main.go"), main);
  writeFileSync(path.join(dir, "prompt.md"), PROMPT);
  writeGoModule(dir, "go-support-agent");
  writeFileSync(
    path.join(dir, "Pulumi.yaml"),
    [
      "name: go-support-agent",
      "description: The support agent in Go on the voice-agent plugin (docs/plugin.md).",
      "runtime:",
      "  name: go",
      "  options:",
      "    binary: ./go-support-agent",
      "",
    ].join("\n"),
  );
}

beforeAll(async () => {
  if (!bin) return;
  const source = mkdtempSync(path.join(tmpdir(), "go-source-"));
  try {
    writeProgram(source);
    // Our CLI with Pulumi's stock hosts beside it, Go's among them.
    ({ emu, project } = await pluginStack(source, {
      passphrase: "go-example",
      env: { PATH: `${bin}:${process.env.PATH}` },
    }));
  } finally {
    rmSync(source, { recursive: true, force: true });
  }
  const t0 = performance.now();
  // Built as scripts/setup.sh builds the Pulumi toolchain (no cgo, -trimpath), so that the Go
  // build cache it filled serves the packages both compile.
  execFileSync("go", ["build", "-trimpath", "-o", "go-support-agent", "."], {
    cwd: project.dir,
    env: { ...process.env, CGO_ENABLED: "0", GOFLAGS: "-mod=mod -buildvcs=false" },
    stdio: "pipe",
  });
  console.log(`${WHAT}: go build in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}, 900_000);

afterAll(async () => {
  project?.cleanup();
  await emu?.close();
});

describe.skipIf(!bin)("a Go program on the voice-agent plugin", () => {
  test("up, then preview and refresh with no change; the service holds it; the key is not in the state", async () => {
    const up = await project.upAndSettle();
    expect(up.stdout).not.toMatch(/warning/i);
    const outputs = await project.outputs();
    const agent = await api("GET", `/v1/agents/${outputs.agentId}`);
    expect(agent.name).toBe("Acme support (dev, Go)");
    expect(agent.system_prompt).toContain("## Agent Purpose");
    expect(agent.live_version).toBe(outputs.liveVersion);
    expect(outputs.widgetKeyPrefix).toEqual(expect.any(String));
    expect(await project.exportState()).not.toContain(DEFAULT_API_KEY);
  }, 300_000);

  test("a prompt change previews the AgentVersion changing, and goes live", async () => {
    await expectPromptChangeGoesLive(project, api);
  }, 300_000);

  test("destroy", async () => {
    await project.destroy();
    expect(project.deployment().resources ?? []).toEqual([]);
  }, 300_000);
});
