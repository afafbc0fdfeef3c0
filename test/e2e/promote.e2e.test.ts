/**
 * Promotion with proof through the real Pulumi CLI: two stacks of one project (`staging`, `prod`)
 * against one emulator, in one workspace. Production reads staging's agent id from a
 * StackReference and is refused, at preview and at `up`, for a different prompt, a missing
 * knowledge base, a differing variable. A proof that falls short (too short a soak, too few calls,
 * a rate above its bound) passes the preview with a warning naming what is missing (proof
 * accumulates between the pull request and the deploy) and is refused at `up`; once staging has
 * taken more calls the next `up` publishes and puts live, with production's live configuration
 * equal to staging's (`ignore` honoured) and the `promotion` output filled; a later change short of
 * a higher bar warns at preview and is refused at `up`, the promoted version staying live. The pull-request
 * report's Promotion line is checked for a refusal, a promotion not yet proven, and a proven one.
 *
 * Soak without waiting: `soakMinutes` takes fractions (0.05 is 3 s), so the test waits seconds.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { closeDispatchers, VoiceAgentClient } from "../../src/client";
import { DEFAULT_API_KEY, type RunningEmulator, startEmulator } from "../../src/emulator";
import { parsePreview, renderReport } from "../../src/gitops/report";
import { namesOf } from "../../src/resources/agent/names";
import { configDigest, fullConfig, portableConfig, withoutPaths } from "../../src/resources/agent/projection";
import { controlCall } from "../support/control";
import { PulumiProject } from "../support/pulumi";

/** One program for both stacks; what differs is each stack's `app:*` configuration. */
const PROGRAM = `
import * as pulumi from "@pulumi/pulumi";
import * as va from "pulumi-voice-agent";

const cfg = new pulumi.Config("app");
const stack = pulumi.getStack();
const kbName = cfg.get("kb");
const kb = kbName
  ? new va.KnowledgeBase("faq", { name: kbName, documents: [{ name: "hours", text: "Open 9 to 6." }] })
  : undefined;
const agent = new va.Agent("support", {
  name: "Support " + stack,
  systemPrompt: cfg.require("prompt"),
  variables: [{ key: "region", defaultValue: cfg.get("region") ?? "north" }],
  ...(kb ? { knowledgeBaseIds: [kb.id] } : {}),
});
const promote = cfg.getObject<Omit<va.PromoteArgs, "from">>("promote");
// Staging's agent id, from the staging stack's outputs: known at preview.
const from = promote
  ? (new pulumi.StackReference("organization/promote/staging").requireOutput("agentId") as pulumi.Output<string>)
  : undefined;
const live = new va.AgentVersion("support-live", { agent, ...(promote && from ? { promote: { ...promote, from } } : {}) });
export const agentId = agent.agentId;
export const digest = agent.configDigest;
export const version = live.version;
export const promotion = live.promotion;
export const notes = live.notes;
`;

const prompt = (ask: string) =>
  `## Agent Purpose\nHelp customers with orders.\n\n## Call Flow\n${ask}\nThen answer.\n`;
const PROMPT = prompt("Ask for the order number.");
const IGNORE = ["name"];
const UNHAPPY = "+15550100001";
const HAPPY = "+15550100002";

let emu: RunningEmulator;
let client: VoiceAgentClient;
let staging: PulumiProject;
let prod: PulumiProject;

async function setConfig(p: PulumiProject, values: Record<string, unknown>): Promise<void> {
  const pairs = Object.entries(values).flatMap(([k, v]) => [
    "--plaintext",
    `app:${k}=${typeof v === "string" ? v : JSON.stringify(v)}`,
  ]);
  await p.pulumi(["config", "set-all", ...pairs]);
}

/** The environment-independent configuration of an agent's live version, `ignore` left out. */
async function liveConfig(agentId: string) {
  const live = await client.agents.get(agentId, { version: "live" });
  const config = fullConfig(live);
  const names = await namesOf(client, {
    knowledgeBases: live.knowledge_base_ids,
    analysisGroups: live.analysis_group_ids,
  });
  return withoutPaths(portableConfig(config, names), IGNORE);
}

/** Inbound calls to staging's agent, one per number, as its callers make them. */
async function callStaging(agentId: string, numbers: string[]): Promise<void> {
  for (const to_number of numbers)
    await controlCall(emu, "POST", "/_emulator/calls", {
      agent_id: agentId,
      direction: "inbound",
      to_number,
    });
}

/** Production's agents (named by the program after the stack), with their live version. */
async function prodAgents() {
  return (await client.agents.list().toArray()).filter((a) => a.name === "Support prod");
}

/** Until the calls placed have finished and been analysed (the emulator's calls take 0.3 s). */
const settle = () => new Promise((r) => setTimeout(r, 800));

/** `pulumi preview --json` of `p` and its report, as a pull request shows it. */
async function report(p: PulumiProject): Promise<string> {
  const out = await p.pulumi(["preview", "--json"], { allowFailure: true });
  return renderReport(parsePreview(JSON.parse(out.stdout)));
}

beforeAll(async () => {
  emu = await startEmulator({ port: 0, callSeconds: 0.3 });
  client = new VoiceAgentClient({ baseUrl: emu.url, apiKey: DEFAULT_API_KEY });
  staging = await PulumiProject.create({
    program: PROGRAM,
    name: "promote",
    config: { "voice-agent:baseUrl": emu.url, "app:prompt": PROMPT, "app:kb": "FAQ" },
    secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
  });
  // The project's first stack is `test`; staging and prod are its two environments.
  staging = await staging.withStack("staging", {
    "voice-agent:baseUrl": emu.url,
    "app:prompt": PROMPT,
    "app:kb": "FAQ",
  });
  await staging.pulumi(["config", "set", "--secret", "voice-agent:apiKey", DEFAULT_API_KEY]);
  prod = await staging.withStack("prod", { "voice-agent:baseUrl": emu.url });
  await prod.pulumi(["config", "set", "--secret", "voice-agent:apiKey", DEFAULT_API_KEY]);
  await staging.up();
}, 300_000);

afterAll(async () => {
  staging?.cleanup();
  await closeDispatchers();
  await emu?.close();
});

describe("promoting staging to production", () => {
  test("refused at preview and at up, naming staging's version and each field with both values", async () => {
    await setConfig(prod, {
      prompt: prompt("Ask for the order id."),
      region: "south",
      promote: { ignore: IGNORE },
    });
    const preview = await prod.preview({ allowFailure: true });
    expect(preview.code).not.toBe(0);
    const said = `${preview.stdout}\n${preview.stderr}`;
    expect(said).toMatch(
      /differs from staging's live version 0 of agent [0-9a-f-]+, live since .*, in 3 fields/,
    );
    expect(said).toContain(
      'systemPrompt: staging line 5: "Ask for the order number.", production line 5: "Ask for the order id."',
    );
    expect(said).toContain('knowledgeBaseIds (by name): staging ["FAQ"], production []');
    expect(said).toContain('variables[region].defaultValue: staging "north", production "south"');
    expect(await report(prod)).toMatch(
      /#### Promotion\n[\s\S]*`support-live`: \*\*refused\*\*: promote: production's configuration differs/,
    );

    // `up` checks again before anything else of the version happens.
    const up = await prod.up({ allowFailure: true });
    expect(up.code).not.toBe(0);
    expect(`${up.stdout}\n${up.stderr}`).toContain("systemPrompt: staging line 5");
    // Nothing of production went live: its one agent (created before the AgentVersion was refused) is off air.
    expect((await prodAgents()).map((a) => a.live_version)).toEqual([null]);
  }, 300_000);

  test("too short a soak: preview passes with a warning, up refuses naming it", async () => {
    await setConfig(prod, {
      prompt: PROMPT,
      region: "south",
      kb: "FAQ",
      promote: { ignore: [...IGNORE, "variables[region].defaultValue"], soakMinutes: 60, minCalls: 0 },
    });
    const soak = await prod.preview();
    expect(`${soak.stdout}\n${soak.stderr}`).toMatch(
      /warning: promotion from agent [0-9a-f-]+ version 0 not yet proven: live [\d.]+ of 60 minutes; `pulumi up` will refuse until it is/,
    );
    // `up` with its preview pass: the warning in the preview pass only, then the refusal.
    const refused = await prod.pulumi(["up", "--yes"], { allowFailure: true });
    const said = `${refused.stdout}\n${refused.stderr}`;
    expect(refused.code).not.toBe(0);
    const [previewPass, updatePass] = said.split(/^Updating \(prod\):$/m);
    expect(previewPass).toContain("not yet proven: live");
    expect(updatePass).toBeDefined();
    expect(updatePass).not.toContain("not yet proven");
    expect(said).toMatch(
      /has not proven itself yet: live [\d.]+ of 60 minutes\. Nothing was published or put live: what is live stays live/,
    );
  }, 300_000);

  test("a misspelt rate analysis is refused at preview, by field, naming the closest analysis staging has", async () => {
    await setConfig(prod, {
      prompt: PROMPT,
      region: "south",
      kb: "FAQ",
      promote: {
        ignore: [...IGNORE, "variables[region].defaultValue"],
        minCalls: 0,
        rates: [{ analysis: "Default Analysis/User sentiment", value: "negative", atMost: 0.5 }],
      },
    });
    const preview = await prod.preview({ allowFailure: true });
    expect(preview.code).not.toBe(0);
    expect(`${preview.stdout}\n${preview.stderr}`).toMatch(
      /promote\.rates\[0\]\.analysis: staging's live version 0 of agent [0-9a-f-]+ produces no analysis "Default Analysis\/User sentiment" .*; the closest it has is "Default Analysis\/User Sentiment"/,
    );
  }, 300_000);

  test("too few calls, a rate above its bound: preview passes, up refuses; more calls, then up publishes: production's live configuration equals staging's; a later change short of a higher bar keeps it live", async () => {
    const stagingId = (await staging.outputs()).agentId as string;
    const proof = {
      ignore: [...IGNORE, "variables[region].defaultValue"],
      soakMinutes: 0.01,
      minCalls: 3,
      rates: [{ analysis: "Default Analysis/User Sentiment", value: "negative", atMost: 0.34 }],
    };
    await setConfig(prod, { promote: proof });
    // Staging's traffic: callers on the inbound line, one of them unhappy; a test call through the
    // API (origin `api`) does not count.
    await controlCall(emu, "PUT", "/_emulator/call-outcomes", {
      rules: [
        { match: { to_number: UNHAPPY }, analysis: { "Default Analysis": { "User Sentiment": "negative" } } },
      ],
    });
    await callStaging(stagingId, [UNHAPPY, HAPPY]);
    await client.calls.place({ agent_id: stagingId, to_number: HAPPY }, { idempotencyKey: randomUUID() });
    await settle();
    // The pull request opened before staging has proven itself previews green, saying what is missing.
    const short = await prod.preview();
    expect(`${short.stdout}\n${short.stderr}`).toMatch(
      new RegExp(
        `warning: promotion from agent ${stagingId} version 0 not yet proven: 2 of 3 calls \\(origins widget, batch, inbound\\); ` +
          `Default Analysis/User Sentiment measured on 2 of the 2 calls, "negative" on 1: too few to judge \\(at least 3 measured calls needed; at most 34%\\); \`pulumi up\` will refuse until it is`,
      ),
    );
    expect(await report(prod)).toMatch(
      /`support-live`: \*\*not yet proven\*\*: staging agent `[0-9a-f-]+` version \*\*0\*\*.*2 of 3 calls \(.*\): \*\*not met\*\*; `up` will refuse until it is\./,
    );
    // The scheduled deploy before the proof holds: refused, nothing of production goes live.
    const refused = await prod.up({ allowFailure: true });
    expect(refused.code).not.toBe(0);
    expect(`${refused.stdout}\n${refused.stderr}`).toMatch(
      /has not proven itself yet: 2 of 3 calls \(origins widget, batch, inbound\); Default Analysis\/User Sentiment measured on 2 of the 2 calls, "negative" on 1: too few to judge \(at least 3 measured calls needed; at most 34%\)\. Met: live [\d.]+ minutes \(at least 0\.01\)\. Nothing was published or put live/,
    );
    expect((await prodAgents()).map((a) => a.live_version)).toEqual([null]);

    await callStaging(stagingId, [HAPPY, HAPPY]);
    await settle();
    expect(await report(prod)).toMatch(
      /#### Promotion\n[\s\S]*`support-live`: staging agent `[0-9a-f-]+` version \*\*0\*\*, live for \d+ (s|min) .*; 4 calls counted; .*4 calls \(at least 3; .*\): met; .*on 1 of 4 calls \(25%, at most 34%\): met\./,
    );
    // The next deploy publishes and puts live; no warning in it, nor in the no-op preview and refresh.
    await prod.upAndSettle({ quiet: true });
    const out = await prod.outputs();
    expect(out.promotion).toMatchObject({
      fromAgentId: stagingId,
      fromVersion: 0,
      calls: 4,
      rates: [{ analysis: "Default Analysis/User Sentiment", value: "negative", share: 0.25, atMost: 0.34 }],
    });
    expect(out.notes).toContain(`Promoted from agent ${stagingId} version 0`);
    const [s, p] = [await liveConfig(stagingId), await liveConfig(out.agentId)];
    // Equal but for the variable's default, which `ignore` lets differ.
    expect(withoutPaths(p, ["variables[region].defaultValue"])).toEqual(
      withoutPaths(s, ["variables[region].defaultValue"]),
    );
    expect(out.promotion.configDigest).toBe(
      configDigest(withoutPaths(s, ["variables[region].defaultValue"])),
    );

    // A later change (an update of the AgentVersion) under a higher bar: the preview warns, `up`
    // refuses, and the version promoted above stays live.
    await setConfig(prod, { region: "west", promote: { ...proof, minCalls: 10 } });
    const higher = await prod.preview();
    expect(`${higher.stdout}\n${higher.stderr}`).toMatch(
      /warning: promotion from agent [0-9a-f-]+ version 0 not yet proven: 4 of 10 calls/,
    );
    const kept = await prod.up({ allowFailure: true });
    expect(kept.code).not.toBe(0);
    expect(`${kept.stdout}\n${kept.stderr}`).toContain("has not proven itself yet: 4 of 10 calls");
    expect((await client.agents.get(out.agentId, { version: "live" })).version).toBe(out.version);
  }, 300_000);
});
