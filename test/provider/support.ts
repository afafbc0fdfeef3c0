/**
 * What the provider-level tests share: an emulator on a random port for the file, a client on it
 * injected as the provider's client, and the engine's check-then-create sequence.
 */
import { afterAll, beforeAll, expect } from "vitest";
import { VoiceAgentClient } from "../../src/client";
import { DEFAULT_API_KEY, type RunningEmulator, startEmulator } from "../../src/emulator";
import type { ProviderContext, ResourceHandler } from "../../src/provider/resource";

let current: VoiceAgentClient | undefined;

/**
 * The provider context the tests hand the handlers: the client on the file's emulator (set by
 * {@link emulatorForFile} before the tests run).
 */
export const testContext: ProviderContext = {
  client: async () => {
    if (!current) throw new Error("no emulator client: call emulatorForFile in this test file");
    return current;
  },
  warmUp: () => undefined,
};

/**
 * Starts an emulator before the file's tests (stopped after them) and makes a client on it the
 * provider's client; `ready` receives both. Without a rate limit unless `options` sets one: these
 * files test what the handlers do, not the pacing (test/client/ does), and a file's few hundred
 * requests would otherwise wait a window at the service's 300 a minute.
 */
export function emulatorForFile(
  options: Parameters<typeof startEmulator>[0],
  ready: (emu: RunningEmulator, client: VoiceAgentClient) => void,
): void {
  let emu: RunningEmulator | undefined;
  beforeAll(async () => {
    const limit = options?.rateLimitPerMinute;
    emu = await startEmulator({ port: 0, ...options, rateLimitPerMinute: limit ?? 0 });
    const client = new VoiceAgentClient({
      baseUrl: emu.url,
      apiKey: DEFAULT_API_KEY,
      rateLimitPerMinute: limit ?? 1_000_000,
    });
    current = client;
    ready(emu, client);
  });
  afterAll(async () => {
    current = undefined;
    await emu?.close();
  });
}

/** `check` then `create`, as the engine does on the first `up`; the check must pass. */
export async function checkAndCreate(h: ResourceHandler, inputs: Record<string, any>) {
  const checked = await h.check({}, inputs);
  expect(checked.failures ?? []).toEqual([]);
  const created = await h.create(checked.inputs);
  return {
    id: created.id,
    inputs: checked.inputs as Record<string, any>,
    outs: created.outs as Record<string, any>,
  };
}

/** The AgentVersion's inputs as its constructor derives them from the Agent's outputs (`live: true`). */
export function versionInputs(
  agentOuts: Record<string, any>,
  extra: Record<string, unknown> = {},
): Record<string, any> {
  const known: Record<string, number> = agentOuts.knownVersions ?? {};
  return {
    agentId: agentOuts.agentId,
    contentHash: agentOuts.contentHash,
    knownVersion: known[agentOuts.contentHash],
    knownUpTo: Math.max(-1, ...Object.values(known)),
    draftVersion: agentOuts.draftVersion,
    documentRevision: agentOuts.documentRevision,
    draftPublished: agentOuts.draftPublished,
    draftHash: agentOuts.draftHash,
    latestVersion: agentOuts.latestVersion,
    live: true,
    ...extra,
  };
}
