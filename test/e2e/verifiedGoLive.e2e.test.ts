/**
 * Verified go-live as a user meets it: a fresh project with the package installed from its
 * tarball, its program type-checked, against the emulator (calls of 0.2 s), under our language
 * host (the `e2e` project; vitest.config.mts). A passing verification puts the
 * version live after its test calls; a failing one leaves the earlier version live and says why.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { DEFAULT_API_KEY, startEmulator } from "../../src/emulator";
import { controlCall, requestLog } from "../support/control";
import { PulumiProject } from "../support/pulumi";

type Emulator = Awaited<ReturnType<typeof startEmulator>>;
let emu: Emulator;
const TEST_LINE = "+14155550177";

async function api(path: string): Promise<any> {
  const res = await fetch(`${emu.url}${path}`, { headers: { authorization: `Bearer ${DEFAULT_API_KEY}` } });
  expect(res.status).toBe(200);
  return res.json();
}

const program = (prompt: string) => `
import * as va from "pulumi-voice-agent";

const agent = new va.Agent("support", { name: "Verified support", systemPrompt: ${JSON.stringify(prompt)} });
const verify: va.VerifyArgs = {
  calls: [
    {
      toNumber: "${TEST_LINE}",
      expect: { status: "completed", analysis: { "Default Analysis": { "User Sentiment": ["positive", "neutral"] } } },
    },
  ],
  timeoutSeconds: 60,
};
const live = new va.AgentVersion("support-live", { agent, verify });
export const agentId = agent.agentId;
export const liveVersion = live.version;
export const verification = live.verification;
`;

beforeAll(async () => {
  emu = await startEmulator({ port: 0, callSeconds: 0.2 });
});
afterAll(async () => {
  await emu?.close();
});

test("an installed package verifies a version: passing goes live after the calls, failing keeps the earlier version live", async () => {
  const p = await PulumiProject.create({
    installed: true,
    program: program("## Agent Purpose\nHelp customers with orders."),
    config: { "voice-agent:baseUrl": emu.url },
    secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
  });
  try {
    await p.upAndSettle({ quiet: true });
    const out = await p.outputs();
    const agentId = out.agentId as string;
    expect(out.liveVersion).toBe(0);
    expect(out.verification).toMatchObject({
      version: 0,
      passed: true,
      calls: [{ toNumber: TEST_LINE, status: "completed", passed: true }],
    });
    const call = await api(`/v1/calls/${out.verification.calls[0].id}`);
    expect(call).toMatchObject({ agent_id: agentId, agent_version: 0, origin: "api", to_number: TEST_LINE });
    // The call was placed and read finished before the version went live.
    const log = (await requestLog(emu)).map((e) => `${e.method} ${e.path}`);
    expect(log.indexOf("POST /v1/calls")).toBeLessThan(log.indexOf(`POST /v1/agents/${agentId}/activations`));

    // The test line stops answering: the next version does not go live, and the up says why.
    const rules = [{ match: { to_number: TEST_LINE }, status: "no_answer" }];
    expect((await controlCall(emu, "PUT", "/_emulator/call-outcomes", { rules })).status).toBe(200);
    p.setProgram(program("## Agent Purpose\nHelp customers with orders and returns."));
    const failed = await p.up({ allowFailure: true });
    expect(failed.code).not.toBe(0);
    const text = failed.stdout + failed.stderr;
    const failing = (await api("/v1/calls?origin=api")).data[0];
    expect(failing.agent_version).toBe(1);
    expect(text).toContain(`Verification of version 1 of agent ${agentId} failed`);
    expect(text).toContain(`${failing.id} ${failing.dashboard_url}`);
    expect(text).toContain('status: expected "completed", got "no_answer"');
    expect(text).toContain("version 0 stays live");
    expect(text).not.toMatch(/\n\s+at .*\.js:\d+/); // a message, not a stack trace
    expect((await api(`/v1/agents/${agentId}`)).live_version).toBe(0);
    expect((await api(`/v1/agents/${agentId}/versions/1`)).is_published).toBe(true);
  } finally {
    p.cleanup();
  }
}, 600_000);
