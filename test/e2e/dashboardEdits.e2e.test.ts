/**
 * A dashboard edit of a managed field of a Widget, a KnowledgeBase or an AnalysisGroup (which the
 * service keeps no revision of) is never overwritten through the real engine: the next `up` that
 * changes the resource stops with "changed outside Pulumi … run `pulumi refresh`", the service
 * keeps the dashboard's values, a refresh brings them in as drift, and `up` then applies the
 * program over them; after which nothing is left to change.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { VoiceAgentClient } from "../../src/client";
import { DEFAULT_API_KEY, type RunningEmulator, startEmulator } from "../../src/emulator";
import { PulumiProject } from "../support/pulumi";

const program = (suffix: string) => `
import * as va from "pulumi-voice-agent";
const agent = new va.Agent("support", { name: "Edits agent" });
const widget = new va.Widget("widget", {
  agentId: agent.agentId,
  name: "Edits widget${suffix}",
  theme: { title: "Ours" },
  rotateKeyOnCreate: false,
});
const kb = new va.KnowledgeBase("faq", {
  name: "Edits FAQ${suffix}",
  description: "Ours",
  documents: [{ name: "hours", text: "Open 9 to 6." }],
});
const group = new va.AnalysisGroup("quality", {
  name: "Edits quality${suffix}",
  items: [{ name: "Resolved", type: "boolean", description: "Ours" }],
});
export const agentId = agent.agentId;
export const kbId = kb.knowledgeBaseId;
export const groupId = group.groupId;
`;

let emu: RunningEmulator;
let client: VoiceAgentClient;
beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
  client = new VoiceAgentClient({ baseUrl: emu.url, apiKey: DEFAULT_API_KEY });
});
afterAll(async () => {
  await emu?.close();
});

test("dashboard edits of a widget, a knowledge base and an analysis group stop the up; refresh, then up", async () => {
  const p = await PulumiProject.create({
    program: program(""),
    name: "dashboard-edits",
    config: { "voice-agent:baseUrl": emu.url },
    secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
  });
  await p.upAndSettle();
  const { agentId, kbId, groupId } = await p.outputs();

  // The dashboard edits one managed field of each.
  await client.widget.patch(agentId, { theme: { title: "Dashboard" } });
  const kb = await client.knowledgeBases.get(kbId);
  await client.knowledgeBases.replace(kbId, {
    name: kb.name,
    description: "Dashboard",
    documents: [{ name: "hours", text: "Open 9 to 6." }],
  });
  const group = await client.analysis.get(groupId);
  await client.analysis.replace(groupId, {
    name: group?.name ?? "",
    items: (group?.items ?? []).map(({ created_at: _c, ...it }) => ({
      ...it,
      type: "boolean" as const,
      description: "Dashboard",
    })),
  });

  // The program changes each resource: the up stops on all three, and nothing is overwritten.
  p.setProgram(program(" v2"));
  // The engine starts no new step after a failure: --continue-on-error lets all three be tried.
  const refused = await p.pulumi(["up", "--yes", "--skip-preview", "--continue-on-error"], {
    allowFailure: true,
  });
  expect(refused.code).not.toBe(0);
  const output = refused.stdout + refused.stderr;
  for (const what of ["Widget", "Knowledge base", "Analysis group"]) {
    expect(output).toMatch(new RegExp(`${what} "[^"]+".* was changed outside Pulumi`));
  }
  expect(output).toContain("Run `pulumi refresh`");
  expect((await client.widget.get(agentId)).theme.title).toBe("Dashboard");
  expect((await client.knowledgeBases.get(kbId)).description).toBe("Dashboard");
  expect((await client.analysis.get(groupId))?.items[0]?.description).toBe("Dashboard");

  // The refresh brings the edits in; the preview shows them as drift; up applies the program.
  await p.refresh();
  const drift = await p.preview();
  for (const type of ["Widget", "KnowledgeBase", "AnalysisGroup"]) {
    expect(drift.stdout).toContain(`~ pulumi-nodejs:dynamic/voice-agent:${type}: (update)`);
  }
  // Each resource's dashboard value, now in the state, is what the program replaces.
  expect(drift.stdout.match(/~ (title|description) *: "Dashboard" => "Ours"/g)).toHaveLength(3);
  await p.upAndSettle();
  expect((await client.widget.get(agentId)).theme.title).toBe("Ours");
  expect((await client.knowledgeBases.get(kbId)).description).toBe("Ours");
  expect((await client.analysis.get(groupId))?.items[0]?.description).toBe("Ours");
}, 300_000);
