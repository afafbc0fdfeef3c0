/**
 * A support agent deployed per environment: `pulumi up -s dev` and `pulumi up -s prod` apply the
 * same program with each stack's own voice, phone number and release label (Pulumi.<stack>.yaml).
 * Prod is deployed with the package's policy pack (docs/policy.md), which it passes clean:
 * `pulumi up -s prod --policy-pack node_modules/pulumi-voice-agent/policy`. So prod records calls
 * and says so in the greeting, and has a fallback model, voice and transcriber. Prod also has a test
 * line (`testCallNumber`): each new version goes live only after a test call to it passes. And prod
 * is promoted from dev (`promoteFrom` in Pulumi.prod.yaml): it publishes only what dev's live
 * version runs.
 */
import { readFileSync } from "node:fs";
import * as pulumi from "@pulumi/pulumi";
import * as va from "pulumi-voice-agent";

const config = new pulumi.Config();
const stack = pulumi.getStack();
const recording = stack === "prod";

const agent = new va.Agent("support", {
  name: `Acme support (${stack})`,
  systemPrompt: readFileSync("prompt.md", "utf8"),
  greeting: {
    message: recording
      ? "Hello from Acme! This call is recorded for quality. How can I help you today?"
      : "Hello from Acme! How can I help you today?",
  },
  language: { default: "en-IN", additional: ["hi-IN"] },
  model: { model: "gpt-4o-mini", fallback: { model: "claude-3-5-haiku" } },
  transcriber: { model: "saarika:v2", fallback: { model: "nova-3" } },
  voice: {
    provider: config.require("voiceProvider"),
    voiceId: config.require("voiceId"),
    fallback: {
      provider: config.require("fallbackVoiceProvider"),
      voiceId: config.require("fallbackVoiceId"),
    },
  },
  conversation: { responseEagerness: 0.75, silenceReminder: { enabled: true, seconds: 12 } },
  call: { maxDurationMinutes: 20, recordingEnabled: recording },
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

// A stack with a test line (prod) puts a version live only after a test call to it passes: the
// call is pinned to the new version while the earlier one keeps answering customers
// (docs/deploys.md, "Verified go-live").
const testCallNumber = config.get("testCallNumber");

// Prod goes live only with what dev runs (docs/gitops.md, "Promoting staging to production"): the
// same configuration but for what is meant to differ per environment, once dev's live version has
// soaked and answered enough callers, few of them unhappy. Dev's agent id comes from its stack.
const promoteFrom = config.get("promoteFrom");
const live = new va.AgentVersion("support-live", {
  agent,
  label: config.require("releaseLabel"),
  notes: config.get("releaseNotes") ?? `Deployed to ${stack}.`,
  verify: testCallNumber
    ? {
        calls: [
          {
            toNumber: testCallNumber,
            variables: { order_id: "TEST-1001" },
            metadata: { purpose: "go-live check" },
            expect: {
              status: "completed",
              analysis: { "Default Analysis": { "User Sentiment": ["positive", "neutral"] } },
            },
          },
        ],
        timeoutSeconds: 300,
      }
    : undefined,
  ...(promoteFrom
    ? {
        promote: {
          from: new pulumi.StackReference(promoteFrom).requireOutput("agentId") as pulumi.Output<string>,
          soakMinutes: config.getNumber("promoteSoakMinutes") ?? 60,
          minCalls: config.getNumber("promoteMinCalls") ?? 20,
          rates: [{ analysis: "Default Analysis/User Sentiment", value: "negative", atMost: 0.2 }],
          ignore: [
            "name",
            "greeting",
            "voice",
            "call.recordingEnabled",
            "builtinTools.transferCall.numbers",
            "numbers",
          ],
        },
      }
    : {}),
  // After go-live (prod, `watch: true`): `voice-agent-diff --watch`, run every few minutes, puts the
  // version live before this one back live when production's callers get worse with confidence
  // (docs/deploys.md, "After go-live: the watch"). A version it took off air stays off air until the
  // program changes; `pulumi config set reinstate 1` (then 2, 3, ...) puts it back on purpose.
  watch: config.getBoolean("watch")
    ? {
        rates: [
          { analysis: "Default Analysis/User Sentiment", value: "negative", atMost: 0.2 },
          { status: ["failed", "no_answer"], atMost: 0.05 },
        ],
        minCalls: 30,
      }
    : undefined,
  reinstate: config.getNumber("reinstate"),
});

export const agentId = agent.agentId;
export const liveVersion = live.version;
export const dashboardUrl = agent.dashboardUrl;
// The test calls that let the live version go live (none on a stack without a test line).
export const testCalls = live.verification.apply((v) => v?.calls.map((call) => call.id) ?? []);
// What prod promoted (null in dev, which promotes nothing).
export const promotedFrom = live.promotion.apply((p) => p ?? null);
// Set while the live version was taken off air since this stack put it live (null otherwise).
export const rolledBack = live.rolledBack.apply((r) => r ?? null);
