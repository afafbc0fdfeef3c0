import { describe, expect, test } from "vitest";
import {
  canonicalJson,
  containsUnknown,
  contentHash,
  fromWire,
  mergePatch,
  project,
  toWire,
  UNKNOWN,
} from "../../src/provider/normalize";
import { normalizeE164 } from "../../src/spec/common";

describe("value plumbing shared by the resources", () => {
  test("camelCase inputs map to the wire format and back, user-data keys untouched", () => {
    const inputs = {
      builtinTools: { sendWhatsappTemplate: { phoneNumberId: "x" } },
      defaultVariables: { Order_ID: "7", camelKey: "y" },
    };
    const wire = toWire(inputs, new Set(["defaultVariables"])) as any;
    expect(wire).toEqual({
      builtin_tools: { send_whatsapp_template: { phone_number_id: "x" } },
      default_variables: { Order_ID: "7", camelKey: "y" },
    });
    expect(fromWire(wire, new Set(["defaultVariables"]))).toEqual(inputs);
  });

  test("a merge-patch carries changed fields, removed fields as null, lists whole", () => {
    const from = {
      voice: { provider: "a", voiceId: "x", speed: 1.2 },
      variables: [{ key: "a" }, { key: "b" }],
      greeting: { message: "hi" },
    };
    const to = { voice: { provider: "a", voiceId: "y" }, variables: [{ key: "a" }, { key: "c" }], name: "n" };
    expect(mergePatch(from, to)).toEqual({
      voice: { voiceId: "y", speed: null },
      variables: [{ key: "a" }, { key: "c" }],
      greeting: null,
      name: "n",
    });
    expect(mergePatch(to, to)).toEqual({});
  });

  test("projection keeps only what the program declared", () => {
    const observed = { voice: { provider: "a", model: "m", voiceId: "x", speed: 1 }, call: null, extra: 1 };
    expect(
      project(observed, { voice: { provider: "b", voiceId: "y" }, call: { recordingEnabled: true } }),
    ).toEqual({
      voice: { provider: "a", voiceId: "x" },
      call: null,
    });
  });

  test("canonical JSON and hashes ignore key order; unknowns are found deep", () => {
    expect(canonicalJson({ b: 1, a: { d: 2, c: 3 } })).toBe('{"a":{"c":3,"d":2},"b":1}');
    expect(contentHash({ a: 1, b: 2 })).toBe(contentHash({ b: 2, a: 1 }));
    expect(contentHash({ a: 1 })).not.toBe(contentHash({ a: 2 }));
    expect(containsUnknown({ a: [1, { b: UNKNOWN }] })).toBe(true);
    expect(containsUnknown({ a: [1, { b: "known" }] })).toBe(false);
  });

  test("phone numbers read as E.164 only with their country code; none is ever invented", () => {
    expect(normalizeE164("+91 98000-00001")).toBe("+919800000001");
    expect(normalizeE164("0091 98000 00001")).toBe("+919800000001");
    expect(normalizeE164("(91) 98000.00001")).toBeNull();
    expect(normalizeE164("9800000001")).toBeNull();
  });
});
