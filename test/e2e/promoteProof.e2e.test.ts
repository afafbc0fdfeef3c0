/**
 * Promotion fails closed, through the real Pulumi CLI against the emulator: one project, a staging
 * stack and production stacks that promote from it (a StackReference), one emulator whose callers
 * are placed with the control API. At preview a new production agent whose knowledge base is
 * created alongside (its id unknown) is compared on every other field; at `up` calls that never
 * connected are no proof, a rate no call measures is not met, a late `live: true` after staging
 * moved on is refused, real proof is accepted, and staging moving while production's test calls
 * run refuses the activation.
 *
 * The emulator's calls take 1 s (analysed at 0.85 s), so that production's test calls are still
 * running when the test moves staging.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { closeDispatchers, VoiceAgentClient } from "../../src/client";
import { DEFAULT_API_KEY, type RunningEmulator, startEmulator } from "../../src/emulator";
import { clearRequestLog, requestLog, setCallOutcomes, trafficCall } from "../support/control";
import { PulumiProject } from "../support/pulumi";

const PROGRAM = `
import * as pulumi from "@pulumi/pulumi";
import * as va from "pulumi-voice-agent";

const cfg = new pulumi.Config("app");
const kb = cfg.getBoolean("kb")
  ? new va.KnowledgeBase("faq", { name: "FAQ", documents: [{ name: "hours", text: "Open 9 to 6." }] })
  : undefined;
const agent = new va.Agent("support", {
  name: "Support",
  systemPrompt: cfg.require("prompt"),
  ...(kb ? { knowledgeBaseIds: [kb.id] } : {}),
});
const promote = cfg.getObject<Omit<va.PromoteArgs, "from">>("promote");
const verify = cfg.getObject<va.VerifyArgs>("verify");
// Staging's agent id, from the staging stack's outputs: known at preview.
const from = promote
  ? (new pulumi.StackReference("organization/proof/staging").requireOutput("agentId") as pulumi.Output<string>)
  : undefined;
const live = new va.AgentVersion("support-live", {
  agent,
  live: cfg.getBoolean("live") ?? true,
  ...(verify ? { verify } : {}),
  ...(promote && from ? { promote: { ...promote, from } } : {}),
});
export const agentId = agent.agentId;
export const version = live.version;
export const promotion = live.promotion;
`;

const prompt = (ask: string) =>
  `## Agent Purpose\nHelp customers with orders.\n\n## Call Flow\n${ask}\nThen answer.\n`;
const ASK = "Ask for the order number.";
const SENTIMENT = "Default Analysis/User Sentiment";

let emu: RunningEmulator;
let client: VoiceAgentClient;
let staging: PulumiProject;
let stagingId: string;

/** A production stack of the project, on the emulator, with `config` (`app:*`, JSON for objects). */
async function prodStack(name: string, config: Record<string, unknown>): Promise<PulumiProject> {
  const p = await staging.withStack(name, { "voice-agent:baseUrl": emu.url });
  await p.pulumi(["config", "set", "--secret", "voice-agent:apiKey", DEFAULT_API_KEY]);
  await setConfig(p, config);
  return p;
}

async function setConfig(p: PulumiProject, values: Record<string, unknown>): Promise<void> {
  const pairs = Object.entries(values).flatMap(([k, v]) => [
    "--plaintext",
    `app:${k}=${typeof v === "string" ? v : JSON.stringify(v)}`,
  ]);
  await p.pulumi(["config", "set-all", ...pairs]);
}

/** Inbound calls to staging's agent, one per number, as its callers make them; until analysed. */
async function callStaging(numbers: string[]): Promise<void> {
  for (const to_number of numbers)
    await trafficCall(emu, { agent_id: stagingId, direction: "inbound", to_number });
  await new Promise((r) => setTimeout(r, 1300));
}

const said = (r: { stdout: string; stderr: string }) => `${r.stdout}\n${r.stderr}`;

/** The id of a stack's Agent, from its checkpoint (outputs are not written by a refused `up`). */
function agentOf(p: PulumiProject): string {
  const agent = p.deployment().resources?.find((r) => r.type.endsWith(":Agent"));
  const id = agent?.outputs?.agentId;
  if (typeof id !== "string") throw new Error(`stack ${p.stack} holds no Agent`);
  return id;
}

/** The version an agent has live (null: off air). */
const liveVersion = async (agentId: string) => (await client.agents.get(agentId)).live_version;

/** Staging moves on: `ask` goes live there through its own stack. */
async function moveStaging(ask: string): Promise<void> {
  await setConfig(staging, { prompt: prompt(ask) });
  await staging.up();
}

beforeAll(async () => {
  emu = await startEmulator({ port: 0, callSeconds: 1 });
  client = new VoiceAgentClient({ baseUrl: emu.url, apiKey: DEFAULT_API_KEY });
  const project = await PulumiProject.create({ program: PROGRAM, name: "proof" });
  staging = await project.withStack("staging", {
    "voice-agent:baseUrl": emu.url,
    "app:prompt": prompt(ASK),
    "app:kb": "true",
  });
  await staging.pulumi(["config", "set", "--secret", "voice-agent:apiKey", DEFAULT_API_KEY]);
  await staging.up();
  stagingId = (await staging.outputs()).agentId as string;
}, 300_000);

afterAll(async () => {
  staging?.cleanup();
  await closeDispatchers();
  await emu?.close();
});

describe("a new production agent, its knowledge base created alongside (unknown at preview)", () => {
  test("a prompt staging never ran fails the preview naming the field; the prompt staging runs passes it", async () => {
    const prod = await prodStack("new", {
      kb: true,
      prompt: prompt("Ask for the order id."),
      promote: { minCalls: 0 },
    });
    const preview = await prod.preview({ allowFailure: true });
    expect(preview.code).not.toBe(0);
    expect(said(preview)).toMatch(
      /differs from staging's live version 0 of agent [0-9a-f-]+, live since .*, in 1 field:/,
    );
    expect(said(preview)).toContain(
      'systemPrompt: staging line 5: "Ask for the order number.", production line 5: "Ask for the order id."',
    );
    // The knowledge base's id is unknown at preview: never reported different.
    expect(said(preview)).not.toContain("knowledgeBaseIds (by name)");
    expect(await client.agents.list().toArray()).toHaveLength(1);

    // The prompt staging runs: the preview passes; `up` compares every field (the knowledge base
    // by name) and promotes.
    await setConfig(prod, { prompt: prompt(ASK) });
    const green = await prod.preview();
    expect(said(green)).not.toContain("promote:");
    await prod.upAndSettle({ quiet: true });
    const out = await prod.outputs();
    expect(out.promotion).toMatchObject({ fromAgentId: stagingId, fromVersion: 0 });
    expect((await client.agents.get(out.agentId, { version: "live" })).version).toBe(out.version);
    await prod.destroy();
  }, 300_000);
});

describe("at up, promotion fails closed on staging's evidence, and accepts real proof", () => {
  let prod: PulumiProject;
  const RATE = { analysis: SENTIMENT, value: "negative", atMost: 0.5 };

  beforeAll(async () => {
    prod = await prodStack("prod", { kb: true, prompt: prompt(ASK), promote: {} });
  }, 300_000);

  test("calls that never connected are no proof (minCalls defaults to 1)", async () => {
    await setCallOutcomes(emu, [
      { match: { agent_id: stagingId, to_number: "+15550100001" }, status: "no_answer" },
      { match: { agent_id: stagingId, to_number: "+15550100002" }, status: "busy" },
      { match: { agent_id: stagingId }, status: "failed" },
    ]);
    await callStaging(["+15550100001", "+15550100002", "+15550100003"]);
    await setCallOutcomes(emu, []);
    const preview = await prod.preview();
    expect(said(preview)).toMatch(
      /warning: promotion from agent [0-9a-f-]+ version 0 not yet proven: 0 of 1 calls \(origins [a-z, ]+\); not counted: 3 never connected; `pulumi up` will refuse until it is/,
    );
    const up = await prod.up({ allowFailure: true });
    expect(up.code).not.toBe(0);
    expect(said(up)).toMatch(
      /has not proven itself yet: 0 of 1 calls \(origins [a-z, ]+\); not counted: 3 never connected\. Nothing was published or put live/,
    );
    expect(await liveVersion(agentOf(prod))).toBeNull();
  }, 300_000);

  test("a rate no call measures is not met (every answered call's value null)", async () => {
    await setCallOutcomes(emu, [
      { match: { agent_id: stagingId }, analysis: { "Default Analysis": { "User Sentiment": null } } },
    ]);
    await callStaging(["+15550100004", "+15550100005"]);
    await setCallOutcomes(emu, []);
    await setConfig(prod, { promote: { rates: [RATE] } });
    const preview = await prod.preview();
    expect(said(preview)).toMatch(/not yet proven: no call carries Default Analysis\/User Sentiment yet/);
    const up = await prod.up({ allowFailure: true });
    expect(up.code).not.toBe(0);
    expect(said(up)).toMatch(
      /has not proven itself yet: no call carries Default Analysis\/User Sentiment yet \(at most 50%\); 2 calls left out: 2 with a null value \(nothing extracted\); not counted: 3 never connected\. Met: 2 calls \(at least 1; [^)]*\)[^.]*\. Nothing was published or put live/,
    );
    expect(await liveVersion(agentOf(prod))).toBeNull();
  }, 300_000);

  test("real proof is accepted: answered, analysed calls carrying the rate's analysis within its bound", async () => {
    await setCallOutcomes(emu, [
      {
        match: { agent_id: stagingId, to_number: "+15550100006" },
        analysis: { "Default Analysis": { "User Sentiment": "negative" } },
      },
    ]);
    await callStaging(["+15550100006", "+15550100007", "+15550100008"]);
    await setCallOutcomes(emu, []);
    const preview = await prod.preview();
    expect(said(preview)).not.toContain("not yet proven");
    await prod.upAndSettle({ quiet: true });
    const out = await prod.outputs();
    expect(out.promotion).toMatchObject({
      fromAgentId: stagingId,
      fromVersion: 0,
      calls: 5,
      rates: [{ analysis: SENTIMENT, value: "negative", measured: 3, share: 1 / 3, atMost: 0.5 }],
    });
    expect(await liveVersion(out.agentId)).toBe(out.version);
  }, 300_000);

  test("a late `live: true` after staging moved on is refused at preview and at up", async () => {
    const before = await prod.outputs();
    // Staging runs a new prompt and proves it; production publishes it without putting it live.
    await moveStaging("Ask for the order number and the name.");
    await callStaging(["+15550100009"]);
    await setConfig(prod, { prompt: prompt("Ask for the order number and the name."), live: false });
    await prod.up();
    const held = await prod.outputs();
    expect(held.version).toBeGreaterThan(before.version);
    expect(await liveVersion(before.agentId)).toBe(before.version);
    // Staging moves on again; production's held version no longer matches what staging runs.
    await moveStaging("Ask for the order number and the email.");
    await setConfig(prod, { live: true });
    const preview = await prod.preview({ allowFailure: true });
    expect(preview.code).not.toBe(0);
    expect(said(preview)).toMatch(/differs from staging's live version 2 of agent [0-9a-f-]+/);
    expect(said(preview)).toContain(
      'systemPrompt: staging line 5: "Ask for the order number and the email.", production line 5: "Ask for the order number and the name."',
    );
    const up = await prod.up({ allowFailure: true });
    expect(up.code).not.toBe(0);
    // `up` runs the same check first: refused before anything is written.
    expect(said(up)).toContain(
      'systemPrompt: staging line 5: "Ask for the order number and the email.", production line 5: "Ask for the order number and the name."',
    );
    expect(await liveVersion(before.agentId)).toBe(before.version);
  }, 300_000);

  test("staging moving while production's test calls run refuses the activation: staging and the proof are read again after verify", async () => {
    const before = await liveVersion(agentOf(prod));
    const ask = "Ask for the order number and the email.";
    await callStaging(["+15550100010"]);
    await setConfig(prod, {
      prompt: prompt(ask),
      live: true,
      verify: { calls: [{ toNumber: "+15550100099" }], timeoutSeconds: 60 },
    });
    await clearRequestLog(emu);
    const running = prod.up({ allowFailure: true });
    // The test call is placed (after the check before publishing): staging moves, outside Pulumi.
    const placed = async () =>
      (await requestLog(emu)).some((e) => e.method === "POST" && e.path === "/v1/calls");
    const deadline = Date.now() + 60_000;
    while (!(await placed())) {
      if (Date.now() > deadline) throw new Error("production's test call was never placed");
      await new Promise((r) => setTimeout(r, 50));
    }
    const draft = await client.agents.patch(stagingId, { system_prompt: prompt("Ask for the email.") });
    await client.versions.publish(stagingId, draft.version);
    await client.versions.activate(stagingId, draft.version);
    const up = await running;
    expect(up.code).not.toBe(0);
    expect(said(up)).toMatch(
      new RegExp(
        `staging's live version of agent ${stagingId} moved from 2 to ${draft.version} while this deploy ran \\(after it was checked, before version \\d+ went live\\)\\. Nothing was put live`,
      ),
    );
    // The test call ran, and nothing of it went live.
    expect(await liveVersion(agentOf(prod))).toBe(before);
  }, 300_000);
});
