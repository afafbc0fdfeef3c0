/**
 * End to end through the real Pulumi CLI against the emulator: an agent and its version, from
 * create and go-live through prompt changes, revert, drift, conflicts, label edits, adoption and
 * destroy. After every `up`: `preview --expect-no-changes` and `refresh --expect-no-changes`.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { DEFAULT_API_KEY, startEmulator } from "../../src/emulator";
import { clearRequestLog, requestLog, retireModel } from "../support/control";
import { PulumiProject } from "../support/pulumi";

type Emulator = Awaited<ReturnType<typeof startEmulator>>;
let emu: Emulator;

async function api(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<any> {
  const res = await fetch(`${emu.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${DEFAULT_API_KEY}`, "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

interface ProgramOptions {
  prompt: string;
  label?: string;
  pinned?: number;
  adoptId?: string;
  full?: boolean;
}

/** The program under test: one agent and its live version. */
function program(o: ProgramOptions): string {
  const full = `
    greeting: { message: "Namaste! How can I help?" },
    language: { default: "en-IN", additional: ["hi-IN"] },
    model: { model: "gpt-4o-mini", temperature: 0, maxTokens: 256 },
    conversation: { responseEagerness: 0.75, interruptionSensitivity: 0.4, silenceReminder: { enabled: true, seconds: 20 } },
    call: { maxDurationMinutes: 15, recordingEnabled: false },
    inbound: { fallbackMessage: { mode: "custom", text: "Please call back later." } },
    builtinTools: {
      endCall: { enabled: true, message: { mode: "custom", text: "Goodbye!" } },
      holdCall: { enabled: true, maxSeconds: 60, followUpSeconds: 20 },
      transferCall: { enabled: true, numbers: [{ number: "+91 98000 00001", timezone: "Asia/Kolkata", startHour: 9, endHour: 18 }] },
    },
    variables: [{ key: "order_id", defaultValue: "none" }, { key: "PlanTier" }],
    memory: { enabled: true, channels: ["outbound"], maxFacts: 20, fields: [{ key: "zip", type: "string" }, { key: "age", type: "number" }] },`;
  return `
import * as va from "pulumi-voice-agent";
const agent = new va.Agent("support", {
  name: "Support agent",
  systemPrompt: ${JSON.stringify(o.prompt)},${o.full ? full : ""}${o.adoptId ? `\n  adoptId: ${JSON.stringify(o.adoptId)},` : ""}
});
const version = new va.AgentVersion("support-live", {
  agent,${o.label ? `\n  label: ${JSON.stringify(o.label)},` : ""}${o.pinned !== undefined ? `\n  version: ${o.pinned},` : ""}
});
export const agentId = agent.agentId;
export const liveVersion = version.version;
export const origin = version.origin;
export const activation = version.activation;
`;
}

async function newProject(o: ProgramOptions): Promise<PulumiProject> {
  return PulumiProject.create({
    program: program(o),
    config: { "voice-agent:baseUrl": emu.url },
    secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
  });
}

beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
});
afterAll(async () => {
  await emu?.close();
});

describe("Agent and AgentVersion through the real engine", () => {
  test("create, publish, change, revert, drift, conflict, label, destroy", async () => {
    const p = await newProject({ prompt: "## Agent Purpose\nHelp customers with orders.", full: true });
    try {
      // Create and go live: V0 published and live (the no-change preview and refresh follow below).
      await p.up();
      let out = await p.outputs();
      const id = out.agentId as string;
      expect(out.liveVersion).toBe(0);
      expect(out.origin).toBe("published");
      let agent = await api("GET", `/v1/agents/${id}`);
      expect(agent.live_version).toBe(0);
      expect(agent.system_prompt).toContain("Help customers");

      // The state holds no API key, even with --show-secrets, and the provider text is small: a
      // `require` of the provider module by a path relative to the project, no library code.
      const shown = await p.exportState(true);
      for (const state of [await p.exportState(false), shown]) {
        expect(state).not.toContain(DEFAULT_API_KEY);
      }
      const deployment = JSON.parse(shown);
      const providers = deployment.deployment.resources
        .filter((r: any) => r.type.startsWith("pulumi-nodejs:dynamic/voice-agent:"))
        .map((r: any) => r.inputs.__provider as string);
      expect(providers.length).toBe(2);
      for (const text of providers) {
        expect(text.length).toBeLessThan(400);
        expect(text).not.toMatch(/undici|zod|class Pool|ZodType/);
        expect(text).toMatch(
          /require\(require\("node:path"\)\.resolve\("[./]+\/dist\/resources\/agent(Version)?\/kind\.js"\)\)/,
        );
      }

      // Nothing changed: a preview and an up make no request at all (the checks read the
      // catalogue only for agents whose configuration changes).
      await clearRequestLog(emu);
      await p.preview({ expectNoChanges: true });
      await p.up();
      expect(await requestLog(emu)).toEqual([]);
      await p.refresh({ expectNoChanges: true });

      // A prompt change publishes version 1 and puts it live: both resources update in place (one
      // engine step each; the AgentVersion is not replaced), and the settle's refresh reads version 1
      // though the AgentVersion's id still names version 0.
      p.setProgram(program({ prompt: "## Agent Purpose\nHelp customers with returns.", full: true }));
      const planned = await p.preview();
      expect(planned.stdout).toMatch(/voice-agent:AgentVersion: \(update\)/);
      expect(planned.stdout).not.toMatch(/replace/);
      const changed = await p.upAndSettle();
      expect(changed.stdout).toMatch(/2 updated/);
      expect(changed.stdout).not.toMatch(/replace/);
      out = await p.outputs();
      expect(out.liveVersion).toBe(1);
      expect(out.origin).toBe("published");

      // A revert puts version 0 back live without publishing anything.
      p.setProgram(program({ prompt: "## Agent Purpose\nHelp customers with orders.", full: true }));
      await p.upAndSettle();
      out = await p.outputs();
      expect(out.liveVersion).toBe(0);
      expect(out.origin).toBe("reused");
      expect(out.activation).toBe("rollback");
      const versions = await api("GET", `/v1/agents/${id}/versions?limit=100`);
      expect(
        versions.data
          .filter((v: any) => v.is_published)
          .map((v: any) => v.version)
          .sort(),
      ).toEqual([0, 1]);

      // A dashboard edit of a managed field shows as drift on refresh.
      agent = await api("GET", `/v1/agents/${id}`);
      await api("PATCH", `/v1/agents/${id}`, { system_prompt: "## Agent Purpose\nEdited in the dashboard." });
      const drift = await p.pulumi(["refresh", "--preview-only", "--diff", "--expect-no-changes"], {
        allowFailure: true,
      });
      expect(drift.code).not.toBe(0);
      expect(drift.stdout).toMatch(/systemPrompt/);
      await p.refresh();
      const pending = await p.preview();
      expect(pending.stdout).toMatch(/systemPrompt[\s\S]*Edited in the dashboard/);

      // Git is the source of truth: the next up writes the declared prompt back.
      await p.upAndSettle();

      // An up without refresh after another edit fails with the conflict message and keeps the edit.
      await api("PATCH", `/v1/agents/${id}`, { system_prompt: "## Agent Purpose\nSecond dashboard edit." });
      p.setProgram(program({ prompt: "## Agent Purpose\nHelp customers with exchanges.", full: true }));
      const conflicted = await p.up({ allowFailure: true });
      expect(conflicted.code).not.toBe(0);
      expect(conflicted.stdout + conflicted.stderr).toMatch(/changed outside Pulumi.*pulumi refresh/s);
      agent = await api("GET", `/v1/agents/${id}`);
      expect(agent.system_prompt).toContain("Second dashboard edit");

      // After a refresh the same up goes through.
      await p.refresh();
      await p.upAndSettle();
      agent = await api("GET", `/v1/agents/${id}?version=live`);
      expect(agent.system_prompt).toContain("exchanges");

      // A label change updates the published version in place.
      out = await p.outputs();
      const before = out.liveVersion;
      p.setProgram(
        program({
          prompt: "## Agent Purpose\nHelp customers with exchanges.",
          full: true,
          label: "release-7",
        }),
      );
      const labelled = await p.upAndSettle();
      expect(labelled.stdout).toMatch(/1 updated/);
      out = await p.outputs();
      expect(out.liveVersion).toBe(before);
      const live = await api("GET", `/v1/agents/${id}/versions/${before}`);
      expect(live.label).toBe("release-7");

      // Destroy takes the agent off air, leaves it in the service, and says so.
      const destroyed = await p.destroy();
      expect(destroyed.stdout).toContain(
        "is now off air and remains in the dashboard (the service has no delete)",
      );
      agent = await api("GET", `/v1/agents/${id}`);
      expect(agent.live_version).toBeNull();
    } finally {
      p.cleanup();
    }
  }, 900_000);

  test("installed from its tarball: the state holds a 200-byte reference to the provider module", async () => {
    const p = await PulumiProject.create({
      installed: true,
      program: program({ prompt: "## Agent Purpose\nHelp customers with orders." }),
      config: { "voice-agent:baseUrl": emu.url },
      secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
    });
    try {
      expect(p.dir).toContain(".tmp/installed-");
      await p.upAndSettle();
      const deployment = JSON.parse(await p.exportState(true));
      const providers = deployment.deployment.resources
        .filter((r: any) => r.type.startsWith("pulumi-nodejs:dynamic/voice-agent:"))
        .map((r: any) => [r.type.split(":").pop(), r.inputs.__provider as string]);
      for (const [type, text] of providers) {
        const kind = type === "Agent" ? "agent" : "agentVersion";
        expect(text).toContain(`require("pulumi-voice-agent/provider/${kind}")`);
        expect(text.length).toBeLessThan(400);
      }
      // During `up` the provider reads the key from the program process (handoff.ts), so it needs
      // no `pulumi config`; a refresh runs no program, so it does.
      const noConfigCommand = { env: { VOICE_AGENT_PULUMI_BIN: "/nonexistent/pulumi" } };
      p.setProgram(program({ prompt: "## Agent Purpose\nHelp customers with returns." }));
      await p.pulumi(["up", "--yes", "--skip-preview"], noConfigCommand);
      expect(await p.outputs()).toMatchObject({ liveVersion: 1, origin: "published" });
      const refresh = await p.pulumi(["refresh", "--yes", "--skip-preview"], {
        ...noConfigCommand,
        allowFailure: true,
      });
      expect(refresh.code).not.toBe(0);
      // The cause is said, not a bare "missing voice-agent:apiKey".
      expect(refresh.stdout).toMatch(/could not read the stack's configuration/);
      expect(refresh.stdout).toMatch(/\/nonexistent\/pulumi config --stack \S+` failed/);
      // With the CLI there, the same refresh reads through `pulumi config` and finds nothing to change;
      // destroy (which runs no program either) does the same.
      await p.preview({ expectNoChanges: true });
      await p.refresh({ expectNoChanges: true });
      await p.destroy();
    } finally {
      p.cleanup();
    }
  }, 300_000);

  test("a change updates the version in place: at preview its new number is unknown to what uses it; a label change keeps it known", async () => {
    const source = (prompt: string, label = "first") => `
import * as pulumi from "@pulumi/pulumi";
import * as va from "pulumi-voice-agent";
const agent = new va.Agent("desk", { name: "Preview desk", systemPrompt: "## Agent Purpose\\n${prompt}" });
const version = new va.AgentVersion("desk-live", { agent, label: "${label}" });
const echo: pulumi.dynamic.ResourceProvider = { async create(inputs: any) { return { id: "echo", outs: inputs }; } };
new pulumi.dynamic.Resource(echo, "uses-version", { version: version.version, versionId: version.versionId });
`;
    const p = await PulumiProject.create({
      program: source("Help."),
      config: { "voice-agent:baseUrl": emu.url },
      secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
    });
    try {
      await p.up();
      p.setProgram(source("Help politely."));
      const steps = JSON.parse((await p.pulumi(["preview", "--json"])).stdout).steps as any[];
      const step = (name: string) => steps.find((s) => s.urn.endsWith(`::${name}`));
      expect(step("desk-live").op).toBe("update");
      // Never the old version's number or id: unknown until the update has published.
      expect(step("uses-version").newState.inputs).toMatchObject({
        version: "04da6b54-80e4-46f7-96ec-b56ff0331ba9",
        versionId: "04da6b54-80e4-46f7-96ec-b56ff0331ba9",
      });
      // A change that publishes nothing (a label): the version stays known, what uses it is unchanged.
      await p.up();
      p.setProgram(source("Help politely.", "second"));
      const relabel = JSON.parse((await p.pulumi(["preview", "--json"])).stdout).steps as any[];
      const again = (name: string) => relabel.find((s) => s.urn.endsWith(`::${name}`));
      expect(again("desk-live").op).toBe("update");
      // (`preview --json` lists no step for a resource that stays the same.)
      expect(again("uses-version")?.op ?? "same").toBe("same");
      await p.up();
      await p.preview({ expectNoChanges: true });
      await p.refresh({ expectNoChanges: true });
    } finally {
      p.cleanup();
    }
  }, 300_000);

  test("two workspaces from one program: each provider reads its own namespace's settings", async () => {
    const two = await startEmulator({
      port: 0,
      workspaces: [
        { name: "india", key: "va_test_india" },
        { name: "europe", key: "va_test_europe" },
      ],
    });
    const p = await PulumiProject.create({
      program: `
import * as va from "pulumi-voice-agent";
const eu = new va.Provider("eu", { namespace: "voice-agent-eu" });
const india = new va.Agent("india", { name: "India desk", systemPrompt: "## Agent Purpose\\nHelp." });
const europe = new va.Agent("europe", { name: "Europe desk", systemPrompt: "## Agent Purpose\\nHelp." }, { provider: eu });
export const ids = { india: india.agentId, europe: europe.agentId };
`,
      config: { "voice-agent:baseUrl": two.url, "voice-agent-eu:baseUrl": two.url },
      secrets: { "voice-agent:apiKey": "va_test_india", "voice-agent-eu:apiKey": "va_test_europe" },
    });
    const read = (id: string, key: string) =>
      fetch(`${two.url}/v1/agents/${id}`, { headers: { authorization: `Bearer ${key}` } });
    try {
      // During `up` both providers read their settings from the program, not from `pulumi config`.
      await p.pulumi(["up", "--yes", "--skip-preview"], {
        env: { VOICE_AGENT_PULUMI_BIN: "/nonexistent/pulumi" },
      });
      const { ids } = await p.outputs();
      expect((await read(ids.india, "va_test_india")).status).toBe(200);
      expect((await read(ids.india, "va_test_europe")).status).toBe(404);
      expect((await read(ids.europe, "va_test_europe")).status).toBe(200);
      expect((await read(ids.europe, "va_test_india")).status).toBe(404);
      // `preview` (settings from the program) and `refresh` (from `pulumi config`) see no change.
      await p.preview({ expectNoChanges: true });
      await p.refresh({ expectNoChanges: true });
    } finally {
      p.cleanup();
      await two.close();
    }
  }, 300_000);

  test("a model retired after publishing: a warning for the live version, an error once the agent changes", async () => {
    const p = await PulumiProject.create({
      program: `
import * as va from "pulumi-voice-agent";
const agent = new va.Agent("blocked", { name: "Soon blocked", model: { model: "gemini-1.5-flash" } });
export const version = new va.AgentVersion("blocked-live", { agent }).version;
`,
      config: { "voice-agent:baseUrl": emu.url },
      secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
    });
    try {
      await p.upAndSettle();
      await retireModel(emu, "gemini-1.5-flash");
      // Unchanged, the agent does not block the stack's other deploys: the refreshed version warns.
      const refreshed = await p.pulumi(["preview", "--refresh"]);
      expect(refreshed.stdout).toMatch(
        /version 0 is blocked and cannot go live again: model\.model: 'gemini-1\.5-flash' is retired/,
      );
      // Any change to the agent is checked against the catalogue: the retired model names the field.
      p.setProgram(
        `import * as va from "pulumi-voice-agent";
const agent = new va.Agent("blocked", { name: "Soon blocked", systemPrompt: "## Agent Purpose\\nHelp.", model: { model: "gemini-1.5-flash" } });
export const version = new va.AgentVersion("blocked-live", { agent }).version;`,
      );
      const preview = await p.pulumi(["preview"], { allowFailure: true });
      expect(preview.code).not.toBe(0);
      expect(preview.stdout).toMatch(/model\.model: 'gemini-1\.5-flash' is retired/);
    } finally {
      p.cleanup();
    }
  }, 300_000);

  test("adopt an existing agent, and pin a published version", async () => {
    const existing = await api("POST", "/v1/agents", {
      name: "Made in the dashboard",
      system_prompt: "Old prompt",
    });
    const p = await newProject({ prompt: "## Agent Purpose\nAdopted by Pulumi.", adoptId: existing.id });
    try {
      await p.upAndSettle();
      const out = await p.outputs();
      expect(out.agentId).toBe(existing.id);
      const agent = await api("GET", `/v1/agents/${existing.id}?version=live`);
      expect(agent.name).toBe("Support agent");
      expect(agent.system_prompt).toContain("Adopted by Pulumi");

      // Pinning version 0 explicitly is a no-publish rollback target.
      p.setProgram(
        program({ prompt: "## Agent Purpose\nAdopted by Pulumi.", adoptId: existing.id, pinned: 0 }),
      );
      await p.upAndSettle();
      expect((await p.outputs()).origin).toBe("pinned");
    } finally {
      p.cleanup();
    }
  }, 600_000);
});
