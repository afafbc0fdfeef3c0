/**
 * "Breaks outside the service" through the real Pulumi CLI against the emulator: one stack holding
 * an agent per consequence area, deployed; then the preview of a program holding every breaking
 * change must list each one by its id, and the preview of a program holding only their harmless
 * neighbours (a description edited, an item, origin, variable, number or language added, a new
 * configuration published) must list none.
 *
 * With RECORD_PREVIEWS=1 the `pulumi preview --json` documents are written to
 * test/fixtures/previews/breaking-*.json, where breaking.test.ts and cli.test.ts read them.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { closeDispatchers } from "../../src/client";
import { DEFAULT_API_KEY, startEmulator } from "../../src/emulator";
import { findBreaking } from "../../src/gitops/breaking";
import { recordedReuse, renderReport } from "../../src/gitops/report";
import { PulumiProject } from "../support/pulumi";
import { preview } from "./previews";

type Emulator = Awaited<ReturnType<typeof startEmulator>>;
let emu: Emulator;

/** What varies between the programs of this test. */
interface Scenario {
  qualityItems: { name: string; enabled?: boolean; description?: string }[];
  qualityDescription: string;
  salesName: string;
  legacy: boolean;
  survey: boolean;
  variables: string[];
  transferNumbers: string[];
  languages: string[];
  pricing: boolean;
  returns: boolean;
  origins: string[];
  widgetStatus: "active" | "paused";
  keyTrigger: string;
  widgetTitle: string;
  retired: string | undefined;
  rollback: string;
}

const BASE: Scenario = {
  qualityItems: [
    { name: "Resolved", description: "Was the issue solved?" },
    { name: "Escalated", description: "Did the caller ask for a human?" },
  ],
  qualityDescription: "Filled in after every call.",
  salesName: "Sales",
  legacy: true,
  survey: true,
  variables: ["customer_tier", "order_id"],
  transferNumbers: ["+15550100", "+15550101"],
  languages: ["hi-IN", "ta-IN"],
  pricing: true,
  returns: false,
  origins: ["https://shop.example", "https://help.example"],
  widgetStatus: "active",
  keyTrigger: "1",
  widgetTitle: "Ask us",
  retired: "Answer questions about the old catalogue.",
  rollback: "Answer questions about bookings.",
};

const prompt = (purpose: string) =>
  `## Agent Purpose\n${purpose}\n\n## Call Flow\nAnswer the question, then use <end_call>.\n`;

function program(s: Scenario): string {
  const item = (i: Scenario["qualityItems"][number]) => ({ type: "boolean", ...i });
  const groups = [
    "quality.id",
    "sales.id",
    ...(s.legacy ? ["legacy.id"] : []),
    ...(s.survey ? ["survey.id"] : []),
  ];
  const kbs = ["faq.id", ...(s.pricing ? ["pricing.id"] : []), ...(s.returns ? ["returns.id"] : [])];
  const docs = (text: string) => JSON.stringify([{ name: "main", text }]);
  return `
import * as va from "pulumi-voice-agent";
const quality = new va.AnalysisGroup("quality", {
  name: "Quality",
  description: ${JSON.stringify(s.qualityDescription)},
  items: ${JSON.stringify(s.qualityItems.map(item))},
});
const sales = new va.AnalysisGroup("sales", {
  name: ${JSON.stringify(s.salesName)},
  items: [{ name: "Interested", type: "boolean" }],
});
${s.legacy ? `const legacy = new va.AnalysisGroup("legacy", { name: "Legacy", items: [{ name: "Old score", type: "number" }] });` : ""}
const survey = new va.AnalysisGroup("survey", { name: "Survey", items: [{ name: "NPS", type: "number" }] });
const faq = new va.KnowledgeBase("faq", { name: "FAQ", documents: ${docs("Open 9 to 5.")} });
const pricing = new va.KnowledgeBase("pricing", { name: "Pricing", documents: ${docs("Tea costs 40 rupees.")} });
${s.returns ? `const returns = new va.KnowledgeBase("returns", { name: "Returns", documents: ${docs("30 days.")} });` : ""}
const support = new va.Agent("support", {
  name: "Support",
  systemPrompt: ${JSON.stringify(prompt("Help customers with their orders."))},
  language: { default: "en-IN", additional: ${JSON.stringify(s.languages)} },
  builtinTools: {
    endCall: { enabled: true },
    transferCall: {
      enabled: true,
      numbers: ${JSON.stringify(s.transferNumbers.map((number) => ({ number, timezone: "Asia/Kolkata", startHour: 9, endHour: 18 })))},
    },
  },
  variables: ${JSON.stringify(s.variables.map((key) => ({ key, defaultValue: "none" })))},
  knowledgeBaseIds: [${kbs.join(", ")}],
  analysisGroupIds: [${groups.join(", ")}],
});
new va.AgentVersion("support-live", { agent: support });
new va.Widget("support-widget", {
  agentId: support.agentId,
  allowedOrigins: ${JSON.stringify(s.origins)},
  status: ${JSON.stringify(s.widgetStatus)},
  rotateKeyTrigger: ${JSON.stringify(s.keyTrigger)},
  theme: { title: ${JSON.stringify(s.widgetTitle)} },
});
${
  s.retired === undefined
    ? ""
    : `const retired = new va.Agent("retired", { name: "Retired", systemPrompt: ${JSON.stringify(prompt(s.retired))} });
new va.AgentVersion("retired-live", { agent: retired });`
}
const rollback = new va.Agent("rollback", { name: "Rollback", systemPrompt: ${JSON.stringify(prompt(s.rollback))} });
new va.AgentVersion("rollback-live", { agent: rollback });
`;
}

beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
});
afterAll(async () => {
  await closeDispatchers();
  await emu?.close();
});

describe("voice-agent-diff: breaks outside the service", () => {
  test("every breaking change is listed by its id; none of their harmless neighbours is", async () => {
    const p = await PulumiProject.create({
      program: program(BASE),
      config: { "voice-agent:baseUrl": emu.url },
      secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
    });
    try {
      await p.up();
      // A second configuration of the rollback agent (version 1), so that going back is a rollback.
      p.setProgram(program({ ...BASE, rollback: "Answer questions about bookings and refunds." }));
      await p.up();

      p.setProgram(
        program({
          ...BASE,
          // "Resolved" renamed, "Escalated" disabled.
          qualityItems: [
            { name: "Issue resolved", description: "Was the issue solved?" },
            { name: "Escalated", description: "Did the caller ask for a human?", enabled: false },
          ],
          salesName: "Revenue",
          legacy: false,
          survey: false,
          variables: ["customer_tier", "order_ref"],
          transferNumbers: ["+15550100"],
          languages: ["hi-IN"],
          pricing: false,
          origins: ["https://shop.example"],
          widgetStatus: "paused",
          keyTrigger: "2",
          retired: undefined,
        }),
      );
      const breaking = await preview(p, "breaking-all", emu.url, ["--show-sames"]);
      const found = findBreaking(breaking, recordedReuse(breaking));
      expect(found.map((c) => c.id)).toEqual([
        "analysis:Legacy/Old score",
        "analysis:Quality/Escalated",
        "analysis:Quality/Resolved",
        "analysis:Sales/Interested",
        "analysis:Survey/NPS",
        "knowledge-base:support/Pricing",
        "language:support/ta-IN",
        "off-air:retired",
        "rollback:rollback",
        "transfer-number:support/+15550101",
        "variable:support/order_id",
        "widget-key:support",
        "widget-origin:support/https://help.example",
        "widget-status:support",
      ]);
      const md = renderReport(breaking);
      expect(md).toMatch(/^### Voice agents: preview\n\n#### Breaks outside the service\n/);
      for (const c of found) expect(md).toContain(`- \`${c.id}\`: `);

      p.setProgram(
        program({
          ...BASE,
          qualityDescription: "Filled in after every call, by the analysis model.",
          qualityItems: [
            { name: "Resolved", description: "Was the issue solved on this call?" },
            { name: "Escalated", description: "Did the caller ask for a human?" },
            { name: "Follow-up needed", description: "Should someone call back?" },
          ],
          variables: ["customer_tier", "order_id", "channel"],
          transferNumbers: ["+15550100", "+15550101", "+15550102"],
          languages: ["hi-IN", "ta-IN", "mr-IN"],
          returns: true,
          origins: ["https://shop.example", "https://help.example", "https://m.shop.example"],
          widgetTitle: "Ask us anything",
          retired: "Answer questions about the new catalogue.",
          rollback: "Answer questions about bookings, refunds and upgrades.",
        }),
      );
      const harmless = await preview(p, "breaking-harmless", emu.url, ["--show-sames"]);
      expect(findBreaking(harmless, recordedReuse(harmless))).toEqual([]);
      const report = renderReport(harmless);
      expect(report).not.toContain("Breaks outside the service");
      // The neighbours are there as ordinary changes.
      expect(report).toContain("#### ~ AnalysisGroup `quality`: update");
      expect(report).toContain("#### ~ Widget `support-widget`: update");
      expect(report).toContain("#### + KnowledgeBase `returns`: create");
    } finally {
      p.cleanup();
    }
  }, 600_000);
});
