/**
 * Secrets a YAML or Go program gives plainly stay secret, through the real CLI, Pulumi's YAML host
 * (under our toolchain, and under the stock lane's: the file is in both lanes) or its stock Go host,
 * and the plugin installed from its tarball: the provider's key set with `pulumi config set`
 * without `--secret`, staging's key written into `promote.apiKey` from plain config, and a secret
 * prompt the AgentVersion copies to compare with staging's. `pulumi stack export`, the preview (with its diff), the preview's JSON and
 * voice-agent-diff's report of it hold none of them in plain text; after `up`, preview and refresh
 * show no change.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { VoiceAgentClient } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { parsePreview, renderReport } from "../../src/gitops/report";
import { pluginVersion, writeGoModule } from "../support/pluginPrograms";
import { PulumiProject, packedPlugin, tempDir } from "../support/pulumi";
import { stockHostsOrSkip } from "../support/stock";

const PROD_KEY = "va_test_production_plain_key";
const STAGING_KEY = "va_test_staging_plain_key";
/** The prompt's secret line (the prompt is a secret in both stacks' config). */
const SECRET_LINE = "offer the 40% retention discount";
const PROMPT = `## Agent Purpose\nHelp customers with orders; ${SECRET_LINE}.`;
const PLAIN = [PROD_KEY, STAGING_KEY, SECRET_LINE];

/** The program: staging's has no `promote`. */
const program = (promote: boolean) => `name: secrets-${promote ? "production" : "staging"}
runtime: yaml
config:
  prompt:
    type: string
${promote ? "  stagingAgentId:\n    type: string\n  stagingKey:\n    type: string\n" : ""}resources:
  host:
    type: voice-agent:index:Agent
    properties:
      name: Support
      systemPrompt: \${prompt}
  live:
    type: voice-agent:index:AgentVersion
    properties:
      agent: \${host}
${promote ? "      promote:\n        from: ${stagingAgentId}\n        apiKey: ${stagingKey}\n        minCalls: 0\n" : ""}outputs:
  agentId: \${host.agentId}
  liveVersion: \${live.version}
`;

/** The production program in Go: the same resources, on the SDK of sdk/go. */
const GO_PROGRAM = `package main

import (
	"github.com/pulumi-voice-agent/pulumi-voice-agent/sdk/go/voiceagent"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"
)

func main() {
	pulumi.Run(func(ctx *pulumi.Context) error {
		cfg := config.New(ctx, "")
		host, err := voiceagent.NewAgent(ctx, "host", &voiceagent.AgentArgs{
			Name:         pulumi.String("Support"),
			SystemPrompt: cfg.RequireSecret("prompt"),
		})
		if err != nil {
			return err
		}
		live, err := voiceagent.NewAgentVersion(ctx, "live", &voiceagent.AgentVersionArgs{
			Agent: host,
			Promote: &voiceagent.PromoteArgs{
				From:     pulumi.String(cfg.Require("stagingAgentId")),
				ApiKey:   pulumi.String(cfg.Require("stagingKey")),
				MinCalls: pulumi.Float64(0),
			},
		})
		if err != nil {
			return err
		}
		ctx.Export("agentId", host.AgentId)
		ctx.Export("liveVersion", live.Version)
		return nil
	})
}
`;

/** Writes the Go project (run as a binary built once, as test/e2e/go.e2e.test.ts runs its own) into `dir`. */
function writeGoProgram(dir: string): void {
  writeFileSync(path.join(dir, "main.go"), GO_PROGRAM);
  writeGoModule(dir, "secrets-production");
  writeFileSync(
    path.join(dir, "Pulumi.yaml"),
    "name: secrets-production-go\nruntime:\n  name: go\n  options:\n    binary: ./secrets-production\n",
  );
}

const GO_WHAT = "the Go case of test/e2e/secrets.e2e.test.ts";
const hasGo = spawnSync("go", ["version"]).status === 0;
if (!hasGo && process.env.CI === "true") throw new Error(`${GO_WHAT}: \`go\` not found, and CI must run it`);
if (!hasGo) console.log(`${GO_WHAT}: did not run: \`go\` not found`);
/** Our CLI with Pulumi's stock hosts beside it, Go's among them. */
const goHosts = hasGo ? stockHostsOrSkip(["pulumi-language-go"], GO_WHAT) : undefined;

let emu: RunningEmulator;
/** Staging's agent, which production promotes from. */
let stagingAgent: string;
const sources: string[] = [];
const projects: PulumiProject[] = [];

/**
 * A stack `dev` of the YAML program (with `go`, the hosts' folder: the Go program, promoting), the
 * plugin installed from its tarball, the key set without `--secret`.
 */
async function stack(
  promote: boolean,
  key: string,
  config: Record<string, string> = {},
  go?: string,
): Promise<PulumiProject> {
  const source = tempDir("secrets-src-");
  sources.push(source);
  if (go) writeGoProgram(source);
  else writeFileSync(path.join(source, "Pulumi.yaml"), program(promote));
  const project = await PulumiProject.fromDirectory(source, {
    stack: "dev",
    passphrase: "secrets-e2e",
    config: { "voice-agent:baseUrl": emu.url, "voice-agent:apiKey": key, ...config },
    secrets: { prompt: PROMPT },
    ...(go ? { env: { PATH: `${go}:${process.env.PATH}` } } : {}),
  });
  if (go) {
    execFileSync("go", ["build", "-trimpath", "-o", "secrets-production", "."], {
      cwd: project.dir,
      env: { ...process.env, CGO_ENABLED: "0", GOFLAGS: "-mod=mod -buildvcs=false" },
      stdio: "pipe",
    });
  }
  projects.push(project);
  // The build's version (scripts/version.js): the one the archive carries and a Go program's go.mod asks for.
  await project.pulumi(
    ["plugin", "install", "resource", "voice-agent", pluginVersion(), "--file", packedPlugin()],
    {
      noStack: true,
    },
  );
  return project;
}

/** What `text` shows in plain text of the values that must stay secret. */
const leaked = (text: string): string[] => PLAIN.filter((v) => text.includes(v));

beforeAll(async () => {
  emu = await startEmulator({
    port: 0,
    workspaces: [
      { name: "production", key: PROD_KEY },
      { name: "staging", key: STAGING_KEY },
    ],
  });
}, 60_000);

afterAll(async () => {
  for (const p of projects) {
    await p.destroy({ allowFailure: true });
    p.cleanup();
  }
  for (const s of sources) rmSync(s, { recursive: true, force: true });
  await emu?.close();
}, 240_000);

describe("secrets given plainly to a YAML or Go program stay secret", () => {
  test("the key set without --secret, staging's key in promote and a secret prompt: nowhere in plain text in the state, the preview or the report", async () => {
    const staging = await stack(false, STAGING_KEY);
    await staging.upAndSettle();
    stagingAgent = (await staging.outputs()).agentId as string;
    expect(leaked(await staging.exportState())).toEqual([]);

    await expectNoPlainSecrets(
      await stack(true, PROD_KEY, { stagingAgentId: stagingAgent, stagingKey: STAGING_KEY }),
    );
  }, 600_000);

  test.skipIf(!goHosts)(
    "the same from a Go program: nowhere in plain text in the state, the preview or the report; a rollback made in the dashboard shows at refresh until an up records it",
    async () => {
      // Another workspace's agents are its own: the key is production's, as above.
      const config = { stagingAgentId: stagingAgent, stagingKey: STAGING_KEY };
      const prod = await stack(true, PROD_KEY, config, goHosts);
      await expectNoPlainSecrets(prod);

      // The agent taken off air in the dashboard: Pulumi's drift check sees it until an `up` records
      // it; `up --refresh` keeps it off air (its preview says so); then preview and refresh are quiet.
      const { agentId, liveVersion } = await prod.outputs();
      const client = new VoiceAgentClient({ baseUrl: emu.url, apiKey: PROD_KEY });
      const row = await client.versions.activate(agentId as string, null);
      const seen = await prod.refresh({ expectNoChanges: true, allowFailure: true });
      expect(seen.code, seen.stdout).not.toBe(0);
      const up = await prod.pulumi(["up", "--yes", "--refresh"]);
      expect(`${up.stdout}${up.stderr}`).toContain(
        `version ${liveVersion} stays off air: taken off air at ${row.at} (the agent is off air)`,
      );
      expect((await client.agents.get(agentId as string)).live_version).toBeNull();
      await prod.preview({ expectNoChanges: true });
      await prod.refresh({ expectNoChanges: true });
      expect(leaked(await prod.exportState())).toEqual([]);
    },
    600_000,
  );
});

/**
 * Production's preview (with its diff), its JSON and voice-agent-diff's report of it, then `up`
 * (no change after it at preview and refresh) and `pulumi stack export`: none holds a secret in
 * plain text, and the export with `--show-secrets` holds each.
 */
async function expectNoPlainSecrets(prod: PulumiProject): Promise<void> {
  // The preview of the create, with its diff, and its JSON read by voice-agent-diff.
  const preview = await prod.preview();
  expect(preview.stdout).toContain("voice-agent:index:AgentVersion");
  expect(leaked(`${preview.stdout}\n${preview.stderr}`)).toEqual([]);
  const json = JSON.parse((await prod.pulumi(["preview", "--json"])).stdout);
  // Its `config` echoes the stack's configuration as set (plain, as in Pulumi.dev.yaml): the rest
  // (steps, diagnostics) is what the engine made of it.
  expect(Object.keys(json.config)).toContain("voice-agent:apiKey");
  expect(leaked(JSON.stringify({ ...json, config: undefined }))).toEqual([]);
  const report = renderReport(parsePreview(json));
  expect(report).toContain(stagingAgent);
  expect(leaked(report)).toEqual([]);

  await prod.upAndSettle();
  const outputs = await prod.outputs();
  const agent = (await (
    await fetch(`${emu.url}/v1/agents/${outputs.agentId}`, {
      headers: { authorization: `Bearer ${PROD_KEY}` },
    })
  ).json()) as { live_version: number };
  expect(agent.live_version).toBe(outputs.liveVersion);
  const state = await prod.exportState();
  expect(leaked(state)).toEqual([]);
  // They are there, as secrets: the export with --show-secrets holds each.
  expect(leaked(await prod.exportState(true)).sort()).toEqual([...PLAIN].sort());
}
