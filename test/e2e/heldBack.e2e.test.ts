/**
 * A held-back version never blocks the next change, as a user meets it: a fresh project with the
 * package installed from its tarball, its program type-checked, against the emulator, under our
 * language host (the `e2e` project; vitest.config.mts). After a version is published
 * and not put live (its verification failed, or `live: false`), the next `up` of a changed
 * configuration writes it onto the draft the service branches from the live version, and deploys.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { DEFAULT_API_KEY, startEmulator } from "../../src/emulator";
import { setCallOutcomes } from "../support/control";
import { PulumiProject } from "../support/pulumi";

type Emulator = Awaited<ReturnType<typeof startEmulator>>;
let emu: Emulator;
const TEST_LINE = "+14155550178";

async function api(path: string): Promise<any> {
  const res = await fetch(`${emu.url}${path}`, { headers: { authorization: `Bearer ${DEFAULT_API_KEY}` } });
  expect(res.status).toBe(200);
  return res.json();
}

/** The test calls placed so far (origin `api`), newest first. */
const testCalls = async () => (await api("/v1/calls?origin=api&limit=100")).data as any[];

const program = (prompt: string, opts: { verify?: boolean; live?: boolean } = {}) => `
import * as va from "pulumi-voice-agent";

const agent = new va.Agent("desk", { name: "Front of house", systemPrompt: ${JSON.stringify(prompt)} });
const live = new va.AgentVersion("desk-live", {
  agent,
  live: ${opts.live ?? true},
  ${opts.verify ? `verify: { calls: [{ toNumber: "${TEST_LINE}" }], timeoutSeconds: 60 },` : ""}
});
export const agentId = agent.agentId;
export const version = live.version;
export const isLive = live.isLive;
`;

beforeAll(async () => {
  emu = await startEmulator({ port: 0, callSeconds: 0.2 });
});
afterAll(async () => {
  await emu?.close();
});

test("a failed verification, then the fixed prompt: deploys with one new test call, and settles", async () => {
  const p = await PulumiProject.create({
    installed: true,
    program: program("## Agent Purpose\nGreet guests.", { verify: true }),
    config: { "voice-agent:baseUrl": emu.url },
    secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
  });
  try {
    await p.upAndSettle({ quiet: true });
    const agentId = (await p.outputs()).agentId as string;
    expect(await testCalls()).toHaveLength(1);

    // The change fails its test call: version 1 is published, version 0 stays live.
    await setCallOutcomes(emu, [{ match: { to_number: TEST_LINE }, status: "no_answer" }]);
    p.setProgram(program("## Agent Purpose\nGreet guests, loudly.", { verify: true }));
    const failed = await p.up({ allowFailure: true });
    expect(failed.code).not.toBe(0);
    expect(failed.stdout + failed.stderr).toContain(`Verification of version 1 of agent ${agentId} failed`);
    expect(await testCalls()).toHaveLength(2);

    // The team fixes the prompt (and the line answers again): no conflict, one new test call.
    await setCallOutcomes(emu, []);
    p.setProgram(program("## Agent Purpose\nGreet guests warmly.", { verify: true }));
    const fixed = await p.up();
    expect(fixed.stdout + fixed.stderr).not.toMatch(/changed outside Pulumi/);
    const calls = await testCalls();
    expect(calls).toHaveLength(3);
    expect(calls[0]).toMatchObject({ agent_version: 2, status: "completed" });
    const live = await api(`/v1/agents/${agentId}?version=live`);
    expect(live).toMatchObject({ version: 2, system_prompt: "## Agent Purpose\nGreet guests warmly." });
    expect(await p.outputs()).toMatchObject({ version: 2, isLive: true });
    await p.preview({ expectNoChanges: true });
    await p.refresh({ expectNoChanges: true });
    expect(await testCalls()).toHaveLength(3);
  } finally {
    p.cleanup();
  }
}, 600_000);

test("live: false, then a change: deploys and goes live; then settles", async () => {
  const p = await PulumiProject.create({
    installed: true,
    program: program("## Agent Purpose\nTake orders."),
    config: { "voice-agent:baseUrl": emu.url },
    secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
  });
  try {
    await p.upAndSettle({ quiet: true });
    const agentId = (await p.outputs()).agentId as string;
    p.setProgram(program("## Agent Purpose\nTake orders and bookings.", { live: false }));
    await p.up();
    expect(await p.outputs()).toMatchObject({ version: 1, isLive: false });
    expect((await api(`/v1/agents/${agentId}`)).live_version).toBe(0);

    p.setProgram(program("## Agent Purpose\nTake orders, bookings and complaints."));
    await p.upAndSettle({ quiet: true });
    expect(await p.outputs()).toMatchObject({ version: 2, isLive: true });
    const live = await api(`/v1/agents/${agentId}?version=live`);
    expect(live).toMatchObject({
      version: 2,
      system_prompt: "## Agent Purpose\nTake orders, bookings and complaints.",
    });
  } finally {
    p.cleanup();
  }
}, 600_000);
