/**
 * End to end through the real Pulumi CLI against the emulator: one stack holding an agent (with its
 * live version) that uses a widget, two knowledge bases and an analysis group, and picks its voice
 * with a lookup. Up with a no-change preview and refresh after every step; an update of each
 * resource; a key rotation (the secret output changes and the state holds it only encrypted);
 * detaching and deleting a knowledge base in one `up`; destroy (the widget is left paused).
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { DEFAULT_API_KEY, startEmulator } from "../../src/emulator";
import { PulumiProject } from "../support/pulumi";

type Emulator = Awaited<ReturnType<typeof startEmulator>>;
let emu: Emulator;

async function api(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${emu.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${DEFAULT_API_KEY}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok)
    throw Object.assign(new Error(`${method} ${path}: ${res.status} ${text}`), { status: res.status });
  return text ? JSON.parse(text) : undefined;
}

interface StackOptions {
  /** Text of the FAQ's first document. */
  faqText: string;
  /** A second FAQ document. */
  faqExtra?: boolean;
  /** Keep the manuals knowledge base (and attach it to the agent). */
  manuals: boolean;
  /** Description of the manuals knowledge base. */
  manualsDescription?: string;
  /** Description of the first analysis item. */
  itemDescription: string;
  widgetTitle: string;
  origins: string[];
  rotateKeyTrigger: number;
}

const START: StackOptions = {
  faqText: "Q: When are you open? A: Nine to six, Monday to Saturday.",
  manuals: true,
  itemDescription: "Was the customer's issue resolved?",
  widgetTitle: "Need help?",
  origins: ["https://shop.example.com", "http://localhost:3000"],
  rotateKeyTrigger: 1,
};

/** The program under test. */
function program(o: StackOptions): string {
  return `
import * as va from "pulumi-voice-agent";

const language = "en-IN";
// A voice offered for the agent's languages, picked from the catalogue instead of hard-coded.
const voiceId = va.getVoicesOutput({ provider: "sarvam", language }).apply((voices) => {
  const usable = voices.filter((v) => v.languages.includes("hi-IN"));
  return usable[0].voiceId;
});

const faq = new va.KnowledgeBase("faq", {
  name: "Shop FAQ",
  documents: [
    { name: "hours", text: ${JSON.stringify(o.faqText)} },
    { name: "returns", url: "https://shop.example.com/returns" },${o.faqExtra ? `\n    { name: "shipping", text: "We ship in two days." },` : ""}
  ],
});
${
  o.manuals
    ? `const manuals = new va.KnowledgeBase("manuals", {
  name: "Product manuals",${o.manualsDescription ? `\n  description: ${JSON.stringify(o.manualsDescription)},` : ""}
  documents: [{ name: "kettle", text: "Fill to the line. Press the switch." }],
  readyTimeoutSeconds: 60,
});`
    : ""
}
const quality = new va.AnalysisGroup("quality", {
  name: "Support quality",
  items: [
    { name: "Resolved", description: ${JSON.stringify(o.itemDescription)}, type: "boolean" },
    { name: "Reason", type: "enum", enumValues: ["order", "refund", "other"] },
  ],
});

const agent = new va.Agent("support", {
  name: "Shop support",
  systemPrompt: "## Agent Purpose\\nHelp shop customers.",
  language: { default: language, additional: ["hi-IN"] },
  voice: { provider: "sarvam", voiceId },
  knowledgeBaseIds: [faq.id${o.manuals ? ", manuals.id" : ""}],
  analysisGroupIds: [quality.id],
});
const live = new va.AgentVersion("support-live", { agent });

const widget = new va.Widget("widget", {
  agentId: agent.agentId,
  name: "Shop widget",
  allowedOrigins: ${JSON.stringify(o.origins)},
  enabledModes: { chat: true, talk: false },
  theme: { title: ${JSON.stringify(o.widgetTitle)}, accentColor: "#0a7cff", position: "bottom-left", panelRadius: 12 },
  defaultVariables: { Store_Region: "south" },
  rotateKeyTrigger: ${o.rotateKeyTrigger},
});

export const agentId = agent.agentId;
export const liveVersion = live.version;
export const faqId = faq.id;
export const manualsId = ${o.manuals ? "manuals.id" : "undefined"};
export const groupId = quality.id;
export const itemIds = quality.itemIds;
export const voice = voiceId;
export const widgetId = widget.widgetId;
export const publicKeyPrefix = widget.publicKeyPrefix;
export const publicKey = widget.publicKey;
`;
}

beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
});
afterAll(async () => {
  await emu?.close();
});

/** The state holds the key only encrypted: absent from a plain export, present with --show-secrets. */
async function expectKeyOnlyEncrypted(p: PulumiProject, key: string): Promise<void> {
  const plain = await p.exportState(false);
  expect(plain).not.toContain(key);
  expect(plain).toContain("4dabf18193072939515e22adb298388d"); // Pulumi's secret signature
  const shown = await p.exportState(true);
  expect(shown).toContain(key);
  for (const state of [plain, shown]) expect(state).not.toContain(DEFAULT_API_KEY);
}

describe("a stack with an agent, its widget, two knowledge bases and an analysis group", () => {
  test("up, update each resource, rotate the key, detach and delete a knowledge base, destroy", async () => {
    const p = await PulumiProject.create({
      program: program(START),
      config: { "voice-agent:baseUrl": emu.url },
      secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
    });
    try {
      // -- Up: everything created, nothing left to change, refresh finds no drift.
      await p.upAndSettle();
      let out = await p.outputs();
      const agentId = out.agentId as string;
      expect(out.voice).toBe("meera");
      let agent = await api("GET", `/v1/agents/${agentId}?version=live`);
      expect(agent.voice.voice_id).toBe("meera");
      expect([...agent.knowledge_base_ids].sort()).toEqual([out.faqId, out.manualsId].sort());
      expect(agent.analysis_group_ids).toEqual([out.groupId]);

      const faq = await api("GET", `/v1/knowledge-bases/${out.faqId}`);
      expect(faq.documents.map((d: any) => [d.name, d.status]).sort()).toEqual([
        ["hours", "ready"],
        ["returns", "ready"],
      ]);
      const manuals = await api("GET", `/v1/knowledge-bases/${out.manualsId}`);
      expect(manuals.documents[0].status).toBe("ready");

      let widget = await api("GET", `/v1/agents/${agentId}/widget`);
      expect(widget.id).toBe(out.widgetId);
      expect(widget.status).toBe("active");
      expect(widget.name).toBe("Shop widget");
      expect([...widget.allowed_origins].sort()).toEqual([...START.origins].sort());
      expect(widget.enabled_modes).toEqual({ chat: true, talk: false });
      expect(widget.theme.title).toBe("Need help?");
      expect(widget.default_variables).toEqual({ Store_Region: "south" });
      expect(widget.public_key_prefix).toBe(out.publicKeyPrefix);
      const firstKey = out.publicKey as string;
      expect(firstKey.startsWith(out.publicKeyPrefix)).toBe(true);
      await expectKeyOnlyEncrypted(p, firstKey);
      const itemIds = out.itemIds as Record<string, string>;
      expect(Object.keys(itemIds).sort()).toEqual(["Reason", "Resolved"]);

      // -- An update of each resource: widget, both knowledge bases, the analysis group.
      const second: StackOptions = {
        ...START,
        faqText: "Q: When are you open? A: Nine to eight, every day.",
        faqExtra: true,
        manualsDescription: "Manuals of the products we sell",
        itemDescription: "Was the issue resolved on this call?",
        widgetTitle: "Ask us anything",
        origins: ["https://shop.example.com", "https://www.shop.example.com"],
      };
      p.setProgram(program(second));
      const updated = await p.upAndSettle();
      expect(updated.stdout).toMatch(/4 updated/);
      out = await p.outputs();
      expect(out.publicKey).toBe(firstKey);
      widget = await api("GET", `/v1/agents/${agentId}/widget`);
      expect(widget.theme.title).toBe("Ask us anything");
      expect(widget.theme.position).toBe("bottom-left");
      expect([...widget.allowed_origins].sort()).toEqual([
        "https://shop.example.com",
        "https://www.shop.example.com",
      ]);
      const faq2 = await api("GET", `/v1/knowledge-bases/${out.faqId}`);
      expect(faq2.documents.map((d: any) => d.name).sort()).toEqual(["hours", "returns", "shipping"]);
      expect(faq2.documents.every((d: any) => d.status === "ready")).toBe(true);
      // The unchanged document kept its id (not processed again).
      expect(faq2.documents.find((d: any) => d.name === "returns").id).toBe(
        faq.documents.find((d: any) => d.name === "returns").id,
      );
      expect((await api("GET", `/v1/knowledge-bases/${out.manualsId}`)).description).toBe(
        "Manuals of the products we sell",
      );
      // Items kept their identity.
      expect(out.itemIds).toEqual(itemIds);
      const library = await api("GET", "/v1/custom-analysis?limit=100");
      const group = library.data.find((g: any) => g.id === out.groupId);
      expect(group.items.find((i: any) => i.name === "Resolved")).toMatchObject({
        id: itemIds.Resolved,
        description: "Was the issue resolved on this call?",
      });

      // -- Key rotation: a new trigger value rotates; the secret output changes; only encrypted in state.
      const third: StackOptions = { ...second, rotateKeyTrigger: 2 };
      p.setProgram(program(third));
      await p.upAndSettle();
      out = await p.outputs();
      const secondKey = out.publicKey as string;
      expect(secondKey).not.toBe(firstKey);
      expect(secondKey.startsWith(out.publicKeyPrefix)).toBe(true);
      expect((await api("GET", `/v1/agents/${agentId}/widget`)).public_key_prefix).toBe(out.publicKeyPrefix);
      await expectKeyOnlyEncrypted(p, secondKey);
      // The harness decrypts secret outputs itself (test/support/pulumi.ts): as the CLI does.
      const shownOutputs = await p.pulumi(["stack", "output", "--json", "--show-secrets"]);
      expect(JSON.parse(shownOutputs.stdout)).toEqual(out);
      const plainOutputs = await p.pulumi(["stack", "output", "--json"]);
      expect(plainOutputs.stdout).not.toContain(secondKey);
      expect(plainOutputs.stdout).toContain(out.publicKeyPrefix);

      // -- Detach the manuals from the agent and delete them, in one up.
      const manualsId = out.manualsId as string;
      const versionBefore = out.liveVersion as number;
      p.setProgram(program({ ...third, manuals: false }));
      const detached = await p.upAndSettle();
      expect(detached.stdout).toMatch(/1 deleted/);
      await expect(api("GET", `/v1/knowledge-bases/${manualsId}`)).rejects.toMatchObject({ status: 404 });
      out = await p.outputs();
      expect(out.liveVersion).toBeGreaterThan(versionBefore);
      agent = await api("GET", `/v1/agents/${agentId}?version=live`);
      expect(agent.knowledge_base_ids).toEqual([out.faqId]);

      // -- Destroy: the widget is paused (it cannot be deleted), the rest removed or off air.
      const destroyed = await p.destroy();
      expect(destroyed.stdout + destroyed.stderr).toMatch(/paused/);
      widget = await api("GET", `/v1/agents/${agentId}/widget`);
      expect(widget.status).toBe("paused");
      await expect(api("GET", `/v1/knowledge-bases/${out.faqId}`)).rejects.toMatchObject({ status: 404 });
      const after = await api("GET", "/v1/custom-analysis?limit=100");
      expect(after.data.some((g: any) => g.id === out.groupId)).toBe(false);
      expect((await api("GET", `/v1/agents/${agentId}`)).live_version).toBeNull();
    } finally {
      p.cleanup();
    }
  }, 900_000);

  test("a failed document fails the up; the knowledge base stays in the stack and the next up fixes it", async () => {
    const kbProgram = (url: string) => `
import * as va from "pulumi-voice-agent";
const kb = new va.KnowledgeBase("docs", {
  name: "Linked docs",
  documents: [
    { name: "intro", text: "Welcome." },
    { name: "manual", url: ${JSON.stringify(url)} },
  ],
});
export const kbId = kb.id;
`;
    const p = await PulumiProject.create({
      program: kbProgram("https://docs.invalid/manual"),
      config: { "voice-agent:baseUrl": emu.url },
      secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
    });
    try {
      const failed = await p.up({ allowFailure: true });
      expect(failed.code).not.toBe(0);
      expect(failed.stdout + failed.stderr).toMatch(
        /"manual": could not fetch https:\/\/docs\.invalid\/manual/,
      );
      // The knowledge base is in the state (an initialization failure), not orphaned.
      const state = JSON.parse(await p.exportState(false));
      const recorded = state.deployment.resources.filter((r: any) =>
        r.type.endsWith("voice-agent:KnowledgeBase"),
      );
      expect(recorded.length).toBe(1);
      const id = recorded[0].id as string;
      expect(
        (await api("GET", `/v1/knowledge-bases/${id}`)).documents.map((d: any) => d.status).sort(),
      ).toEqual(["failed", "ready"]);

      // Unchanged, the next up tries again and fails the same way; fixed, it updates the same knowledge base.
      const again = await p.up({ allowFailure: true });
      expect(again.code).not.toBe(0);
      expect(again.stdout + again.stderr).toMatch(/"manual": could not fetch/);
      p.setProgram(kbProgram("https://docs.example.com/manual"));
      await p.upAndSettle();
      expect((await p.outputs()).kbId).toBe(id);
      const kbs = await api("GET", "/v1/knowledge-bases?limit=100");
      expect(kbs.data.filter((k: any) => k.name === "Linked docs").length).toBe(1);
      await p.destroy();
      await expect(api("GET", `/v1/knowledge-bases/${id}`)).rejects.toMatchObject({ status: 404 });
    } finally {
      p.cleanup();
    }
  }, 600_000);
});
