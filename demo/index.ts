/**
 * The demo: a support agent whose configuration lives in Git. `pulumi up` writes the working draft,
 * publishes it as a frozen version and puts that version live.
 */
import * as pulumi from "@pulumi/pulumi";
import * as va from "pulumi-voice-agent";

const config = new pulumi.Config("demo");
const release = config.get("release") ?? "2026.11.1";

const agent = new va.Agent("support", {
  name: "Acme support",
  systemPrompt: [
    "## Agent Purpose",
    "Help Acme customers track orders and arrange returns.",
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
});

const live = new va.AgentVersion("support-live", {
  agent,
  label: release,
  notes: "Deployed by `npm run demo`.",
});

export const agentId = agent.agentId;
export const liveVersion = live.version;
export const dashboardUrl = agent.dashboardUrl;
