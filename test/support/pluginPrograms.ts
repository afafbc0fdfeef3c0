/**
 * What the end-to-end tests of the provider plugin's languages (YAML, Go) share: a stack of a
 * program on the plugin installed from its tarball, the service's API as a test reads it, and the
 * prompt change every language must preview and put live the same way.
 */
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { expect } from "vitest";
import { DEFAULT_API_KEY, startEmulator } from "../../src/emulator";
import { PulumiProject, packedPlugin, REPO_ROOT, type RunResult } from "./pulumi";

export type Emulator = Awaited<ReturnType<typeof startEmulator>>;

/**
 * The plugin packed (`npm run plugin:pack`), an emulator, and a copy of the project `source` on the
 * stack `dev` whose settings name that emulator, with the plugin installed from its tarball
 * (`pulumi plugin install resource voice-agent <version> --file <it>`) into the project's
 * PULUMI_HOME. `env`: extra environment for every command.
 */
export async function pluginStack(
  source: string,
  opts: { passphrase: string; env?: Record<string, string> },
): Promise<{ emu: Emulator; project: PulumiProject }> {
  const tarball = packedPlugin();
  const version = pluginVersion();
  const emu = await startEmulator({ port: 0 });
  try {
    const project = await PulumiProject.fromDirectory(source, {
      stack: "dev",
      passphrase: opts.passphrase,
      config: { "voice-agent:baseUrl": emu.url },
      secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
      env: opts.env,
    });
    await project.pulumi(["plugin", "install", "resource", "voice-agent", version, "--file", tarball], {
      noStack: true,
    });
    return { emu, project };
  } catch (err) {
    await emu.close();
    throw err;
  }
}

/**
 * The plugin's version as `npm run plugin:pack` gives it (scripts/version.js: from git), the one a
 * program names: `pulumi plugin install` installs it, a Go program requires the SDK at it.
 */
export function pluginVersion(): string {
  const { version } = require(path.join(REPO_ROOT, "scripts", "version.js")) as { version: () => string };
  return version();
}

/** A request to the service at `base` with the emulator's default key; the answer parsed. */
export type ServiceApi = (method: string, at: string, body?: unknown) => Promise<any>;

export function serviceApi(base: () => string): ServiceApi {
  return async (method, at, body) => {
    const res = await fetch(`${base()}${at}`, {
      method,
      headers: { authorization: `Bearer ${DEFAULT_API_KEY}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${at}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
}

/**
 * A line added to the project's prompt.md previews the Agent `host` changing (the new text shown)
 * and the AgentVersion `live` updated in place (publishing), nothing replaced and the Widget
 * untouched; `up` then puts it live: the service holds the new prompt, and a newer version answers
 * calls. `beforeUp`: more checks of the previewed change, given the outputs before it and the preview. Returns the
 * preview.
 */
export async function expectPromptChangeGoesLive(
  project: PulumiProject,
  api: ServiceApi,
  beforeUp?: (before: Record<string, any>, preview: RunResult) => Promise<void>,
): Promise<RunResult> {
  const before = await project.outputs();
  const prompt = path.join(project.dir, "prompt.md");
  writeFileSync(prompt, `${readFileSync(prompt, "utf8")}\nAlways offer a callback.\n`);
  const preview = await project.preview();
  expect(preview.stdout).toMatch(
    /~ voice-agent:index:Agent: \(update\)[\s\S]*::host\][\s\S]*Always offer a callback/,
  );
  expect(preview.stdout).toMatch(/~ voice-agent:index:AgentVersion: \(update\)[\s\S]*::live\]/);
  expect(preview.stdout).not.toMatch(/replace|Widget/);
  await beforeUp?.(before, preview);
  await project.upAndSettle();
  const after = await project.outputs();
  expect(after.liveVersion).toBeGreaterThan(before.liveVersion);
  const agent = await api("GET", `/v1/agents/${after.agentId}`);
  expect(agent.live_version).toBe(after.liveVersion);
  expect(agent.system_prompt).toContain("Always offer a callback.");
  return preview;
}

/**
 * A Go module `name` in `dir` on the SDK of `sdk/go` (by `replace`), at the Go and Pulumi SDK
 * versions sdk/go.mod names, with the SDK module's checksums (they cover every module a program
 * needs). It requires the SDK at the plugin's version (`pluginVersion()`): the SDK carries no
 * version of its own, and Pulumi's Go host reports the module's version (`go list`) as the plugin
 * version the program needs, as it does for the tag `sdk/vX.Y.Z` a release makes.
 */
export function writeGoModule(dir: string, name: string, version = pluginVersion()): void {
  const sdkMod = readFileSync(path.join(REPO_ROOT, "sdk/go.mod"), "utf8");
  const goLine = /^go .*$/m.exec(sdkMod)?.[0] ?? "go 1.25";
  const pulumiSdk = /github\.com\/pulumi\/pulumi\/sdk\/v3 v\S+/.exec(sdkMod)?.[0];
  writeFileSync(
    path.join(dir, "go.mod"),
    [
      `module ${name}`,
      "",
      goLine,
      "",
      "require (",
      `\tgithub.com/pulumi-voice-agent/pulumi-voice-agent/sdk v${version}`,
      `\t${pulumiSdk}`,
      ")",
      "",
      `replace github.com/pulumi-voice-agent/pulumi-voice-agent/sdk => ${path.join(REPO_ROOT, "sdk")}`,
      "",
    ].join("\n"),
  );
  copyFileSync(path.join(REPO_ROOT, "sdk/go.sum"), path.join(dir, "go.sum"));
}
