/**
 * A support agent deployed per environment: `pulumi up -s dev` and `pulumi up -s prod` apply the
 * same program with each stack's own voice, phone number and release label (Pulumi.<stack>.yaml).
 */
import { readFileSync } from "node:fs";
import * as pulumi from "@pulumi/pulumi";
import * as va from "pulumi-voice-agent";

const config = new pulumi.Config();
const stack = pulumi.getStack();

const agent = new va.Agent("support", {
  name: `Acme support (${stack})`,
  systemPrompt: readFileSync("prompt.md", "utf8"),
  greeting: { message: "Hello from Acme! How can I help you today?" },
  language: { default: "en-IN", additional: ["hi-IN"] },
  voice: { provider: config.require("voiceProvider"), voiceId: config.require("voiceId") },
  conversation: { responseEagerness: 0.75, silenceReminder: { enabled: true, seconds: 12 } },
  call: { maxDurationMinutes: 20, recordingEnabled: stack === "prod" },
  builtinTools: {
    endCall: { enabled: true, message: { mode: "custom", text: "Thanks for calling Acme. Goodbye!" } },
    transferCall: {
      enabled: true,
      numbers: [
        { number: config.require("escalationNumber"), timezone: "Asia/Kolkata", startHour: 9, endHour: 18 },
      ],
    },
  },
  variables: [{ key: "order_id", defaultValue: "unknown" }],
  numbers: { inboundPhone: config.require("inboundPhone") },
});

const live = new va.AgentVersion("support-live", {
  agent,
  label: config.require("releaseLabel"),
  notes: config.get("releaseNotes") ?? `Deployed to ${stack}.`,
});

export const agentId = agent.agentId;
export const liveVersion = live.version;
export const dashboardUrl = agent.dashboardUrl;
