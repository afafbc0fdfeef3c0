/**
 * Provider-level behaviour of Agent and AgentVersion against the emulator: the handlers the
 * provider process runs, called directly with a client injected.
 */
import { beforeEach, describe, expect, test } from "vitest";
import type { VoiceAgentClient } from "../../src/client";
import type { startEmulator } from "../../src/emulator";
import { UNKNOWN } from "../../src/provider/normalize";
import { forgetListedNames, forgettingNames, namesOf } from "../../src/resources/agent/names";
import { agentProvider } from "../../src/resources/agent/provider";
import { versionInputsFromAgent } from "../../src/resources/agentVersion/fromAgent";
import { agentVersionProvider } from "../../src/resources/agentVersion/provider";
import { analysisGroupProvider } from "../../src/resources/analysisGroup/provider";
import { knowledgeBaseProvider } from "../../src/resources/knowledgeBase/provider";
import { clearRequestLog, openDraft, requestLog, resetEmulator, retireModel } from "../support/control";
import { checkAndCreate, emulatorForFile, testContext, versionInputs } from "./support";

const agentHandler = agentProvider(testContext);
const agentVersionHandler = agentVersionProvider(testContext);

type Emulator = Awaited<ReturnType<typeof startEmulator>>;
let emu: Emulator;
let client: VoiceAgentClient;

const base = {
  name: "Provider test agent",
  systemPrompt: "## Agent Purpose\nHelp with orders.",
  language: { default: "en-IN", additional: ["hi-IN"] },
  knowledgeBaseIds: [] as string[],
  variables: [{ key: "order_id", defaultValue: "none" }],
};

/** check → create, as the engine does on the first up. */
const createAgent = (inputs: Record<string, unknown>) => checkAndCreate(agentHandler, inputs);

emulatorForFile({}, (e, c) => {
  emu = e;
  client = c;
});
beforeEach(async () => {
  await resetEmulator(emu);
});

describe("Agent check (preview validation)", () => {
  test("every failure names the field in input spelling", async () => {
    const res = await agentHandler.check(
      {},
      {
        name: "",
        conversation: { responseEagerness: 0.6 },
        builtinTools: { holdCall: { maxSeconds: 30, followUpSeconds: 40 } },
      },
    );
    const props = (res.failures ?? []).map((f) => f.property);
    expect(props).toContain("name");
    expect(props).toContain("conversation.responseEagerness");
    for (const f of res.failures ?? []) expect(f.reason.startsWith(f.property)).toBe(true);
  });

  test("rule failures name nested fields", async () => {
    const res = await agentHandler.check(
      {},
      {
        name: "n",
        builtinTools: {
          holdCall: { enabled: true, maxSeconds: 30, followUpSeconds: 40 },
          transferCall: {
            numbers: [{ number: "+919800000001", timezone: "Mars/Olympus", startHour: 9, endHour: 18 }],
          },
        },
        memory: { fields: [{ key: "a" }, { key: "a" }] },
      },
    );
    const props = (res.failures ?? []).map((f) => f.property).join("\n");
    expect(props).toContain("builtinTools.holdCall.followUpSeconds");
  });

  test("catalogue rules run against the service: a voice not offered is refused at preview", async () => {
    const res = await agentHandler.check({}, { name: "n", voice: { provider: "nope-tts", voiceId: "x" } });
    expect((res.failures ?? []).map((f) => f.property).join(" ")).toMatch(/voice/);
  });

  test("values unknown during preview are tolerated and yield no hash yet", async () => {
    const res = await agentHandler.check({}, { name: "n", knowledgeBaseIds: UNKNOWN, systemPrompt: UNKNOWN });
    expect(res.failures ?? []).toEqual([]);
    expect(res.inputs?.__contentHash).toBeUndefined();
  });

  test("the content hash ignores the order of sets", async () => {
    const a = await agentHandler.check({}, { name: "n", knowledgeBaseIds: [], analysisGroupIds: [] });
    const b = await agentHandler.check({}, { name: "n", analysisGroupIds: [], knowledgeBaseIds: [] });
    expect(a.inputs?.__contentHash).toBe(b.inputs?.__contentHash);
    const c = await agentHandler.check({}, { name: "m" });
    expect(c.inputs?.__contentHash).not.toBe(a.inputs?.__contentHash);
  });
});

describe("Agent lifecycle", () => {
  test("create reads back without a diff; unset fields and server defaults never cause one", async () => {
    const { inputs, id, outs } = await createAgent(base);
    expect(outs?.draftVersion).toBe(0);
    expect(outs?.agentId).toBe(id);
    expect((await agentHandler.diff(id, outs, inputs)).changes).toBe(false);
    const read = await agentHandler.read(id, outs);
    expect((await agentHandler.diff(id, read.props, inputs)).changes).toBe(false);
    expect(read.inputs?.systemPrompt).toBe(base.systemPrompt);
    expect(read.inputs).not.toHaveProperty("voice");
  });

  test("update sends one merge-patch with If-Match; a change elsewhere is a conflict, never overwritten", async () => {
    const { inputs, id, outs } = await createAgent(base);
    const news = (await agentHandler.check(inputs, { ...inputs, systemPrompt: "## Agent Purpose\nReturns." }))
      .inputs;
    expect((await agentHandler.diff(id, outs, news)).changes).toBe(true);
    const updated = await agentHandler.update(id, outs, news);
    expect(updated.outs?.documentRevision).toBeGreaterThan(outs?.documentRevision);

    // A dashboard edit after our write: the next update with the old revision is refused.
    await client.agents.patch(id, { system_prompt: "dashboard" });
    const next = (await agentHandler.check(news, { ...news, systemPrompt: "## Agent Purpose\nExchanges." }))
      .inputs;
    await expect(agentHandler.update(id, updated.outs, next)).rejects.toThrow(
      /changed outside Pulumi.*pulumi refresh/s,
    );
    expect((await client.agents.get(id)).system_prompt).toBe("dashboard");

    // Refresh brings the edit into state; then the update goes through.
    const read = await agentHandler.read(id, updated.outs);
    expect(read.inputs?.systemPrompt).toBe("dashboard");
    // The hash follows what the service holds, so a version is published for it on the next up.
    expect(read.props?.contentHash).not.toBe(updated.outs?.contentHash);
    expect((await agentHandler.diff(id, read.props, next)).changes).toBe(true);
    const fixed = await agentHandler.update(id, read.props, next);
    expect((await client.agents.get(id)).system_prompt).toContain("Exchanges");
    expect((await agentHandler.diff(id, fixed.outs, next)).changes).toBe(false);
  });

  test("an edit of a field the stack does not manage (a version label) is not a conflict", async () => {
    const { inputs, id, outs } = await createAgent(base);
    await client.versions.publish(id, 0, {});
    await client.agents.patch(id, { label: "relabelled" }, { version: 0 }); // raises V0's revision
    const news = (await agentHandler.check(inputs, { ...inputs, systemPrompt: "## Agent Purpose\nReturns." }))
      .inputs;
    const updated = await agentHandler.update(id, outs, news);
    expect(updated.outs?.draftVersion).toBe(1);
    expect((await client.agents.get(id)).system_prompt).toContain("Returns");
  });

  test("several open drafts: the error names the candidates", async () => {
    const { inputs, id, outs } = await createAgent(base);
    const v = (
      await agentHandler.check(
        {},
        {
          agentId: id,
          contentHash: outs?.contentHash,
          draftVersion: 0,
          documentRevision: outs?.documentRevision,
          live: true,
        },
      )
    ).inputs;
    await agentVersionHandler.create(v);
    await client.agents.patch(id, { system_prompt: "draft one" });
    await openDraft(emu, id);
    const read = await agentHandler.read(id, outs);
    const news = (await agentHandler.check(inputs, { ...inputs, systemPrompt: "mine" })).inputs;
    await expect(agentHandler.update(id, read.props, news)).rejects.toThrow(
      /several open drafts \(versions \d+, \d+\)/,
    );
  });

  test("removing a field sends null; variables keep the system variables as read", async () => {
    const { inputs, id, outs } = await createAgent({ ...base, greeting: { message: "hi" } });
    const { greeting: _g, ...rest } = inputs as any;
    const news = (await agentHandler.check(inputs, { ...rest, variables: [{ key: "zip" }] })).inputs;
    const updated = await agentHandler.update(id, outs, news);
    const detail = await client.agents.get(id);
    expect(detail.greeting).toEqual({});
    expect(detail.variables.map((v: any) => v.key).sort()).toEqual(["callee_name", "callee_number", "zip"]);
    expect((await agentHandler.diff(id, updated.outs, news)).changes).toBe(false);
  });

  test("adoptId takes over an existing agent and writes the declared configuration", async () => {
    const existing = await client.agents.create({ name: "Dashboard agent", system_prompt: "old" });
    const checked = await agentHandler.check({}, { ...base, adoptId: existing.id });
    const created = await agentHandler.create(checked.inputs);
    expect(created.id).toBe(existing.id);
    expect((await client.agents.get(existing.id)).system_prompt).toBe(base.systemPrompt);
  });

  test("delete takes the agent off air and leaves it in the service", async () => {
    const { id, outs } = await createAgent(base);
    await client.versions.publish(id, 0, {});
    await client.versions.activate(id, 0);
    await agentHandler.delete(id, outs);
    const detail = await client.agents.get(id);
    expect(detail.live_version).toBeNull();
  });
});

describe("Agent names of what it attaches (configDigest)", () => {
  test("one listing of the analysis library serves every new agent; a group written since is named", async () => {
    forgetListedNames(); // as in a new provider process
    await clearRequestLog(emu);
    const agents = await Promise.all(
      [0, 1, 2, 3, 4].map((i) => createAgent({ ...base, name: `Names ${i}` })),
    );
    const listings = (await requestLog(emu)).filter(
      (r) => r.method === "GET" && r.path === "/v1/custom-analysis",
    );
    // Every new agent attaches the Default Analysis group: one listing for the five, not five.
    expect(listings).toHaveLength(1);
    for (const a of agents)
      expect(Object.values(a.outs.attachmentNames.analysisGroups)).toEqual(["Default Analysis"]);

    // A group the AnalysisGroup resource writes in this process is named, not missed.
    const group = await checkAndCreate(analysisGroupProvider(testContext), {
      name: "Escalations",
      items: [{ name: "Escalate", type: "boolean" }],
    });
    const attached = await createAgent({ ...base, name: "Names 5", analysisGroupIds: [group.id] });
    expect(Object.values(attached.outs.attachmentNames.analysisGroups)).toContain("Escalations");
  });

  test("a renamed knowledge base: the agent's next write or read names it anew, and its digest follows", async () => {
    const kbHandler = knowledgeBaseProvider(testContext);
    const kb = await checkAndCreate(kbHandler, {
      name: "Returns FAQ",
      documents: [{ name: "a", text: "one" }],
    });
    const a = await createAgent({ ...base, knowledgeBaseIds: [kb.id], attachedNames: ["Returns FAQ"] });
    expect(a.outs.attachmentNames.knowledgeBases[kb.id]).toBe("Returns FAQ");
    await kbHandler.update(kb.id, kb.outs, { ...kb.inputs, name: "Refunds FAQ" });
    // The program's knowledge base was renamed: the agent changes in the same deployment ...
    const renamed = { ...a.inputs, attachedNames: ["Refunds FAQ"] };
    expect((await agentHandler.diff(a.id, a.outs, renamed)).changes).toBe(true);
    const updated = await agentHandler.update(a.id, a.outs, renamed);
    expect((updated.outs as any).attachmentNames.knowledgeBases[kb.id]).toBe("Refunds FAQ");
    expect((updated.outs as any).configDigest).not.toBe(a.outs.configDigest);
    // ... and the same digest as an agent that attached the renamed one from the start.
    const twin = await createAgent({ ...base, knowledgeBaseIds: [kb.id] });
    expect((updated.outs as any).configDigest).toBe(twin.outs.configDigest);
    expect((await agentHandler.diff(a.id, updated.outs as any, renamed)).changes).toBe(false);
    // A refresh of an agent whose names were recorded before the rename names it anew too.
    const read = await agentHandler.read(a.id, a.outs);
    expect((read.props as any).configDigest).toBe(twin.outs.configDigest);
  });

  test("the listings are forgotten once a knowledge base's write is over, not before it", async () => {
    const kb = await client.knowledgeBases.create({ name: "Before" });
    let finish: () => void = () => undefined;
    const slow = forgettingNames({
      ...knowledgeBaseProvider(testContext),
      update: () => new Promise((resolve) => (finish = () => resolve({ outs: {} }))),
    });
    const writing = slow.update(kb.id, {}, {});
    // An agent of the same deployment lists the names while the write is under way ...
    expect(
      (await namesOf(client, { knowledgeBases: [kb.id], analysisGroups: [] })).knowledgeBases[kb.id],
    ).toBe("Before");
    await client.knowledgeBases.replace(kb.id, { name: "After", documents: [] });
    finish();
    await writing;
    // ... and the next one sees the written name.
    expect(
      (await namesOf(client, { knowledgeBases: [kb.id], analysisGroups: [] })).knowledgeBases[kb.id],
    ).toBe("After");
  });
});

describe("AgentVersion", () => {
  /** The AgentVersion's inputs as its constructor derives them from the Agent's outputs. */
  async function publish(agentOuts: any, extra: Record<string, unknown> = {}) {
    const inputs = versionInputs(agentOuts, extra);
    const checked = await agentVersionHandler.check({}, inputs);
    expect(checked.failures ?? []).toEqual([]);
    return { inputs: checked.inputs, ...(await agentVersionHandler.create(checked.inputs)) };
  }

  test("publishes the draft and puts it live; an identical configuration is reused (rollback)", async () => {
    const a = await createAgent(base);
    const v0 = await publish(a.outs, { label: "first" });
    expect(v0.outs?.version).toBe(0);
    expect(v0.outs?.origin).toBe("published");
    expect((await client.agents.get(a.id)).live_version).toBe(0);

    const changed = (
      await agentHandler.check(a.inputs, { ...a.inputs, systemPrompt: "## Agent Purpose\nv1" })
    ).inputs;
    const a1 = await agentHandler.update(a.id, a.outs, changed);
    const v1 = await publish(a1.outs);
    expect(v1.outs?.version).toBe(1);

    const reverted = (await agentHandler.check(changed, a.inputs)).inputs;
    const a2 = await agentHandler.update(a.id, a1.outs, reverted);
    const v2 = await publish(a2.outs);
    expect(v2.outs?.version).toBe(0);
    expect(v2.outs?.origin).toBe("reused");
    expect(v2.outs?.activation).toBe("rollback");
    const published: number[] = [];
    for await (const row of client.versions.list(a.id)) if (row.is_published) published.push(row.version);
    expect(published.sort()).toEqual([0, 1]);
  });

  /** The requests made while `fn` runs, as `METHOD path`. */
  async function requestsDuring(fn: () => Promise<unknown>): Promise<string[]> {
    await clearRequestLog(emu);
    await fn();
    const log = await requestLog(emu);
    return log.map((r) => `${r.method} ${r.path.replace(/[0-9a-f-]{36}/, ":id")}`);
  }

  /** Changes the agent's prompt to `prompt` (check, update) and publishes the result. */
  async function release(agent: { id: string; inputs: any; outs: any }, prompt: string) {
    const news = (await agentHandler.check(agent.inputs, { ...agent.inputs, systemPrompt: prompt })).inputs;
    const updated = await agentHandler.update(agent.id, agent.outs, news);
    const version = await publish(updated.outs);
    return { agent: { id: agent.id, inputs: news, outs: updated.outs as any }, version };
  }

  test("a change is one read, one patch, one publish, one activation; a revert two reads more (the history, the notes of the version that replaced it), however long the history", async () => {
    const created = await createAgent(base);
    await publish(created.outs);
    let agent = created as { id: string; inputs: any; outs: any };
    for (let i = 1; i <= 6; i++) agent = (await release(agent, `## Agent Purpose\nrelease ${i}`)).agent;
    expect(Object.values(agent.outs.knownVersions).sort()).toEqual([0, 1, 2, 3, 4, 5]);

    // A change in steady state: the Agent's patch answer told the draft's version, revision and
    // configuration, so it is published without a read; no listing, no other version read.
    let next: Awaited<ReturnType<typeof release>> | undefined;
    const change = await requestsDuring(async () => {
      next = await release(agent, "## Agent Purpose\nrelease 7");
    });
    expect(next?.version.outs?.origin).toBe("published");
    // The read tells what the patch lands on (the If-Match alone cannot: see the held-back tests).
    expect(change).toEqual([
      "GET /v1/agents/:id",
      "PATCH /v1/agents/:id",
      "POST /v1/agents/:id/versions/7/publish",
      "POST /v1/agents/:id/activations",
    ]);

    // The revert to the first configuration: one read of version 0, one page of the deploy history
    // (a version a rollback took off air would stay off air) and the notes of the version that row
    // put live (the watch's line there would say it judged version 0 failing, whatever the row's
    // label), then it goes back live.
    const revert = await requestsDuring(async () => {
      next = await release(next!.agent, base.systemPrompt);
    });
    expect(next?.version.outs).toMatchObject({ version: 0, origin: "reused", activation: "rollback" });
    expect(revert).toEqual([
      "GET /v1/agents/:id",
      "PATCH /v1/agents/:id",
      "GET /v1/agents/:id/activations",
      "GET /v1/agents/:id?version=1",
      "GET /v1/agents/:id?version=0",
      "POST /v1/agents/:id/activations",
    ]);
  });

  test("a version published outside the stack (the dashboard) is found and reused", async () => {
    const a = await createAgent(base);
    await publish(a.outs);
    // In the dashboard: a prompt edit published as version 1, then the live pointer moved back to 0.
    await client.agents.patch(a.id, { system_prompt: "## Agent Purpose\nfrom the dashboard" });
    await client.versions.publish(a.id, 1, {});
    // The stack now declares the same prompt: its draft (version 2) holds what version 1 holds.
    const { version } = await release(a, "## Agent Purpose\nfrom the dashboard");
    expect(version.outs).toMatchObject({ version: 1, origin: "reused" });
    const published: number[] = [];
    for await (const row of client.versions.list(a.id)) if (row.is_published) published.push(row.version);
    expect(published.sort()).toEqual([0, 1]);
  });

  /** The published version numbers of agent `id`. */
  async function publishedVersions(id: string): Promise<number[]> {
    const out: number[] = [];
    for await (const row of client.versions.list(id)) if (row.is_published) out.push(row.version);
    return out.sort((x, y) => x - y);
  }

  /** Changes the agent's prompt (check, update) without publishing: the Agent's side of an up. */
  async function patchOnly(agent: { id: string; inputs: any; outs: any }, prompt: string) {
    const news = (await agentHandler.check(agent.inputs, { ...agent.inputs, systemPrompt: prompt })).inputs;
    return { id: agent.id, inputs: news, outs: (await agentHandler.update(agent.id, agent.outs, news)).outs };
  }

  test("a dashboard edit of the draft after the Agent wrote it stops the publish; nothing is overwritten", async () => {
    const a = await createAgent(base);
    await publish(a.outs);
    const patched = await patchOnly(a, "## Agent Purpose\nv1");
    // Between the Agent's patch and the AgentVersion's publish: an edit in the dashboard.
    await client.agents.patch(a.id, { system_prompt: "## Agent Purpose\nedited in the dashboard" });
    await expect(publish(patched.outs)).rejects.toThrow(
      /Version 1 of agent .* was edited outside Pulumi after this stack wrote it/,
    );
    const draft = await client.agents.get(a.id);
    expect(draft).toMatchObject({ version: 1, is_published: false });
    expect(draft.system_prompt).toContain("edited in the dashboard");
    expect(await publishedVersions(a.id)).toEqual([0]);
  });

  test("a version published by a killed up is published once: the next attempt gets the same version", async () => {
    const a = await createAgent(base);
    await publish(a.outs);
    const patched = await patchOnly(a, "## Agent Purpose\nv1");
    // The killed attempt: its publish committed, its state was never saved.
    await publish(patched.outs);
    const again = await publish(patched.outs);
    expect(again.outs).toMatchObject({ version: 1, isLive: true });
    expect(await publishedVersions(a.id)).toEqual([0, 1]);
    // The same, when the version was renamed in the dashboard in between (its revision moved on).
    await client.agents.patch(a.id, { label: "renamed" }, { version: 1 });
    const renamed = await publish(patched.outs);
    expect(renamed.outs).toMatchObject({ version: 1, origin: "reused", isLive: true });
    expect(await publishedVersions(a.id)).toEqual([0, 1]);
  });

  test("an Agent state from an earlier release (no draft outputs) reads the draft first, as before", async () => {
    const a = await createAgent(base);
    await publish(a.outs);
    const patched = await patchOnly(a, "## Agent Purpose\nv1");
    const { draftPublished: _p, draftHash: _h, latestVersion: _l, ...older } = patched.outs as any;
    const change = await requestsDuring(() => publish(older));
    expect(change).toEqual([
      "GET /v1/agents/:id?version=1",
      "POST /v1/agents/:id/versions/1/publish",
      "POST /v1/agents/:id/activations",
    ]);
  });

  test("a change published in the dashboard, brought in by a refresh, is reused as it is", async () => {
    const a = await createAgent(base);
    await publish(a.outs);
    await client.agents.patch(a.id, { system_prompt: "## Agent Purpose\nfrom the dashboard" });
    await client.versions.publish(a.id, 1, {});
    await client.versions.activate(a.id, 1);
    const refreshed = await agentHandler.read(a.id, a.outs);
    expect(refreshed.props).toMatchObject({ draftVersion: 1, draftPublished: true });
    const version = await publish(refreshed.props);
    expect(version.outs).toMatchObject({ version: 1, origin: "reused" });
    expect(await publishedVersions(a.id)).toEqual([0, 1]);
  });

  describe("a version published and held back (not put live) never blocks the next change", () => {
    /** The next `up` of a changed prompt: the Agent's check and update, then the AgentVersion's. */
    async function change(agent: { id: string; inputs: any; outs: any }, prompt: string, extra = {}) {
      const news = (await agentHandler.check(agent.inputs, { ...agent.inputs, systemPrompt: prompt })).inputs;
      const updated = await agentHandler.update(agent.id, agent.outs, news);
      const version = await publish(updated.outs, extra);
      return { agent: { id: agent.id, inputs: news, outs: updated.outs as any }, version };
    }

    test("live: false, then a change: the draft branched from the live version is written and published", async () => {
      const a = await createAgent({ ...base, voice: { provider: "sarvam", voiceId: "meera", speed: 1.1 } });
      await publish(a.outs);
      // Two fields change in the held-back version; the fix changes one of them back only.
      const heldNews = (
        await agentHandler.check(a.inputs, {
          ...a.inputs,
          systemPrompt: "## Agent Purpose\nheld back",
          voice: { provider: "sarvam", voiceId: "meera", speed: 1.3 },
        })
      ).inputs;
      const heldAgent = await agentHandler.update(a.id, a.outs, heldNews);
      const held = await publish(heldAgent.outs, { live: false });
      expect(held.outs).toMatchObject({ version: 1, isLive: false });
      const next = await change(
        { id: a.id, inputs: heldNews, outs: heldAgent.outs },
        "## Agent Purpose\nthe fix",
      );
      expect(next.version.outs).toMatchObject({ version: 2, origin: "published", isLive: true });
      const live = await client.agents.get(a.id, { version: "live" });
      expect(live.version).toBe(2);
      // The declared configuration, whole: the field held back with v1 and not changed since is
      // declared too, though the draft branched from v0.
      expect(live.system_prompt).toBe("## Agent Purpose\nthe fix");
      expect(live.voice?.speed).toBe(1.3);
      // Nothing left to do: the Agent's diff is empty against what it now records.
      expect((await agentHandler.diff(a.id, next.agent.outs, next.agent.inputs)).changes).toBe(false);
    });

    test("a rollback in the dashboard, then a change with a plain up: deploys, no conflict", async () => {
      const a = await createAgent(base);
      await publish(a.outs);
      const v1 = await change(a, "## Agent Purpose\nsecond");
      expect(v1.version.outs).toMatchObject({ version: 1, isLive: true });
      await client.versions.activate(a.id, 0); // a person rolls back in the dashboard
      const next = await change(v1.agent, "## Agent Purpose\nthird");
      expect(next.version.outs).toMatchObject({ version: 2, origin: "published", isLive: true });
      expect((await client.agents.get(a.id, { version: "live" })).system_prompt).toBe(
        "## Agent Purpose\nthird",
      );
    });

    test("a change published and put live in the dashboard is a conflict, never overwritten", async () => {
      const a = await createAgent(base);
      await publish(a.outs);
      await client.agents.patch(a.id, { system_prompt: "## Agent Purpose\nfrom the dashboard" });
      await client.versions.publish(a.id, 1, {});
      await client.versions.activate(a.id, 1);
      const news = (
        await agentHandler.check(a.inputs, {
          ...a.inputs,
          variables: [{ key: "order_id", defaultValue: "n/a" }],
        })
      ).inputs;
      await expect(agentHandler.update(a.id, a.outs, news)).rejects.toThrow(/was changed outside Pulumi/);
      expect((await client.agents.get(a.id)).latest_version).toBe(1);
      expect((await client.agents.get(a.id, { version: "live" })).system_prompt).toBe(
        "## Agent Purpose\nfrom the dashboard",
      );
    });

    test("with no live version, the draft branches from the latest and the change deploys", async () => {
      const a = await createAgent(base);
      await publish(a.outs, { live: false });
      const next = await change(a, "## Agent Purpose\nsecond");
      expect(next.version.outs).toMatchObject({ version: 1, isLive: true });
      expect((await client.agents.get(a.id, { version: "live" })).system_prompt).toBe(
        "## Agent Purpose\nsecond",
      );
    });

    test("going back to the live configuration after a held-back version writes nothing and keeps it live", async () => {
      const a = await createAgent(base);
      await publish(a.outs);
      const held = await change(a, "## Agent Purpose\nheld back", { live: false });
      const back = (await agentHandler.check(held.agent.inputs, a.inputs)).inputs;
      const updated = await agentHandler.update(a.id, held.agent.outs, back);
      const version = await publish(updated.outs);
      expect(version.outs).toMatchObject({ version: 0, origin: "reused", isLive: true });
      expect((await client.agents.get(a.id)).latest_version).toBe(1);
    });

    test("a real edit elsewhere (an open draft whose content differs) is still a conflict; nothing is written", async () => {
      const a = await createAgent(base);
      await publish(a.outs);
      const held = await change(a, "## Agent Purpose\nheld back", { live: false });
      await client.agents.patch(a.id, { system_prompt: "## Agent Purpose\nedited in the dashboard" });
      const news = (
        await agentHandler.check(held.agent.inputs, {
          ...held.agent.inputs,
          systemPrompt: "## Agent Purpose\nfix",
        })
      ).inputs;
      await expect(agentHandler.update(a.id, held.agent.outs, news)).rejects.toThrow(
        /was changed outside Pulumi: its working draft is at revision \d+, but this stack last saw revision \d+\. Nothing was written/,
      );
      expect((await client.agents.get(a.id)).system_prompt).toBe("## Agent Purpose\nedited in the dashboard");
    });
  });

  test("a change that publishes nothing keeps version, versionId and isLive known at preview; a no-op reads nothing", async () => {
    const a = await createAgent(base);
    const v0 = await publish(a.outs, { live: false });
    for (const change of [{ label: "renamed" }, { notes: "why" }, { live: true }]) {
      const checked = await agentVersionHandler.check(v0.inputs, { ...v0.inputs, ...change });
      expect(checked.failures ?? []).toEqual([]);
      expect(checked.inputs).toMatchObject({
        version: 0,
        versionId: v0.outs?.versionId,
        isLive: change.live === true,
        blockedReasons: [],
      });
    }
    // A pinned version, relabelled: the pin names it.
    const pinned = await agentVersionHandler.check(
      { ...v0.inputs, pinnedVersion: 0, contentHash: undefined },
      { ...v0.inputs, pinnedVersion: 0, contentHash: undefined, label: "pinned" },
    );
    expect(pinned.inputs).toMatchObject({ version: 0, versionId: v0.outs?.versionId });
    // Nothing changes: nothing is read, nothing added.
    const idle = await requestsDuring(async () => {
      const same = await agentVersionHandler.check(v0.inputs, { ...v0.inputs });
      expect(same.inputs.version).toBeUndefined();
    });
    expect(idle).toEqual([]);
    // A new configuration: the version to come is not known yet.
    const changed = await agentVersionHandler.check(v0.inputs, {
      ...v0.inputs,
      contentHash: "sha256:other",
      label: "x",
    });
    expect(changed.inputs.version).toBeUndefined();
  });

  test("label changes in place; a dashboard rollback is recorded and respected; pinning a draft is refused", async () => {
    const a = await createAgent(base);
    const v0 = await publish(a.outs);
    const changed = (
      await agentHandler.check(a.inputs, { ...a.inputs, systemPrompt: "## Agent Purpose\nv1" })
    ).inputs;
    const a1 = await agentHandler.update(a.id, a.outs, changed);
    const v1 = await publish(a1.outs);

    const relabel = { ...v1.inputs, label: "hotfix" };
    const d = await agentVersionHandler.diff(v1.id, v1.outs, relabel);
    expect(d).toEqual({ changes: true, replaces: [] });
    await agentVersionHandler.update(v1.id, v1.outs, relabel);
    expect((await client.versions.get(a.id, 1)).label).toBe("hotfix");

    const row = await client.versions.activate(a.id, 0); // a rollback in the dashboard
    const read = await agentVersionHandler.read(v1.id, v1.outs);
    // The program still asks for version 1 live; the refresh records what took it off air and shows
    // it (a change until a deploy records it), and the next deploy leaves it off air instead of
    // putting it back live.
    expect(read.inputs?.live).toBe(true);
    expect(read.props).toMatchObject({
      isLive: false,
      rolledBack: { at: row.at, action: "rollback", to: 0 },
    });
    // What a program exports as live stays true after the rollback: version 0 is live, not 1.
    expect(v1.outs?.liveVersion).toBe(1);
    expect(read.props?.liveVersion).toBe(0);
    expect((await agentVersionHandler.diff(v1.id, read.props, v1.inputs)).changes).toBe(true);
    const recorded = await agentVersionHandler.update(v1.id, read.props, v1.inputs);
    expect(recorded.outs).toMatchObject({ isLive: false, rolledBack: { at: row.at, recorded: true } });
    expect((await client.agents.get(a.id)).live_version).toBe(0);
    expect((await agentVersionHandler.diff(v1.id, recorded.outs, v1.inputs)).changes).toBe(false);
    expect(v0.outs?.version).toBe(0);

    await client.agents.patch(a.id, { system_prompt: "open draft" });
    const pinned = await agentVersionHandler.check({}, { agentId: a.id, pinnedVersion: 2, live: true });
    expect((pinned.failures ?? [])[0]?.reason).toMatch(/draft/);
  });

  test("a new configuration or pin updates in place (one engine step); only another agent replaces", async () => {
    const a = await createAgent(base);
    const v0 = await publish(a.outs, { label: "first" });
    expect(v0.id).toBe(`${a.id}/0`);
    const a1 = await patchOnly({ ...a, outs: a.outs as any }, "## Agent Purpose\nv1");
    const known: Record<string, number> = a1.outs.knownVersions ?? {};
    const news = (
      await agentVersionHandler.check(v0.inputs, {
        ...v0.inputs,
        contentHash: a1.outs.contentHash,
        knownVersion: known[a1.outs.contentHash],
        knownUpTo: Math.max(-1, ...Object.values(known)),
        draftVersion: a1.outs.draftVersion,
        documentRevision: a1.outs.documentRevision,
        draftPublished: a1.outs.draftPublished,
        draftHash: a1.outs.draftHash,
        latestVersion: a1.outs.latestVersion,
      })
    ).inputs;
    expect(await agentVersionHandler.diff(v0.id, v0.outs!, news)).toEqual({ changes: true, replaces: [] });
    // Unknown at preview (the Agent changes in the same deploy): an in-place change too.
    const unknownHash = { ...v0.inputs, contentHash: "04da6b54-80e4-46f7-96ec-b56ff0331ba9" };
    expect(await agentVersionHandler.diff(v0.id, v0.outs!, unknownHash)).toEqual({
      changes: true,
      replaces: [],
    });
    expect(await agentVersionHandler.diff(v0.id, v0.outs!, { ...news, agentId: "agt_other" })).toMatchObject({
      replaces: ["agentId"],
    });

    const updated = await agentVersionHandler.update(v0.id, v0.outs!, news);
    expect(updated.outs).toMatchObject({
      version: 1,
      origin: "published",
      activation: "activate",
      isLive: true,
    });
    expect((await client.agents.get(a.id)).live_version).toBe(1);

    // The id still names version 0; a refresh reads the version the state records, and sees no drift.
    const read = await agentVersionHandler.read(v0.id, updated.outs!);
    expect(read.id).toBe(v0.id);
    expect(read.props).toMatchObject({ version: 1, isLive: true });
    expect((await agentVersionHandler.diff(v0.id, read.props!, news)).changes).toBe(false);

    // A pin is a rollback in place: nothing published, version 0 back live.
    const pin = { agentId: a.id, pinnedVersion: 0, live: true, draftVersion: 1, documentRevision: 0 };
    expect(await agentVersionHandler.diff(v0.id, updated.outs!, pin)).toEqual({
      changes: true,
      replaces: [],
    });
    const pinned = await agentVersionHandler.update(v0.id, updated.outs!, pin);
    expect(pinned.outs).toMatchObject({ version: 0, origin: "pinned", activation: "rollback", isLive: true });
    expect(await publishedVersions(a.id)).toEqual([0, 1]);
    // Unpinned again: the draft's configuration is version 1's, which the pin rolled back: it stays
    // off air (the deploy history says a rollback took it off), until `reinstate` is raised.
    const unpinned = await agentVersionHandler.update(v0.id, pinned.outs!, news);
    expect(unpinned.outs).toMatchObject({
      version: 1,
      isLive: false,
      rolledBack: { action: "rollback", to: 0 },
    });
    const reinstated = await agentVersionHandler.update(v0.id, pinned.outs!, { ...news, reinstate: 1 });
    expect(reinstated.outs).toMatchObject({ version: 1, activation: "activate", isLive: true });
    expect(await publishedVersions(a.id)).toEqual([0, 1]);
  });

  test("a state written by a replacement (id and version alike) refreshes and updates in place", async () => {
    const a = await createAgent(base);
    await publish(a.outs);
    const { agent: a1, version: v1 } = await release({ ...a, outs: a.outs as any }, "## Agent Purpose\nv1");
    // What the previous release left: a replacement's id names the version it published.
    expect(v1.id).toBe(`${a.id}/1`);
    const read = await agentVersionHandler.read(v1.id, v1.outs!);
    expect(read.props).toMatchObject({ version: 1, isLive: true });
    expect((await agentVersionHandler.diff(v1.id, read.props!, v1.inputs)).changes).toBe(false);
    const a2 = (await patchOnly(a1, "## Agent Purpose\nv2")).outs as any;
    const news = {
      ...v1.inputs,
      contentHash: a2.contentHash,
      knownVersion: a2.knownVersions?.[a2.contentHash],
      knownUpTo: Math.max(-1, ...Object.values(a2.knownVersions ?? {}).map(Number)),
      draftVersion: a2.draftVersion,
      documentRevision: a2.documentRevision,
      draftPublished: a2.draftPublished,
      draftHash: a2.draftHash,
      latestVersion: a2.latestVersion,
    };
    const updated = await agentVersionHandler.update(v1.id, read.props!, news);
    expect(updated.outs).toMatchObject({ version: 2, origin: "published", isLive: true });
    expect(await publishedVersions(a.id)).toEqual([0, 1, 2]);
  });

  test("the checked inputs a diff is displayed from hold no bookkeeping; a state of the earlier layout diffs clean", async () => {
    const BOOKKEEPING = [
      "contentHash",
      "draftHash",
      "documentRevision",
      "draftVersion",
      "knownUpTo",
      "latestVersion",
      "knownVersion",
      "draftPublished",
    ];
    const a = await createAgent(base);
    // The engine displays a dynamic resource's diff from its checked inputs, leaving out `__` names.
    const shown = (props: Record<string, unknown>) => Object.keys(props).filter((k) => !k.startsWith("__"));
    expect(shown(a.inputs)).not.toContain("contentHash");
    const v0 = await publish(a.outs, { label: "first" });
    for (const k of BOOKKEEPING) expect(shown(v0.inputs)).not.toContain(k);
    // The outputs keep them at the top level, as before.
    expect(v0.outs).toMatchObject({ contentHash: a.outs.contentHash, draftVersion: 0 });
    // A state written by the earlier layout (the bookkeeping at the top level of the inputs): no change.
    const earlier = versionInputs(a.outs, { label: "first" });
    expect((await agentVersionHandler.diff(v0.id, v0.outs!, earlier)).changes).toBe(false);
    const again = await agentVersionHandler.check(earlier, earlier);
    expect((await agentVersionHandler.diff(v0.id, v0.outs!, again.inputs)).changes).toBe(false);
    // In the preview of the Agent's change its output hash is unknown: the checked one stands in.
    const changed = (
      await agentHandler.check(a.inputs, { ...a.inputs, systemPrompt: "## Agent Purpose\nv1" })
    ).inputs;
    const preview = await agentVersionHandler.check(v0.inputs, {
      ...versionInputs(a.outs, { label: "first" }),
      contentHash: UNKNOWN,
      __contentHash: changed.__contentHash,
    });
    expect(preview.failures ?? []).toEqual([]);
    expect(preview.inputs.__draft.contentHash).toBe(changed.__contentHash);
    expect(preview.inputs.__contentHash).toBeUndefined();
    // The class registers the bookkeeping as one input (`__draft`, one dependency in the state):
    // known, it checks to the same inputs as the flat layout, and diffs clean.
    const { agentId: _agentId, ...draft } = versionInputsFromAgent(a.outs, true);
    const folded = await agentVersionHandler.check(v0.inputs, {
      agentId: a.id,
      __draft: Object.fromEntries(Object.entries(draft).filter(([, v]) => v !== undefined)),
      live: true,
      label: "first",
    });
    expect(folded.inputs).toEqual(again.inputs);
    expect((await agentVersionHandler.diff(v0.id, v0.outs!, folded.inputs)).changes).toBe(false);
    // In the preview of the Agent's change each of its values is unknown (the dynamic-provider
    // runtime hands an unknown at any depth): the checked hash stands in, and the change is seen.
    // The class sends the checked hash inside `__draft` too (one registered property).
    const whole = await agentVersionHandler.check(v0.inputs, {
      agentId: a.id,
      __draft: {
        ...Object.fromEntries(Object.keys(draft).map((k) => [k, UNKNOWN])),
        __contentHash: changed.__contentHash,
      },
      live: true,
      label: "first",
    });
    expect(whole.failures ?? []).toEqual([]);
    expect(whole.inputs.__draft).toMatchObject({
      contentHash: changed.__contentHash,
      draftVersion: UNKNOWN,
      documentRevision: UNKNOWN,
      knownVersion: UNKNOWN,
      draftHash: UNKNOWN,
    });
    expect((await agentVersionHandler.diff(v0.id, v0.outs!, whole.inputs)).changes).toBe(true);
    // A pinned version takes the draft's position alone: nothing else is made up as unknown.
    const pinned = await agentVersionHandler.check(
      {},
      { agentId: a.id, pinnedVersion: 0, __draft: { draftVersion: UNKNOWN, documentRevision: UNKNOWN } },
    );
    expect(Object.keys(pinned.inputs.__draft).sort()).toEqual(["documentRevision", "draftVersion"]);
  });

  test("a blocked version cannot go live: the error lists the reasons", async () => {
    const a = await createAgent({ ...base, model: { model: "gpt-4o-mini" } });
    await publish(a.outs, { live: false });
    await retireModel(emu, "gpt-4o-mini");
    const pinned = await agentVersionHandler.check({}, { agentId: a.id, pinnedVersion: 0, live: true });
    expect((pinned.failures ?? [])[0]?.reason).toMatch(/cannot go live: .*retired/);
  });
});
