/**
 * Where the provider process reads its settings: a `pulumi config` that fails (a wrong
 * passphrase, no CLI on the PATH) is reported with its cause, not as a missing API key.
 */
import { afterEach, expect, test } from "vitest";
import { configure, providerContext } from "../../src/provider/context";

const saved = { ...process.env };
afterEach(() => {
  process.env = { ...saved };
});

const request = (stack: string) =>
  ({ config: new Map([["voice-agent:stack", stack]]) }) as unknown as Parameters<typeof configure>[0];

test("a pulumi config that cannot run is named, with its cause", async () => {
  process.env.VOICE_AGENT_PULUMI_BIN = "/nonexistent/pulumi";
  delete process.env.VOICE_AGENT_API_KEY;
  delete process.env.VOICE_AGENT_BASE_URL;
  await configure(request("organization/context-test/broken"));
  const err = (await providerContext.client().catch((e: unknown) => e)) as Error;
  expect(err.message).toContain("could not read the stack's configuration");
  expect(err.message).toContain("/nonexistent/pulumi config --stack organization/context-test/broken");
  expect(err.message).not.toMatch(/^missing/i);
  expect(err.cause).toBeInstanceOf(Error);
});

test("with the settings in the environment, a failed pulumi config is not in the way", async () => {
  process.env.VOICE_AGENT_PULUMI_BIN = "/nonexistent/pulumi";
  process.env.VOICE_AGENT_API_KEY = "va_test_local";
  process.env.VOICE_AGENT_BASE_URL = "http://127.0.0.1:9";
  await configure(request("organization/context-test/env-only"));
  const c = await providerContext.client();
  expect(c).toBeDefined();
});
