/**
 * What our language host hands a program, checked against what Pulumi's own Node.js host sends
 * (`pulumi-language-nodejs`): `PULUMI_CONFIG` is an object (never `null`) and
 * `PULUMI_CONFIG_SECRET_KEYS` a list, for a stack with no configuration at all, with secrets and
 * with structured values; and a stack whose credentials come from the environment only (as
 * docs/gitops.md recommends for CI) previews and deploys.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { DEFAULT_API_KEY, type RunningEmulator, startEmulator } from "../../src/emulator";
import { PulumiProject } from "../support/pulumi";

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
