/** The shared spec module on its own: merge-patch, rules a and b, issue mapping (what the provider calls at preview). */
import { describe, expect, it } from "vitest";
import { seedCatalogue } from "../../src/emulator/seed";
import {
  AgentBody,
  applyAgentPatch,
  blockedReasons,
  checkAgent,
  checkAgentStatic,
  defaultAgentConfig,
  deriveReadOnly,
  effectiveConfig,
  isE164,
  isIanaTimeZone,
  newAgentConfig,
  normalizeE164,
  originProblem,
  parseWith,
  planAgentWrite,
  reasonOf,
} from "../../src/spec";

const base = () => newAgentConfig({ name: "A" });

describe("primitives", () => {
  it("E.164 and normalisation", () => {
    expect(isE164("+918065550101")).toBe(true);
    expect(isE164("918065550101")).toBe(false);
    expect(isE164("+0123456789")).toBe(false);
    expect(normalizeE164("+91 (80) 6555-0101")).toBe("+918065550101");
    expect(normalizeE164("0091 80 6555 0101")).toBe("+918065550101");
    expect(normalizeE164("abc")).toBeNull();
  });

  it("IANA time zones", () => {
    for (const z of [
      "Asia/Kolkata",
      "Asia/Calcutta",
      "America/Argentina/Buenos_Aires",
      "UTC",
      "Europe/London",
    ]) {
      expect(isIanaTimeZone(z), z).toBe(true);
    }
    for (const z of ["IST", "+05:30", "Mars/Base", "", "asia kolkata"])
      expect(isIanaTimeZone(z), z).toBe(false);
  });

  it("widget origins", () => {
    expect(originProblem("https://a.example")).toBeNull();
    expect(originProblem("https://a.example:8443")).toBeNull();
    expect(originProblem("http://localhost:3000")).toBeNull();
    expect(originProblem("http://127.0.0.1")).toBeNull();
    expect(originProblem("http://a.example")).not.toBeNull();
    expect(originProblem("https://a.example/x")).not.toBeNull();
    expect(originProblem("https://*.a.example")).not.toBeNull();
  });

  it("reads the reason of both error envelopes", () => {
    expect(reasonOf({ detail: { code: "voice_not_found", message: "m" }, code: "BAD_REQUEST" })).toBe(
      "voice_not_found",
    );
    expect(reasonOf({ detail: "Not Found", code: "NOT_FOUND" })).toBe("NOT_FOUND");
    expect(reasonOf({ code: "rate_limited" })).toBe("rate_limited");
  });
});

describe("schema issues", () => {
  it("maps zod problems to service types with request paths", () => {
    const r = parseWith(AgentBody, {
      name: 5,
      voice: { speed: 0.1 },
      builtin_tools: { transfer_call: { numbers: [{ number: "+1", x: 1 }] } },
      memory: { max_facts: 2.5 },
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => `${i.field}:${i.code}`)).toEqual([
      "name:string_type",
      "voice.speed:greater_than_equal",
      "builtin_tools.transfer_call.numbers[0].x:extra_forbidden",
      "memory.max_facts:int_from_float",
    ]);
  });
});

describe("merge-patch", () => {
  it("objects merge, lists replace, null resets or clears, read-only members ignored", () => {
    const c = base();
    const next = applyAgentPatch(c, {
      conversation: { silence_reminder: { seconds: 20 } },
      language: { additional: ["ta-IN"] },
      model: { provider: "ignored", fallback: { model: "claude-3-5-haiku" } },
      voice: { model: "ignored" },
    });
    expect(next.conversation.silence_reminder).toMatchObject({ enabled: true, seconds: 20 });
    expect(next.language).toEqual({
      default: "hi-IN",
      additional: ["ta-IN"],
      switch_trigger: "requested_or_auto",
    });
    expect(next.model.provider).toBe("openai");
    expect(next.model.fallback).toEqual({ provider: null, model: "claude-3-5-haiku" });
    expect(next.voice.model).toBe("bulbul:v2");
    expect(c.conversation.silence_reminder.seconds).toBe(15);
    const reset = applyAgentPatch(next, { language: null, model: { fallback: null } });
    expect(reset.language.additional).toEqual(["en-IN"]);
    expect(reset.model.fallback).toBeNull();
  });

  it("changing the voice fallback's provider without a voice_id drops the old voice", () => {
    const c = applyAgentPatch(base(), { voice: { fallback: { provider: "cartesia", voice_id: "asha" } } });
    const moved = applyAgentPatch(c, { voice: { fallback: { provider: "elevenlabs" } } });
    expect(moved.voice.fallback?.voice_id).toBeUndefined();
    expect(checkAgentStatic(moved).map((i) => i.field)).toContain("voice.fallback.voice_id");
    const kept = applyAgentPatch(c, { voice: { fallback: { provider: "cartesia" } } });
    expect(kept.voice.fallback?.voice_id).toBe("asha");
  });

  it("a custom line reads back its text; a default line's text is emptied", () => {
    const c = applyAgentPatch(base(), {
      call: { max_duration_message: { mode: "custom", text: "Time is up." } },
    });
    expect(c.call.max_duration_message).toMatchObject({ mode: "custom", text: "Time is up." });
    const d = applyAgentPatch(c, { call: { max_duration_message: { mode: "default" } } });
    expect(d.call.max_duration_message.text).toBe("");
    const bad = applyAgentPatch(base(), { inbound: { fallback_message: { mode: "custom" } } });
    expect(checkAgentStatic(bad)).toEqual([
      expect.objectContaining({ field: "inbound.fallback_message.text", code: "document_invalid" }),
    ]);
  });

  it("effectiveConfig reads null objects as the platform default", () => {
    const e = effectiveConfig({ ...defaultAgentConfig(), name: "A", voice: null, memory: null });
    expect(e.voice.voice_id).toBe("meera");
    expect(e.memory.enabled).toBe(false);
  });
});

describe("rules", () => {
  const cat = seedCatalogue();

  it("the default configuration passes every rule against the seed", () => {
    expect(checkAgent(base(), { catalogue: cat, holdings: { customTools: [] } })).toEqual([]);
  });

  it("rules b need the catalogue; rules a run without it", () => {
    const c = applyAgentPatch(base(), {
      voice: { voice_id: "nobody" },
      builtin_tools: { hold_call: { follow_up_seconds: 90 } },
    });
    expect(checkAgent(c).map((i) => i.code)).toEqual(["document_invalid"]);
    expect(checkAgent(c, { catalogue: cat }).map((i) => `${i.field}:${i.code}`)).toEqual([
      "builtin_tools.hold_call.follow_up_seconds:document_invalid",
      "voice.voice_id:voice_not_found",
    ]);
  });

  it("prompt tool references are checked only when the custom tools are known", () => {
    const c = applyAgentPatch(base(), { system_prompt: "Call <crm_lookup>." });
    expect(checkAgentStatic(c)).toEqual([]);
    expect(checkAgentStatic(c, { customTools: [] })[0]?.code).toBe("prompt_tool_reference_invalid");
    expect(checkAgentStatic(c, { customTools: ["crm_lookup"] })).toEqual([]);
  });

  it("planAgentWrite returns the stored read-back or the refusal", () => {
    const ok = planAgentWrite(
      null,
      { name: "A", model: { model: "sarvam-m" }, memory: { fields: [{ key: "b" }, { key: "a" }] } },
      { catalogue: cat },
    );
    expect(ok.ok).toBe(true);
    if (ok.ok) {
      expect(ok.config.model.provider).toBe("sarvam");
      expect(ok.config.memory.fields.map((f) => f.key)).toEqual(["a", "b"]);
    }
    const bad = planAgentWrite(base(), { voice: { provider: "deepgram" } }, { catalogue: cat });
    expect(bad).toMatchObject({ ok: false, status: 400 });
    const schema = planAgentWrite(base(), { nope: 1 }, { catalogue: cat });
    expect(schema).toMatchObject({ ok: false, status: 422 });
  });

  it("blockedReasons and deriveReadOnly", () => {
    const c = applyAgentPatch(base(), { model: { model: "gpt-3.5-turbo" }, knowledge_base_ids: ["kb1"] });
    const reasons = blockedReasons(c, cat, new Set());
    expect(reasons).toHaveLength(2);
    expect(reasons[0]).toContain("model.model");
    expect(reasons[1]).toContain("knowledge_base_ids[0]");
    const d = deriveReadOnly(applyAgentPatch(base(), { model: { model: "claude-sonnet-4" } }), cat);
    expect(d.model.provider).toBe("anthropic");
  });
});
