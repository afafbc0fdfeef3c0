/**
 * AnalysisGroup handlers against the emulator: validation at preview, create/diff/update/read/delete,
 * item identity kept across updates, fields left unset not managed, drift on refresh, adoption of
 * the Default Analysis group (left in place on destroy), and delete refused while an agent uses it.
 */
import { describe, expect, test, vi } from "vitest";
import type { VoiceAgentClient } from "../../src/client";
import type { RunningEmulator } from "../../src/emulator";
import { UNKNOWN } from "../../src/provider/normalize";
import { analysisGroupProvider } from "../../src/resources/analysisGroup/provider";
import { checkAndCreate, emulatorForFile, testContext } from "./support";

const h = analysisGroupProvider(testContext);

let _emu: RunningEmulator;
let client: VoiceAgentClient;

emulatorForFile({}, (e, c) => {
  _emu = e;
  client = c;
});

const up = (inputs: Record<string, any>) => checkAndCreate(h, inputs);

const ITEMS = [
  { name: "Resolved", description: "Was the issue resolved?", type: "boolean" },
  {
    name: "Reason",
    description: "Why the customer called.",
    type: "enum",
    enumValues: ["order", "refund", "other"],
  },
  { name: "Wait", type: "number", enabled: false },
];

describe("validation at preview", () => {
  test("every problem names the field as the program spells it", async () => {
    const { failures } = await h.check(
      {},
      {
        name: "",
        items: [
          { name: "Mood", type: "enum" },
          { name: "Score", type: "number", enumValues: ["a"] },
          { name: "Mood", type: "text" },
          { name: "Colour", type: "color" },
        ],
      },
    );
    const props = (failures ?? []).map((f) => f.property).sort();
    expect(props).toEqual(expect.arrayContaining(["name", "items[3].type"]));
    for (const f of failures ?? []) expect(f.reason.startsWith(`${f.property}:`)).toBe(true);

    const rules = await h.check(
      {},
      {
        name: "Group",
        items: [
          { name: "Mood", type: "enum" },
          { name: "Score", type: "number", enumValues: ["a"] },
          { name: "Mood", type: "text" },
        ],
      },
    );
    expect(rules.failures?.map((f) => f.property).sort()).toEqual(
      ["items[0].enumValues", "items[1].enumValues", "items[2].name"].sort(),
    );
  });

  test("a name is required unless adopting; adopting one way at a time; unknowns tolerated", async () => {
    expect((await h.check({}, { items: [] })).failures?.map((f) => f.property)).toEqual(["name"]);
    expect((await h.check({}, { adoptDefault: true })).failures).toEqual([]);
    expect(
      (await h.check({}, { adoptDefault: true, adoptId: "x" })).failures?.map((f) => f.property),
    ).toEqual(["adoptId"]);
    const unknown = await h.check(
      {},
      {
        name: UNKNOWN,
        items: [{ name: UNKNOWN, type: "enum", enumValues: UNKNOWN }, { name: "b", type: UNKNOWN }, UNKNOWN],
      },
    );
    expect(unknown.failures).toEqual([]);
  });
});

describe("misspelt inputs are refused at preview, naming the key", () => {
  test("a top-level key that is not an input, with the input it was probably meant to be", async () => {
    const { failures } = await h.check({}, { name: "g", item: [], adoptDefaults: true });
    expect(failures?.map((f) => f.property).sort()).toEqual(["adoptDefaults", "item"]);
    const reason = (p: string) => failures?.find((f) => f.property === p)?.reason;
    expect(reason("item")).toContain("item: not an input of AnalysisGroup (did you mean items?)");
    expect(reason("adoptDefaults")).toContain("(did you mean adoptDefault?)");
  });

  test("a key an item does not have, at the item's index (an item's id is the service's, not an input)", async () => {
    const { failures } = await h.check(
      {},
      {
        name: "g",
        items: [
          { name: "Mood", type: "enum", enumValue: ["a"] },
          { name: "Score", type: "number", id: "0b5c6f0e-0000-4000-8000-000000000000" },
        ],
      },
    );
    expect(failures?.map((f) => f.property).sort()).toEqual(["items[0].enumValue", "items[1].id"]);
    for (const f of failures ?? []) expect(f.reason).toMatch(/extra_forbidden/);
  });
});

describe("values unknown at preview, at every level", () => {
  test("a whole input: never missing, never replaced by a default", async () => {
    const news = { name: UNKNOWN, description: UNKNOWN, enabled: UNKNOWN, items: UNKNOWN };
    const checked = await h.check({}, news);
    expect(checked.failures).toEqual([]);
    expect(checked.inputs).toEqual(news);
    // Adopting a group not known yet: no name is required.
    expect((await h.check({}, { adoptId: UNKNOWN })).failures).toEqual([]);
    expect((await h.check({}, { adoptDefault: UNKNOWN })).failures).toEqual([]);
  });

  test("one item of the list: the others keep their indexes and are still checked", async () => {
    const { failures } = await h.check(
      {},
      {
        name: "g",
        items: [
          UNKNOWN,
          { name: "a", type: "text" },
          { name: "b", type: "colour" },
          { name: "a", type: "text" },
        ],
      },
    );
    expect(failures?.map((f) => f.property)).toEqual(["items[2].type"]);
    const rules = await h.check(
      {},
      { name: "g", items: [UNKNOWN, { name: "a", type: "text" }, { name: "a", type: "text" }] },
    );
    expect(rules.failures?.map((f) => f.property)).toEqual(["items[2].name"]);
  });

  test("one field of an item, or one of its enum values: the rules that need it are skipped", async () => {
    const { failures } = await h.check(
      {},
      {
        name: "g",
        items: [
          { name: "a", type: "enum", enumValues: UNKNOWN },
          { name: "b", type: "enum", enumValues: [UNKNOWN, "yes"] },
          { name: "c", type: UNKNOWN, enumValues: ["x"] },
          { name: "d", type: "text", enumValues: UNKNOWN, description: UNKNOWN, enabled: UNKNOWN },
          { name: UNKNOWN, type: "number" },
          { name: "e", type: "boolean", enumValues: ["no"] },
        ],
      },
    );
    expect(failures?.map((f) => f.property)).toEqual(["items[5].enumValues"]);
  });

  test("diff of a preview with an unknown enum value: a change of the items", async () => {
    const { id, outs } = await up({
      name: "Unknown enum",
      items: [{ name: "a", type: "enum", enumValues: ["x"] }],
    });
    const d = await h.diff(id, outs, {
      name: "Unknown enum",
      items: [{ name: "a", type: "enum", enumValues: [UNKNOWN] }],
    });
    expect(d).toMatchObject({ changes: true, diffs: ["items"] });
    const a = await h.diff(id, outs, { name: "Unknown enum", items: outs.items, adoptDefault: UNKNOWN });
    expect(a.changes).toBe(false);
  });
});

describe("typed provider state", () => {
  test("state written by 0.1.0 (the same outputs) reads and diffs", async () => {
    const { id } = await up({ name: "Old state", items: [{ name: "a", type: "text" }] });
    const group = await client.analysis.get(id);
    const recorded = {
      name: "Old state",
      items: [{ name: "a", type: "text" }],
      groupId: id,
      itemIds: Object.fromEntries((group?.items ?? []).map((it) => [it.name, it.id])),
    };
    const read = await h.read(id, recorded);
    expect(read.props).toMatchObject(recorded);
    expect(
      (await h.diff(id, recorded, { name: "Old state", items: [{ name: "a", type: "text" }] })).changes,
    ).toBe(false);
  });

  test("a state that does not parse is refused by every step, naming the resource", async () => {
    const broken = { name: "g", groupId: "x", itemIds: ["not", "a", "map"] };
    const inputs = { name: "g" };
    for (const step of [
      () => h.diff("g", broken, inputs),
      () => h.read("g", broken),
      () => h.update("g", broken, inputs),
      () => h.delete("g", broken),
    ]) {
      await expect(step()).rejects.toThrow(/AnalysisGroup state .*itemIds/);
    }
  });
});

describe("compare-and-set", () => {
  test("a dashboard edit of the group or an added item is refused; an unmanaged field is no conflict", async () => {
    const { id, inputs, outs } = await up({
      name: "Guarded",
      enabled: true,
      items: [{ name: "a", type: "text" }],
    });
    const g = await client.analysis.get(id);
    const items = (g?.items ?? []).map(({ created_at: _c, ...it }) => ({ ...it, type: "text" as const }));
    // The description is not managed by the program: no conflict.
    await client.analysis.replace(id, { name: "Guarded", description: "Dashboard", enabled: true, items });
    const renamed = await h.update(id, outs, { ...inputs, name: "Guarded 2" });

    await client.analysis.replace(id, {
      name: "Guarded 2",
      description: "Dashboard",
      enabled: false,
      items: [...items, { name: "b", type: "boolean" as const }],
    });
    const replace = vi.spyOn(client.analysis, "replace");
    try {
      await expect(h.update(id, renamed.outs, { ...inputs, name: "Guarded 3" })).rejects.toThrow(
        /Analysis group "Guarded 2" .* was changed outside Pulumi \(enabled, items\)\. Nothing was written/,
      );
      expect(replace).not.toHaveBeenCalled();
    } finally {
      replace.mockRestore();
    }
    expect(await client.analysis.get(id)).toMatchObject({ name: "Guarded 2", enabled: false });
  });
});

describe("lifecycle", () => {
  test("create, then no diff for item order or fields left unset; refresh finds nothing", async () => {
    const { id, inputs, outs } = await up({
      name: "Support quality",
      description: "After each call",
      items: ITEMS,
    });
    expect(outs.groupId).toBe(id);
    expect(Object.keys(outs.itemIds).sort()).toEqual(["Reason", "Resolved", "Wait"]);
    const group = await client.analysis.get(id);
    // Items are created in the order the program lists them.
    expect(group?.items.map((i) => i.name)).toEqual(["Resolved", "Reason", "Wait"]);
    expect(group?.items[2]?.enabled).toBe(false);

    expect((await h.diff(id, outs, inputs)).changes).toBe(false);
    expect((await h.diff(id, outs, { ...inputs, items: [...ITEMS].reverse() })).changes).toBe(false);
    const read = await h.read(id, outs);
    expect((await h.diff(id, read.props, inputs)).changes).toBe(false);
    expect(read.props.itemIds).toEqual(outs.itemIds);
  });

  test("items keep their ids when only their fields change; a renamed item is a new item", async () => {
    const first = await up({ name: "Identity", items: ITEMS });
    const news = {
      name: "Identity",
      items: [
        { name: "Resolved", description: "Was it resolved on this call?", type: "boolean" },
        {
          name: "Reason",
          description: "Why the customer called.",
          type: "enum",
          enumValues: ["order", "refund", "billing", "other"],
        },
        { name: "Waiting time", type: "number" },
      ],
    };
    expect((await h.diff(first.id, first.outs, news)).changes).toBe(true);
    const spy = vi.spyOn(client.analysis, "replace");
    let outs: Record<string, any>;
    try {
      outs = (await h.update(first.id, first.outs, news)).outs as Record<string, any>;
      const sent = spy.mock.calls[0]?.[1] as any;
      expect(sent.items.map((i: any) => i.id)).toEqual([
        first.outs.itemIds.Resolved,
        first.outs.itemIds.Reason,
        undefined,
      ]);
    } finally {
      spy.mockRestore();
    }
    expect(outs.itemIds.Resolved).toBe(first.outs.itemIds.Resolved);
    expect(outs.itemIds.Reason).toBe(first.outs.itemIds.Reason);
    expect(outs.itemIds["Waiting time"]).toEqual(expect.any(String));
    expect(outs.itemIds.Wait).toBeUndefined();
    const group = await client.analysis.get(first.id);
    expect(group?.items.find((i) => i.name === "Reason")?.enum_values).toEqual([
      "order",
      "refund",
      "billing",
      "other",
    ]);
    expect((await h.diff(first.id, outs, news)).changes).toBe(false);
  });

  test("group and item fields left unset keep the service's values through an update", async () => {
    const { id, outs } = await up({ name: "Unset fields", items: [{ name: "Topic", type: "text" }] });
    // Set elsewhere: a description and a disabled item; the program sets neither.
    const g = await client.analysis.get(id);
    await client.analysis.replace(id, {
      name: "Unset fields",
      description: "Dashboard text",
      enabled: true,
      items: [
        {
          id: g?.items[0]?.id,
          name: "Topic",
          type: "text",
          description: "Dashboard item text",
          enabled: false,
        },
      ],
    });
    const read = await h.read(id, outs);
    const inputs = { name: "Unset fields", items: [{ name: "Topic", type: "text" }] };
    expect((await h.diff(id, read.props, inputs)).changes).toBe(false);
    await h.update(id, read.props, { ...inputs, name: "Unset fields renamed" });
    const after = await client.analysis.get(id);
    expect(after?.name).toBe("Unset fields renamed");
    expect(after?.description).toBe("Dashboard text");
    expect(after?.items[0]).toMatchObject({
      id: g?.items[0]?.id,
      description: "Dashboard item text",
      enabled: false,
    });
  });

  test("refresh shows a dashboard edit of a managed field, and an extra item, as drift", async () => {
    const { id, inputs, outs } = await up({
      name: "Drifting",
      enabled: true,
      items: [{ name: "A", type: "text", enabled: true }],
    });
    const g = await client.analysis.get(id);
    await client.analysis.replace(id, {
      name: "Drifting",
      enabled: false,
      items: [
        { id: g?.items[0]?.id, name: "A", type: "text", enabled: false },
        { name: "B", type: "boolean" },
      ],
    });
    const read = await h.read(id, outs);
    expect((await h.diff(id, read.props, inputs)).changes).toBe(true);
    expect(read.inputs?.enabled).toBe(false);
    expect(read.inputs?.items).toEqual([
      { name: "A", type: "text", enabled: false },
      { name: "B", type: "boolean" },
    ]);
    // The next up restores the declaration: B removed, A enabled with its id kept.
    const written = (await h.update(id, read.props, inputs)).outs as Record<string, any>;
    expect(written.itemIds).toEqual({ A: g?.items[0]?.id });
    expect((await client.analysis.get(id))?.enabled).toBe(true);
  });

  test("delete removes the group; while an agent uses it the error names the agent", async () => {
    const { id, outs } = await up({ name: "Attached", items: [] });
    const agent = await client.agents.create({ name: "Analysis user", analysis_group_ids: [id] } as any);
    const err = (await h.delete(id, outs).catch((e) => e)) as Error;
    expect(err.message).toMatch(/Analysis group "Attached".*cannot be deleted while agents use it/);
    expect(err.message).toContain("Analysis user");
    expect(err.message).toContain(agent.id);
    await client.agents.patch(agent.id, { analysis_group_ids: [] });
    await h.delete(id, outs);
    expect(await client.analysis.get(id)).toBeUndefined();
    expect((await h.read(id, outs)).id).toBeUndefined();
  });
});

describe("the Default Analysis group", () => {
  test("is adopted, edited with item identity kept, and left in place on destroy", async () => {
    const before = (await client.analysis.list().toArray()).find((g) => g.name === "Default Analysis");
    expect(before).toBeDefined();
    const ids = Object.fromEntries((before?.items ?? []).map((i) => [i.name, i.id]));
    const items = [
      { name: "User Sentiment", type: "enum", enumValues: ["positive", "neutral", "negative", "angry"] },
      { name: "Outcome", type: "text" },
      { name: "Language", type: "text", enabled: false },
      { name: "Callback requested", type: "boolean" },
    ];
    const { id, inputs, outs } = await up({ adoptDefault: true, items });
    expect(id).toBe(before?.id);
    expect(outs.name).toBeUndefined();
    expect(outs.itemIds["User Sentiment"]).toBe(ids["User Sentiment"]);
    expect(outs.itemIds.Outcome).toBe(ids.Outcome);
    expect(outs.itemIds.Language).toBe(ids.Language);
    const group = await client.analysis.get(id);
    expect(group?.name).toBe("Default Analysis");
    // Item descriptions the program does not set are kept.
    expect(group?.items.find((i) => i.name === "Outcome")?.description).toBe(
      before?.items.find((i) => i.name === "Outcome")?.description,
    );
    expect(group?.items.map((i) => i.name)).toEqual([
      "User Sentiment",
      "Outcome",
      "Language",
      "Callback requested",
    ]);
    expect((await h.diff(id, outs, inputs)).changes).toBe(false);
    const read = await h.read(id, outs);
    expect((await h.diff(id, read.props, inputs)).changes).toBe(false);

    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    const del = vi.spyOn(client.analysis, "delete");
    try {
      await h.delete(id, read.props);
      expect(del).not.toHaveBeenCalled();
      expect(log.mock.calls.map((c) => String(c[0])).join("\n")).toMatch(
        /Default Analysis group.*left in place/,
      );
    } finally {
      log.mockRestore();
      del.mockRestore();
    }
    // Nothing restored: the group keeps what the stack wrote.
    expect((await client.analysis.get(id))?.items.length).toBe(4);
  });

  test("adoptId takes over a group by id; a protected group is never deleted", async () => {
    const def = (await client.analysis.list().toArray()).find((g) => g.name === "Default Analysis");
    const { id, outs } = await up({ adoptId: def?.id, description: "Managed by Pulumi" });
    expect(id).toBe(def?.id);
    expect((await client.analysis.get(id))?.description).toBe("Managed by Pulumi");
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      await h.delete(id, outs);
      expect(log.mock.calls.map((c) => String(c[0])).join("\n")).toMatch(/protected.*left in place/);
    } finally {
      log.mockRestore();
    }
    expect(await client.analysis.get(id)).toBeDefined();
    await expect(h.create({ adoptId: "00000000-0000-4000-8000-000000000000" })).rejects.toThrow(
      /adoptId: there is no analysis group/,
    );
  });
});
