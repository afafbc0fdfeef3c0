/**
 * Compare-and-set for the resources the service keeps no revision of: an update first compares
 * what the stack last saw with what the service holds, and a dashboard edit of a managed field is
 * refused with what to do next, never overwritten. A dashboard edit of a field the program does
 * not manage is not a conflict.
 */
import { beforeEach, describe, expect, test } from "vitest";
import type { VoiceAgentClient } from "../../src/client";
import type { RunningEmulator } from "../../src/emulator";
import { ChangedOutsidePulumiError } from "../../src/provider/managed";
import { analysisGroupProvider } from "../../src/resources/analysisGroup/provider";
import { knowledgeBaseProvider } from "../../src/resources/knowledgeBase/provider";
import { widgetProvider } from "../../src/resources/widget/provider";
import { checkAndCreate, emulatorForFile, testContext } from "./support";

let emu: RunningEmulator;
let client: VoiceAgentClient;
emulatorForFile({}, (e, c) => {
  emu = e;
  client = c;
});
beforeEach(async () => {
  await fetch(`${emu.url}/_emulator/reset`, { method: "POST" });
});

const refusal = /was changed outside Pulumi \((.+)\)\. Nothing was written\. Run `pulumi refresh`/;

describe("a dashboard edit of a managed field is never overwritten", () => {
  test("Widget", async () => {
    const h = widgetProvider(testContext);
    const agent = await client.agents.create({ name: "Widget owner" });
    const { id, inputs, outs } = await checkAndCreate(h, {
      agentId: agent.id,
      name: "Ours",
      theme: { title: "Ours" },
      rotateKeyOnCreate: false,
    });
    await client.widget.patch(agent.id, { theme: { title: "Dashboard" } });
    const err = await h.update(id, outs, { ...inputs, name: "Ours, renamed" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChangedOutsidePulumiError);
    expect((err as Error).message).toMatch(refusal);
    expect((err as Error).message).toContain("theme");
    const held = await client.widget.get(agent.id);
    expect(held.name).toBe("Ours");
    expect(held.theme.title).toBe("Dashboard");
    // A field the program does not manage may change elsewhere: the update goes through.
    await client.widget.patch(agent.id, { theme: { title: "Ours", subtitle: "Dashboard's" } });
    await h.update(id, outs, { ...inputs, name: "Ours, renamed" });
    expect((await client.widget.get(agent.id)).name).toBe("Ours, renamed");
  });

  test("KnowledgeBase", async () => {
    const h = knowledgeBaseProvider(testContext);
    const { id, inputs, outs } = await checkAndCreate(h, {
      name: "Ours",
      description: "Ours",
      documents: [{ name: "a", text: "one" }],
    });
    await client.knowledgeBases.replace(id, {
      name: "Ours",
      description: "Dashboard",
      documents: [{ name: "a", text: "one" }],
    });
    const err = await h.update(id, outs, { ...inputs, name: "Renamed" }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(refusal);
    expect((err as Error).message).toContain("description");
    const held = await client.knowledgeBases.get(id);
    expect(held).toMatchObject({ name: "Ours", description: "Dashboard" });
  });

  test("AnalysisGroup", async () => {
    const h = analysisGroupProvider(testContext);
    const { id, inputs, outs } = await checkAndCreate(h, {
      name: "Ours",
      items: [{ name: "Resolved", type: "boolean", description: "Ours" }],
    });
    const group = await client.analysis.get(id);
    await client.analysis.replace(id, {
      name: "Ours",
      items: (group?.items ?? []).map(({ created_at: _c, ...it }) => ({
        ...it,
        type: "boolean" as const,
        description: "Dashboard",
      })),
    });
    const err = await h.update(id, outs, { ...inputs, name: "Renamed" }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(refusal);
    expect((err as Error).message).toContain("items");
    const held = await client.analysis.get(id);
    expect(held?.name).toBe("Ours");
    expect(held?.items[0]?.description).toBe("Dashboard");
  });
});
