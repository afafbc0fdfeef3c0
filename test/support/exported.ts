/**
 * What the export's end-to-end tests (TypeScript and YAML) assert alike: every exported object is
 * in the state under its own id, and a one-line edit to two exported prompts deploys each as the
 * next version while nothing else is written.
 */
import { readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { expect } from "vitest";
import type { VoiceAgentClient } from "../../src/client";
import type { ExportPlan } from "../../src/export/plan";
import { clearRequestLog, type EmulatorAddress, requestLog } from "./control";
import type { PulumiProject } from "./pulumi";
import type { Shapes } from "./workspace";

/** The write requests the emulator saw, as `METHOD /path`. */
export const writesTo = async (emu: EmulatorAddress) =>
  (await requestLog(emu)).filter((r) => r.method !== "GET").map((r) => `${r.method} ${r.path}`);

/** Every resource of `plan` is in `p`'s state (types `<prefix><Type>`), adopting its own object. */
export async function expectAdopted(p: PulumiProject, plan: ExportPlan, prefix: string): Promise<void> {
  const state = JSON.parse(await p.exportState()) as {
    deployment: { resources: { urn: string; id?: string; outputs?: Record<string, unknown> }[] };
  };
  for (const r of plan.resources) {
    const found = state.deployment.resources.find((s) => s.urn.endsWith(`${prefix}${r.type}::${r.name}`));
    expect(found, `${r.type} ${r.name}`).toBeDefined();
    const adopted = r.type === "AgentVersion" || r.type === "Widget" ? found?.outputs?.agentId : found?.id;
    expect(adopted, `${r.type} ${r.name}`).toBe(r.adopts);
  }
}

/**
 * A one-line change to two exported prompts (`front-desk`, `billing`): each deploys as the next
 * version and goes live; nothing else is written (the draft ahead of its live version untouched).
 */
export async function expectPromptEditsDeploy(
  p: PulumiProject,
  emu: EmulatorAddress,
  client: VoiceAgentClient,
  shapes: Shapes,
): Promise<void> {
  for (const [file, line] of [
    ["front-desk.md", "Mention the new opening hours."],
    ["billing.md", "Offer to email a copy of the invoice."],
  ] as const) {
    const prompt = path.join(p.dir, "prompts", file);
    writeFileSync(prompt, `${readFileSync(prompt, "utf8")}${line}\n`);
  }
  await clearRequestLog(emu);
  await p.upAndSettle({ quiet: true });
  expect((await client.agents.get(shapes.live, { version: "live" })).version).toBe(1);
  expect((await client.agents.get(shapes.severalVersions, { version: "live" })).version).toBe(3);
  expect((await client.agents.get(shapes.live, { version: "live" })).system_prompt).toContain(
    "Mention the new opening hours.",
  );
  const touched = new Set((await writesTo(emu)).map((w) => w.split("/")[3]));
  expect([...touched].sort()).toEqual([shapes.live, shapes.severalVersions].sort());
  expect(await client.agents.get(shapes.draftAhead)).toMatchObject({
    version: 1,
    is_published: false,
    live_version: 0,
  });
}
