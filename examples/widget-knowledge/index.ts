/**
 * A website agent: two knowledge bases it answers from, a custom-analysis group run after each call,
 * the Default Analysis group adopted and tuned, and the widget that embeds the agent on the site.
 */
import * as pulumi from "@pulumi/pulumi";
import * as va from "pulumi-voice-agent";

const config = new pulumi.Config();

const faq = new va.KnowledgeBase("faq", {
  name: "Store FAQ",
  description: "Opening hours, delivery areas, returns.",
  documents: [
    { name: "hours", text: "We are open 9am to 9pm, Monday to Saturday." },
    { name: "returns", text: "Returns are accepted within 30 days with the receipt." },
  ],
});

const catalogue = new va.KnowledgeBase("catalogue", {
  name: "Product catalogue",
  documents: [{ name: "bestsellers", text: "Masala chai, filter coffee, Darjeeling first flush." }],
});

const leads = new va.AnalysisGroup("leads", {
  name: "Lead qualification",
  description: "Filled in after every call.",
  items: [
    { name: "Interested", type: "boolean", description: "Did the caller want to buy?" },
    { name: "Budget", type: "number", description: "Budget in rupees, if said." },
    { name: "Channel", type: "enum", enumValues: ["web", "phone", "store"] },
  ],
});

const defaults = new va.AnalysisGroup("default-analysis", { adoptDefault: true, enabled: true });

const agent = new va.Agent("web-agent", {
  name: "Tea shop assistant",
  systemPrompt: "## Agent Purpose\nAnswer questions about the shop and its teas from the knowledge bases.",
  language: { default: "en-IN", additional: ["hi-IN"] },
  knowledgeBaseIds: [faq.id, catalogue.id],
  analysisGroupIds: [leads.id, defaults.id],
});

const live = new va.AgentVersion("web-agent-live", { agent, label: config.get("release") ?? "web-1" });

const widget = new va.Widget("site-widget", {
  agentId: agent.agentId,
  name: "Tea shop chat",
  allowedOrigins: ["https://teashop.example", "http://localhost:3000"],
  enabledModes: { chat: true, talk: true },
  theme: { title: "Ask us anything", accentColor: "#0B6E4F", position: "bottom-right", buttonShape: "pill" },
  defaultVariables: { storeCity: "Bengaluru" },
  rotateKeyTrigger: config.get("widgetKeyVersion") ?? "1",
});

export const agentId = agent.agentId;
export const liveVersion = live.version;
export const widgetKeyPrefix = widget.publicKeyPrefix;
/** The full public key to embed on the site: a Pulumi secret. */
export const widgetKey = widget.publicKey;
