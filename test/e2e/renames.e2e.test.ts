/**
 * A knowledge base renamed in the program: the agent attaching it records its configuration digest
 * under the new name in the same `up` (its `configDigest` equals that of an agent deployed with the
 * new name from the start), publishes nothing, and the stack settles: no change at the next preview
 * or refresh.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { DEFAULT_API_KEY, startEmulator } from "../../src/emulator";
import { PulumiProject } from "../support/pulumi";

type Emulator = Awaited<ReturnType<typeof startEmulator>>;
let emu: Emulator;

beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
});
afterAll(async () => {
  await emu?.close();
});

const program = (kbName: string) => `
import * as va from "pulumi-voice-agent";
const kb = new va.KnowledgeBase("faq", { name: ${JSON.stringify(kbName)}, documents: [{ name: "hours", text: "We open at nine." }] });
const agent = new va.Agent("desk", {
  name: "Renames desk",
  systemPrompt: "## Agent Purpose\\nAnswer from the FAQ.",
  knowledgeBaseIds: [kb.id],
});
const live = new va.AgentVersion("desk-live", { agent });
export const configDigest = agent.configDigest;
export const version = live.version;
`;

const project = (kbName: string) =>
  PulumiProject.create({
    program: program(kbName),
    config: { "voice-agent:baseUrl": emu.url },
    secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
  });

test("renaming a knowledge base updates the attaching agent's digest in the same up, and settles", async () => {
  const p = await project("Store FAQ");
  const fresh = await project("Shop FAQ");
  try {
    await p.upAndSettle();
    const before = await p.outputs();
    p.setProgram(program("Shop FAQ"));
    const preview = JSON.parse((await p.pulumi(["preview", "--json"])).stdout).steps as any[];
    const step = (name: string) => preview.find((s) => s.urn.endsWith(`::${name}`));
    expect(step("desk")?.op).toBe("update");
    expect(step("desk-live")?.op ?? "same").toBe("same");
    await p.upAndSettle();
    const after = await p.outputs();
    expect(after.configDigest).not.toBe(before.configDigest);
    expect(after.version).toBe(before.version);
    // The same digest as an agent that attached "Shop FAQ" from the start (another stack).
    await fresh.up();
    expect((await fresh.outputs()).configDigest).toBe(after.configDigest);
  } finally {
    p.cleanup();
    fresh.cleanup();
  }
}, 600_000);
