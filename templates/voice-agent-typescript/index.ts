/**
 * A voice agent as code. `pulumi up` creates the agent (its working draft), publishes the draft as
 * a version and puts it live. Change the configuration or prompt.md and `pulumi up` again: the next
 * version goes live; a revert puts the earlier version back live without publishing anything.
 */
import { readFileSync } from "node:fs";
import * as va from "pulumi-voice-agent";

const agent = new va.Agent("agent", {
  name: "Order support",
  systemPrompt: readFileSync("prompt.md", "utf8"),
  greeting: { message: "Hello! How can I help you with your order today?" },
  language: { default: "en-IN", additional: ["hi-IN"] },
  voice: { provider: "sarvam", voiceId: "meera" },
  builtinTools: { endCall: { enabled: true } },
  variables: [{ key: "order_id", defaultValue: "unknown" }],
});

// Publishes the agent's draft as a version and puts it live (label: a release tag, editable later).
const live = new va.AgentVersion("agent-live", { agent, label: "1" });

export const agentId = agent.agentId;
export const liveVersion = live.version;
export const dashboardUrl = agent.dashboardUrl;
