/**
 * Against the emulator's fault injection (`PUT /_emulator/faults`): 5xx answers, slow answers,
 * dropped connections and writes that commit but whose answer is lost. A whole workload must
 * succeed without a failure surfacing, and the API read back afterwards must show exactly one of
 * every object it created.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { CREATE_MARKER_PREFIX, closeDispatchers, VoiceAgentClient } from "../../src/client";
import { type LogEntry, type RunningEmulator, startEmulator } from "../../src/emulator";
import { clearRequestLog, requestLog, setFaults } from "../support/control";

const KEY = "va_test_local";
let emu: RunningEmulator;
let client: VoiceAgentClient;

beforeAll(async () => {
  emu = await startEmulator({ port: 0, rateLimitPerMinute: 0, kbProcessingMs: 10 });
  client = new VoiceAgentClient({ baseUrl: emu.url, apiKey: KEY, rateLimitPerMinute: 100_000 });
});

afterAll(async () => {
  await closeDispatchers();
  await emu?.close();
});

afterEach(async () => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  await setFaults(emu, {});
});

/** A provider-like workload touching every write the resources make. */
async function workload(c: VoiceAgentClient, tag: string) {
  const agents: string[] = [];
  for (let i = 0; i < 3; i++) {
    const a = await c.agents.create({
      name: `${tag}-agent-${i}`,
      system_prompt: `Prompt ${i}`,
      ...(i === 0 ? { notes: "kept notes" } : {}),
    });
    expect(a.notes).toBe(i === 0 ? "kept notes" : null);
    const p = await c.agents.patch(
      a.id,
      {
        system_prompt: `Prompt ${i} v2`,
        greeting: { message: "Hello" },
        variables: [...a.variables, { key: "city", default_value: "Pune" }],
      },
      { ifMatch: a.document_revision },
    );
    expect(p.system_prompt).toBe(`Prompt ${i} v2`);
    const pub = await c.versions.publish(
      a.id,
      p.version,
      { label: "first" },
      { ifMatch: p.document_revision },
    );
    expect(pub.is_published).toBe(true);
    const row = await c.versions.activate(a.id, pub.version);
    expect(row.version).toBe(pub.version);
    await c.agents.patch(a.id, { label: "renamed" }, { version: pub.version });
    const w = await c.widget.patch(a.id, {
      name: `${tag} widget ${i}`,
      allowed_origins: ["https://example.com"],
    });
    expect(w.name).toBe(`${tag} widget ${i}`);
    const k = await c.widget.rotateKey(a.id);
    expect(k.public_key.startsWith(k.public_key_prefix)).toBe(true);
    agents.push(a.id);
  }
  const kb1 = await c.knowledgeBases.create({
    name: `${tag}-kb-1`,
    description: "first",
    documents: [{ name: "faq", text: "Opening hours are 9 to 5." }],
  });
  expect(kb1.description).toBe("first");
  const kb2 = await c.knowledgeBases.create({ name: `${tag}-kb-2` });
  expect(kb2.description).toBeNull();
  await c.knowledgeBases.replace(kb1.id, {
    name: `${tag}-kb-1`,
    description: "first, edited",
    documents: [{ name: "faq", text: "Opening hours are 9 to 6." }],
  });
  await c.knowledgeBases.delete(kb2.id);
  const g = await c.analysis.create({
    name: `${tag}-group`,
    description: "g",
    items: [
      { name: "Intent", type: "text" },
      { name: "Score", type: "number" },
    ],
  });
  expect(g.items.map((x) => x.name)).toEqual(["Intent", "Score"]);
  await c.analysis.replace(g.id, {
    name: `${tag}-group`,
    description: "g2",
    items: [{ id: g.items[0]?.id, name: "Intent", type: "text" }],
  });
  await c.catalogue.models();
  await c.catalogue.voices({ provider: "sarvam" });
  return { agents, kb1: kb1.id, group: g.id };
}

/** Read everything back without faults: exactly one of each object, in the state asked for. */
async function verify(tag: string, made: Awaited<ReturnType<typeof workload>>): Promise<void> {
  await setFaults(emu, {});
  const agents = await client.agents.list({ limit: 100 }).toArray();
  for (let i = 0; i < 3; i++) {
    const same = agents.filter((a) => a.name === `${tag}-agent-${i}`);
    expect(
      same.map((a) => a.id),
      `agents named ${tag}-agent-${i}`,
    ).toEqual([made.agents[i]]);
    const v0 = await client.versions.get(made.agents[i] as string, 0);
    expect(v0.notes).toBe(i === 0 ? "kept notes" : null);
    expect(v0.label).toBe("renamed");
    expect(v0.is_published).toBe(true);
    expect(v0.live_version).toBe(0);
    expect(v0.system_prompt).toBe(`Prompt ${i} v2`);
    expect(v0.latest_version).toBe(0);
    expect((await client.versions.activations(made.agents[i] as string).toArray()).length).toBe(1);
    expect((await client.widget.get(made.agents[i] as string)).name).toBe(`${tag} widget ${i}`);
  }
  const kbs = await client.knowledgeBases.list().toArray();
  expect(kbs.filter((k) => k.name === `${tag}-kb-1`).map((k) => [k.id, k.description])).toEqual([
    [made.kb1, "first, edited"],
  ]);
  expect(kbs.filter((k) => k.name === `${tag}-kb-2`)).toEqual([]);
  expect(kbs.some((k) => k.description?.startsWith(CREATE_MARKER_PREFIX))).toBe(false);
  const groups = await client.analysis.list().toArray();
  const mine = groups.filter((g) => g.name === `${tag}-group`);
  expect(mine.map((g) => [g.id, g.description, g.items.length])).toEqual([[made.group, "g2", 1]]);
}

describe("faults from the control API", () => {
  it("survives 5xx answers", async () => {
    await clearRequestLog(emu);
    await setFaults(emu, { error_rate: 0.3, seed: 11 });
    const made = await workload(client, "err");
    expect((await requestLog(emu)).filter((e) => e.status === 503).length).toBeGreaterThan(5);
    await verify("err", made);
  });

  it("survives dropped connections (resets before handling)", async () => {
    await clearRequestLog(emu);
    await setFaults(emu, { reset_rate: 0.25, seed: 22 });
    const made = await workload(client, "reset");
    expect((await requestLog(emu)).filter((e) => e.dropped === "reset").length).toBeGreaterThan(5);
    await verify("reset", made);
  });

  it("survives writes that commit but whose answer is lost, without duplicates", async () => {
    const lost: LogEntry[] = [];
    // Several seeds, so that lost creates of every kind (and lost patches, publishes, activations,
    // replaces and deletes) occur whatever the exact request sequence.
    for (const seed of [4, 7, 12]) {
      await clearRequestLog(emu);
      await setFaults(emu, { drop_after_commit_rate: 0.4, seed });
      const made = await workload(client, `drop${seed}`);
      lost.push(...(await requestLog(emu)).filter((e) => e.dropped === "after_commit"));
      await verify(`drop${seed}`, made);
    }
    const kinds = new Set(lost.map((e) => `${e.method} ${e.path.replace(/[0-9a-f-]{36}/g, "{id}")}`));
    for (const k of [
      "POST /v1/agents",
      "POST /v1/knowledge-bases",
      "POST /v1/custom-analysis/groups",
      "PATCH /v1/agents/{id}",
      "POST /v1/agents/{id}/activations",
    ]) {
      expect([...kinds], k).toContain(k);
    }
  });

  it("survives slow answers", async () => {
    await setFaults(emu, { latency_ms: 120 });
    const t0 = performance.now();
    const made = await workload(client, "slow");
    expect(performance.now() - t0).toBeGreaterThan(120 * 30);
    await verify("slow", made);
  });

  it("survives everything at once", async () => {
    await clearRequestLog(emu);
    await setFaults(emu, {
      error_rate: 0.15,
      reset_rate: 0.15,
      drop_after_commit_rate: 0.2,
      latency_ms: 5,
      seed: 44,
    });
    const made = await workload(client, "mixed");
    await verify("mixed", made);
  });

  it("adopts a create whose every answer is lost, leaving exactly one object", async () => {
    vi.stubEnv("VOICE_AGENT_DEBUG", "1");
    const lines: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    await setFaults(emu, { drop_after_commit_rate: 1, seed: 5 });
    const c = new VoiceAgentClient({
      baseUrl: emu.url,
      apiKey: KEY,
      rateLimitPerMinute: 100_000,
      retryBudgetMs: 1500,
    });
    const a = await c.agents.create({ name: "always-lost-agent" });
    const kb = await c.knowledgeBases.create({ name: "always-lost-kb", description: "mine" });
    const g = await c.analysis.create({
      name: "always-lost-group",
      items: [{ name: "X", type: "boolean" }],
    });
    await setFaults(emu, {});
    // The agent's notes restore is a guarded patch, recognised as committed; it fully succeeds.
    expect(a.notes).toBeNull();
    const agents = (await client.agents.list({ limit: 100 }).toArray()).filter(
      (x) => x.name === "always-lost-agent",
    );
    expect(agents.map((x) => x.id)).toEqual([a.id]);
    const kbs = (await client.knowledgeBases.list().toArray()).filter((x) => x.name === "always-lost-kb");
    expect(kbs.map((x) => x.id)).toEqual([kb.id]);
    const groups = (await client.analysis.list().toArray()).filter((x) => x.name === "always-lost-group");
    expect(groups.map((x) => x.id)).toEqual([g.id]);
    // A PUT whose answer is always lost cannot confirm; the object is returned, never orphaned.
    expect(lines.some((l) => /adopted agent "always-lost-agent"/.test(l))).toBe(true);
    expect(lines.some((l) => /adopted knowledge base "always-lost-kb"/.test(l))).toBe(true);
  });

  it("does not repeat an unguarded agent patch whose answer was lost", async () => {
    const a = await client.agents.create({ name: "unguarded" });
    await setFaults(emu, { drop_after_commit_rate: 1, seed: 6 });
    const err = await client.agents.patch(a.id, { system_prompt: "once" }).catch((e) => e);
    await setFaults(emu, {});
    expect(err?.name).toBe("ConnectionError");
    expect(err.mayHaveCommitted).toBe(true);
    const after = await client.agents.get(a.id);
    expect(after.document_revision).toBe(a.document_revision + 1);
  });
});
