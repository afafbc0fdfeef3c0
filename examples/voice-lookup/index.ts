/**
 * Chooses a voice offered for the agent's language from the catalogue (getVoicesOutput), and a model
 * that honours temperature (getModelsOutput), instead of hard-coding ids that may be withdrawn.
 */
import * as pulumi from "@pulumi/pulumi";
import * as va from "pulumi-voice-agent";

const config = new pulumi.Config();
const language = config.get("language") ?? "hi-IN";
const provider = config.get("voiceProvider") ?? "sarvam";

const voices = va.getVoicesOutput({ provider, language });
const voiceId = voices.apply((vs) => {
  if (vs.length === 0) throw new Error(`no ${provider} voice speaks ${language}`);
  return [...vs].sort((a, b) => a.voiceId.localeCompare(b.voiceId))[0]!.voiceId;
});
const model = va
  .getModelsOutput()
  .apply((ms) => ms.find((m) => m.supportsTemperature && m.provider === "openai")?.id ?? "gpt-4o-mini");

const agent = new va.Agent("concierge", {
  name: "Concierge",
  systemPrompt: "## Agent Purpose\nHelp hotel guests with bookings and local tips.",
  language: { default: language, additional: [] },
  voice: { provider, voiceId },
  model: { model, temperature: 0.3 },
});

new va.AgentVersion("concierge-live", { agent });

export const chosenVoice = voiceId;
export const chosenModel = model;
export const agentId = agent.agentId;
