/**
 * What the provider-level tests share: an emulator on a random port for the file, a client on it
 * injected as the provider's client, and the engine's check-then-create sequence.
 */
import type * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, expect } from "vitest";
import { VoiceAgentClient } from "../../src/client";
import { DEFAULT_API_KEY, type RunningEmulator, startEmulator } from "../../src/emulator";
import { useClient } from "../../src/provider/context";

/**
 * Starts an emulator before the file's tests (stopped after them) and makes a client on it the
 * provider's client; `ready` receives both.
 */
export function emulatorForFile(
  options: Parameters<typeof startEmulator>[0],
  ready: (emu: RunningEmulator, client: VoiceAgentClient) => void,
): void {
  let emu: RunningEmulator | undefined;
  beforeAll(async () => {
    emu = await startEmulator({ port: 0, ...options });
    const client = new VoiceAgentClient({ baseUrl: emu.url, apiKey: DEFAULT_API_KEY });
    useClient(client);
    ready(emu, client);
  });
  afterAll(async () => {
    useClient(undefined);
    await emu?.close();
  });
}

/** `check` then `create`, as the engine does on the first `up`; the check must pass. */
export async function checkAndCreate(h: pulumi.dynamic.ResourceProvider, inputs: Record<string, any>) {
  const checked = await h.check!({}, inputs);
  expect(checked.failures ?? []).toEqual([]);
  const created = await h.create!(checked.inputs);
  return {
    id: created.id,
    inputs: checked.inputs as Record<string, any>,
    outs: created.outs as Record<string, any>,
  };
}
