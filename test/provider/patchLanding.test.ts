/**
 * The Agent's read-then-patch checks where its patch landed: revisions count per version, so a draft
 * opened outside Pulumi from another version between the read and the write can carry the very
 * revision the `If-Match` names. The patch then lands on a mix nobody declared; the Agent compares
 * what the draft holds with what it declared over the version it read, and fails as a conflict, so
 * nothing is published or put live.
 */
import { afterEach, expect, test, vi } from "vitest";
import type { VoiceAgentClient } from "../../src/client";
import type { RunningEmulator } from "../../src/emulator";
import { agentProvider } from "../../src/resources/agent/provider";
import { checkAndCreate, emulatorForFile, testContext } from "./support";

const agents = agentProvider(testContext);
let emu: RunningEmulator;
let client: VoiceAgentClient;
emulatorForFile({}, (e, c) => {
  emu = e;
  client = c;
});
afterEach(() => {
  vi.restoreAllMocks();
});

const prompt = (s: string) => `## Agent Purpose\n${s}\n`;

test("a patch landing on a draft branched from another version is refused as a conflict; nothing is published", async () => {
  const a = await checkAndCreate(agents, { name: "Landing", systemPrompt: prompt("v0") });
  await client.versions.publish(a.id, 0);
  await client.versions.activate(a.id, 0);
  // Two versions branched from version 0 with one patch each: the same revision, other contents.
  const v1 = await client.agents.patch(a.id, { system_prompt: prompt("v1") });
  await client.versions.publish(a.id, v1.version);
  const v2 = await client.agents.patch(a.id, {
    system_prompt: prompt("v1"),
    name: "Landing, renamed elsewhere",
  });
  await client.versions.publish(a.id, v2.version);
  expect(v2.document_revision).toBe(v1.document_revision);
  await client.versions.activate(a.id, v1.version);
  // The stack reads version 1 (live) and declares its configuration.
  const read = await agents.read(a.id, a.outs);
  expect(read.props).toMatchObject({ draftVersion: v1.version, systemPrompt: prompt("v1"), name: "Landing" });
  const news = (await agents.check(read.inputs ?? {}, { ...read.inputs, systemPrompt: prompt("v3") })).inputs;

  // Between the deploy's read and its write: version 2 goes live and a draft is opened from it.
  const patch = client.agents.patch.bind(client.agents);
  vi.spyOn(client.agents, "patch").mockImplementationOnce(async (...args) => {
    await client.versions.activate(a.id, v2.version);
    const opened = await fetch(`${emu.url}/_emulator/agents/${a.id}/drafts`, { method: "POST" });
    expect(opened.status).toBe(201);
    return patch(...args);
  });
  await expect(agents.update(a.id, read.props ?? {}, news)).rejects.toThrow(
    new RegExp(
      `the change was written onto draft version 3, which does not hold version ${v1.version}'s configuration \\(it differs in name\\): ` +
        "a draft was opened from another version outside Pulumi between this deploy's read and its write\\. Nothing was published or put live\\.",
    ),
  );
  const draft = await client.agents.get(a.id);
  expect(draft).toMatchObject({ version: 3, is_published: false, name: "Landing, renamed elsewhere" });
  expect((await client.agents.get(a.id, { version: "live" })).version).toBe(v2.version);
});
