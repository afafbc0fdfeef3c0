/**
 * The demo: a support agent whose configuration lives in Git, answering from a knowledge base and
 * embedded on a website. `pulumi up` writes the working draft, publishes it as a frozen version and
 * puts that version live; `npm run demo` then changes the prompt and reverts it (a rollback).
 */
import * as pulumi from "@pulumi/pulumi";
import * as va from "pulumi-voice-agent";

const config = new pulumi.Config("demo");
const release = config.get("release") ?? "2026.11.1";
const handlesExchanges = config.getBoolean("exchanges") ?? false;

const faq = new va.KnowledgeBase("faq", {
  name: "Acme FAQ",
  documents: [
    { name: "returns", text: "Returns are free within 30 days. Refunds reach the card in 5 working days." },
    { name: "delivery", text: "We deliver across India in 2 to 4 days." },
  ],
});

const agent = new va.Agent("support", {
  name: "Acme support",
  systemPrompt: [
    "## Agent Purpose",
    `Help Acme customers track orders${handlesExchanges ? ", arrange returns and exchange items" : " and arrange returns"}.`,
    "## Response Style",
    "Warm, brief, one question at a time.",
    "## Call Flow",
    "Greet, ask for the order number ({{custom.order_id}}), look it up, offer <end_call> when done.",
  ].join("\n"),
  greeting: { message: "Hello from Acme! How can I help you today?" },
  language: { default: "en-IN", additional: ["hi-IN"] },
  conversation: { responseEagerness: 0.75 },
  call: { maxDurationMinutes: 20 },
  builtinTools: {
    endCall: { enabled: true, message: { mode: "custom", text: "Thanks for calling Acme. Goodbye!" } },
  },
  variables: [{ key: "order_id", defaultValue: "unknown" }],
  knowledgeBaseIds: [faq.id],
});

const live = new va.AgentVersion("support-live", {
  agent,
  label: release,
  notes: "Deployed by `npm run demo`.",
});

const widget = new va.Widget("support-widget", {
  agentId: agent.agentId,
  name: "Acme help",
  allowedOrigins: ["https://acme.example"],
  enabledModes: { chat: true, talk: true },
  theme: { title: "Talk to Acme", accentColor: "#C2410C", position: "bottom-right" },
});

export const agentId = agent.agentId;
export const liveVersion = live.version;
export const dashboardUrl = agent.dashboardUrl;
export const widgetKeyPrefix = widget.publicKeyPrefix;
