/**
 * The policy pack's policies (docs/policy.md). Importing this module only defines them; the pack
 * itself (`pack.ts`, loaded by `policy/index.js`) serves them to the Pulumi engine.
 */
import type { Policies } from "@pulumi/policy";
import { callDurationLimit, recordingDisclosure } from "./calls";
import { productionFallbacks, productionGoesLiveByVersion } from "./production";
import { productionPromoted } from "./promoted";
import { noSecretsInAgentText } from "./secrets";
import { widgetOrigins } from "./widgetOrigins";

export const policies: Policies = [
  noSecretsInAgentText,
  widgetOrigins,
  productionGoesLiveByVersion,
  productionFallbacks,
  recordingDisclosure,
  callDurationLimit,
  productionPromoted,
];
