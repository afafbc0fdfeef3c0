/**
 * The packed package in a team's own project: on the newest `@pulumi/pulumi` in the registry it
 * brings no second copy of the SDK (the SDK is a peer dependency) and deploys, previews clean and
 * refreshes clean; and the README's quick install ("Use it in your repository", "Your first
 * agent"), its commands and files taken from the README as they stand, works as written.
 */
import { execFile, execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { DEFAULT_API_KEY, type RunningEmulator, startEmulator } from "../../src/emulator";
import { blocksOfPage, installTarball, PulumiProject, packTarball, tempDir } from "../support/pulumi";

let emu: RunningEmulator;
let work: string;
let tarball: string;
beforeAll(() => {
  work = tempDir("fresh-");
  tarball = path.join(work, packTarball(work));
});
beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
});
afterAll(async () => {
  await emu?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Every installed copy of `@pulumi/pulumi` under `dir`'s node_modules: its folder and version. */
function sdkCopies(dir: string): string[] {
  const found: string[] = [];
  const walk = (nodeModules: string) => {
    if (!existsSync(nodeModules)) return;
    for (const name of readdirSync(nodeModules)) {
      if (name.startsWith(".")) continue;
      const full = path.join(nodeModules, name);
      const packages = name.startsWith("@")
        ? readdirSync(full).map((n) => [`${name}/${n}`, path.join(full, n)] as const)
        : [[name, full] as const];
      for (const [pkg, folder] of packages) {
        if (pkg === "@pulumi/pulumi") {
          const version = JSON.parse(readFileSync(path.join(folder, "package.json"), "utf8")).version;
          found.push(`${path.relative(dir, folder)}@${version}`);
        }
        walk(path.join(folder, "node_modules"));
      }
    }
  };
  walk(path.join(dir, "node_modules"));
  return found;
}

/** Type-checks a program as a user's `tsc` would (strict, Node.js modules), with the tsc installed in `dir`. */
function typecheck(dir: string, file: string): string {
  const config = path.join(path.dirname(file), "tsconfig.json");
  writeFileSync(
    config,
    JSON.stringify({
      compilerOptions: { strict: true, module: "nodenext", target: "es2023", types: ["node"], noEmit: true },
      files: [path.basename(file)],
    }),
  );
  try {
    execFileSync(path.join(dir, "node_modules/.bin/tsc"), ["-p", config], { encoding: "utf8" });
    return "";
  } catch (err) {
    return String((err as { stdout?: string }).stdout ?? err);
  }
}

const program = `
import * as pulumi from "@pulumi/pulumi";
import * as va from "pulumi-voice-agent";

const kb = new va.KnowledgeBase("faq", { name: "Newest SDK FAQ", documents: [{ name: "hours", text: "Open 9 to 6." }] });
const agent = new va.Agent("support", {
  name: "Newest SDK agent",
  systemPrompt: "## Agent Purpose\\nHelp customers.",
  language: { default: "en-IN" },
  knowledgeBaseIds: [kb.knowledgeBaseId],
});
const version = new va.AgentVersion("support-live", { agent });
new va.Widget("site", { agentId: agent.agentId, allowedOrigins: ["https://www.example.com"] });
export const live = version.version;
export const stack = pulumi.getStack();
`;

describe("a project on the newest @pulumi/pulumi", () => {
  test("installs the package without a second SDK, and deploys, previews and refreshes clean", async () => {
    const latest = execFileSync("npm", ["view", "@pulumi/pulumi", "version"], { encoding: "utf8" }).trim();
    const dir = mkdtempSync(path.join(work, "newest-"));
    installTarball(dir, tarball, { pulumi: latest });
    expect(sdkCopies(dir)).toEqual([`node_modules/@pulumi/pulumi@${latest}`]);

    const project = await PulumiProject.create({
      program,
      base: dir,
      config: { "voice-agent:baseUrl": emu.url },
      secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
    });
    expect(typecheck(dir, path.join(project.dir, "index.ts"))).toBe("");
    await project.upAndSettle({ quiet: true });
    expect((await project.outputs()).live).toBe(0);
    await project.destroy();
  }, 600_000);
});

describe("the README's quick install", () => {
  test("its install lines, Pulumi.yaml and first agent deploy in an empty folder", async () => {
    const dir = mkdtempSync(path.join(work, "readme-"));
    const install = blocksOfPage("README.md", "sh")
      .flatMap((b) => b.split("\n"))
      .filter((line) => line.startsWith("npm install "));
    expect(install).toEqual([
      "npm install ../pulumi-voice-agent/pulumi-voice-agent-0.2.0.tgz @pulumi/pulumi",
      "npm install --save-dev typescript @types/node",
    ]);
    writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "my-voice-agents", private: true }));
    for (const line of install) {
      // The tarball `npm pack` made of this build, wherever it is; the rest as written.
      const args = line
        .split(" ")
        .slice(1)
        .map((a) => (a.endsWith(".tgz") ? tarball : a));
      execFileSync("npm", [...args, "--no-audit", "--no-fund", "--prefer-offline"], {
        cwd: dir,
        stdio: "ignore",
      });
    }
    expect(sdkCopies(dir)).toHaveLength(1);
    const manifest = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
    expect(Object.keys(manifest.dependencies).sort()).toEqual(["@pulumi/pulumi", "pulumi-voice-agent"]);

    const yaml = blocksOfPage("README.md", "yaml")[0] as string;
    expect(yaml).toMatch(/^name: voice-agents\nruntime:/);
    const firstAgent = blocksOfPage("README.md", "ts").find((b) => b.includes('new va.Agent("support"'));
    expect(firstAgent).toBeDefined();
    const source = path.join(dir, "source");
    mkdirSync(source);
    writeFileSync(path.join(source, "Pulumi.yaml"), yaml);
    writeFileSync(path.join(source, "index.ts"), firstAgent as string);

    // `pulumi stack init dev`, the two config lines, `pulumi up`.
    const project = await PulumiProject.fromDirectory(source, {
      stack: "dev",
      passphrase: "readme-e2e",
      base: dir,
      config: { "voice-agent:baseUrl": emu.url },
      secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
    });
    expect(typecheck(dir, path.join(project.dir, "index.ts"))).toBe("");
    await project.upAndSettle({ quiet: true });
    expect((await project.outputs()).live).toBe(0);

    // The drift alarm reads the service's URL and key from the stack: no VOICE_AGENT_* variable
    // (the project's environment sets them empty), run from the folder above the project.
    const refresh = (await project.pulumi(["refresh", "--preview-only", "--json"])).stdout;
    const folder = path.relative(dir, project.dir);
    // Not spawnSync: the emulator answers from this process.
    const diff = (args: string[]) =>
      new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
        const child = execFile(
          path.join(dir, "node_modules/.bin/voice-agent-diff"),
          args,
          { cwd: dir, env: project.env, encoding: "utf8" },
          (err, stdout, stderr) =>
            resolve({ status: err ? Number(err.code) : 0, stdout: String(stdout), stderr: String(stderr) }),
        );
        child.stdin?.end(refresh);
      });
    const drift = await diff(["--drift", "--stack", "dev", "--cwd", folder]);
    expect(drift.stderr).toBe("");
    expect(drift.status).toBe(0);
    expect(drift.stdout).toMatch(/^### Voice agents: drift of stack `dev`\n\nNo drift/);
    // Without --stack it says how to give the settings; a wrong stack, what Pulumi said; never the key.
    const without = await diff(["--drift"]);
    expect(without.status).toBe(1);
    expect(without.stderr).toMatch(/--drift asks the service: give --stack NAME/);
    const wrong = await diff(["--drift", "--stack", "nope", "--cwd", folder]);
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toMatch(
      /^voice-agent-diff: --drift: could not read the configuration of stack nope in e2e-\w+: /,
    );
    for (const r of [drift, without, wrong]) expect(`${r.stdout}${r.stderr}`).not.toContain(DEFAULT_API_KEY);
    await project.destroy();
  }, 600_000);
});
