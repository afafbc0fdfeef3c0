/**
 * Bad input: every refusal rule of the reference (voice-agent-api.md "Create and patch refusals",
 * the field notes, docs/service-decisions.md for the widget, knowledge bases and analysis groups) fed to the
 * provider's `check`, which runs at preview, and a few of them through a real `pulumi preview`.
 * Each refusal must name the offending field as the program spells it (camelCase path with
 * indexes, e.g. `builtinTools.holdCall.followUpSeconds`). The count of rules covered is printed.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { VoiceAgentClient } from "../../src/client";
import { contextFor } from "../../src/provider/context";
import type { ProviderContext } from "../../src/provider/resource";
import { agentProvider } from "../../src/resources/agent/provider";
import { agentVersionProvider } from "../../src/resources/agentVersion/provider";
import { analysisGroupProvider } from "../../src/resources/analysisGroup/provider";
import { knowledgeBaseProvider } from "../../src/resources/knowledgeBase/provider";
import { widgetProvider } from "../../src/resources/widget/provider";
import { retireModel, withdrawVoice } from "../support/control";
import { api, DEFAULT_API_KEY, type Emulator, newProject, startEmulator } from "./support";

type Kind = "agent" | "agentVersion" | "widget" | "knowledgeBase" | "analysisGroup";

interface Case {
  /** The rule, as the reference states it. */
  rule: string;
  kind: Kind;
  inputs: Record<string, any>;
  /** The field the refusal must name, in input spelling. */
  field: string;
  /** The reason code the message carries, when the rule has one. */
  code?: string;
}

let context: ProviderContext | undefined;
const viaContext: ProviderContext = {
  client: () => (context ? context.client() : Promise.reject(new Error("no emulator yet"))),
  warmUp: () => undefined,
};
const handlers = {
  agent: agentProvider(viaContext),
  agentVersion: agentVersionProvider(viaContext),
  widget: widgetProvider(viaContext),
  knowledgeBase: knowledgeBaseProvider(viaContext),
  analysisGroup: analysisGroupProvider(viaContext),
};

const UNHELD = randomUUID();
const agent = (rule: string, inputs: Record<string, any>, field: string, code?: string): Case => ({
  rule,
  kind: "agent",
  inputs: { name: "Bad input", ...inputs },
  field,
  code,
});
const widget = (rule: string, inputs: Record<string, any>, field: string, code?: string): Case => ({
  rule,
  kind: "widget",
  inputs: { agentId: "00000000-0000-4000-8000-000000000000", ...inputs },
  field,
  code,
});
const custom = (text: string) => ({ mode: "custom", text });
const hindi = { default: "hi-IN", additional: ["en-IN"] };

/** The table. Values not named in a row are the platform defaults (hi-IN + en-IN, sarvam/meera, gpt-4o-mini, saarika:v2). */
const CASES: Case[] = [
  // Lengths and literal values (422 validation_error in the service).
  agent("name: 1 to 255 characters (empty)", { name: "" }, "name"),
  agent("name: 1 to 255 characters (256)", { name: "n".repeat(256) }, "name"),
  agent("system_prompt: 1 to 65536 characters (empty)", { systemPrompt: "" }, "systemPrompt"),
  agent("system_prompt: 1 to 65536 characters (65537)", { systemPrompt: "p".repeat(65537) }, "systemPrompt"),
  agent(
    "response_eagerness: exactly 1, 0.75, 0.5 or 0 (not rounded)",
    { conversation: { responseEagerness: 0.6 } },
    "conversation.responseEagerness",
  ),
  agent(
    "interruption_sensitivity: 0 to 1",
    { conversation: { interruptionSensitivity: 1.5 } },
    "conversation.interruptionSensitivity",
  ),
  agent("voice.speed: 0.25 to 4", { voice: { speed: 5 } }, "voice.speed"),
  agent("model.temperature: 0 to 2", { model: { temperature: 3 } }, "model.temperature"),
  agent("model.max_tokens: an integer >= 1", { model: { maxTokens: 0 } }, "model.maxTokens"),
  agent(
    "transfer number start_hour: an hour 0 to 24",
    { builtinTools: { transferCall: { numbers: [{ number: "+919800000001", startHour: 25 }] } } },
    "builtinTools.transferCall.numbers[0].startHour",
  ),
  agent("memory.max_facts: an integer", { memory: { maxFacts: 2.5 } }, "memory.maxFacts"),
  agent(
    "a line's mode is default or custom",
    { call: { maxDurationMessage: { mode: "loud" } } },
    "call.maxDurationMessage.mode",
  ),
  agent(
    "a variable key is at most 64 characters",
    { variables: [{ key: "k".repeat(65) }] },
    "variables[0].key",
  ),

  // document_invalid rules that need no catalogue.
  agent(
    "hold check-in at or after the hold ends (follow_up_seconds >= max_seconds)",
    { builtinTools: { holdCall: { maxSeconds: 30, followUpSeconds: 40 } } },
    "builtinTools.holdCall.followUpSeconds",
    "document_invalid",
  ),
  agent(
    "hold check-in equal to the hold's end",
    { builtinTools: { holdCall: { maxSeconds: 30, followUpSeconds: 30 } } },
    "builtinTools.holdCall.followUpSeconds",
    "document_invalid",
  ),
  agent(
    "transfer number with a non-IANA timezone",
    {
      builtinTools: {
        transferCall: {
          numbers: [{ number: "+919800000001", timezone: "Mars/Olympus", startHour: 9, endHour: 18 }],
        },
      },
    },
    "builtinTools.transferCall.numbers[0].timezone",
    "document_invalid",
  ),
  agent(
    "transfer number with an empty hour window",
    {
      builtinTools: {
        transferCall: {
          numbers: [{ number: "+919800000001", timezone: "Asia/Kolkata", startHour: 9, endHour: 9 }],
        },
      },
    },
    "builtinTools.transferCall.numbers[0].endHour",
    "document_invalid",
  ),
  agent(
    "transfer number that is not E.164",
    { builtinTools: { transferCall: { numbers: [{ number: "98000-CALL-ME" }] } } },
    "builtinTools.transferCall.numbers[0].number",
    "document_invalid",
  ),
  agent(
    "an emotion no provider speaks",
    { voice: { provider: "cartesia", voiceId: "asha", emotion: "angry" } },
    "voice.emotion",
    "document_invalid",
  ),
  agent(
    "an emotion on a provider that cannot speak it",
    { voice: { emotion: "happy" } },
    "voice.emotion",
    "document_invalid",
  ),
  agent(
    "same-provider voice fallback",
    { voice: { fallback: { provider: "sarvam", voiceId: "arvind" } } },
    "voice.fallback.provider",
    "document_invalid",
  ),
  agent(
    "voice fallback without a voice_id",
    { voice: { fallback: { provider: "cartesia" } } },
    "voice.fallback.voiceId",
  ),
  agent(
    "same-provider model fallback",
    { model: { model: "gpt-4o-mini", fallback: { model: "gpt-4o" } } },
    "model.fallback.model",
    "document_invalid",
  ),
  agent(
    "same-provider transcriber fallback",
    { transcriber: { model: "saarika:v2", fallback: { model: "saarika:v2" } } },
    "transcriber.fallback.model",
    "document_invalid",
  ),
  agent(
    "a custom variable key must be a valid identifier",
    { variables: [{ key: "1st-choice" }] },
    "variables[0].key",
    "document_invalid",
  ),
  agent(
    "a variable declared twice",
    { variables: [{ key: "order_id" }, { key: "order_id" }] },
    "variables[1].key",
    "document_invalid",
  ),
  agent(
    "prompts reference custom variables as {{custom.<key>}}: unknown key",
    { systemPrompt: "## Agent Purpose\nAsk about {{custom.order_id}}." },
    "systemPrompt",
    "document_invalid",
  ),
  agent(
    "prompts reference custom variables namespaced, never bare",
    { systemPrompt: "## Agent Purpose\nAsk about {{order_id}}.", variables: [{ key: "order_id" }] },
    "systemPrompt",
    "document_invalid",
  ),
  agent(
    "the greeting references custom variables namespaced too",
    { greeting: { message: "Hello {{custom.nope}}" } },
    "greeting.message",
    "document_invalid",
  ),
  agent(
    "memory field key declared twice",
    { memory: { fields: [{ key: "zip" }, { key: "zip" }] } },
    "memory.fields[1].key",
    "document_invalid",
  ),
  agent(
    "memory enum_values only on a string field",
    { memory: { fields: [{ key: "age", type: "number", enumValues: ["1", "2"] }] } },
    "memory.fields[0].enumValues",
    "document_invalid",
  ),
  agent(
    "memory never records widget conversations",
    { memory: { channels: ["outbound", "widget"] } },
    "memory.channels[1]",
    "document_invalid",
  ),
  agent(
    "a custom line needs its text",
    { builtinTools: { endCall: { message: custom("") } } },
    "builtinTools.endCall.message.text",
    "document_invalid",
  ),
  agent(
    "a number the agent answers on must be a phone number",
    { numbers: { inboundPhone: "call me maybe" } },
    "numbers.inboundPhone",
    "document_invalid",
  ),
  agent(
    "the prompt names a built-in tool that is not enabled (<hold_call> with holdCall off)",
    { systemPrompt: "## Call Flow\nPut the caller on hold with <hold_call>." },
    "systemPrompt",
    "prompt_tool_reference_invalid",
  ),

  // Catalogue and holdings rules (checked against the service at preview).
  agent(
    "voice_not_found: a voice not offered for the language",
    { voice: { voiceId: "vidya" } },
    "voice.voiceId",
    "voice_not_found",
  ),
  agent(
    "voice_not_found: a voice the provider does not have",
    { voice: { voiceId: "nope" } },
    "voice.voiceId",
    "voice_not_found",
  ),
  agent(
    "voice_not_found: a withdrawn voice",
    { voice: { provider: "sarvam", voiceId: "anushka" } },
    "voice.voiceId",
    "voice_not_found",
  ),
  agent(
    "voice_config_invalid: an unknown provider",
    { voice: { provider: "acme", voiceId: "x" } },
    "voice.provider",
    "voice_config_invalid",
  ),
  agent(
    "voice_config_invalid: a provider that cannot speak a configured language",
    { language: hindi, voice: { provider: "elevenlabs", voiceId: "rachel" } },
    "voice.provider",
    "voice_config_invalid",
  ),
  agent(
    "voice_config_invalid: speed on a provider without speed",
    { voice: { provider: "deepgram", voiceId: "thalia", speed: 1.2 } },
    "voice.speed",
    "voice_config_invalid",
  ),
  agent(
    "voice_config_invalid: a fallback provider that cannot speak the primary language",
    { language: hindi, voice: { fallback: { provider: "elevenlabs", voiceId: "rachel" } } },
    "voice.fallback.provider",
    "voice_config_invalid",
  ),
  agent(
    "voice_not_found: a fallback voice not offered for the primary language",
    { language: hindi, voice: { fallback: { provider: "deepgram", voiceId: "orion" } } },
    "voice.fallback.voiceId",
    "voice_not_found",
  ),
  agent("a retired model", { model: { model: "gpt-3.5-turbo" } }, "model.model", "document_invalid"),
  agent(
    "a retired fallback model",
    { model: { model: "gpt-4o-mini", fallback: { model: "gemini-1.5-flash" } } },
    "model.fallback.model",
    "document_invalid",
  ),
  agent("a model not in the catalogue", { model: { model: "gpt-9" } }, "model.model", "document_invalid"),
  agent(
    "a transcriber not in the catalogue",
    { transcriber: { model: "whisper-x" } },
    "transcriber.model",
    "document_invalid",
  ),
  agent(
    "a transcriber that does not support a configured language",
    { language: { default: "hi-IN", additional: ["mr-IN"] }, transcriber: { model: "chirp-2" } },
    "transcriber.model",
    "document_invalid",
  ),
  agent(
    "a transcriber fallback that cannot handle the primary language",
    {
      language: { default: "mr-IN", additional: [] },
      transcriber: { model: "saarika:v2", fallback: { model: "chirp-2" } },
    },
    "transcriber.fallback.model",
    "document_invalid",
  ),
  agent(
    "a language not in /v1/languages",
    { language: { default: "xx-XX" } },
    "language.default",
    "document_invalid",
  ),
  agent(
    "an additional language not in /v1/languages",
    { language: { default: "hi-IN", additional: ["en-IN", "tlh-KL"] } },
    "language.additional[1]",
    "document_invalid",
  ),
  agent(
    "a phone number the workspace does not hold (released)",
    { numbers: { inboundPhone: "+918065550104" } },
    "numbers.inboundPhone",
    "document_invalid",
  ),
  agent(
    "a WhatsApp number the workspace does not hold",
    { numbers: { inboundWhatsapp: "+918065569999" } },
    "numbers.inboundWhatsapp",
    "document_invalid",
  ),
  agent(
    "knowledge_base_ids the workspace does not hold",
    { knowledgeBaseIds: [UNHELD] },
    "knowledgeBaseIds[0]",
    "document_invalid",
  ),
  agent(
    "analysis_group_ids the workspace does not hold",
    { analysisGroupIds: [UNHELD] },
    "analysisGroupIds[0]",
    "document_invalid",
  ),
  agent(
    "allowed_templates must be approved templates of the workspace",
    { builtinTools: { sendWhatsappTemplate: { allowedTemplates: ["order_update", "spam_blast"] } } },
    "builtinTools.sendWhatsappTemplate.allowedTemplates[1]",
    "document_invalid",
  ),
  agent(
    "phone_number_id must be a WhatsApp number of the workspace",
    { builtinTools: { sendWhatsappTemplate: { phoneNumberId: "wa-pnid-9999" } } },
    "builtinTools.sendWhatsappTemplate.phoneNumberId",
    "document_invalid",
  ),

  // Widget (docs/service-decisions.md: origins, positions, shapes; the reference: colours #RRGGBB, integer pixels).
  widget(
    "allowed origin with a wildcard",
    { allowedOrigins: ["https://*.example.com"] },
    "allowedOrigins[0]",
    "document_invalid",
  ),
  widget(
    "allowed origin over plain http",
    { allowedOrigins: ["http://shop.example.com"] },
    "allowedOrigins[0]",
    "document_invalid",
  ),
  widget(
    "allowed origin with a path",
    { allowedOrigins: ["https://shop.example.com", "https://shop.example.com/checkout"] },
    "allowedOrigins[1]",
    "document_invalid",
  ),
  widget(
    "allowed origin that is not an origin",
    { allowedOrigins: ["shop.example.com"] },
    "allowedOrigins[0]",
    "document_invalid",
  ),
  widget(
    "allowed origin with credentials",
    { allowedOrigins: ["https://u:p@shop.example.com"] },
    "allowedOrigins[0]",
    "document_invalid",
  ),
  widget("colours are #RRGGBB", { theme: { accentColor: "#12345" } }, "theme.accentColor"),
  widget(
    "colours are #RRGGBB (a name)",
    { theme: { userMessageTextColor: "red" } },
    "theme.userMessageTextColor",
  ),
  widget("position is a corner", { theme: { position: "middle" } }, "theme.position"),
  widget(
    "button_shape is rounded, square or pill",
    { theme: { buttonShape: "circle" } },
    "theme.buttonShape",
  ),
  widget("sizes are integer pixels", { theme: { panelRadius: 4.5 } }, "theme.panelRadius"),
  widget("sizes are not negative", { theme: { widgetWidth: -1 } }, "theme.widgetWidth"),
  widget("widget name: 1 to 255 characters", { name: "" }, "name"),
  widget("status is active or paused", { status: "off" }, "status"),
  widget("a default variable is a string", { defaultVariables: { Region: null } }, "defaultVariables.Region"),
  {
    rule: "a widget belongs to an agent",
    kind: "widget",
    inputs: {},
    field: "agentId",
  },

  // Knowledge bases and analysis groups (docs/service-decisions.md).
  { rule: "knowledge base name: 1 to 255", kind: "knowledgeBase", inputs: { name: "" }, field: "name" },
  {
    rule: "a document has exactly one of text or url",
    kind: "knowledgeBase",
    inputs: { name: "kb", documents: [{ name: "d", text: "t", url: "https://example.com/d" }] },
    field: "documents[0].text",
  },
  {
    rule: "a document url is http or https",
    kind: "knowledgeBase",
    inputs: { name: "kb", documents: [{ name: "d", url: "ftp://example.com/d" }] },
    field: "documents[0].url",
  },
  {
    rule: "document names are unique",
    kind: "knowledgeBase",
    inputs: {
      name: "kb",
      documents: [
        { name: "d", text: "a" },
        { name: "d", text: "b" },
      ],
    },
    field: "documents[1].name",
    code: "document_invalid",
  },
  {
    rule: "analysis items are text, boolean, number or enum",
    kind: "analysisGroup",
    inputs: { name: "g", items: [{ name: "i", type: "date" }] },
    field: "items[0].type",
  },
  {
    rule: "analysis item names are unique",
    kind: "analysisGroup",
    inputs: {
      name: "g",
      items: [
        { name: "i", type: "text" },
        { name: "i", type: "text" },
      ],
    },
    field: "items[1].name",
    code: "document_invalid",
  },
  {
    rule: "an enum analysis lists its values",
    kind: "analysisGroup",
    inputs: { name: "g", items: [{ name: "i", type: "enum" }] },
    field: "items[0].enumValues",
    code: "document_invalid",
  },
  {
    rule: "only an enum analysis has values",
    kind: "analysisGroup",
    inputs: { name: "g", items: [{ name: "i", type: "text", enumValues: ["a"] }] },
    field: "items[0].enumValues",
    code: "document_invalid",
  },
];

/** Rules of the reference that inputs cannot express, and why (printed, not counted). */
const NOT_EXPRESSIBLE = [
  "variables[].system_defined / .deletable changed from what was read: the Agent sends system variables back exactly as read (inputs hold only key and defaultValue)",
  "unknown request fields (tools, system_messages, ...): the Agent's typed inputs only carry the managed fields",
  "a transcriber or model fallback naming a provider: inputs name only the model id",
];

/**
 * The one rule the provider cannot check at preview: a prompt naming a tool the workspace does not
 * have. Custom tools are built in the dashboard and have no API, so a name that is not a built-in
 * tool may be one of them; the service refuses it at `up` (400 `prompt_tool_reference_invalid`,
 * naming `system_prompt`), see the last test. (A built-in tool that is not enabled is in the table.)
 */
const REFUSED_AT_UP = ["the prompt names a tool the version does not have (<lookup_order>)"];

let emu: Emulator;

beforeAll(async () => {
  emu = await startEmulator({ port: 0, rateLimitPerMinute: 0 });
  // Before the provider reads the catalogue (once per process): a withdrawn voice, a retired model.
  await withdrawVoice(emu, "sarvam", "anushka");
  await retireModel(emu, "gemini-1.5-flash");
  context = contextFor(new VoiceAgentClient({ baseUrl: emu.url, apiKey: DEFAULT_API_KEY }));
});
afterAll(async () => {
  context = undefined;
  await emu?.close();
});

describe("bad input is refused at preview, naming the field", () => {
  test("the table: every rule through the provider's check", async () => {
    const missed: string[] = [];
    for (const c of CASES) {
      const res = await handlers[c.kind].check({}, c.inputs);
      const failures = res.failures ?? [];
      const hit = failures.find((f) => f.property === c.field && f.reason.startsWith(c.field));
      const codeOk = !c.code || (hit?.reason.includes(`(${c.code})`) ?? false);
      if (!hit || !codeOk) {
        missed.push(
          `${c.rule}: expected ${c.field}${c.code ? ` (${c.code})` : ""}, got ${JSON.stringify(failures.map((f) => f.reason))}`,
        );
      }
      // Every failure, not only the expected one, names its field at the start of the message.
      for (const f of failures) expect(f.reason.startsWith(`${f.property}:`), f.reason).toBe(true);
    }
    const total = CASES.length + REFUSED_AT_UP.length;
    console.log(
      `bad input: ${CASES.length - missed.length} of ${total} refusal rules refused at preview naming the field ` +
        `(agent ${CASES.filter((c) => c.kind === "agent").length}, widget ${CASES.filter((c) => c.kind === "widget").length}, ` +
        `knowledge base ${CASES.filter((c) => c.kind === "knowledgeBase").length}, analysis group ${CASES.filter((c) => c.kind === "analysisGroup").length}); ` +
        `${REFUSED_AT_UP.length} refused only at up (custom tools have no API); AgentVersion pinning rules in the next test`,
    );
    console.log(`not expressible in inputs (${NOT_EXPRESSIBLE.length}):\n  ${NOT_EXPRESSIBLE.join("\n  ")}`);
    expect(missed, missed.join("\n")).toEqual([]);
  });

  test("AgentVersion: a pinned version must exist, be published, and be able to go live", async () => {
    const a = await api(emu, "POST", "/v1/agents", { name: "Pinned", model: { model: "gpt-4o" } });
    await api(emu, "POST", `/v1/agents/${a.id}/versions/0/publish`, {});
    await api(emu, "PATCH", `/v1/agents/${a.id}`, { system_prompt: "draft" }); // V1, a draft
    const rows = [
      {
        rule: "a version number is an integer >= 0",
        pinned: -1,
        expect: /version: must be a published version number/,
      },
      { rule: "version_not_found", pinned: 7, expect: /version 7 does not exist/ },
      { rule: "agent_not_published: a draft cannot be pinned", pinned: 1, expect: /version 1 is a draft/ },
    ];
    for (const r of rows) {
      const res = await handlers.agentVersion.check(
        {},
        { agentId: a.id, pinnedVersion: r.pinned, live: true },
      );
      const f = (res.failures ?? []).find((x) => x.property === "version");
      expect(f?.reason, r.rule).toMatch(r.expect);
    }
    console.log(`AgentVersion: ${rows.length} pinning rules refused at preview naming version`);
  });

  test("through a real `pulumi preview`: each refusal names its field, nothing is created", async () => {
    const cases = [
      {
        field: "builtinTools.holdCall.followUpSeconds",
        code: "document_invalid",
        resource: `new va.Agent("hold", { name: "Bad hold", builtinTools: { holdCall: { enabled: true, maxSeconds: 30, followUpSeconds: 45 } } });`,
      },
      {
        field: "voice.voiceId",
        code: "voice_not_found",
        resource: `new va.Agent("voice", { name: "Bad voice", voice: { provider: "sarvam", voiceId: "vidya" } });`,
      },
      {
        field: "conversation.responseEagerness",
        code: "literal_error",
        resource: `new va.Agent("eager", { name: "Bad eagerness", conversation: { responseEagerness: 0.6 as any } });`,
      },
      {
        field: "allowedOrigins[0]",
        code: "document_invalid",
        resource: `new va.Widget("widget", { agentId: "00000000-0000-4000-8000-000000000000", allowedOrigins: ["https://*.example.com"] });`,
      },
    ];
    const p = await newProject(emu, "");
    try {
      for (const c of cases) {
        p.setProgram(`import * as va from "pulumi-voice-agent";\n${c.resource}\n`);
        const res = await p.preview({ allowFailure: true });
        const text = res.stdout + res.stderr;
        expect(res.code).not.toBe(0);
        expect(text).toContain(`${c.field}:`);
        expect(text).toContain(`(${c.code})`);
        // The engine prints the reason alone: no `value {<nil>}` for a nested field, no echoed value.
        expect(text).not.toContain("{<nil>}");
        const line = text.split("\n").find((l) => l.includes(`${c.field}:`));
        console.log(`pulumi preview: ${line?.trim()}`);
      }
      // Nothing was created.
      const agents = await api(emu, "GET", "/v1/agents?limit=100");
      expect(agents.data.filter((x: any) => x.name.startsWith("Bad "))).toEqual([]);
    } finally {
      p.cleanup();
    }
  }, 120_000);

  test("a prompt naming a built-in tool that is not enabled is refused at preview", async () => {
    const res = await handlers.agent.check(
      {},
      { name: "Bad tools", systemPrompt: "## Call Flow\nPut the caller on hold with <hold_call>." },
    );
    expect((res.failures ?? []).map((f) => f.property)).toContain("systemPrompt");
  });

  test("a prompt naming a custom tool the workspace lacks is refused by the service at up, naming system_prompt", async () => {
    const p = await newProject(
      emu,
      `import * as va from "pulumi-voice-agent";
new va.Agent("tools", { name: "Bad tools", systemPrompt: "## Call Flow\\nLook the order up with <lookup_order>." });
`,
    );
    try {
      const res = await p.up({ allowFailure: true });
      const text = res.stdout + res.stderr;
      expect(res.code).not.toBe(0);
      expect(text).toMatch(/prompt_tool_reference_invalid/);
      expect(text).toMatch(/system_prompt[^\n]*<lookup_order>/);
      console.log(
        `pulumi up: ${text
          .split("\n")
          .find((l) => l.includes("prompt_tool_reference_invalid"))
          ?.trim()}`,
      );
      console.log(
        `refused at up, not at preview (${REFUSED_AT_UP.length}):\n  ${REFUSED_AT_UP.join("\n  ")}`,
      );
    } finally {
      p.cleanup();
    }
  }, 120_000);
});
