/**
 * Workspaces to export, made through the service's own API (and the emulator's control API for a
 * dashboard-only step): one agent of every shape `voice-agent-export` handles, knowledge bases,
 * analysis groups, widgets, and agents with random configurations (a fixed seed; every field of
 * the agent body; values the seeded catalogue accepts). Used by the export's unit and end-to-end
 * tests and by bench/export.ts.
 */
import type { AgentCreateInput, AgentDetailT, VoiceAgentClient } from "../../src/client";
import { mulberry32 } from "../../src/emulator/faults";
import { seedCatalogue } from "../../src/emulator/seed";
import {
  type AnalysisItemInput,
  DEFAULT_ANALYSIS_GROUP_NAME,
  EMOTIONS,
  RESPONSE_EAGERNESS_VALUES,
} from "../../src/spec";
import { type EmulatorAddress, openDraft } from "./control";

/** The system variables a body that lists variables must send back. */
const SYSTEM_VARIABLES = [{ key: "callee_name" }, { key: "callee_number" }];

/** Publishes version `n` of an agent and puts it live. */
export async function release(c: VoiceAgentClient, id: string, n: number, label?: string): Promise<void> {
  await c.versions.publish(id, n, label === undefined ? {} : { label });
  await c.versions.activate(id, n);
}

/** The ids of everything {@link seedShapes} made, by shape. */
export interface Shapes {
  /** Published and live, no draft open. */
  live: string;
  /** Published and live, with an open draft equal to the live version (opened as the dashboard does). */
  liveWithEqualDraft: string;
  /** Live version 0 and a draft (version 1) with unpublished changes. */
  draftAhead: string;
  /** Version 0 only, never published. */
  neverPublished: string;
  /** Three published versions, the newest live. */
  severalVersions: string;
  /** Three published versions, version 1 live again (a rollback). */
  rolledBack: string;
  /** Published, then taken off air. */
  offAir: string;
  /** Knowledge bases, analysis groups and a paused, customised widget. */
  webAgent: string;
  /** The Default Analysis group detached. */
  noAnalysis: string;
  /** Two agents with the same name. */
  twins: [string, string];
  knowledgeBases: { faq: string; catalogue: string };
  groups: { leads: string; compliance: string; defaultGroup: string };
}

/** The number of shapes {@link seedShapes} makes (the agents of `Shapes`, the twins one shape). */
export const SHAPE_COUNT = 10;

/**
 * One agent of every shape, with knowledge bases, analysis groups (the Default Analysis group
 * changed), and widgets (one paused). About 60 requests.
 */
export async function seedShapes(c: VoiceAgentClient, emu: EmulatorAddress): Promise<Shapes> {
  const faq = await c.knowledgeBases.create({
    name: "Store FAQ",
    description: "Opening hours, delivery areas, returns.",
    documents: [
      { name: "hours", text: "We are open 9am to 9pm, Monday to Saturday." },
      { name: "returns", url: "https://shop.example.com/returns" },
    ],
  });
  // Made by this package: its description is the create marker, not user data.
  const catalogue = await c.knowledgeBases.create(
    { name: "Product catalogue", documents: [{ name: "bestsellers", text: "Masala chai, filter coffee." }] },
    { keepMarker: true },
  );
  const leads = await c.analysis.create({
    name: "Lead qualification",
    description: "Filled in after every call.",
    items: [
      { name: "Interested", type: "boolean", description: "Did the caller want to buy?" },
      { name: "Budget", type: "number" },
      { name: "Channel", type: "enum", enum_values: ["web", "phone", "store"] },
      { name: "Notes", type: "text", enabled: false },
    ],
  });
  const compliance = await c.analysis.create({ name: "Compliance", enabled: false }, { keepMarker: true });
  const defaultGroup = await c.analysis.list().find((g) => g.name === DEFAULT_ANALYSIS_GROUP_NAME);
  if (!defaultGroup) throw new Error("the workspace has no Default Analysis group");
  await c.analysis.replace(defaultGroup.id, {
    name: defaultGroup.name,
    description: defaultGroup.description,
    enabled: true,
    items: defaultGroup.items.map(({ created_at: _c, ...it }) => ({
      ...it,
      type: it.type as AnalysisItemInput["type"],
      enabled: it.name !== "Language",
    })),
  });

  const create = (body: AgentCreateInput) => c.agents.create(body, { keepMarker: true });
  const prompt = (purpose: string) =>
    `## Agent Purpose\n${purpose}\n## Response Style\nShort, warm sentences.\n## Call Flow\nOffer <end_call> when done.\n`;

  const live = await create({
    name: "Front desk",
    system_prompt: prompt("Greet callers of the Koramangala branch and route them."),
    language: { default: "en-IN", additional: ["hi-IN"] },
    voice: { provider: "cartesia", voice_id: "asha", emotion: "calm", speed: 1.1 },
    conversation: { response_eagerness: 0.75, silence_reminder: { seconds: 12 } },
    variables: [{ key: "branch", default_value: "Koramangala" }, ...SYSTEM_VARIABLES],
    greeting: { message: "Welcome to the {{custom.branch}} branch!" },
  });
  await release(c, live.id, 0, "2026.11.1");
  await c.widget.patch(live.id, { allowed_origins: ["https://frontdesk.example"] });

  const twin = await create({ name: "Reception", system_prompt: prompt("Book visits to the showroom.") });
  await release(c, twin.id, 0);
  await openDraft(emu, twin.id);

  const ahead = await create({
    name: "Sales",
    system_prompt: prompt("Qualify leads for the enterprise plan."),
    model: { model: "gpt-4o", temperature: 0.3 },
  });
  await release(c, ahead.id, 0, "sales-1");
  await c.agents.patch(ahead.id, {
    system_prompt: prompt("Qualify leads for the enterprise and team plans."),
    call: { max_duration_minutes: 25 },
  });

  const never = await create({
    name: "Prototype",
    system_prompt: "Just a draft: नमस्ते! Quotes \"'`${x}` and a backslash \\ stay as written.",
    builtin_tools: { end_call: { enabled: false } },
  });

  const several = await create({ name: "Billing", system_prompt: prompt("Explain invoices.") });
  await release(c, several.id, 0);
  await c.agents.patch(several.id, { system_prompt: prompt("Explain invoices and refunds.") });
  await release(c, several.id, 1);
  await c.agents.patch(several.id, {
    system_prompt: prompt("Explain invoices, refunds and payment plans."),
    transcriber: { model: "nova-3", keywords: ["GST", "invoice"] },
  });
  await release(c, several.id, 2, "billing-3");

  const rolled = await create({ name: "Collections", system_prompt: prompt("Remind customers of dues.") });
  await release(c, rolled.id, 0);
  await c.agents.patch(rolled.id, { system_prompt: prompt("Remind customers of dues, politely.") });
  await release(c, rolled.id, 1);
  await c.agents.patch(rolled.id, { system_prompt: prompt("Remind customers of dues, firmly.") });
  await release(c, rolled.id, 2);
  await c.versions.activate(rolled.id, 1);

  const offAir = await create({ name: "Archive line", system_prompt: prompt("Read out archived notices.") });
  await release(c, offAir.id, 0);
  await c.versions.activate(offAir.id, null);

  const web = await create({
    name: "Tea shop assistant",
    system_prompt: prompt("Answer questions about the shop and its teas from the knowledge bases."),
    language: { default: "en-IN", additional: ["hi-IN"] },
    knowledge_base_ids: [faq.id, catalogue.id],
    analysis_group_ids: [leads.id, defaultGroup.id],
  });
  await release(c, web.id, 0);
  await c.widget.patch(web.id, {
    name: "Tea shop chat",
    allowed_origins: ["https://teashop.example", "http://localhost:3000"],
    enabled_modes: { talk: false },
    theme: {
      title: "Ask us anything",
      accent_color: "#0b6e4f",
      position: "bottom-left",
      button_shape: "pill",
      widget_width: 420,
      logo_url: "https://teashop.example/logo.png",
    },
    default_variables: { storeCity: "Bengaluru", "store-id": "42" },
    status: "paused",
  });

  const quiet = await create({
    name: "Survey",
    analysis_group_ids: [],
    system_prompt: prompt("Run a survey."),
  });
  await release(c, quiet.id, 0);

  const supportA = await create({ name: "Support", system_prompt: prompt("Help with orders.") });
  // The twins are told apart by creation time (then by id): let the clock's millisecond move on, so
  // that the first twin is the older one even on a machine fast enough to create both in one.
  while (new Date().toISOString() <= supportA.created_at) await new Promise((r) => setTimeout(r, 1));
  const supportB = await create({ name: "Support", system_prompt: prompt("Help with returns.") });

  return {
    live: live.id,
    liveWithEqualDraft: twin.id,
    draftAhead: ahead.id,
    neverPublished: never.id,
    severalVersions: several.id,
    rolledBack: rolled.id,
    offAir: offAir.id,
    webAgent: web.id,
    noAnalysis: quiet.id,
    twins: [supportA.id, supportB.id],
    knowledgeBases: { faq: faq.id, catalogue: catalogue.id },
    groups: { leads: leads.id, compliance: compliance.id, defaultGroup: defaultGroup.id },
  };
}

// ---------------------------------------------------------------------------------------------
// Random agent configurations
// ---------------------------------------------------------------------------------------------

/** mulberry32, the emulator's seeded PRNG. */
export const prng = mulberry32;

/** What a random configuration may attach: the workspace's knowledge bases and groups. */
export interface Attachable {
  knowledgeBaseIds: string[];
  analysisGroupIds: string[];
}

const WORDS = [
  "orders",
  "returns",
  "chai",
  "refund",
  "नमस्ते",
  "வணக்கம்",
  "emoji 🎧",
  'a "quote"',
  "it's",
  "back\\slash",
  "`tick`",
  "${dollar}",
  "tab\there",
  "line\nbreak",
  "trailing space ",
  "50%",
  "#hash",
];

/**
 * A random agent create body valid against the emulator's seeded catalogue (default workspace):
 * every field of the agent body shows up across a few dozen bodies.
 */
export function randomAgentBody(rand: () => number, index: number, attach: Attachable): AgentCreateInput {
  const cat = seedCatalogue();
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const chance = (p: number) => rand() < p;
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  const round = (x: number) => Math.round(x * 100) / 100;
  const subset = <T>(xs: readonly T[]): T[] => xs.filter(() => chance(0.5));
  const text = (n = int(1, 4)) => Array.from({ length: n }, () => pick(WORDS)).join(" ");
  // No `<`, `{{` in a prompt or a greeting: they name tools and variables, which the rules check.
  const plain = (n = int(1, 4)) =>
    Array.from({ length: n }, () => pick(WORDS.filter((w) => !w.includes("$")))).join(" ");
  const message = () => {
    const mode = pick(["default", "custom"] as const);
    const m: { mode?: "default" | "custom"; prompt?: string; text?: string } = {};
    if (chance(0.8)) m.mode = mode;
    if (chance(0.5)) m.prompt = `Say: ${text()} <b>`;
    if (m.mode === "custom" || chance(0.3)) m.text = `${text()}!`;
    return m;
  };

  // Voice, languages and transcriber that can all work together.
  const tts = cat.ttsCapabilities;
  let provider = "";
  let primary = "";
  let voices: string[] = [];
  do {
    provider = pick(Object.keys(tts));
    primary = pick(tts[provider]?.languages ?? []);
    voices = cat.voices
      .filter((v) => v.provider === provider && !v.withdrawn && v.languages.includes(primary))
      .map((v) => v.voice_id);
  } while (voices.length === 0 || !cat.transcribers.some((t) => t.languages.includes(primary)));
  const transcriber = pick(cat.transcribers.filter((t) => t.languages.includes(primary)));
  const additional = subset(
    (tts[provider]?.languages ?? []).filter((l) => l !== primary && transcriber.languages.includes(l)),
  ).slice(0, 2);
  const caps = tts[provider];
  const voiceFallbacks = Object.keys(tts).flatMap((p) =>
    p === provider || !tts[p]?.languages.includes(primary)
      ? []
      : cat.voices.filter((v) => v.provider === p && !v.withdrawn && v.languages.includes(primary)),
  );
  const models = cat.models.filter((m) => !m.retired);
  const model = pick(models);
  const transcriberFallbacks = cat.transcribers.filter(
    (t) => t.provider !== transcriber.provider && t.languages.includes(primary),
  );
  const modelFallbacks = models.filter((m) => m.provider !== model.provider);

  // `system_defined` and `deletable` may be sent, exactly as the service reads them back.
  const variables = Array.from({ length: int(0, 3) }, (_, i) => ({
    key: `var_${index}_${i}`,
    default_value: chance(0.7) ? text() : null,
    ...(chance(0.3) ? { system_defined: false, deletable: true } : {}),
  }));
  const system = SYSTEM_VARIABLES.map((v) => ({
    ...v,
    ...(chance(0.2) ? { default_value: plain(1) } : {}),
    ...(chance(0.3) ? { system_defined: true, deletable: false } : {}),
  }));

  const tools = {
    end_call: { enabled: chance(0.8), message: message() },
    hold_call: (() => {
      const max = int(2, 300);
      return {
        enabled: chance(0.5),
        max_seconds: max,
        follow_up_seconds: int(1, max - 1),
        acknowledgement_message: message(),
        follow_up_message: message(),
        timeout_message: message(),
      };
    })(),
    transfer_call: {
      enabled: chance(0.5),
      numbers: Array.from({ length: int(0, 2) }, (_, i) => {
        const start = int(0, 23);
        const n: {
          number: string;
          priority?: number;
          start_hour?: number;
          end_hour?: number;
          timezone?: string;
          max_concurrent_calls?: number;
        } = { number: `+91980000${String(index % 100).padStart(2, "0")}${i}${int(0, 9)}` };
        if (chance(0.6)) n.priority = int(1, 5);
        if (chance(0.6)) {
          n.start_hour = start;
          n.end_hour = (start + int(1, 23)) % 24;
        }
        if (chance(0.6)) n.timezone = pick(["Asia/Kolkata", "Europe/London", "America/New_York", "UTC"]);
        if (chance(0.6)) n.max_concurrent_calls = int(1, 5);
        return n;
      }),
      busy_message: message(),
      intro_message: message(),
    },
    send_whatsapp_template: {
      enabled: chance(0.4),
      allowed_templates: subset(["order_update", "appointment_reminder", "payment_due"]),
      phone_number_id: pick([null, "wa-pnid-0101", "wa-pnid-0102"]),
    },
  };
  const enabledTools = Object.entries(tools)
    .filter(([, t]) => t.enabled)
    .map(([name]) => name);
  const custom = variables.map((v) => v.key);
  const promptParts = [
    `## Agent Purpose\nAgent ${index}: ${plain()}.`,
    ...(chance(0.6) ? [`## Response Style\n${plain()}`] : []),
    `## Call Flow\n${enabledTools.map((t) => `Use <${t}> when needed.`).join(" ")}`,
    ...(custom.length > 0 && chance(0.7) ? [`The value is {{custom.${pick(custom)}}}.`] : []),
    ...(chance(0.3) ? ["Caller: {{callee_name}}."] : []),
  ];

  const body: AgentCreateInput = {
    name: `Random ${index}: ${plain(2)}`.slice(0, 255),
    variables: [...variables, ...system],
    language: {
      default: primary,
      additional,
      ...(chance(0.5) ? { switch_trigger: "requested_or_auto" } : {}),
    },
    transcriber: {
      // Read-only members (derived by the service) are accepted and ignored: sent now and then.
      ...(chance(0.3) ? { provider: transcriber.provider } : {}),
      model: transcriber.id,
      keywords: subset(["GST", "UPI", "chai", "refund", "Koramangala"]),
      ...(transcriberFallbacks.length > 0 && chance(0.5)
        ? (() => {
            const fb = pick(transcriberFallbacks);
            return { fallback: { model: fb.id, ...(chance(0.3) ? { provider: fb.provider } : {}) } };
          })()
        : {}),
    },
    model: {
      ...(chance(0.3) ? { provider: model.provider } : {}),
      model: model.id,
      temperature: round(rand() * 2),
      max_tokens: int(16, 4096),
      ...(modelFallbacks.length > 0 && chance(0.5)
        ? (() => {
            const fb = pick(modelFallbacks);
            return { fallback: { model: fb.id, ...(chance(0.3) ? { provider: fb.provider } : {}) } };
          })()
        : {}),
    },
    voice: {
      provider,
      ...(chance(0.3) ? { model: caps?.model ?? null } : {}),
      voice_id: pick(voices),
      ...(caps?.supports_speed && caps.speed_range && chance(0.7)
        ? { speed: round(caps.speed_range[0] + rand() * (caps.speed_range[1] - caps.speed_range[0])) }
        : {}),
      ...(caps?.supports_emotion && chance(0.7) ? { emotion: pick(EMOTIONS) } : {}),
      ...(voiceFallbacks.length > 0 && chance(0.5)
        ? (() => {
            const fb = pick(voiceFallbacks);
            const model = tts[fb.provider]?.model ?? null;
            return {
              fallback: { provider: fb.provider, voice_id: fb.voice_id, ...(chance(0.3) ? { model } : {}) },
            };
          })()
        : {}),
    },
    conversation: {
      interruption_sensitivity: round(rand()),
      response_eagerness: pick(RESPONSE_EAGERNESS_VALUES),
      noise_handling: { mode: pick(["standard", "high", "low"]), level: int(0, 100) },
      silence_reminder: { enabled: chance(0.7), seconds: int(1, 60), message: message() },
    },
    call: {
      max_duration_minutes: int(1, 60),
      end_on_silence_seconds: int(1, 60),
      recording_enabled: chance(0.5),
      custom_analysis_enabled: chance(0.5),
      max_duration_message: message(),
      end_on_silence_message: message(),
    },
    inbound: { business_hours_closed_message: message(), fallback_message: message() },
    builtin_tools: tools,
    knowledge_base_ids: subset(attach.knowledgeBaseIds),
    analysis_group_ids: subset(attach.analysisGroupIds),
    memory: {
      enabled: chance(0.5),
      channels: subset(["outbound", "whatsapp"]),
      allow_ai_labels: chance(0.5),
      label_instructions: chance(0.5) ? text() : null,
      max_facts: int(0, 100),
      transcript_turns: int(0, 50),
      fields: Array.from({ length: int(0, 3) }, (_, i) => {
        const type = pick(["string", "number", "boolean", "date"]);
        return {
          key: `field_${i}`,
          ...(chance(0.6) ? { label: text(1) } : {}),
          ...(chance(0.7) ? { type } : {}),
          ...(type === "string" && chance(0.5) ? { enum_values: ["low", "medium", "high"] } : {}),
          ...(chance(0.5) ? { description: text() } : {}),
          ...(chance(0.5) ? { category: pick(["profile", "preferences", null]) } : {}),
        };
      }),
    },
    numbers: {
      inbound_phone: pick([null, "+918065550101", "+91 80655 50102", "+918065550103"]),
      inbound_whatsapp: pick([null, "+918065560101", "+918065560102"]),
    },
    label: chance(0.5) ? text(1) : null,
    notes: chance(0.5) ? text() : null,
  };
  if (chance(0.9)) body.system_prompt = promptParts.join("\n");
  if (chance(0.6))
    body.greeting = { message: chance(0.5) && custom.length > 0 ? `Hi {{custom.${pick(custom)}}}` : plain() };
  return body;
}

/**
 * Creates `count` agents with random configurations (seed `seed`), each in a random state: some
 * published and live, some with a draft changed after that, some never published. Returns them.
 */
export async function seedRandomAgents(
  c: VoiceAgentClient,
  seed: number,
  count: number,
  attach: Attachable,
): Promise<AgentDetailT[]> {
  const rand = prng(seed);
  const out: AgentDetailT[] = [];
  for (let i = 0; i < count; i++) {
    const body = randomAgentBody(rand, i, attach);
    const created = await c.agents.create(body);
    const state = rand();
    if (state < 0.6) await release(c, created.id, 0);
    if (state < 0.3) await c.agents.patch(created.id, { name: `${body.name} (edited)` });
    out.push(created);
  }
  return out;
}
