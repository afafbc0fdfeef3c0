/**
 * A team's own policy pack with our policies in it, exactly as docs/policy.md shows it ("Your team's
 * own pack, with our policies in it"): its own folder, its own `npm install` (the package from the
 * packed tarball), the page's `index.js`; a fresh project's preview fails on one of our policies and
 * on the team's, and a clean program deploys under it. And the shipped pack folder, copied out of
 * node_modules with its own install (as `pulumi policy publish` uploads it), runs on its own.
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { DEFAULT_API_KEY, type RunningEmulator, startEmulator } from "../../src/emulator";
import {
  blocksOfPage,
  filesOfPage,
  installTarball,
  PulumiProject,
  packTarball,
  tempDir,
} from "../support/pulumi";

// A credential that looks real to secretlint; not a live one.
const GITHUB_TOKEN = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";

const program = (language: string, prompt: string) => `
import * as va from "pulumi-voice-agent";
const agent = new va.Agent("support", {
  name: "Composed pack",
  systemPrompt: ${JSON.stringify(prompt)},
  greeting: { message: "Hello! This call is recorded." },
  language: { default: ${JSON.stringify(language)}, additional: [] },
  voice: { provider: "sarvam", voiceId: "meera" },
});
new va.AgentVersion("support-live", { agent });
`;

let emu: RunningEmulator;
let work: string;
let tarball: string;
let project: PulumiProject;
beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
  work = tempDir("composed-");
  tarball = path.join(work, packTarball(work));
  const app = path.join(work, "app");
  mkdirSync(app);
  installTarball(app, tarball);
  project = await PulumiProject.create({
    program: program("hi-IN", `## Agent Purpose\nHelp. Token ${GITHUB_TOKEN}`),
    base: app,
    config: { "voice-agent:baseUrl": emu.url },
    secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
  });
}, 300_000);
afterAll(async () => {
  await emu?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

const npm = (dir: string, args: string[]) =>
  execFileSync("npm", [...args, "--no-audit", "--no-fund", "--prefer-offline"], {
    cwd: dir,
    stdio: "ignore",
  });

test("the page's team pack runs our policies and its own, from its own folder", async () => {
  const team = path.join(work, "acme-voice-policy");
  mkdirSync(team);
  const steps = blocksOfPage("docs/policy.md", "sh").find((b) =>
    b.includes("mkdir acme-voice-policy"),
  ) as string;
  expect(steps).toContain("printf 'runtime: nodejs\\n' > PulumiPolicy.yaml");
  expect(steps).toContain("npm init -y && npm install @pulumi/policy @pulumi/pulumi pulumi-voice-agent");
  writeFileSync(path.join(team, "PulumiPolicy.yaml"), "runtime: nodejs\n");
  npm(team, ["init", "-y"]);
  // The package from this build's tarball instead of the registry.
  npm(team, ["install", "@pulumi/policy", "@pulumi/pulumi", tarball]);
  const index = filesOfPage("docs/policy.md").get("index.js");
  expect(index).toContain('require("pulumi-voice-agent/policy")');
  writeFileSync(path.join(team, "index.js"), index as string);

  const failed = await project.pulumi(["preview", "--policy-pack", team], { allowFailure: true });
  const text = `${failed.stdout}\n${failed.stderr}`;
  expect(failed.code).not.toBe(0);
  expect(text).toMatch(/\[mandatory\]\s+no-secrets-in-agent-text/);
  expect(text).toMatch(/\[mandatory\]\s+agent-language-en-in/);
  expect(text).toContain('Agent "support": language.default is hi-IN; use en-IN.');
  expect(text).toMatch(/acme-voice@v/);

  project.setProgram(program("en-IN", "## Agent Purpose\nHelp customers."));
  const up = await project.up({ args: ["--policy-pack", team] });
  expect(up.stdout).toMatch(/Policies:\s*\n\s*✅ acme-voice@v/);
  expect(up.stdout).not.toMatch(/\[(advisory|mandatory)\]/);
}, 300_000);

test("the shipped pack folder, copied out with its own install, runs on its own", async () => {
  const shipped = path.join(work, "voice-agent-policy");
  cpSync(path.join(project.dir, "..", "node_modules", "pulumi-voice-agent", "policy"), shipped, {
    recursive: true,
  });
  // Its package.json names the package's own version, which only the tarball has here.
  npm(shipped, ["install", tarball]);
  project.setProgram(program("en-IN", `## Agent Purpose\nHelp. Token ${GITHUB_TOKEN}`));
  const failed = await project.pulumi(["preview", "--policy-pack", shipped], { allowFailure: true });
  const text = `${failed.stdout}\n${failed.stderr}`;
  expect(failed.code).not.toBe(0);
  expect(text).toMatch(/pulumi-voice-agent@v\d+\.\d+\.\d+/);
  expect(text).toMatch(/\[mandatory\]\s+no-secrets-in-agent-text/);
}, 300_000);
