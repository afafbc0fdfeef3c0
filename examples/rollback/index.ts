/**
 * The rollback walkthrough (see README.md): the prompt lives in prompt.md, so every change is a
 * commit; `pinVersion` puts an existing published version live without publishing anything.
 */
import { readFileSync } from "node:fs";
import * as pulumi from "@pulumi/pulumi";
import * as va from "pulumi-voice-agent";

const config = new pulumi.Config();

const agent = new va.Agent("reservations", {
  name: "Reservations",
  systemPrompt: readFileSync("prompt.md", "utf8"),
  language: { default: "en-IN", additional: ["hi-IN"] },
  builtinTools: { endCall: { enabled: true } },
});

const live = new va.AgentVersion("reservations-live", {
  agent,
  label: config.get("release"),
  version: config.getNumber("pinVersion"),
});

export const agentId = agent.agentId;
export const liveVersion = live.version;
/** `published` (a new version), `reused` (a revert found the earlier version) or `pinned`. */
export const origin = live.origin;
/** The service's deploy-history action: `activate` or `rollback`. */
export const activation = live.activation;
