/** Agent create and patch: read-back values, merge-patch, schema (422) and rule (400) refusals. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { resetEmulator } from "../support/control";
import { type Api, reason, start } from "./helpers";

let api: Api;
beforeAll(async () => {
  api = await start();
});
afterAll(async () => {
  await api.emu.close();
});
beforeEach(async () => {
  await resetEmulator(api.emu);
});

describe("create", () => {
  it("answers 201 with a V0 draft carrying the documented read-back values", async () => {
    const r = await api.post("/v1/agents", { name: "Front desk" });
    expect(r.status).toBe(201);
    const a = r.body;
    expect(a).toMatchObject({
      name: "Front desk",
      version: 0,
      is_published: false,
      is_live: false,
      live_version: null,
      latest_version: 0,
      blocked_reasons: [],
      greeting: {},
      language: { default: "hi-IN", additional: ["en-IN"], switch_trigger: "requested_or_auto" },
      conversation: {
        interruption_sensitivity: 0.5,
        response_eagerness: 0.5,
        noise_handling: { mode: "standard", level: 50 },
        silence_reminder: { enabled: true, seconds: 15 },
      },
      call: { end_on_silence_seconds: 25, recording_enabled: true, custom_analysis_enabled: true },
      model: { max_tokens: 128, provider: "openai", model: "gpt-4o-mini", fallback: null },
      transcriber: { provider: "sarvam", model: "saarika:v2", fallback: null },
      voice: { provider: "sarvam", model: "bulbul:v2", voice_id: "meera", fallback: null },
    });
    expect(a.variables).toEqual([
      { key: "callee_name", default_value: null, system_defined: true, deletable: false },
      { key: "callee_number", default_value: null, system_defined: true, deletable: false },
    ]);
    const groups = await api.get("/v1/custom-analysis");
    const def = groups.body.data.find((g: any) => g.name === "Default Analysis");
    expect(a.analysis_group_ids).toEqual([def.id]);
    expect(typeof a.id).toBe("string");
    expect(typeof a.version_id).toBe("string");
    expect(typeof a.document_revision).toBe("number");
    expect(a.dashboard_url).toContain(a.id);
  });

  it("requires name (422 missing) and bounds its length", async () => {
    const r = await api.post("/v1/agents", {});
    expect(r.status).toBe(422);
    expect(r.body.code).toBe("VALIDATION_ERROR");
    expect(r.body.detail.code).toBe("validation_error");
    expect(r.body.detail.errors).toEqual([expect.objectContaining({ field: "name", type: "missing" })]);
    const long = await api.post("/v1/agents", { name: "x".repeat(256) });
    expect(long.status).toBe(422);
    expect(long.body.detail.errors[0]).toMatchObject({ field: "name", type: "string_too_long" });
    const empty = await api.post("/v1/agents", { name: "" });
    expect(empty.body.detail.errors[0]).toMatchObject({ field: "name", type: "string_too_short" });
  });

  it("refuses unknown fields with extra_forbidden, listing every problem with its path", async () => {
    const r = await api.post("/v1/agents", {
      name: "A",
      tools: [],
      system_messages: {},
      voice: { speed: 9, colour: "red" },
      conversation: { response_eagerness: 0.6 },
    });
    expect(r.status).toBe(422);
    const errors = r.body.detail.errors as { field: string; type: string; message: string }[];
    const pairs = errors.map((e) => `${e.field}:${e.type}`).sort();
    expect(pairs).toEqual(
      [
        "tools:extra_forbidden",
        "system_messages:extra_forbidden",
        "voice.colour:extra_forbidden",
        "voice.speed:less_than_equal",
        "conversation.response_eagerness:literal_error",
      ].sort(),
    );
    expect(r.body.detail.message).toContain(errors[0]?.field);
    for (const e of errors) expect(e.message).toContain(e.field);
  });

  it.each(["tools", "pre_call_tools", "whatsapp", "knowledge_messages", "system_messages"])(
    "refuses the removed field %s",
    async (field) => {
      const r = await api.post("/v1/agents", { name: "A", [field]: {} });
      expect(r.status).toBe(422);
      expect(r.body.detail.errors[0]).toMatchObject({ field, type: "extra_forbidden" });
    },
  );

  it("accepts exactly the four response_eagerness values", async () => {
    for (const v of [1, 0.75, 0.5, 0]) {
      const a = await api.createAgent({ conversation: { response_eagerness: v } });
      expect(a.conversation.response_eagerness).toBe(v);
    }
    for (const v of [0.6, 0.25, 2]) {
      const r = await api.post("/v1/agents", { name: "A", conversation: { response_eagerness: v } });
      expect(r.status).toBe(422);
      expect(r.body.detail.errors[0].field).toBe("conversation.response_eagerness");
    }
  });

  it("bounds system_prompt to 1..65536 characters", async () => {
    expect((await api.post("/v1/agents", { name: "A", system_prompt: "" })).status).toBe(422);
    expect((await api.post("/v1/agents", { name: "A", system_prompt: "p".repeat(65537) })).status).toBe(422);
    const ok = await api.createAgent({ system_prompt: "p".repeat(65536) });
    expect(ok.system_prompt).toHaveLength(65536);
  });

  it("takes label and notes for V0, and honours temperature 0 on any model", async () => {
    const a = await api.createAgent({
      label: "draft one",
      notes: "from the test",
      model: { model: "o3-mini", temperature: 0 },
    });
    expect(a).toMatchObject({ label: "draft one", notes: "from the test" });
    expect(a.model).toMatchObject({ model: "o3-mini", provider: "openai", temperature: 0 });
  });

  it("malformed JSON is 400 invalid_request", async () => {
    const r = await api.post("/v1/agents", "{not json");
    expect(r.status).toBe(400);
    expect(reason(r)).toBe("invalid_request");
    expect(r.body.code).toBe("invalid_request");
  });

  it("derives read-only fields and ignores them when sent", async () => {
    const a = await api.createAgent({
      model: { model: "claude-3-5-haiku", provider: "openai" },
      transcriber: { model: "nova-3", provider: "sarvam" },
      voice: { provider: "cartesia", voice_id: "asha", model: "whatever" },
    });
    expect(a.model.provider).toBe("anthropic");
    expect(a.transcriber.provider).toBe("deepgram");
    expect(a.voice.model).toBe("sonic-2");
  });

  it("reads numbers back in E.164 and refuses numbers the workspace does not hold", async () => {
    const a = await api.createAgent({
      numbers: { inbound_phone: "+91 80655 50101", inbound_whatsapp: "0091 80655 60101" },
    });
    expect(a.numbers).toEqual({ inbound_phone: "+918065550101", inbound_whatsapp: "+918065560101" });
    const list = await api.get("/v1/agents");
    expect(list.body.data[0].inbound_phone).toBe("+918065550101");
    const nums = await api.get("/v1/numbers");
    expect(nums.body.find((n: any) => n.number === "+918065550101").agent_id).toBe(a.id);

    const notHeld = await api.post("/v1/agents", { name: "A", numbers: { inbound_phone: "+14155550100" } });
    expect(notHeld.status).toBe(400);
    expect(notHeld.body.detail).toMatchObject({ code: "document_invalid", param: "numbers.inbound_phone" });
    const released = await api.post("/v1/agents", { name: "A", numbers: { inbound_phone: "+918065550104" } });
    expect(released.body.detail).toMatchObject({ code: "document_invalid", param: "numbers.inbound_phone" });
    // Digits without a country code are not read as one: no `+` is ever added to them.
    const bare = await api.post("/v1/agents", { name: "A", numbers: { inbound_whatsapp: "918065560101" } });
    expect(bare.status).toBe(400);
    expect(bare.body.detail).toMatchObject({ code: "document_invalid", param: "numbers.inbound_whatsapp" });
    const wa = await api.post("/v1/agents", { name: "A", numbers: { inbound_whatsapp: "+918065550101" } });
    expect(wa.body.detail).toMatchObject({ code: "document_invalid", param: "numbers.inbound_whatsapp" });
  });
});

describe("create and patch refusals", () => {
  const refusal = async (body: Record<string, unknown>) => {
    const r = await api.post("/v1/agents", { name: "A", ...body });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe("BAD_REQUEST");
    expect(r.body.detail.message).toContain(r.body.detail.param);
    return r.body.detail as { code: string; param: string; message: string };
  };

  it("voice_not_found: a voice the provider does not offer for the agent's language", async () => {
    expect(await refusal({ voice: { voice_id: "vidya" } })).toMatchObject({
      code: "voice_not_found",
      param: "voice.voice_id",
    });
    expect(await refusal({ voice: { voice_id: "nobody" } })).toMatchObject({
      code: "voice_not_found",
      param: "voice.voice_id",
    });
    expect(await refusal({ voice: { provider: "cartesia", voice_id: "rachel" } })).toMatchObject({
      code: "voice_not_found",
      param: "voice.voice_id",
    });
    // The same voice is fine once the language is one it is offered for.
    const ok = await api.createAgent({
      language: { default: "ta-IN", additional: [] },
      voice: { voice_id: "vidya" },
    });
    expect(ok.voice.voice_id).toBe("vidya");
  });

  it("voice_config_invalid: unknown provider, or one that cannot speak a configured language", async () => {
    expect(await refusal({ voice: { provider: "acme", voice_id: "x" } })).toMatchObject({
      code: "voice_config_invalid",
      param: "voice.provider",
    });
    // elevenlabs does not speak hi-IN (the default language).
    expect(await refusal({ voice: { provider: "elevenlabs", voice_id: "rachel" } })).toMatchObject({
      code: "voice_config_invalid",
      param: "voice.provider",
    });
    // cartesia speaks hi-IN and en-IN but not ta-IN.
    expect(
      await refusal({
        language: { additional: ["en-IN", "ta-IN"] },
        voice: { provider: "cartesia", voice_id: "asha" },
      }),
    ).toMatchObject({ code: "voice_config_invalid", param: "voice.provider" });
  });

  it("voice fallback: same provider is document_invalid, unusable provider is voice_config_invalid, unknown voice voice_not_found", async () => {
    expect(await refusal({ voice: { fallback: { provider: "sarvam", voice_id: "arvind" } } })).toMatchObject({
      code: "document_invalid",
      param: "voice.fallback.provider",
    });
    expect(
      await refusal({ voice: { fallback: { provider: "elevenlabs", voice_id: "rachel" } } }),
    ).toMatchObject({
      code: "voice_config_invalid",
      param: "voice.fallback.provider",
    });
    expect(await refusal({ voice: { fallback: { provider: "nope", voice_id: "x" } } })).toMatchObject({
      code: "voice_config_invalid",
      param: "voice.fallback.provider",
    });
    expect(await refusal({ voice: { fallback: { provider: "cartesia", voice_id: "james" } } })).toMatchObject(
      {
        code: "voice_not_found",
        param: "voice.fallback.voice_id",
      },
    );
    expect(await refusal({ voice: { fallback: { provider: "cartesia" } } })).toMatchObject({
      code: "document_invalid",
      param: "voice.fallback.voice_id",
    });
    const ok = await api.createAgent({ voice: { fallback: { provider: "cartesia", voice_id: "asha" } } });
    expect(ok.voice.fallback).toEqual({ provider: "cartesia", model: "sonic-2", voice_id: "asha" });
  });

  it("model and transcriber fallbacks: same provider refused, provider sent there ignored", async () => {
    expect(await refusal({ model: { fallback: { model: "gpt-4o" } } })).toMatchObject({
      code: "document_invalid",
      param: "model.fallback.model",
    });
    expect(await refusal({ transcriber: { model: "nova-3", fallback: { model: "nova-3" } } })).toMatchObject({
      code: "document_invalid",
      param: "transcriber.fallback.model",
    });
    const a = await api.createAgent({
      model: { fallback: { model: "claude-3-5-haiku", provider: "openai" } },
    });
    expect(a.model.fallback).toEqual({ provider: "anthropic", model: "claude-3-5-haiku" });
    // Moving the main engine onto the fallback's provider is refused the same way, naming the main engine.
    const r = await api.patch(`/v1/agents/${a.id}`, { model: { model: "claude-sonnet-4" } });
    expect(r.status).toBe(400);
    expect(r.body.detail).toMatchObject({ code: "document_invalid", param: "model.model" });
    const v = await api.createAgent({ voice: { fallback: { provider: "cartesia", voice_id: "asha" } } });
    const moved = await api.patch(`/v1/agents/${v.id}`, {
      voice: { provider: "cartesia", voice_id: "asha" },
    });
    expect(moved.body.detail).toMatchObject({ code: "document_invalid", param: "voice.provider" });
  });

  it("unknown and retired models are document_invalid", async () => {
    expect(await refusal({ model: { model: "gpt-9" } })).toMatchObject({
      code: "document_invalid",
      param: "model.model",
    });
    expect(await refusal({ model: { model: "gpt-3.5-turbo" } })).toMatchObject({
      code: "document_invalid",
      param: "model.model",
    });
    expect(await refusal({ transcriber: { model: "whisper-x" } })).toMatchObject({
      code: "document_invalid",
      param: "transcriber.model",
    });
  });

  it("emotion: a value no provider speaks, or a provider that cannot speak it", async () => {
    expect(
      await refusal({ voice: { provider: "cartesia", voice_id: "asha", emotion: "angry" } }),
    ).toMatchObject({
      code: "document_invalid",
      param: "voice.emotion",
    });
    const d = await refusal({ voice: { emotion: "happy" } });
    expect(d).toMatchObject({ code: "document_invalid", param: "voice.emotion" });
    expect(d.message).toContain("cartesia");
    const ok = await api.createAgent({ voice: { provider: "cartesia", voice_id: "asha", emotion: "calm" } });
    expect(ok.voice.emotion).toBe("calm");
  });

  it("speed on the provider that does not take it", async () => {
    const d = await refusal({ voice: { provider: "deepgram", voice_id: "thalia", speed: 1.2 } });
    expect(d).toMatchObject({ code: "voice_config_invalid", param: "voice.speed" });
    expect(d.message).toContain("sarvam");
    const ok = await api.createAgent({ voice: { provider: "deepgram", voice_id: "thalia" } });
    expect(ok.voice).toMatchObject({ provider: "deepgram", model: "aura-2", speed: 1 });
  });

  it("hold check-in at or after the hold ends", async () => {
    expect(
      await refusal({ builtin_tools: { hold_call: { max_seconds: 30, follow_up_seconds: 30 } } }),
    ).toMatchObject({
      code: "document_invalid",
      param: "builtin_tools.hold_call.follow_up_seconds",
    });
    const ok = await api.createAgent({
      builtin_tools: { hold_call: { max_seconds: 30, follow_up_seconds: 29 } },
    });
    expect(ok.builtin_tools.hold_call.follow_up_seconds).toBe(29);
  });

  it("transfer numbers: E.164, IANA timezone, non-empty hour window", async () => {
    const tc = (n: Record<string, unknown>) => ({
      builtin_tools: { transfer_call: { enabled: true, numbers: [n] } },
    });
    expect(await refusal(tc({ number: "080-1234", timezone: "Asia/Kolkata" }))).toMatchObject({
      code: "document_invalid",
      param: "builtin_tools.transfer_call.numbers[0].number",
    });
    expect(await refusal(tc({ number: "+919812345678", timezone: "IST" }))).toMatchObject({
      code: "document_invalid",
      param: "builtin_tools.transfer_call.numbers[0].timezone",
    });
    expect(
      await refusal(tc({ number: "+919812345678", timezone: "Asia/Kolkata", start_hour: 9, end_hour: 9 })),
    ).toMatchObject({
      code: "document_invalid",
      param: "builtin_tools.transfer_call.numbers[0].end_hour",
    });
    const ok = await api.createAgent(
      tc({ number: "+919812345678", timezone: "Europe/London", start_hour: 9, end_hour: 17 }),
    );
    expect(ok.builtin_tools.transfer_call.numbers).toEqual([
      {
        number: "+919812345678",
        priority: 1,
        start_hour: 9,
        end_hour: 17,
        timezone: "Europe/London",
        max_concurrent_calls: 1,
      },
    ]);
  });

  it("memory fields: a key declared twice, enum_values on a non-string type; read back ordered by key", async () => {
    expect(await refusal({ memory: { fields: [{ key: "city" }, { key: "city" }] } })).toMatchObject({
      code: "document_invalid",
      param: "memory.fields[1].key",
    });
    expect(
      await refusal({ memory: { fields: [{ key: "age", type: "number", enum_values: ["1"] }] } }),
    ).toMatchObject({
      code: "document_invalid",
      param: "memory.fields[0].enum_values",
    });
    const ok = await api.createAgent({
      memory: {
        enabled: true,
        channels: ["outbound", "whatsapp"],
        fields: [{ key: "zip" }, { key: "city", enum_values: ["Pune", "Delhi"] }],
      },
    });
    expect(ok.memory.fields.map((f: any) => f.key)).toEqual(["city", "zip"]);
    expect(ok.memory.fields[0]).toEqual({
      key: "city",
      label: null,
      type: "string",
      enum_values: ["Pune", "Delhi"],
      description: null,
      category: null,
    });
  });

  it("variables: system flags must be sent back as read, system variables cannot be dropped", async () => {
    const sys = [
      { key: "callee_name", default_value: null, system_defined: true, deletable: false },
      { key: "callee_number", default_value: null, system_defined: true, deletable: false },
    ];
    expect(await refusal({ variables: [{ ...sys[0], system_defined: false }, sys[1]] })).toMatchObject({
      code: "document_invalid",
      param: "variables[0].system_defined",
    });
    expect(await refusal({ variables: [...sys, { key: "order_id", deletable: false }] })).toMatchObject({
      code: "document_invalid",
      param: "variables[2].deletable",
    });
    expect(await refusal({ variables: [{ key: "order_id" }] })).toMatchObject({
      code: "document_invalid",
      param: "variables",
    });
    const ok = await api.createAgent({
      variables: [...sys, { key: "order_id", default_value: "none" }],
      system_prompt: "Ask about order {{custom.order_id}} for {{callee_name}}.",
    });
    expect(ok.variables[2]).toEqual({
      key: "order_id",
      default_value: "none",
      system_defined: false,
      deletable: true,
    });
    expect(await refusal({ system_prompt: "Order {{custom.missing}}" })).toMatchObject({
      code: "document_invalid",
      param: "system_prompt",
    });
  });

  it("prompt_tool_reference_invalid: a tool the version does not have; custom tools come from the dashboard", async () => {
    const d = await refusal({ system_prompt: "When done, use <book_slot>." });
    expect(d).toMatchObject({ code: "prompt_tool_reference_invalid", param: "system_prompt" });
    expect(d.message).toContain("book_slot");
    // A built-in tool counts only when enabled.
    expect(await refusal({ system_prompt: "Use <transfer_call> for humans." })).toMatchObject({
      code: "prompt_tool_reference_invalid",
    });
    const ok = await api.createAgent({
      system_prompt: "Use <transfer_call> for humans and <end_call> to finish.",
      builtin_tools: { transfer_call: { enabled: true } },
    });
    expect(ok.system_prompt).toContain("<transfer_call>");
    expect(
      (await api.control("POST", "/_emulator/workspaces/default/custom-tools", { name: "book_slot" })).status,
    ).toBe(201);
    const custom = await api.createAgent({ system_prompt: "When done, use <book_slot>." });
    expect(custom.system_prompt).toContain("<book_slot>");
  });

  it("attachments and WhatsApp settings the workspace does not hold", async () => {
    const unknown = "00000000-0000-4000-8000-000000000000";
    expect(await refusal({ knowledge_base_ids: [unknown] })).toMatchObject({
      code: "document_invalid",
      param: "knowledge_base_ids[0]",
    });
    expect(await refusal({ analysis_group_ids: [unknown] })).toMatchObject({
      code: "document_invalid",
      param: "analysis_group_ids[0]",
    });
    expect(
      await refusal({
        builtin_tools: {
          send_whatsapp_template: { enabled: true, allowed_templates: ["order_update", "promo_blast"] },
        },
      }),
    ).toMatchObject({
      code: "document_invalid",
      param: "builtin_tools.send_whatsapp_template.allowed_templates[1]",
    });
    expect(
      await refusal({ builtin_tools: { send_whatsapp_template: { phone_number_id: "wa-pnid-9901" } } }),
    ).toMatchObject({
      code: "document_invalid",
      param: "builtin_tools.send_whatsapp_template.phone_number_id",
    });
    const ok = await api.createAgent({
      builtin_tools: {
        send_whatsapp_template: {
          enabled: true,
          allowed_templates: ["order_update"],
          phone_number_id: "wa-pnid-0101",
        },
      },
    });
    expect(ok.builtin_tools.send_whatsapp_template.allowed_templates).toEqual(["order_update"]);
  });

  it("a language the catalogue does not list", async () => {
    expect(await refusal({ language: { default: "xx-XX" } })).toMatchObject({
      code: "document_invalid",
      param: "language.default",
    });
  });
});

describe("merge-patch", () => {
  it("merges objects, replaces lists, null clears", async () => {
    const a = await api.createAgent({
      greeting: { message: "Namaste!" },
      transcriber: { keywords: ["alpha", "beta"] },
      voice: { fallback: { provider: "cartesia", voice_id: "asha" } },
    });
    const r = await api.patch(`/v1/agents/${a.id}`, {
      conversation: { noise_handling: { level: 80 } },
      transcriber: { keywords: ["gamma"] },
      greeting: { message: null },
    });
    expect(r.status).toBe(200);
    expect(r.body.conversation.noise_handling).toEqual({ mode: "standard", level: 80 });
    expect(r.body.conversation.interruption_sensitivity).toBe(0.5);
    expect(r.body.transcriber.keywords).toEqual(["gamma"]);
    expect(r.body.greeting).toEqual({});
    expect(r.body.voice.fallback.voice_id).toBe("asha");
    const cleared = await api.patch(`/v1/agents/${a.id}`, {
      voice: { fallback: null },
      system_prompt: "Hello",
    });
    expect(cleared.body.voice.fallback).toBeNull();
    expect(cleared.body.voice.voice_id).toBe("meera");
    const unset = await api.patch(`/v1/agents/${a.id}`, { system_prompt: null });
    expect(unset.body.system_prompt).toBeNull();
  });

  it("a fallback keeps its other fields when one changes; changing the voice fallback's provider clears its voice", async () => {
    const a = await api.createAgent({ voice: { fallback: { provider: "cartesia", voice_id: "asha" } } });
    const r = await api.patch(`/v1/agents/${a.id}`, { voice: { fallback: { provider: "deepgram" } } });
    expect(r.status).toBe(400);
    expect(r.body.detail).toMatchObject({ code: "document_invalid", param: "voice.fallback.voice_id" });
    const ok = await api.patch(`/v1/agents/${a.id}`, {
      voice: { fallback: { provider: "deepgram", voice_id: "thalia" } },
    });
    expect(ok.body.voice.fallback).toEqual({ provider: "deepgram", model: "aura-2", voice_id: "thalia" });
    const same = await api.patch(`/v1/agents/${a.id}`, { voice: { fallback: { voice_id: "kavya" } } });
    expect(same.body.voice.fallback).toEqual({ provider: "deepgram", model: "aura-2", voice_id: "kavya" });
  });

  it("null on an object resets it to what a new agent reads back", async () => {
    const a = await api.createAgent({ conversation: { interruption_sensitivity: 0.9 } });
    const r = await api.patch(`/v1/agents/${a.id}`, { conversation: null });
    expect(r.body.conversation.interruption_sensitivity).toBe(0.5);
  });

  it("a refused patch changes nothing", async () => {
    const a = await api.createAgent();
    const r = await api.patch(`/v1/agents/${a.id}`, { name: "B", voice: { voice_id: "nobody" } });
    expect(r.status).toBe(400);
    const after = await api.get(`/v1/agents/${a.id}`);
    expect(after.body.name).toBe("Test agent");
    expect(after.body.document_revision).toBe(a.document_revision);
  });
});

describe("malformed ids by route family", () => {
  it("agent and version routes: 422 naming the id", async () => {
    const r = await api.get("/v1/agents/not-a-uuid");
    expect(r.status).toBe(422);
    expect(r.body.detail.errors[0].field).toBe("path.agent_id");
    const w = await api.get("/v1/agents/1234/widget");
    expect(w.body.detail.errors[0].field).toBe("path.agent_id");
    const a = await api.createAgent();
    const v = await api.get(`/v1/agents/${a.id}/versions/abc`);
    expect(v.status).toBe(422);
    expect(v.body.detail.errors[0].field).toBe("path.version");
  });

  it("custom-analysis routes: 422; knowledge bases: 400 invalid_request (top-level code)", async () => {
    const g = await api.put("/v1/custom-analysis/groups/xyz", { name: "G" });
    expect(g.status).toBe(422);
    expect(g.body.detail.errors[0].field).toBe("path.group_id");
    const k = await api.get("/v1/knowledge-bases/xyz");
    expect(k.status).toBe(400);
    expect(k.body.code).toBe("invalid_request");
    expect(k.body.detail.code).toBe("invalid_request");
  });

  it("unknown well-formed ids are 404 with a reason", async () => {
    const id = "00000000-0000-4000-8000-000000000000";
    const r = await api.get(`/v1/agents/${id}`);
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ detail: { code: "agent_not_found" }, code: "NOT_FOUND" });
    expect(reason(await api.get(`/v1/knowledge-bases/${id}`))).toBe("knowledge_base_not_found");
  });
});
