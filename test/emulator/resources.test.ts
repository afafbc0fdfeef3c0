/** Widget, knowledge bases, custom analysis, numbers, WhatsApp, catalogues and memory subjects. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { resetEmulator } from "../support/control";
import { type Api, reason, sleep, start } from "./helpers";

let api: Api;
beforeAll(async () => {
  api = await start({ kbProcessingMs: 60 });
});
afterAll(async () => {
  await api.emu.close();
});
beforeEach(async () => {
  await resetEmulator(api.emu);
});

describe("widget", () => {
  it("is prepared on first read, never 404, and shows only the key prefix", async () => {
    const a = await api.createAgent();
    const r = await api.get(`/v1/agents/${a.id}/widget`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      agent_id: a.id,
      status: "active",
      allowed_origins: [],
      enabled_modes: { chat: true, talk: true },
      default_variables: {},
    });
    expect(r.body.public_key).toBeUndefined();
    expect(typeof r.body.public_key_prefix).toBe("string");
    const again = await api.get(`/v1/agents/${a.id}/widget`);
    expect(again.body.id).toBe(r.body.id);
  });

  it("merges a patch: objects merge, lists replace, status active|paused", async () => {
    const a = await api.createAgent();
    const r = await api.patch(`/v1/agents/${a.id}/widget`, {
      name: "Help",
      allowed_origins: ["https://example.com", "http://localhost:3000", "http://127.0.0.1:8080"],
      theme: { accent_color: "#112233", position: "top-left", button_shape: "pill", widget_width: 400 },
      enabled_modes: { talk: false },
      default_variables: { plan: "gold" },
      status: "paused",
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      name: "Help",
      status: "paused",
      enabled_modes: { chat: true, talk: false },
      default_variables: { plan: "gold" },
    });
    expect(r.body.theme).toMatchObject({
      accent_color: "#112233",
      position: "top-left",
      button_shape: "pill",
      widget_width: 400,
    });
    expect(r.body.theme.title).toBe("Talk to us");
    const r2 = await api.patch(`/v1/agents/${a.id}/widget`, {
      allowed_origins: ["https://b.example"],
      default_variables: { plan: null },
    });
    expect(r2.body.allowed_origins).toEqual(["https://b.example"]);
    expect(r2.body.default_variables).toEqual({});
  });

  it("refuses bad origins (400 document_invalid naming the entry) and bad theme values (422)", async () => {
    const a = await api.createAgent();
    for (const [origin, i] of [
      ["http://example.com", 0],
      ["https://*.example.com", 0],
      ["https://example.com/path", 0],
      ["https://example.com/", 0],
      ["example.com", 0],
    ] as const) {
      const r = await api.patch(`/v1/agents/${a.id}/widget`, { allowed_origins: [origin] });
      expect(r.status, origin).toBe(400);
      expect(r.body.detail).toMatchObject({ code: "document_invalid", param: `allowed_origins[${i}]` });
    }
    const bad = await api.patch(`/v1/agents/${a.id}/widget`, {
      theme: { accent_color: "red", position: "middle", button_shape: "circle", panel_radius: 1.5 },
      status: "off",
      nope: 1,
    });
    expect(bad.status).toBe(422);
    const fields = bad.body.detail.errors.map((e: any) => e.field).sort();
    expect(fields).toEqual(
      [
        "nope",
        "status",
        "theme.accent_color",
        "theme.button_shape",
        "theme.panel_radius",
        "theme.position",
      ].sort(),
    );
  });

  it("rotate-key shows the full key once; reads show its prefix", async () => {
    const a = await api.createAgent();
    const before = await api.get(`/v1/agents/${a.id}/widget`);
    const r = await api.post(`/v1/agents/${a.id}/widget/rotate-key`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(["public_key", "public_key_prefix", "rotated_at"]);
    expect(r.body.public_key.startsWith(r.body.public_key_prefix)).toBe(true);
    expect(r.body.public_key_prefix).not.toBe(before.body.public_key_prefix);
    const after = await api.get(`/v1/agents/${a.id}/widget`);
    expect(after.body.public_key_prefix).toBe(r.body.public_key_prefix);
  });

  it("is 404 agent_not_found for an unknown agent", async () => {
    const r = await api.get("/v1/agents/00000000-0000-4000-8000-000000000000/widget");
    expect(r.status).toBe(404);
    expect(reason(r)).toBe("agent_not_found");
  });
});

describe("knowledge bases", () => {
  it("creates documents processing, then ready or failed (unreachable url)", async () => {
    const r = await api.post("/v1/knowledge-bases", {
      name: "FAQ",
      description: "Answers",
      documents: [
        { name: "hours", text: "We open at 9." },
        { name: "site", url: "https://docs.example.com/faq" },
        { name: "broken", url: "https://files.company.invalid/faq.pdf" },
      ],
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: "FAQ", description: "Answers", kb_type: "non_deterministic" });
    expect(r.body.documents.map((d: any) => d.status)).toEqual(["processing", "processing", "processing"]);
    expect(r.body.documents[0]).toMatchObject({ name: "hours", source: "text", url: null, error: null });
    expect(r.body.documents[1]).toMatchObject({ source: "url", url: "https://docs.example.com/faq" });
    await sleep(120);
    const later = await api.get(`/v1/knowledge-bases/${r.body.id}`);
    expect(later.body.documents.map((d: any) => d.status)).toEqual(["ready", "ready", "failed"]);
    expect(later.body.documents[2].error).toContain("files.company.invalid");
  });

  it("validates bodies: strict fields, name bounds, exactly one of text/url, unique document names", async () => {
    const extra = await api.post("/v1/knowledge-bases", { name: "K", kb_type: "x" });
    expect(extra.status).toBe(422);
    expect(extra.body.detail.errors[0]).toMatchObject({ field: "kb_type", type: "extra_forbidden" });
    expect((await api.post("/v1/knowledge-bases", { name: "" })).status).toBe(422);
    const both = await api.post("/v1/knowledge-bases", {
      name: "K",
      documents: [{ name: "d", text: "a", url: "https://a.b" }],
    });
    expect(both.status).toBe(422);
    expect(both.body.detail.errors[0].field).toBe("documents[0].text");
    const dup = await api.post("/v1/knowledge-bases", {
      name: "K",
      documents: [
        { name: "d", text: "a" },
        { name: "d", text: "b" },
      ],
    });
    expect(dup.status).toBe(400);
    expect(dup.body.detail).toMatchObject({ code: "document_invalid", param: "documents[1].name" });
  });

  it("PUT replaces the set; documents matched by name, changed ones re-processed", async () => {
    const kb = (
      await api.post("/v1/knowledge-bases", {
        name: "K",
        documents: [
          { name: "a", text: "one" },
          { name: "b", text: "two" },
        ],
      })
    ).body;
    await sleep(100);
    const r = await api.put(`/v1/knowledge-bases/${kb.id}`, {
      name: "K2",
      documents: [
        { name: "a", text: "one" },
        { name: "b", text: "TWO" },
        { name: "c", text: "three" },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.body.name).toBe("K2");
    expect(r.body.description).toBeNull();
    const [a, b, c] = r.body.documents;
    expect(a).toMatchObject({ id: kb.documents[0].id, status: "ready" });
    expect(b).toMatchObject({ id: kb.documents[1].id, status: "processing" });
    expect(c.status).toBe("processing");
    const dropped = await api.put(`/v1/knowledge-bases/${kb.id}`, {
      name: "K2",
      documents: [{ name: "a", text: "one" }],
    });
    expect(dropped.body.documents).toHaveLength(1);
  });

  it("lists with a cursor in creation order, deletes with 204", async () => {
    const ids: string[] = [];
    for (const n of ["a", "b", "c"]) ids.push((await api.post("/v1/knowledge-bases", { name: n })).body.id);
    const p1 = await api.get("/v1/knowledge-bases?limit=2");
    expect(p1.body.data.map((k: any) => k.id)).toEqual(ids.slice(0, 2));
    expect(p1.body.has_more).toBe(true);
    const p2 = await api.get(`/v1/knowledge-bases?limit=2&cursor=${p1.body.next_cursor}`);
    expect(p2.body).toMatchObject({ has_more: false, next_cursor: null });
    expect(p2.body.data.map((k: any) => k.id)).toEqual(ids.slice(2));
    const d = await api.del(`/v1/knowledge-bases/${ids[0]}`);
    expect(d.status).toBe(204);
    expect((await api.get(`/v1/knowledge-bases/${ids[0]}`)).status).toBe(404);
  });

  it("attached to a draft or the live version: 409 knowledge_base_in_use; published not-live versions become blocked", async () => {
    const kb = (await api.post("/v1/knowledge-bases", { name: "K" })).body;
    const a = await api.createAgent({ name: "Agent K", knowledge_base_ids: [kb.id] });
    const inUse = await api.del(`/v1/knowledge-bases/${kb.id}`);
    expect(inUse.status).toBe(409);
    expect(reason(inUse)).toBe("knowledge_base_in_use");
    expect(inUse.body.detail.message).toContain("Agent K");
    await api.post(`/v1/agents/${a.id}/versions/0/publish`);
    expect((await api.post(`/v1/agents/${a.id}/activations`, { version: 0 })).status).toBe(201);
    expect((await api.del(`/v1/knowledge-bases/${kb.id}`)).status).toBe(409);
    // Move live to a version without the knowledge base; V0 is then published and not live.
    await api.patch(`/v1/agents/${a.id}`, { knowledge_base_ids: [] });
    await api.post(`/v1/agents/${a.id}/versions/1/publish`);
    await api.post(`/v1/agents/${a.id}/activations`, { version: 1 });
    expect((await api.del(`/v1/knowledge-bases/${kb.id}`)).status).toBe(204);
    const v0 = await api.get(`/v1/agents/${a.id}/versions/0`);
    expect(v0.body.blocked_reasons).toEqual([expect.stringContaining(kb.id)]);
    const back = await api.post(`/v1/agents/${a.id}/activations`, { version: 0 });
    expect(reason(back)).toBe("version_blocked");
  });
});

describe("custom analysis", () => {
  it("has the protected Default Analysis group with its three items", async () => {
    const r = await api.get("/v1/custom-analysis");
    expect(r.status).toBe(200);
    const def = r.body.data[0];
    expect(def.name).toBe("Default Analysis");
    expect(def.items.map((i: any) => i.name)).toEqual(["User Sentiment", "Outcome", "Language"]);
    const del = await api.del(`/v1/custom-analysis/groups/${def.id}`);
    expect(del.status).toBe(409);
    expect(reason(del)).toBe("group_protected");
    const edit = await api.put(`/v1/custom-analysis/groups/${def.id}`, {
      name: "Default Analysis",
      items: def.items.map((i: any) => ({
        id: i.id,
        name: i.name,
        type: i.type,
        enum_values: i.enum_values,
        enabled: i.name !== "Language",
      })),
    });
    expect(edit.status).toBe(200);
    expect(edit.body.items.map((i: any) => i.enabled)).toEqual([true, true, false]);
  });

  it("creates, replaces (keep by id, create, remove) and deletes groups", async () => {
    const c = await api.post("/v1/custom-analysis/groups", {
      name: "Sales",
      description: "Deal signals",
      items: [
        { name: "Budget", type: "number" },
        { name: "Stage", type: "enum", enum_values: ["lead", "won"] },
      ],
    });
    expect(c.status).toBe(201);
    expect(c.body).toMatchObject({ name: "Sales", enabled: true, description: "Deal signals" });
    const [budget, stage] = c.body.items;
    expect(stage).toMatchObject({ type: "enum", enum_values: ["lead", "won"], enabled: true });
    const r = await api.put(`/v1/custom-analysis/groups/${c.body.id}`, {
      name: "Sales 2",
      items: [
        { id: stage.id, name: "Stage", type: "enum", enum_values: ["lead", "won", "lost"] },
        { name: "Competitor", type: "text" },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.body.items.map((i: any) => i.name)).toEqual(["Stage", "Competitor"]);
    expect(r.body.items[0].id).toBe(stage.id);
    expect(r.body.items.some((i: any) => i.id === budget.id)).toBe(false);
    const foreign = await api.put(`/v1/custom-analysis/groups/${c.body.id}`, {
      name: "Sales 2",
      items: [{ id: budget.id, name: "Budget", type: "number" }],
    });
    expect(foreign.body.detail).toMatchObject({ code: "document_invalid", param: "items[0].id" });
    const list = await api.get("/v1/custom-analysis");
    expect(list.body.data.map((g: any) => g.name)).toEqual(["Default Analysis", "Sales 2"]);
    expect((await api.del(`/v1/custom-analysis/groups/${c.body.id}`)).status).toBe(204);
  });

  it("validates groups: enum items need values, others take none, strict fields", async () => {
    const e = await api.post("/v1/custom-analysis/groups", {
      name: "G",
      items: [{ name: "x", type: "enum" }],
    });
    expect(e.body.detail).toMatchObject({ code: "document_invalid", param: "items[0].enum_values" });
    const t = await api.post("/v1/custom-analysis/groups", {
      name: "G",
      items: [{ name: "x", type: "text", enum_values: ["a"] }],
    });
    expect(t.body.detail).toMatchObject({ code: "document_invalid", param: "items[0].enum_values" });
    const x = await api.post("/v1/custom-analysis/groups", { name: "G", sort_order: 1 });
    expect(x.status).toBe(422);
    expect(x.body.detail.errors[0]).toMatchObject({ field: "sort_order", type: "extra_forbidden" });
  });

  it("a group attached to an agent can be used and cannot be deleted while attached", async () => {
    const g = (await api.post("/v1/custom-analysis/groups", { name: "G" })).body;
    const a = await api.createAgent({ analysis_group_ids: [g.id] });
    expect(a.analysis_group_ids).toEqual([g.id]);
    const del = await api.del(`/v1/custom-analysis/groups/${g.id}`);
    expect(del.status).toBe(409);
    expect(reason(del)).toBe("group_in_use");
  });
});

describe("numbers, WhatsApp, catalogues, memory", () => {
  it("numbers and WhatsApp are bare arrays of the documented rows", async () => {
    const n = await api.get("/v1/numbers");
    expect(Array.isArray(n.body)).toBe(true);
    expect(n.body[0]).toEqual({
      id: expect.any(String),
      number: "+918065550101",
      carrier_status: "listed",
      lifecycle_status: "active",
      agent_id: null,
    });
    const wa = await api.get("/v1/whatsapp/numbers");
    expect(wa.body[0]).toEqual({
      id: expect.any(String),
      number: "+918065560101",
      phone_number_id: "wa-pnid-0101",
      display_name: "Support",
    });
    const t = await api.get("/v1/whatsapp/templates");
    expect(t.body).toContainEqual({ name: "order_update", language: "en-IN", status: "approved" });
  });

  it("control API buys numbers and adds templates the agent can then use", async () => {
    const buy = await api.control("POST", "/_emulator/workspaces/default/numbers", {
      number: "+14155550100",
    });
    expect(buy.status).toBe(201);
    const tpl = await api.control("POST", "/_emulator/workspaces/default/whatsapp-templates", {
      name: "promo",
      language: "en-IN",
    });
    expect(tpl.status).toBe(201);
    const a = await api.createAgent({
      numbers: { inbound_phone: "+14155550100" },
      builtin_tools: { send_whatsapp_template: { allowed_templates: ["promo"] } },
    });
    expect(a.numbers.inbound_phone).toBe("+14155550100");
    expect(
      (await api.control("POST", "/_emulator/workspaces/nope/numbers", { number: "+14155550101" })).status,
    ).toBe(404);
  });

  it("catalogues: models, voices with provider and language filters, transcribers, languages, tts-capabilities", async () => {
    const models = (await api.get("/v1/models")).body;
    expect(models.find((m: any) => m.id === "o3-mini")).toMatchObject({
      provider: "openai",
      supports_temperature: false,
      retired: false,
    });
    expect(new Set(models.map((m: any) => m.provider)).size).toBeGreaterThanOrEqual(3);
    const voices = (await api.get("/v1/voices?provider=sarvam&language=ta-IN")).body;
    expect(voices.map((v: any) => v.voice_id).sort()).toEqual(["meera", "vidya"]);
    expect(
      (await api.get("/v1/voices?language=fr-FR")).body.every((v: any) => v.languages.includes("fr-FR")),
    ).toBe(true);
    const tr = (await api.get("/v1/transcribers")).body;
    expect(tr.find((t: any) => t.id === "chirp-2").response_speed_seconds).toBeNull();
    expect(tr.find((t: any) => t.id === "nova-3").response_speed_seconds).toMatchObject({
      Fast: expect.any(Number),
    });
    const langs = (await api.get("/v1/languages")).body;
    expect(langs).toContainEqual({ code: "hi-IN", name: expect.any(String) });
    const tts = (await api.get("/v1/tts-capabilities")).body;
    expect(Object.values(tts).filter((c: any) => c.supports_emotion)).toHaveLength(1);
    expect(tts.deepgram).toMatchObject({ supports_speed: false, model: "aura-2" });
    expect((await api.get("/v1/voices?gender=f")).status).toBe(422);
  });

  it("memory subjects are a cursor envelope; a call's memory changes need a known call", async () => {
    const a = await api.createAgent();
    const s = await api.get(`/v1/agents/${a.id}/memory/subjects`);
    expect(s.body).toEqual({ data: [], has_more: false, next_cursor: null });
    const c = await api.get(`/v1/agents/${a.id}/memory/calls/00000000-0000-4000-8000-000000000000`);
    expect(c.status).toBe(404);
    expect(reason(c)).toBe("call_not_found");
    expect(reason(await api.get(`/v1/agents/${a.id}/memory/calls/abc`))).toBe("call_not_found");
  });
});
