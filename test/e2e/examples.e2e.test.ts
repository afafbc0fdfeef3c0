/**
 * Every example under examples/ through the real Pulumi CLI against the emulator: up, no-change
 * preview and refresh, the example's own walkthrough; destroy where the example shows what it
 * leaves behind (an agent off air, a widget paused).
 *
 * With RECORD_PREVIEWS=1 the `pulumi preview --json` documents of these runs are written to
 * test/fixtures/previews/, where the pull-request report's tests read them.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { VoiceAgentClient } from "../../src/client";
import { DEFAULT_API_KEY, startEmulator } from "../../src/emulator";
import { findReusedVersions, parsePreview } from "../../src/gitops/report";
import { flatLayout } from "../../src/resources/agentVersion/layout";
import { traffic } from "../support/control";
import { installedPolicyPack, PulumiProject, REPO_ROOT } from "../support/pulumi";

type Emulator = Awaited<ReturnType<typeof startEmulator>>;
let emu: Emulator;
const EXAMPLES = path.join(REPO_ROOT, "examples");
const FIXTURES = path.join(REPO_ROOT, "test/fixtures/previews");

async function api(pathname: string): Promise<any> {
  const res = await fetch(`${emu.url}${pathname}`, {
    headers: { authorization: `Bearer ${DEFAULT_API_KEY}` },
  });
  expect(res.status).toBe(200);
  return res.json();
}

/** Records `pulumi preview --json` for the report's tests when RECORD_PREVIEWS is set. */
async function record(p: PulumiProject, name: string): Promise<void> {
  if (!process.env.RECORD_PREVIEWS) return;
  const { stdout } = await p.pulumi(["preview", "--json"]);
  mkdirSync(FIXTURES, { recursive: true });
  writeFileSync(path.join(FIXTURES, `${name}.json`), stdout.replaceAll(emu.url, "http://127.0.0.1:8787"));
}

beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
});
afterAll(async () => {
  await emu?.close();
});

describe("examples", () => {
  test("support-agent: dev and prod stacks from their own Pulumi.<stack>.yaml", async () => {
    const config = { "voice-agent:baseUrl": emu.url };
    const dev = await PulumiProject.fromDirectory(path.join(EXAMPLES, "support-agent"), {
      stack: "dev",
      passphrase: "local-example",
      config,
    });
    try {
      // Prod is promoted from dev (Pulumi.prod.yaml): dev's version has just gone live, so the soak
      // and the calls asked for are lowered here (test/e2e/promote.e2e.test.ts holds prod back on
      // them); its rate needs calls to measure: dev takes three callers below.
      const prod = await dev.withStack("prod", {
        ...config,
        "support-agent:promoteSoakMinutes": "0",
        "support-agent:promoteMinCalls": "2",
      });
      await record(dev, "support-agent-create");
      await dev.upAndSettle({ quiet: true });
      // Each resource records the program's own line as its source position, and a trace of the
      // program's frames only: none of the package's, of ts-node's or of Pulumi's runner
      // (src/resources/registrationTrace.ts). The example makes both at its top level.
      const recorded = (dev.deployment().resources ?? []).filter((r) => r.type.includes("/voice-agent:"));
      expect(recorded.map((r) => r.type.split(":").pop()).sort()).toEqual(["Agent", "AgentVersion"]);
      for (const r of recorded) {
        expect(r.sourcePosition, r.urn).toMatch(/^project:\/\/\/index\.ts#\d+,\d+$/);
        expect(
          r.stackTrace?.map((f) => f.sourcePosition),
          r.urn,
        ).toEqual([r.sourcePosition]);
      }
      const devId = (await dev.outputs()).agentId as string;
      const callers = new Set((await traffic(emu, { agent_id: devId, count: 3 })).calls.map((c) => c.id));
      for (let i = 0; i < 100; i++) {
        const recent = (await api("/v1/calls?limit=10")).data as { id: string; custom_analysis: unknown }[];
        if (recent.filter((c) => callers.has(c.id) && c.custom_analysis !== null).length === callers.size)
          break;
        await new Promise((r) => setTimeout(r, 100));
      }
      // Prod is deployed with the package's policy pack (as a user's project has it, from the
      // installed tarball), as its program says, and passes it clean.
      const prodUp = await prod.upAndSettle({
        quiet: true,
        upArgs: ["--policy-pack", installedPolicyPack()],
      });
      expect(prodUp.stdout).toMatch(/Policies:\s*\n\s*✅ pulumi-voice-agent@v/);
      expect(prodUp.stdout).not.toMatch(/\[(advisory|mandatory)\]/);
      await record(dev, "support-agent-no-change");

      const devAgent = await api(`/v1/agents/${(await dev.outputs()).agentId}?version=live`);
      const prodAgent = await api(`/v1/agents/${(await prod.outputs()).agentId}?version=live`);
      expect(devAgent.name).toBe("Acme support (dev)");
      expect(devAgent.voice.voice_id).toBe("meera");
      expect(devAgent.numbers.inbound_phone).toBe("+918065550101");
      expect(devAgent.label).toBe("dev");
      expect(prodAgent.voice.provider).toBe("cartesia");
      expect(prodAgent.numbers.inbound_phone).toBe("+918065550102");
      expect(prodAgent.label).toBe("2026.11.1");
      expect(prodAgent.call.recording_enabled).toBe(true);
      expect(prodAgent.system_prompt).toBe(devAgent.system_prompt);
      expect((await prod.outputs()).promotedFrom).toMatchObject({
        fromAgentId: devAgent.id,
        fromVersion: 0,
        calls: 3,
        rates: [{ analysis: "Default Analysis/User Sentiment", measured: 3, share: 0 }],
      });
      // Prod watches its version after go-live (Pulumi.prod.yaml `watch: true`); dev does not.
      const watched = (s: typeof prod) =>
        s.deployment().resources?.find((r) => r.type.endsWith(":AgentVersion"))?.inputs?.watch;
      expect(watched(prod)).toMatchObject({
        rates: [{ atMost: 0.2 }, { status: ["failed", "no_answer"] }],
        minCalls: 30,
      });
      expect(watched(dev)).toBeUndefined();
      expect((await prod.outputs()).rolledBack).toBeNull();
      for (const stack of [dev, prod]) expect(await stack.exportState(true)).not.toContain(DEFAULT_API_KEY);
      // Prod went live after its test call, pinned to the version, passed; dev has no test line.
      const prodOut = await prod.outputs();
      // (The state keeps it in the AgentVersion's outcome, `__outcome`: layout.ts.)
      const versionState = prod
        .deployment()
        .resources?.find((r) => r.type.endsWith(":AgentVersion"))?.outputs;
      const verification: any = versionState && flatLayout(versionState).verification;
      expect(verification).toMatchObject({
        version: prodOut.liveVersion,
        passed: true,
        calls: [{ toNumber: "+918065550199", status: "completed", passed: true }],
      });
      expect(prodOut.testCalls).toEqual([verification.calls[0].id]);
      const testCall = await api(`/v1/calls/${prodOut.testCalls[0]}`);
      expect(testCall).toMatchObject({
        agent_id: prodAgent.id,
        agent_version: prodOut.liveVersion,
        origin: "api",
        variables: { order_id: "TEST-1001" },
      });
      expect((await dev.outputs()).testCalls).toEqual([]);

      // A prompt change: the Agent updates, the AgentVersion updates in place to a newly published version.
      const prompt = path.join(dev.dir, "prompt.md");
      writeFileSync(
        prompt,
        readFileSync(prompt, "utf8").replace("arrange returns", "arrange returns and exchanges"),
      );
      await record(dev, "support-agent-prompt-change");
      await record(prod, "support-agent-prod-prompt-change");

      await dev.destroy();
      expect((await api(`/v1/agents/${devAgent.id}`)).live_version).toBeNull();
    } finally {
      dev.cleanup();
    }
  }, 600_000);

  /** An example with no stack file of its own: config set on a fresh stack `dev`. */
  async function fresh(name: string, config: Record<string, string> = {}): Promise<PulumiProject> {
    const p = await PulumiProject.fromDirectory(path.join(EXAMPLES, name), {
      stack: "dev",
      passphrase: "local-example",
      config: { "voice-agent:baseUrl": emu.url, ...config },
      secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
    });
    return p;
  }

  test("widget-knowledge: knowledge bases, analysis groups and the widget, key rotation as a secret", async () => {
    const p = await fresh("widget-knowledge");
    try {
      await p.upAndSettle({ quiet: true });
      const out = await p.outputs();
      const agent = await api(`/v1/agents/${out.agentId}?version=live`);
      expect(agent.knowledge_base_ids).toHaveLength(2);
      expect(agent.analysis_group_ids).toHaveLength(2);
      expect(out.widgetKey.startsWith(out.widgetKeyPrefix)).toBe(true);
      expect(await p.exportState(false)).not.toContain(out.widgetKey);

      await p.pulumi(["config", "set", "widgetKeyVersion", "2"]);
      await p.upAndSettle({ quiet: true });
      const rotated = await p.outputs();
      expect(rotated.widgetKey).not.toBe(out.widgetKey);
      expect(await p.exportState(false)).not.toContain(rotated.widgetKey);
      expect(await p.exportState(true)).toContain(rotated.widgetKey);

      await p.destroy();
      expect((await api(`/v1/agents/${out.agentId}/widget`)).status).toBe("paused");
    } finally {
      p.cleanup();
    }
  }, 600_000);

  test("voice-lookup: the voice comes from the catalogue for the configured language", async () => {
    const p = await fresh("voice-lookup", { "voice-lookup:language": "hi-IN" });
    try {
      await p.upAndSettle({ quiet: true });
      const out = await p.outputs();
      const offered = await api("/v1/voices?provider=sarvam&language=hi-IN");
      expect(offered.map((v: any) => v.voice_id)).toContain(out.chosenVoice);
      const agent = await api(`/v1/agents/${out.agentId}?version=live`);
      expect(agent.voice.voice_id).toBe(out.chosenVoice);
      expect(agent.model.model).toBe(out.chosenModel);
    } finally {
      p.cleanup();
    }
  }, 600_000);

  test("rollback: publish, change, revert, pin", async () => {
    const p = await PulumiProject.fromDirectory(path.join(EXAMPLES, "rollback"), {
      stack: "dev",
      passphrase: "local-example",
      config: { "voice-agent:baseUrl": emu.url },
      secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
    });
    try {
      const prompt = path.join(p.dir, "prompt.md");
      const original = readFileSync(prompt, "utf8");

      await p.upAndSettle({ quiet: true });
      expect(await p.outputs()).toMatchObject({
        liveVersion: 0,
        origin: "published",
        activation: "activate",
      });

      writeFileSync(prompt, `${original}Ask about dietary needs.\n`);
      await p.upAndSettle({ quiet: true });
      expect(await p.outputs()).toMatchObject({ liveVersion: 1, origin: "published" });

      writeFileSync(prompt, original); // git revert
      await record(p, "rollback-revert");
      // The pull-request report can tell which published version the revert brings back.
      const preview = parsePreview(JSON.parse((await p.pulumi(["preview", "--json"])).stdout));
      const reused = await findReusedVersions(
        preview,
        new VoiceAgentClient({ baseUrl: emu.url, apiKey: DEFAULT_API_KEY }),
      );
      expect([...reused.values()]).toEqual([0]);
      await p.upAndSettle({ quiet: true });
      const out = await p.outputs();
      expect(out).toMatchObject({ liveVersion: 0, origin: "reused", activation: "rollback" });
      const history = await api(`/v1/agents/${out.agentId}/activations`);
      expect(history.data[0]).toMatchObject({ action: "rollback", version: 0, previous_version: 1 });

      await p.pulumi(["config", "set", "pinVersion", "1"]);
      await p.upAndSettle({ quiet: true });
      expect(await p.outputs()).toMatchObject({ liveVersion: 1, origin: "pinned" });
      await p.pulumi(["config", "rm", "pinVersion"]);
      await p.upAndSettle({ quiet: true });
      expect(await p.outputs()).toMatchObject({ liveVersion: 0, origin: "reused" });

      // Label only: an in-place update of the published version.
      await p.pulumi(["config", "set", "release", "2026.11.2"]);
      await record(p, "rollback-label");
      await p.upAndSettle({ quiet: true });

      // Removing the program's resources: the preview shows the deletions.
      p.setProgram("export {};\n");
      await record(p, "rollback-delete");
    } finally {
      p.cleanup();
    }
  }, 600_000);
});
