/**
 * What our language host hands a program, checked against what Pulumi's own Node.js host sends
 * (`pulumi-language-nodejs`): `PULUMI_CONFIG` is an object (never `null`) and
 * `PULUMI_CONFIG_SECRET_KEYS` a list, for a stack with no configuration at all, with secrets and
 * with structured values; a stack whose credentials come from the environment only (as
 * docs/gitops.md recommends for CI) previews and deploys; and settings that do not reach the
 * service (a key it refuses, a URL where nothing answers) fail the preview with their message
 * once, without a stack trace.
 */
import { createServer } from "node:net";
import { afterAll, beforeAll, expect, test } from "vitest";
import { DEFAULT_API_KEY, type RunningEmulator, startEmulator } from "../../src/emulator";
import { PulumiProject, REPO_ROOT } from "../support/pulumi";

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
});
afterAll(async () => {
  await emu?.close();
});

const probe = `
import * as pulumi from "@pulumi/pulumi";
export const rawConfig = process.env.PULUMI_CONFIG;
export const rawSecretKeys = process.env.PULUMI_CONFIG_SECRET_KEYS;
export const keys = Object.keys(pulumi.runtime.allConfig()).sort();
const app = new pulumi.Config("app");
export const nested = app.getObject<{ b: number }>("nested");
export const secret = app.getSecret("token");
export const plain = app.get("plain");
`;

test("a stack without configuration: an empty object and an empty list, as Pulumi's host sends", async () => {
  const p = await PulumiProject.create({ program: probe, name: "config-probe" });
  await p.up();
  const out = await p.outputs();
  expect(JSON.parse(out.rawConfig)).toEqual({});
  expect(JSON.parse(out.rawSecretKeys)).toEqual([]);
  expect(out.keys).toEqual([]);
}, 120_000);

test("secrets and structured values reach the program as Pulumi's host hands them", async () => {
  const p = await PulumiProject.create({
    program: probe,
    name: "config-probe",
    config: { "app:plain": "hello" },
    secrets: { "app:token": "s3cret" },
  });
  await p.pulumi(["config", "set", "--path", "app:nested.b", "1"]);
  await p.up();
  const out = await p.outputs();
  expect(out.keys).toEqual(["app:nested", "app:plain", "app:token"]);
  expect(out.nested).toEqual({ b: 1 });
  expect(out.plain).toBe("hello");
  expect(out.secret).toBe("s3cret");
  expect(JSON.parse(out.rawSecretKeys)).toEqual(["app:token"]);
}, 120_000);

test("credentials from the environment only, no stack configuration: preview and up work", async () => {
  const p = await PulumiProject.create({
    name: "env-only",
    program: `
import * as va from "pulumi-voice-agent";
const agent = new va.Agent("a", { name: "Env only", voice: { provider: "sarvam", voiceId: "meera" } });
export const agentId = agent.agentId;
`,
    env: { VOICE_AGENT_BASE_URL: emu.url, VOICE_AGENT_API_KEY: DEFAULT_API_KEY },
  });
  const preview = await p.preview();
  expect(preview.stdout).toContain("create");
  await p.upAndSettle({ quiet: true });
  expect((await p.outputs()).agentId).toMatch(/^[0-9a-f-]{36}$/);
}, 180_000);

test("a key the service refuses, a URL where nothing answers: the preview says so once, without our stack trace", async () => {
  const refusedKey = "va_refused_0123456789";
  const p = await PulumiProject.create({
    name: "unreachable",
    program: `
import * as va from "pulumi-voice-agent";
new va.Agent("a", { name: "Not checked", voice: { provider: "sarvam", voiceId: "meera" } });
`,
    config: { "voice-agent:baseUrl": emu.url },
    secrets: { "voice-agent:apiKey": refusedKey },
  });
  /** The preview fails, printing `message` once: no stack trace, no file of ours or of Pulumi's script. */
  const failsSaying = async (message: string) => {
    const r = await p.preview({ allowFailure: true });
    const text = r.stdout + r.stderr;
    expect(r.code).not.toBe(0);
    expect(text.split(message).length - 1, text).toBe(1);
    expect(text).not.toMatch(/^\s+at /m);
    for (const path of [REPO_ROOT, "rules.ts", "dynamic-provider", "node_modules"])
      expect(text).not.toContain(path);
    expect(text).not.toContain(refusedKey);
  };
  try {
    // A preview that fails on the service's first answer: how long this machine takes for one now.
    const t0 = Date.now();
    await failsSaying(
      "The service refused the API key, so the agent's configuration could not be checked against the service's catalogue",
    );
    const answered = Date.now() - t0;
    const closed = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, "127.0.0.1", () => {
        const { port } = s.address() as { port: number };
        s.close(() => resolve(port)); // nothing listens on it any more
      });
    });
    await p.pulumi(["config", "set", "voice-agent:baseUrl", `http://127.0.0.1:${closed}`]);
    // Nothing there: said within seconds (not after the catalogue's 10 s wait), address and cause first.
    const started = Date.now();
    await failsSaying(
      `connection refused at http://127.0.0.1:${closed}: is the service or the emulator running?`,
    );
    // 2 s of retries more than a preview the service answers (the catalogue's wait was 10 s).
    expect(Date.now() - started - answered).toBeLessThan(5_000);
  } finally {
    p.cleanup();
  }
}, 120_000);
