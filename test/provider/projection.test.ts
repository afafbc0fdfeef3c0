/**
 * The agent's projection between environments: the environment-independent form, its digest, the
 * paths left out, and the field-by-field differences promotion reports.
 */
import { describe, expect, test } from "vitest";
import type { JsonObject } from "../../src/provider/normalize";
import { UNKNOWN } from "../../src/provider/unknowns";
import {
  configDigest,
  describeValue,
  differences,
  overlay,
  parsePath,
  portableConfig,
  withoutPaths,
} from "../../src/resources/agent/projection";

const staging = {
  knowledgeBases: { "kb-s1": "FAQ", "kb-s2": "Returns" },
  analysisGroups: { "ag-s": "Default Analysis" },
};
const production = {
  knowledgeBases: { "kb-p1": "FAQ", "kb-p2": "Returns" },
  analysisGroups: { "ag-p": "Default Analysis" },
};

const config = (over: JsonObject = {}): JsonObject => ({
  name: "support",
  systemPrompt: "## Agent Purpose\nHelp.\n## Call Flow\nAsk.",
  model: { provider: "openai", model: "gpt-4o", temperature: 0.2 },
  variables: [
    { key: "callee_name", defaultValue: null },
    { key: "callee_region", defaultValue: "north" },
  ],
  ...over,
});

describe("the environment-independent configuration", () => {
  test("knowledge bases and analysis groups by name: equal digests across workspaces", () => {
    const s = portableConfig(
      config({ knowledgeBaseIds: ["kb-s2", "kb-s1"], analysisGroupIds: ["ag-s"] }),
      staging,
    );
    const p = portableConfig(
      config({ knowledgeBaseIds: ["kb-p1", "kb-p2"], analysisGroupIds: ["ag-p"] }),
      production,
    );
    expect(s.knowledgeBaseIds).toEqual(["FAQ", "Returns"]);
    expect(s.analysisGroupIds).toEqual(["Default Analysis"]);
    expect(configDigest(s)).toBe(configDigest(p));
    expect(differences(s, p)).toEqual([]);
  });

  test("derived fields are left out; an id without a name stays as the id", () => {
    const p = portableConfig(config({ knowledgeBaseIds: ["kb-gone"] }), production);
    expect(p.model).toEqual({ model: "gpt-4o", temperature: 0.2 });
    expect(p.knowledgeBaseIds).toEqual(["id:kb-gone"]);
  });

  test("a different prompt: its path and the first differing line of each side", () => {
    const s = portableConfig(config(), staging);
    const p = portableConfig(
      config({ systemPrompt: "## Agent Purpose\nHelp.\n## Call Flow\nGreet." }),
      production,
    );
    const found = differences(s, p);
    expect(found).toHaveLength(1);
    const [d] = found;
    expect(d?.path).toBe("systemPrompt");
    expect(describeValue(d?.left, d?.right)).toBe('line 4: "Ask."');
    expect(describeValue(d?.right, d?.left)).toBe('line 4: "Greet."');
    expect(configDigest(s)).not.toBe(configDigest(p));
  });

  test("list elements by their key, nested fields by their path, a missing knowledge base whole", () => {
    const s = portableConfig(config({ knowledgeBaseIds: ["kb-s1", "kb-s2"] }), staging);
    const p = portableConfig(
      config({
        knowledgeBaseIds: ["kb-p1"],
        model: { model: "gpt-4o", temperature: 0.7 },
        variables: [
          { key: "callee_name", defaultValue: null },
          { key: "callee_region", defaultValue: "south" },
        ],
      }),
      production,
    );
    expect(differences(s, p)).toEqual([
      { path: "knowledgeBaseIds", left: ["FAQ", "Returns"], right: ["FAQ"] },
      { path: "model.temperature", left: 0.2, right: 0.7 },
      { path: "variables[callee_region].defaultValue", left: "north", right: "south" },
    ]);
  });

  test("ignore: paths in program spelling, list elements by key; unknown paths refused by parsePath", () => {
    const c = config({ voice: { speed: 1.2 } });
    const left = withoutPaths(c, ["name", "variables[callee_region].defaultValue", "voice.speed"]);
    expect(left.name).toBeUndefined();
    expect(left.voice).toEqual({});
    expect(left.variables).toEqual([{ key: "callee_name", defaultValue: null }, { key: "callee_region" }]);
    expect(withoutPaths(c, ["variables[callee_region]"]).variables).toEqual([
      { key: "callee_name", defaultValue: null },
    ]);
    expect(parsePath("variables[callee_region].defaultValue")).toEqual([
      { key: "variables" },
      { item: "callee_region" },
      { key: "defaultValue" },
    ]);
    for (const bad of ["", "nmae", "voice..speed", "voice.", "[0]", "variables[x]defaultValue"])
      expect(parsePath(bad)).toBeUndefined();
  });

  test("a value unknown at preview is never a difference", () => {
    const s = portableConfig(config({ knowledgeBaseIds: ["kb-s1"] }), staging);
    const p = portableConfig(config({ knowledgeBaseIds: [UNKNOWN] }), production);
    expect(differences(s, p)).toEqual([]);
  });

  test("a value unknown at preview is left out alone: every known field beside it is compared", () => {
    const s = portableConfig(config({ knowledgeBaseIds: ["kb-s1"] }), staging);
    const p = portableConfig(
      config({
        systemPrompt: "## Agent Purpose\nHelp.\n## Call Flow\nGreet.",
        knowledgeBaseIds: UNKNOWN,
        variables: [
          { key: "callee_name", defaultValue: UNKNOWN },
          { key: "callee_region", defaultValue: "south" },
        ],
      }),
      production,
    );
    expect(differences(s, p).map((d) => d.path)).toEqual([
      "systemPrompt",
      "variables[callee_region].defaultValue",
    ]);
    // A list holding an unknown element cannot be lined up: left out whole, nothing else.
    const some = portableConfig(config({ knowledgeBaseIds: ["kb-p1", UNKNOWN], name: "other" }), production);
    expect(differences(s, some).map((d) => d.path)).toEqual(["name"]);
  });

  test("transfer numbers are compared in order (the service dials them first to last)", () => {
    const number = (n: string, priority: number) => ({ number: n, priority });
    const tools = (...numbers: JsonObject[]) => ({ transferCall: { enabled: true, numbers } });
    const s = config({ builtinTools: tools(number("+14155550101", 1), number("+14155550102", 2)) });
    const p = config({ builtinTools: tools(number("+14155550102", 2), number("+14155550101", 1)) });
    expect(differences(s, p).map((d) => [d.path, d.left, d.right])).toEqual([
      ["builtinTools.transferCall.numbers[0].number", "+14155550101", "+14155550102"],
      ["builtinTools.transferCall.numbers[0].priority", 1, 2],
      ["builtinTools.transferCall.numbers[1].number", "+14155550102", "+14155550101"],
      ["builtinTools.transferCall.numbers[1].priority", 2, 1],
    ]);
    // One number more on one side: the extra one, by its place.
    const more = config({
      builtinTools: tools(number("+14155550101", 1), number("+14155550102", 2), number("+14155550103", 3)),
    });
    expect(differences(s, more)).toEqual([
      {
        path: "builtinTools.transferCall.numbers[2]",
        left: undefined,
        right: { number: "+14155550103", priority: 3 },
      },
    ]);
  });

  test("variables are a set by key; memory fields by key (the service orders them by key)", () => {
    const field = (key: string, label: string) => ({ key, label, type: "string" });
    const s = config({ memory: { fields: [field("intent", "Intent"), field("city", "City")] } });
    const p = config({
      variables: [
        { key: "callee_region", defaultValue: "north" },
        { key: "callee_name", defaultValue: null },
      ],
      memory: { fields: [field("city", "City"), field("intent", "Intent")] },
    });
    expect(differences(s, p)).toEqual([]);
  });

  test("a key repeated on production's side is a difference, never collapsed into one element", () => {
    const field = (key: string, label: string) => ({ key, label, type: "string" });
    const s = config({ memory: { fields: [field("intent", "Intent")] } });
    const twice = config({ memory: { fields: [field("intent", "Intent"), field("intent", "Intent")] } });
    expect(differences(s, twice)).toEqual([
      {
        path: "memory.fields[intent]",
        left: field("intent", "Intent"),
        right: [field("intent", "Intent"), field("intent", "Intent")],
      },
    ]);
    const other = config({ memory: { fields: [field("intent", "Reason"), field("intent", "Intent")] } });
    expect(differences(s, other).map((d) => d.path)).toEqual(["memory.fields[intent]"]);
    expect(differences(twice, s).map((d) => d.path)).toEqual(["memory.fields[intent]"]);
  });

  test("overlay: what the draft will hold after the Agent's merge-patch", () => {
    const base = config({ greeting: { message: "Hi" } });
    const next = overlay(base, {
      model: { temperature: 0.5 },
      greeting: null,
      variables: [{ key: "a", defaultValue: "1" }],
    });
    expect(next.model).toEqual({ provider: "openai", model: "gpt-4o", temperature: 0.5 });
    expect(next.greeting).toBeNull();
    expect(next.variables).toEqual([
      { key: "a", defaultValue: "1" },
      { key: "callee_name", defaultValue: null },
    ]);
    expect(next.systemPrompt).toBe(base.systemPrompt);
  });
});
