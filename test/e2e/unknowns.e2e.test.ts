/**
 * Values unknown at preview, end to end: nested inputs of an Agent built from outputs of other
 * resources of the same program (not created yet at the first preview) and from another stack.
 * The preview passes without a false refusal, `up` writes the values they turn out to be, and
 * nothing is left to change afterwards.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { DEFAULT_API_KEY, type RunningEmulator, startEmulator } from "../../src/emulator";
import { PulumiProject } from "../support/pulumi";

const program = `
import * as pulumi from "@pulumi/pulumi";
import * as va from "pulumi-voice-agent";

if (pulumi.getStack() === "source") {
  module.exports = { transferNumber: "+919800000001", voiceId: "meera" };
} else {
  const other = new pulumi.StackReference(\`organization/\${pulumi.getProject()}/source\`);
  const kb = new va.KnowledgeBase("faq", {
    name: "Unknowns FAQ",
    documents: [{ name: "hours", text: "Open 9 to 6." }],
  });
  // Unknown until the knowledge base exists: the first preview sees them as unknown.
  const later = <T>(value: T) => kb.knowledgeBaseId.apply(() => value);
  const agent = new va.Agent("support", {
    name: "Unknowns agent",
    systemPrompt: "## Agent Purpose\\nHelp. Use <transfer_call> to reach a human.",
    language: { default: "en-IN", additional: ["hi-IN"] },
    voice: { provider: later("sarvam"), voiceId: other.getOutput("voiceId") as pulumi.Output<string> },
    variables: [{ key: later("order_id"), defaultValue: "none" }, { key: "channel", defaultValue: later("web") }],
    builtinTools: {
      transferCall: {
        enabled: true,
        numbers: [
          { number: other.getOutput("transferNumber") as pulumi.Output<string>, timezone: "Asia/Kolkata", startHour: 9, endHour: 18 },
          { number: "+919800000002", timezone: later("Asia/Kolkata"), startHour: later(10), endHour: 17 },
        ],
      },
    },
    knowledgeBaseIds: [kb.knowledgeBaseId],
    memory: { enabled: true, fields: [{ key: "city", type: later("string"), label: "City" }] },
  });
  module.exports = { agentId: agent.agentId };
}
`;

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
});
afterAll(async () => {
  await emu?.close();
});

test("nested values from other resources and another stack pass preview and deploy as they resolve", async () => {
  const app = await PulumiProject.create({
    program,
    name: "unknowns",
    config: { "voice-agent:baseUrl": emu.url },
    secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
  });
  const source = await app.withStack("source");
  await source.up();

  const preview = await app.preview();
  expect(preview.stdout + preview.stderr).not.toMatch(/is not a voice|Field required|missing|error:/i);
  await app.upAndSettle();

  const { agentId } = await app.outputs();
  const agent = (await (
    await fetch(`${emu.url}/v1/agents/${agentId}`, {
      headers: { authorization: `Bearer ${DEFAULT_API_KEY}` },
    })
  ).json()) as {
    voice: { provider: string; voice_id: string };
    variables: { key: string; default_value: string | null; system_defined: boolean }[];
    builtin_tools: { transfer_call: { numbers: { number: string; timezone: string; start_hour: number }[] } };
    memory: { fields: { key: string; type: string }[] };
  };
  expect(agent.voice).toMatchObject({ provider: "sarvam", voice_id: "meera" });
  expect(agent.variables.filter((v) => !v.system_defined)).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ key: "order_id", default_value: "none" }),
      expect.objectContaining({ key: "channel", default_value: "web" }),
    ]),
  );
  expect(agent.builtin_tools.transfer_call.numbers.map((n) => n.number)).toEqual([
    "+919800000001",
    "+919800000002",
  ]);
  expect(agent.builtin_tools.transfer_call.numbers[1]).toMatchObject({
    timezone: "Asia/Kolkata",
    start_hour: 10,
  });
  expect(agent.memory.fields).toEqual([expect.objectContaining({ key: "city", type: "string" })]);
}, 300_000);
