/**
 * KnowledgeBase handlers against the emulator: validation at preview, create and update waiting
 * until every document is ready, failed documents and the timeout, no diff for document order or
 * unset fields, drift on refresh, and delete refused while an agent uses it.
 */
import { describe, expect, test, vi } from "vitest";
import { VoiceAgentClient } from "../../src/client";
import { DEFAULT_API_KEY, type RunningEmulator, startEmulator } from "../../src/emulator";
import { contextFor } from "../../src/provider/context";
import { UNKNOWN } from "../../src/provider/normalize";
import { knowledgeBaseProvider } from "../../src/resources/knowledgeBase/provider";
import { clearRequestLog, requestLog } from "../support/control";
import { checkAndCreate, emulatorForFile, testContext } from "./support";

const h = knowledgeBaseProvider(testContext);

const PROCESSING_MS = 150;
let emu: RunningEmulator;
let client: VoiceAgentClient;

emulatorForFile({ kbProcessingMs: PROCESSING_MS }, (e, c) => {
  emu = e;
  client = c;
});

const up = (inputs: Record<string, any>) => checkAndCreate(h, inputs);

const DOCS = [
  { name: "faq", text: "Q: When do you open? A: At nine." },
  { name: "returns", url: "https://shop.example.com/returns" },
];

describe("validation at preview", () => {
  test("every problem names the field", async () => {
    const { failures } = await h.check(
      {},
      {
        name: "",
        documents: [
          { name: "both", text: "x", url: "https://a.example.com" },
          { name: "ftp", url: "ftp://files.example.com/a" },
          { name: "faq", text: "a" },
          { name: "faq", text: "b" },
          { name: "", text: "c" },
        ],
        readyTimeoutSeconds: -5,
      },
    );
    const props = (failures ?? []).map((f) => f.property);
    expect(props).toEqual(
      expect.arrayContaining([
        "name",
        "documents[0].text",
        "documents[1].url",
        "documents[4].name",
        "readyTimeoutSeconds",
      ]),
    );
    for (const f of failures ?? []) expect(f.reason.startsWith(`${f.property}:`)).toBe(true);
    const dup = await h.check(
      {},
      {
        name: "kb",
        documents: [
          { name: "faq", text: "a" },
          { name: "faq", text: "b" },
        ],
      },
    );
    expect(dup.failures?.map((f) => f.property)).toEqual(["documents[1].name"]);
    expect(dup.failures?.[0]?.reason).toMatch(/listed twice/);
  });

  test("values unknown during preview are tolerated", async () => {
    const { failures } = await h.check(
      {},
      { name: UNKNOWN, documents: [{ name: "a", text: UNKNOWN }, UNKNOWN] },
    );
    expect(failures).toEqual([]);
  });
});

describe("misspelt inputs are refused at preview, naming the key", () => {
  test("a top-level key that is not an input, with the input it was probably meant to be", async () => {
    const { failures } = await h.check({}, { name: "kb", document: [{ name: "a", text: "x" }] });
    expect(failures).toEqual([
      {
        property: "document",
        reason: expect.stringContaining("document: not an input of KnowledgeBase (did you mean documents?)"),
      },
    ]);
  });

  test("a key a document does not have, at the document's index", async () => {
    const { failures } = await h.check(
      {},
      {
        name: "kb",
        documents: [
          { name: "a", text: "x" },
          { name: "b", url: "https://b.example.com", tags: ["x"] },
        ],
      },
    );
    expect(failures?.map((f) => f.property)).toEqual(["documents[1].tags"]);
    expect(failures?.[0]?.reason).toMatch(/extra_forbidden/);
  });
});

describe("values unknown at preview, at every level", () => {
  test("a whole input: never missing, never replaced by a default", async () => {
    const news = { name: UNKNOWN, description: UNKNOWN, documents: UNKNOWN, readyTimeoutSeconds: UNKNOWN };
    const checked = await h.check({}, news);
    expect(checked.failures).toEqual([]);
    expect(checked.inputs).toEqual(news);
  });

  test("one document of the list: the others keep their indexes and are still checked", async () => {
    const { failures } = await h.check(
      {},
      {
        name: "kb",
        documents: [UNKNOWN, { name: "a", text: "x" }, { name: "", text: "y" }, { name: "a", text: "z" }],
      },
    );
    expect(failures?.map((f) => f.property)).toEqual(["documents[2].name"]);
    const dup = await h.check(
      {},
      { name: "kb", documents: [UNKNOWN, { name: "a", text: "x" }, { name: "a", text: "z" }] },
    );
    expect(dup.failures?.map((f) => f.property)).toEqual(["documents[2].name"]);
  });

  test("one field of a document: its known fields are still checked, and no rule needs the unknown one", async () => {
    const { failures } = await h.check(
      {},
      {
        name: "kb",
        documents: [
          { name: UNKNOWN, url: "ftp://files.example.com/a" },
          { name: UNKNOWN, text: "x" },
          { name: "b", url: UNKNOWN },
          { name: "c", text: UNKNOWN },
        ],
      },
    );
    expect(failures?.map((f) => f.property)).toEqual(["documents[0].url"]);
  });

  test("diff of a preview with an unknown document name: a change of the documents", async () => {
    const { id, outs } = await up({ name: "Unknown names", documents: [{ name: "a", text: "x" }] });
    const d = await h.diff(id, outs, { name: "Unknown names", documents: [{ name: UNKNOWN, text: "x" }] });
    expect(d).toMatchObject({ changes: true, diffs: ["documents"] });
    const t = await h.diff(id, outs, {
      name: "Unknown names",
      documents: [{ name: "a", text: "x" }],
      readyTimeoutSeconds: UNKNOWN,
    });
    expect(t.changes).toBe(false);
  });
});

describe("typed provider state", () => {
  test("state written by 0.1.0 (the same outputs) reads and diffs", async () => {
    const { id } = await up({ name: "Old state", documents: [{ name: "a", text: "x" }] });
    const kb = await client.knowledgeBases.get(id);
    const recorded = {
      name: "Old state",
      documents: [{ name: "a", text: "x" }],
      knowledgeBaseId: id,
      kbType: "non_deterministic",
      documentStatuses: kb.documents.map((d) => ({
        name: d.name,
        id: d.id,
        source: d.source,
        status: d.status,
        error: d.error,
      })),
    };
    const read = await h.read(id, recorded);
    expect(read.props).toMatchObject(recorded);
    expect(
      (await h.diff(id, recorded, { name: "Old state", documents: [{ name: "a", text: "x" }] })).changes,
    ).toBe(false);
  });

  test("a state that does not parse is refused by every step, naming the resource", async () => {
    const broken = { name: 7, documents: [] };
    const inputs = { name: "kb", documents: [] };
    for (const step of [
      () => h.diff("k", broken, inputs),
      () => h.read("k", broken),
      () => h.update("k", broken, inputs),
      () => h.delete("k", broken),
    ]) {
      await expect(step()).rejects.toThrow(/KnowledgeBase state .*name/);
    }
  });
});

describe("compare-and-set", () => {
  test("a document added or renamed in the dashboard is refused; document order is no conflict", async () => {
    const { id, inputs, outs } = await up({
      name: "Guarded",
      documents: [
        { name: "a", text: "one" },
        { name: "b", url: "https://b.example.com" },
      ],
    });
    // The same set in another order: the update goes through.
    await client.knowledgeBases.replace(id, {
      name: "Guarded",
      documents: [
        { name: "b", url: "https://b.example.com" },
        { name: "a", text: "one" },
      ],
    });
    const renamed = await h.update(id, outs, { ...inputs, name: "Guarded 2" });
    await client.knowledgeBases.replace(id, {
      name: "Guarded 2",
      documents: [
        { name: "a", text: "one" },
        { name: "b", url: "https://b.example.com" },
        { name: "c", url: "https://c.example.com" },
      ],
    });
    const replace = vi.spyOn(client.knowledgeBases, "replace");
    try {
      await expect(h.update(id, renamed.outs, { ...inputs, name: "Guarded 3" })).rejects.toThrow(
        /Knowledge base "Guarded 2" .* was changed outside Pulumi \(documents\)\. Nothing was written/,
      );
      expect(replace).not.toHaveBeenCalled();
    } finally {
      replace.mockRestore();
    }
    expect((await client.knowledgeBases.get(id)).documents.map((d) => d.name).sort()).toEqual([
      "a",
      "b",
      "c",
    ]);
  });
});

describe("lifecycle", () => {
  test("create waits until every document is ready; nothing to change afterwards", async () => {
    const started = Date.now();
    const { id, inputs, outs } = await up({ name: "Shop FAQ", documents: DOCS });
    expect(Date.now() - started).toBeGreaterThanOrEqual(PROCESSING_MS - 20);
    expect(outs.knowledgeBaseId).toBe(id);
    expect(outs.kbType).toBe("non_deterministic");
    expect(outs.documentStatuses.map((d: any) => [d.name, d.source, d.status])).toEqual([
      ["faq", "text", "ready"],
      ["returns", "url", "ready"],
    ]);
    const kb = await client.knowledgeBases.get(id);
    expect(kb.documents.every((d) => d.status === "ready")).toBe(true);

    expect((await h.diff(id, outs, inputs)).changes).toBe(false);
    // Documents are a set: order does not matter.
    expect((await h.diff(id, outs, { ...inputs, documents: [...DOCS].reverse() })).changes).toBe(false);
    const read = await h.read(id, outs);
    expect((await h.diff(id, read.props, inputs)).changes).toBe(false);
    expect(read.inputs?.documents).toEqual(outs.documents);
  });

  test("update replaces the document set, keeps unchanged documents, and waits again", async () => {
    const first = await up({ name: "Policies", documents: DOCS });
    const ids = Object.fromEntries(first.outs.documentStatuses.map((d: any) => [d.name, d.id]));
    const news = {
      name: "Policies v2",
      documents: [
        { name: "faq", text: "Q: When do you open? A: At nine." },
        { name: "returns", text: "Returns within 30 days." },
        { name: "shipping", url: "https://shop.example.com/shipping" },
      ],
    };
    expect((await h.diff(first.id, first.outs, news)).changes).toBe(true);
    const spy = vi.spyOn(client.knowledgeBases, "replace");
    let outs: Record<string, any>;
    try {
      outs = (await h.update(first.id, first.outs, news)).outs as Record<string, any>;
      expect(spy).toHaveBeenCalledTimes(1);
      expect(spy.mock.calls[0]?.[1]).toEqual({
        name: "Policies v2",
        // Not declared: the service's description stays (the create marker the create left in it).
        description: expect.stringMatching(/^pulumi-voice-agent:create:/),
        documents: [
          { name: "faq", text: "Q: When do you open? A: At nine." },
          { name: "returns", text: "Returns within 30 days." },
          { name: "shipping", url: "https://shop.example.com/shipping" },
        ],
      });
    } finally {
      spy.mockRestore();
    }
    expect(outs.documentStatuses.every((d: any) => d.status === "ready")).toBe(true);
    const after = Object.fromEntries(outs.documentStatuses.map((d: any) => [d.name, d.id]));
    expect(after.faq).toBe(ids.faq);
    expect((await h.diff(first.id, outs, news)).changes).toBe(false);
    const kb = await client.knowledgeBases.get(first.id);
    expect(kb.name).toBe("Policies v2");
    expect(kb.documents.map((d) => d.name).sort()).toEqual(["faq", "returns", "shipping"]);
  });

  test("a changed text is a change; a description left unset is not managed", async () => {
    const { id, inputs, outs } = await up({ name: "Texts", documents: [{ name: "a", text: "one" }] });
    expect((await h.diff(id, outs, { ...inputs, documents: [{ name: "a", text: "two" }] })).changes).toBe(
      true,
    );
    // A description written elsewhere is kept by an update and never shows as a diff.
    await client.knowledgeBases.replace(id, {
      name: "Texts",
      description: "Set in the dashboard",
      documents: [{ name: "a", text: "one" }],
    });
    const read = await h.read(id, outs);
    expect((await h.diff(id, read.props, inputs)).changes).toBe(false);
    const renamed = await h.update(id, read.props, { ...inputs, name: "Texts renamed" });
    expect((await client.knowledgeBases.get(id)).description).toBe("Set in the dashboard");
    // Once declared, it is managed.
    const declared = { ...inputs, name: "Texts renamed", description: "Ours" };
    const outs2 = (await h.update(id, renamed.outs, declared)).outs as Record<string, any>;
    expect((await client.knowledgeBases.get(id)).description).toBe("Ours");
    expect((await h.diff(id, outs2, declared)).changes).toBe(false);
    expect((await h.diff(id, outs2, { ...declared, description: null })).changes).toBe(true);
  });

  test("refresh shows documents added or changed elsewhere as drift", async () => {
    const { id, inputs, outs } = await up({
      name: "Drift",
      documents: [
        { name: "a", text: "one" },
        { name: "b", url: "https://b.example.com" },
      ],
    });
    await client.knowledgeBases.replace(id, {
      name: "Drift",
      documents: [
        { name: "a", text: "one" },
        { name: "b", url: "https://b.example.com/moved" },
        { name: "c", text: "added in the dashboard" },
      ],
    });
    const read = await h.read(id, outs);
    expect((await h.diff(id, read.props, inputs)).changes).toBe(true);
    const docs = read.inputs?.documents as any[];
    expect(docs.map((d) => d.name)).toEqual(["a", "b", "c"]);
    expect(docs[0]).toEqual({ name: "a", text: "one" });
    expect(docs[1]).toEqual({ name: "b", url: "https://b.example.com/moved" });
    // Its text is never read back: declared by name alone, never by a stand-in for its text.
    expect(docs[2]).toEqual({ name: "c", heldText: true });
    // The next up puts the declared set back.
    await h.update(id, read.props, inputs);
    expect((await client.knowledgeBases.get(id)).documents.map((d) => d.name).sort()).toEqual(["a", "b"]);
  });

  test("a failed document fails the create with its name and error; the knowledge base stays in the state", async () => {
    const inputs = {
      name: "Broken",
      documents: [
        { name: "good", text: "fine" },
        { name: "dead-link", url: "https://docs.invalid/manual" },
      ],
    };
    const err = (await h.create(inputs).catch((e) => e)) as Error & { id?: string; properties?: any };
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toMatch(/"dead-link": could not fetch https:\/\/docs\.invalid\/manual/);
    expect(err.message).not.toMatch(/"good"/);
    // An initialization failure: Pulumi records the id and the next up updates instead of duplicating.
    expect(err.id).toEqual(expect.any(String));
    expect(err.properties.knowledgeBaseId).toBe(err.id);
    expect(err.properties.documentStatuses.find((d: any) => d.name === "dead-link").status).toBe("failed");
    // The update fails the same way until the document is fixed.
    await expect(h.update(err.id as string, err.properties, inputs)).rejects.toThrow(/dead-link/);
    const fixed = {
      ...inputs,
      documents: [inputs.documents[0], { name: "dead-link", url: "https://docs.example.com/manual" }],
    };
    const { outs } = await h.update(err.id as string, err.properties, fixed);
    expect((outs as any).documentStatuses.every((d: any) => d.status === "ready")).toBe(true);
  });

  test("waiting stops at readyTimeoutSeconds with the documents still processing named", async () => {
    const slow = await startEmulator({ port: 0, kbProcessingMs: 5_000 });
    const onSlow = knowledgeBaseProvider(
      contextFor(new VoiceAgentClient({ baseUrl: slow.url, apiKey: DEFAULT_API_KEY })),
    );
    try {
      const started = Date.now();
      const err = (await onSlow
        .create({ name: "Slow", documents: [{ name: "big", text: "a lot" }], readyTimeoutSeconds: 0.3 })
        .catch((e) => e)) as Error & { id?: string };
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(err.message).toMatch(/after 0\.3 s, still processing "big".*readyTimeoutSeconds/);
      expect(err.id).toEqual(expect.any(String));
    } finally {
      await slow.close();
    }
  });

  test("delete while an agent uses it names the agent; after detaching it succeeds", async () => {
    const { id, outs } = await up({ name: "In use", documents: [{ name: "a", text: "one" }] });
    const agent = await client.agents.create({ name: "KB user", knowledge_base_ids: [id] } as any);
    const err = (await h.delete(id, outs).catch((e) => e)) as Error;
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toMatch(/Knowledge base "In use".*cannot be deleted while agents use it/);
    expect(err.message).toContain("KB user");
    expect(err.message).toContain(agent.id);
    expect(err.message).toMatch(/knowledgeBaseIds/);
    await client.agents.patch(agent.id, { knowledge_base_ids: [] });
    await h.delete(id, outs);
    await expect(client.knowledgeBases.get(id)).rejects.toMatchObject({ status: 404 });
    // Gone: refresh drops it, and a second delete is a no-op.
    expect((await h.read(id, outs)).id).toBeUndefined();
    await h.delete(id, outs);
  });
});

describe("adoption (adoptId) and documents held by the service (heldText)", () => {
  /** The write requests the emulator saw since the log was last cleared. */
  const writes = async () => (await requestLog(emu)).filter((r) => r.method !== "GET");

  /** A knowledge base made in the dashboard: a text document, a url document, a description. */
  async function dashboardKb(name: string) {
    const kb = await client.knowledgeBases.create({
      name,
      description: "Made in the dashboard",
      documents: [
        { name: "faq", text: "Q: When do you open? A: At nine." },
        { name: "returns", url: "https://shop.example.com/returns" },
      ],
    });
    await clearRequestLog(emu);
    return kb;
  }

  const declaration = (id: string, name: string) => ({
    adoptId: id,
    name,
    description: "Made in the dashboard",
    documents: [
      { name: "returns", url: "https://shop.example.com/returns" },
      { name: "faq", heldText: true },
    ],
  });

  test("a declaration equal to what the service holds: adopted with zero writes, then no diff", async () => {
    const kb = await dashboardKb("Adopted as is");
    const inputs = declaration(kb.id, "Adopted as is");
    const { id, outs } = await up(inputs);
    expect(await writes()).toEqual([]);
    expect(id).toBe(kb.id);
    expect(outs.knowledgeBaseId).toBe(kb.id);
    expect(outs.documentStatuses.map((d: any) => d.name)).toEqual(["faq", "returns"]);
    expect((await h.diff(id, outs, inputs)).changes).toBe(false);
    const read = await h.read(id, outs);
    expect((await h.diff(id, read.props, inputs)).changes).toBe(false);
    expect(await writes()).toEqual([]);
    expect((await client.knowledgeBases.get(id)).description).toBe("Made in the dashboard");
  });

  test("a declaration that differs is written onto the adopted knowledge base, once", async () => {
    const kb = await dashboardKb("Adopted and changed");
    const inputs = {
      adoptId: kb.id,
      name: "Adopted and renamed",
      documents: [
        { name: "faq", text: "Q: When do you open? A: At nine." },
        { name: "returns", url: "https://shop.example.com/returns" },
      ],
    };
    const { id, outs } = await up(inputs);
    expect((await writes()).map((r) => r.method)).toEqual(["PUT"]);
    expect(id).toBe(kb.id);
    expect((await client.knowledgeBases.get(id)).name).toBe("Adopted and renamed");
    // Not declared, so not managed: the description stays.
    expect((await client.knowledgeBases.get(id)).description).toBe("Made in the dashboard");
    expect((await h.diff(id, outs, inputs)).changes).toBe(false);
  });

  test("a change to a knowledge base with a heldText document fails, writing nothing, naming it", async () => {
    const kb = await dashboardKb("Held");
    const inputs = declaration(kb.id, "Held");
    const { id, outs } = await up(inputs);
    const renamed = { ...inputs, name: "Held, renamed" };
    expect((await h.diff(id, outs, renamed)).changes).toBe(true);
    await expect(h.update(id, outs, renamed)).rejects.toThrow(
      /Knowledge base "Held, renamed" .*document "faq" is declared with heldText.*Nothing was written/,
    );
    // Adopting with a declaration that differs fails the same way.
    await expect(h.create({ ...renamed, description: "Other" })).rejects.toThrow(
      /"faq" is declared with heldText/,
    );
    expect(await writes()).toEqual([]);
    // With its text given, the change goes through.
    const withText = {
      ...renamed,
      documents: [
        { name: "returns", url: "https://shop.example.com/returns" },
        { name: "faq", text: "Q: When do you open? A: At nine." },
      ],
    };
    await h.update(id, outs, withText);
    expect((await client.knowledgeBases.get(id)).name).toBe("Held, renamed");
  });

  test("a heldText document whose text document is gone from the service is a change", async () => {
    const kb = await dashboardKb("Held, then removed");
    const inputs = declaration(kb.id, "Held, then removed");
    const { id, outs } = await up(inputs);
    await client.knowledgeBases.replace(id, {
      name: "Held, then removed",
      description: "Made in the dashboard",
      documents: [{ name: "returns", url: "https://shop.example.com/returns" }],
    });
    const read = await h.read(id, outs);
    expect((await h.diff(id, read.props, inputs)).changes).toBe(true);
  });

  test("check: heldText only in an adopted or existing (imported) knowledge base, alone, and true; an unknown adoptId fails the create", async () => {
    const property = async (inputs: Record<string, unknown>, olds: Record<string, unknown> = {}) =>
      ((await h.check(olds, inputs)).failures ?? []).map((f) => f.property);
    expect(await property({ name: "kb", documents: [{ name: "a", heldText: true }] })).toEqual([
      "documents[0].heldText",
    ]);
    // One the stack holds (`pulumi import` records no adoptId): the service may hold the text.
    const imported = { name: "kb", documents: [{ name: "a", heldText: true }] };
    expect(await property(imported, imported)).toEqual([]);
    expect(
      await property({ adoptId: "x", name: "kb", documents: [{ name: "a", heldText: true, text: "t" }] }),
    ).toEqual(["documents[0].heldText"]);
    expect(await property({ adoptId: "x", name: "kb", documents: [{ name: "a", heldText: false }] })).toEqual(
      ["documents[0].heldText"],
    );
    expect(await property({ adoptId: "x", name: "kb", documents: [{ name: "a", heldText: true }] })).toEqual(
      [],
    );
    expect(await property({ adoptId: 7, name: "kb" })).toEqual(["adoptId"]);
    await expect(
      h.create({ adoptId: "00000000-0000-4000-8000-000000000000", name: "kb", documents: [] }),
    ).rejects.toThrow(/adoptId: there is no knowledge base 00000000-0000-4000-8000-000000000000/);
  });
});
