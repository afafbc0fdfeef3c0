/**
 * No rate that can never fire, no proof from one call, as a user meets them: a fresh project with
 * the package installed from its tarball, its program type-checked, through the real engine against
 * the emulator, under our language host (the `e2e` project; vitest.config.mts).
 *
 * - A watch rate whose value the analysis never takes (`"Negative"`; its values are `positive`,
 *   `neutral`, `negative`) and a status rate naming a status the service does not have
 *   (`"no-answer"`) are refused at preview, naming each field and what is allowed; nothing written.
 * - A promotion rate is judged only over at least `minCalls` calls that carry its value: 9 calls
 *   without a sentiment and 1 neutral are refused ("User Sentiment measured on 1 of the 10 calls");
 *   with 10 measured calls, none negative, against `atMost: 0.2`, the version is promoted.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { closeDispatchers, VoiceAgentClient } from "../../src/client";
import { DEFAULT_API_KEY, type RunningEmulator, startEmulator } from "../../src/emulator";
import { setCallOutcomes, trafficCall } from "../support/control";
import { PulumiProject } from "../support/pulumi";

const PROGRAM = `
import * as pulumi from "@pulumi/pulumi";
import * as va from "pulumi-voice-agent";

const cfg = new pulumi.Config("app");
const agent = new va.Agent("support", { name: "Support", systemPrompt: "## Agent Purpose\\nHelp with orders.\\n" });
const watch = cfg.getObject<va.WatchArgs>("watch");
const promote = cfg.getObject<Omit<va.PromoteArgs, "from">>("promote");
const from = promote
  ? (new pulumi.StackReference(\`organization/\${pulumi.getProject()}/test\`).requireOutput("agentId") as pulumi.Output<string>)
  : undefined;
const live = new va.AgentVersion("support-live", {
  agent,
  ...(watch ? { watch } : {}),
  ...(promote && from ? { promote: { ...promote, from } } : {}),
});
export const agentId = agent.agentId;
export const version = live.version;
export const promotion = live.promotion;
`;

const SENTIMENT = "Default Analysis/User Sentiment";

let emu: RunningEmulator;
let client: VoiceAgentClient;
let staging: PulumiProject;
let stagingId: string;

beforeAll(async () => {
  emu = await startEmulator({ port: 0, callSeconds: 0.2 });
  client = new VoiceAgentClient({ baseUrl: emu.url, apiKey: DEFAULT_API_KEY });
  // The staging stack (`test`): its agent's version 0 live.
  staging = await PulumiProject.create({
    installed: true,
    name: "evidence",
    program: PROGRAM,
    config: { "voice-agent:baseUrl": emu.url },
    secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
  });
  await staging.up();
  stagingId = (await staging.outputs()).agentId as string;
}, 300_000);

afterAll(async () => {
  staging?.cleanup();
  await closeDispatchers();
  await emu?.close();
});

/** A stack of the project on the emulator with `app:*` configuration (objects as JSON). */
async function stack(name: string, app: Record<string, unknown>): Promise<PulumiProject> {
  const p = await staging.withStack(name, { "voice-agent:baseUrl": emu.url });
  await p.pulumi([
    "config",
    "set-all",
    "--secret",
    `voice-agent:apiKey=${DEFAULT_API_KEY}`,
    ...Object.entries(app).flatMap(([k, v]) => ["--plaintext", `app:${k}=${JSON.stringify(v)}`]),
  ]);
  return p;
}

/** Inbound calls to staging's agent, each analysed with this User Sentiment (null: nothing extracted). */
async function callStaging(count: number, sentiment: string | null, first: number): Promise<void> {
  await setCallOutcomes(emu, [
    { match: { agent_id: stagingId }, analysis: { "Default Analysis": { "User Sentiment": sentiment } } },
  ]);
  for (let i = 0; i < count; i++)
    await trafficCall(emu, { agent_id: stagingId, direction: "inbound", to_number: `+1555010${first + i}` });
  await setCallOutcomes(emu, []);
  await new Promise((r) => setTimeout(r, 600));
}

const said = (r: { stdout: string; stderr: string }) => `${r.stdout}\n${r.stderr}`;

test('a watch rate on "Negative" and a status rate on "no-answer" are refused at preview, naming each field and what is allowed', async () => {
  const prod = await stack("watched", {
    watch: {
      rates: [
        { analysis: SENTIMENT, value: "Negative", atMost: 0.2 },
        { status: ["failed", "no-answer"], atMost: 0.05 },
      ],
    },
  });
  const preview = await prod.preview({ allowFailure: true });
  expect(preview.code).not.toBe(0);
  expect(said(preview)).toContain(
    'watch.rates[0].value: "Negative" is not a value of Default Analysis/User Sentiment: an enum of "positive", "neutral", "negative" (compared exactly, as calls carry them); did you mean "negative"?',
  );
  expect(said(preview)).toContain(
    'watch.rates[1].status[1]: "no-answer" is not a status of a finished call; one of completed, voicemail, no_answer, busy, declined, failed, transfer_completed, transfer_failed (did you mean "no_answer"?)',
  );
  // Nothing written: staging's agent is the only one.
  expect(await client.agents.list().toArray()).toHaveLength(1);
}, 300_000);

test("a promotion rate measured on 1 of 10 calls is refused naming the rate and the count; on 10 measured calls, none negative, promoted", async () => {
  await callStaging(9, null, 1000);
  await callStaging(1, "neutral", 1100);
  const prod = await stack("prod", {
    promote: { minCalls: 10, rates: [{ analysis: SENTIMENT, value: "negative", atMost: 0.2 }] },
  });
  const preview = await prod.preview();
  expect(said(preview)).toContain(
    "not yet proven: Default Analysis/User Sentiment measured on 1 of the 10 calls",
  );
  const up = await prod.up({ allowFailure: true });
  expect(up.code).not.toBe(0);
  expect(said(up)).toMatch(
    /has not proven itself yet: Default Analysis\/User Sentiment measured on 1 of the 10 calls, "negative" on 0: too few to judge \(at least 10 measured calls needed; at most 20%\); 9 calls left out: 9 with a null value \(nothing extracted\)\. Met: 10 calls[^\n]*Nothing was published or put live/,
  );
  const prodAgent = (await client.agents.list().toArray()).find((a) => a.id !== stagingId);
  expect(prodAgent?.live_version ?? null).toBeNull();

  await callStaging(9, "neutral", 1200);
  const green = await prod.preview();
  expect(said(green)).not.toContain("not yet proven");
  await prod.upAndSettle({ quiet: true });
  const out = await prod.outputs();
  expect(out.promotion).toMatchObject({
    fromAgentId: stagingId,
    fromVersion: 0,
    calls: 19,
    rates: [{ analysis: SENTIMENT, value: "negative", measured: 10, share: 0, atMost: 0.2 }],
  });
  expect((await client.agents.get(out.agentId as string)).live_version).toBe(out.version);
}, 300_000);
