/**
 * Creates that recognise their own earlier attempt across processes (docs/reliability.md): the
 * program gives each Agent, KnowledgeBase and AnalysisGroup a marker stable for that resource of
 * that stack; a create Pulumi runs again after an interrupted `up` (a new provider process, so a
 * new client) adopts the object the killed attempt made instead of making a second one. Objects of
 * another stack, and objects whose marker the user already replaced, are never adopted.
 */
import * as pulumi from "@pulumi/pulumi";
import { beforeEach, describe, expect, test } from "vitest";
import { VoiceAgentClient } from "../../src/client";
import { DEFAULT_API_KEY, type RunningEmulator } from "../../src/emulator";
import { contextFor } from "../../src/provider/context";
import type { ResourceHandler } from "../../src/provider/resource";
import { agentProvider } from "../../src/resources/agent/provider";
import { analysisGroupProvider } from "../../src/resources/analysisGroup/provider";
import { createMarker } from "../../src/resources/createMarker";
import { knowledgeBaseProvider } from "../../src/resources/knowledgeBase/provider";
import { emulatorForFile } from "./support";

let emu: RunningEmulator;
let client: VoiceAgentClient;
emulatorForFile({}, (e, c) => {
  emu = e;
  client = c;
});
beforeEach(async () => {
  await fetch(`${emu.url}/_emulator/reset`, { method: "POST" });
});

/** A provider as a fresh provider process has it: its own client, nothing shared with an earlier one. */
function inNewProcess(factory: (ctx: ReturnType<typeof contextFor>) => ResourceHandler): ResourceHandler {
  return factory(contextFor(new VoiceAgentClient({ baseUrl: emu.url, apiKey: DEFAULT_API_KEY })));
}

async function created(h: ResourceHandler, inputs: Record<string, unknown>) {
  const checked = await h.check({}, inputs);
  expect(checked.failures ?? []).toEqual([]);
  return h.create(checked.inputs);
}

/** The marker the program computes for a resource in `stack` of the project `support-bots`. */
async function markerIn(stack: string, type: string, name: string, parent?: pulumi.Resource) {
  await pulumi.runtime.setMocks(
    { newResource: (args) => ({ id: `${args.name}-id`, state: args.inputs }), call: () => ({}) },
    "support-bots",
    stack,
    false,
    "acme",
  );
  return new Promise<string>((resolve) =>
    pulumi.output(createMarker(type, name, parent ? { parent } : {})).apply(resolve),
  );
}

const M = "pulumi-voice-agent:create:";

describe("the program's marker", () => {
  test("is the same for the same resource of the same stack, and differs across stacks, names, kinds and parents", async () => {
    const dev1 = await markerIn("dev", "voice-agent:Agent", "support");
    const dev2 = await markerIn("dev", "voice-agent:Agent", "support");
    const prod = await markerIn("prod", "voice-agent:Agent", "support");
    const other = await markerIn("dev", "voice-agent:Agent", "support-2");
    const kb = await markerIn("dev", "voice-agent:KnowledgeBase", "support");
    // Only the parent's URN counts.
    const parent = { urn: pulumi.output("urn:pulumi:dev::support-bots::acme:Bots::emea") } as pulumi.Resource;
    const child = await markerIn("dev", "voice-agent:Agent", "support", parent);
    expect(dev1).toMatch(new RegExp(`^${M}[0-9a-f]{32}$`));
    expect(dev2).toBe(dev1);
    expect(new Set([dev1, prod, other, kb, child]).size).toBe(5);
  });
});

describe("a create run again after an interrupted up adopts what the killed attempt made", () => {
  test("Agent: one agent, adopted by a new process; brought to a changed declaration", async () => {
    const marker = `${M}agent-support-dev`;
    const first = await created(inNewProcess(agentProvider), {
      name: "Support",
      systemPrompt: "v1",
      createMarker: marker,
    });
    const again = await created(inNewProcess(agentProvider), {
      name: "Support",
      systemPrompt: "v1",
      createMarker: marker,
    });
    expect(again.id).toBe(first.id);
    // The program changed between the killed up and the recovery: the adopted agent gets the change.
    const changed = await created(inNewProcess(agentProvider), {
      name: "Support",
      systemPrompt: "v2",
      createMarker: marker,
    });
    expect(changed.id).toBe(first.id);
    expect((await client.agents.get(first.id)).system_prompt).toBe("v2");
    expect((await client.agents.list().toArray()).filter((a) => a.name === "Support")).toHaveLength(1);
  });

  test("Agent: another stack's agent of the same name is never adopted", async () => {
    const dev = await created(inNewProcess(agentProvider), { name: "Support", createMarker: `${M}dev` });
    const prod = await created(inNewProcess(agentProvider), { name: "Support", createMarker: `${M}prod` });
    expect(prod.id).not.toBe(dev.id);
    expect((await client.agents.list().toArray()).filter((a) => a.name === "Support")).toHaveLength(2);
  });

  test("Agent: one whose marker the user replaced with their own notes is never mistaken for an orphan", async () => {
    const marker = `${M}agent-notes`;
    const first = await created(inNewProcess(agentProvider), { name: "Support", createMarker: marker });
    await client.agents.patch(first.id, { notes: "Ours now, from the dashboard" }, { version: 0 });
    const second = await created(inNewProcess(agentProvider), { name: "Support", createMarker: marker });
    expect(second.id).not.toBe(first.id);
  });

  test("one listing per process finds the earlier agents: creates cost one request more per deployment, not per agent", async () => {
    const marker = (i: number) => `${M}many-${i}`;
    const h = inNewProcess(agentProvider);
    const before = (await (await fetch(`${emu.url}/_emulator/requests`)).json()) as unknown[];
    await Promise.all(
      [0, 1, 2, 3, 4].map((i) => created(h, { name: `Agent ${i}`, createMarker: marker(i) })),
    );
    const log = (
      (await (await fetch(`${emu.url}/_emulator/requests`)).json()) as { method: string; path: string }[]
    )
      .slice(before.length)
      .map((r) => `${r.method} ${r.path.split("?")[0]}`)
      .filter((r) => r.includes("/v1/agents"));
    expect(log.filter((r) => r === "GET /v1/agents")).toHaveLength(1);
    expect(log.filter((r) => r === "POST /v1/agents")).toHaveLength(5);
    expect(log).toHaveLength(6);
  });

  test("KnowledgeBase without a description: the marker stays in it, and the next attempt adopts it", async () => {
    const marker = `${M}kb-faq`;
    const inputs = {
      name: "FAQ",
      documents: [{ name: "hours", text: "Nine to five." }],
      createMarker: marker,
    };
    const first = await created(inNewProcess(knowledgeBaseProvider), inputs);
    expect((await client.knowledgeBases.get(first.id)).description).toBe(marker);
    const again = await created(inNewProcess(knowledgeBaseProvider), inputs);
    expect(again.id).toBe(first.id);
    expect((await client.knowledgeBases.list().toArray()).filter((k) => k.name === "FAQ")).toHaveLength(1);
    // Another stack's knowledge base of the same name is not adopted.
    const prod = await created(inNewProcess(knowledgeBaseProvider), {
      ...inputs,
      createMarker: `${M}kb-prod`,
    });
    expect(prod.id).not.toBe(first.id);
  });

  test("KnowledgeBase with a description: killed before the description was put back, adopted and put back", async () => {
    const marker = `${M}kb-policies`;
    // What a killed attempt leaves: the knowledge base, its description still the marker.
    const orphan = await client.knowledgeBases.create(
      { name: "Policies", description: "Return rules", documents: [{ name: "returns", text: "30 days." }] },
      { marker, keepMarker: true },
    );
    await client.knowledgeBases.replace(orphan.id, {
      name: "Policies",
      description: marker,
      documents: [{ name: "returns", text: "30 days." }],
    });
    const again = await created(inNewProcess(knowledgeBaseProvider), {
      name: "Policies",
      description: "Return rules",
      documents: [{ name: "returns", text: "30 days." }],
      createMarker: marker,
    });
    expect(again.id).toBe(orphan.id);
    expect((await client.knowledgeBases.get(orphan.id)).description).toBe("Return rules");
    expect((await client.knowledgeBases.list().toArray()).filter((k) => k.name === "Policies")).toHaveLength(
      1,
    );
  });

  test("AnalysisGroup: adopted by the next attempt; its items brought to the declaration", async () => {
    const marker = `${M}group-quality`;
    const item = (name: string) => ({ name, description: `${name}?`, type: "boolean" as const });
    const first = await created(inNewProcess(analysisGroupProvider), {
      name: "Quality",
      items: [item("Resolved")],
      createMarker: marker,
    });
    const again = await created(inNewProcess(analysisGroupProvider), {
      name: "Quality",
      items: [item("Resolved"), item("Escalated")],
      createMarker: marker,
    });
    expect(again.id).toBe(first.id);
    const groups = (await client.analysis.list().toArray()).filter((g) => g.name === "Quality");
    expect(groups).toHaveLength(1);
    expect(groups[0]?.items.map((i) => i.name)).toEqual(["Resolved", "Escalated"]);
    expect(groups[0]?.description).toBe(marker);
  });
  test("AnalysisGroup killed after its description replaced the marker: the next create names the group and the fix", async () => {
    // The window a marker cannot cover: the declared description already replaced the marker when
    // the up was killed, so the group carries nothing of this resource's.
    const decl = {
      name: "Quality",
      description: "Filled in after every call.",
      items: [{ name: "Resolved", description: "Resolved?", type: "boolean" as const }],
      createMarker: `${M}group-quality`,
    };
    const first = await created(inNewProcess(analysisGroupProvider), decl);
    const err = await created(inNewProcess(analysisGroupProvider), decl).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain(
      `An analysis group named "Quality" already exists in the workspace (id ${first.id})`,
    );
    expect((err as Error).message).toContain(`set \`adoptId: "${first.id}"\``);
    expect((err as Error).cause).toBeDefined();
    // The fix it names works: adopted, nothing else made.
    const adopted = await created(inNewProcess(analysisGroupProvider), { ...decl, adoptId: first.id });
    expect(adopted.id).toBe(first.id);
    expect((await client.analysis.list().toArray()).filter((g) => g.name === "Quality")).toHaveLength(1);
  });
});
