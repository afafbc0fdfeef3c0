/**
 * The policy pack's policies (docs/policy.md), exported as `pulumi-voice-agent/policy` so that a
 * team can put them into its own pack, next to its own policies:
 *
 * ```js
 * const { PolicyPack } = require("@pulumi/policy");
 * const { policies } = require("pulumi-voice-agent/policy");
 * new PolicyPack("acme-voice", { policies: [...policies, myPolicy] });
 * ```
 *
 * Importing this module only defines them; the shipped pack (`pack.ts`, loaded by `policy/index.js`)
 * serves them to the Pulumi engine.
 */
import type {
  EnforcementLevel,
  Policies,
  ResourceValidationPolicy,
  StackValidationPolicy,
} from "@pulumi/policy";
import {
  callDurationLimit,
  DEFAULT_DISCLOSURE_PATTERN,
  DEFAULT_MAX_MINUTES,
  recordingDisclosure,
} from "./calls";
import { productionFallbacks, productionGoesLiveByVersion } from "./production";
import { productionPromoted } from "./promoted";
import { noSecretsInAgentText } from "./secrets";
import { DEFAULT_PRODUCTION_STACKS } from "./stacks";
import { widgetOrigins } from "./widgetOrigins";

export {
  callDurationLimit,
  DEFAULT_DISCLOSURE_PATTERN,
  DEFAULT_MAX_MINUTES,
  DEFAULT_PRODUCTION_STACKS,
  noSecretsInAgentText,
  productionFallbacks,
  productionGoesLiveByVersion,
  productionPromoted,
  recordingDisclosure,
  widgetOrigins,
};

/** Every policy of the pack, in the order the pack declares them. */
export const policies: Policies = [
  noSecretsInAgentText,
  widgetOrigins,
  productionGoesLiveByVersion,
  productionFallbacks,
  recordingDisclosure,
  callDurationLimit,
  productionPromoted,
];

/** The parameter of the policies whose rule depends on which stacks are production. */
export interface ProductionStacksConfig {
  /** Glob patterns of the production stacks' names (default `["prod", "prod-*", "production", "production-*"]`). */
  productionStacks?: string[];
}

/** Parameters of `recording-disclosure`. */
export interface RecordingDisclosureConfig {
  /** Regular expression (case-insensitive) the greeting must match when calls are recorded (default `record`). */
  pattern?: string;
}

/** Parameters of `call-duration-limit`. */
export interface CallDurationLimitConfig {
  /** Longest `call.maxDurationMinutes` allowed (default 30). */
  maxMinutes?: number;
}

/** Each policy's name and the parameters it takes (`{}`: none). */
export interface PolicyParameters {
  "no-secrets-in-agent-text": Record<never, never>;
  "widget-origins": ProductionStacksConfig;
  "production-goes-live-by-version": ProductionStacksConfig;
  "production-fallbacks": ProductionStacksConfig;
  "recording-disclosure": RecordingDisclosureConfig;
  "call-duration-limit": CallDurationLimitConfig;
  "production-promoted": ProductionStacksConfig;
}

/** The name of one of the pack's policies. */
export type PolicyName = keyof PolicyParameters;

/**
 * Pulumi's `--policy-pack-config` file for these policies: per policy, an enforcement level, or an
 * object with an optional `enforcementLevel` and the policy's parameters.
 */
export type PolicyPackConfig = {
  [N in PolicyName]?: EnforcementLevel | ({ enforcementLevel?: EnforcementLevel } & PolicyParameters[N]);
};

/** Each policy by its name (`policyByName["call-duration-limit"]`). */
export const policyByName: { readonly [N in PolicyName]: ResourceValidationPolicy | StackValidationPolicy } =
  {
    "no-secrets-in-agent-text": noSecretsInAgentText,
    "widget-origins": widgetOrigins,
    "production-goes-live-by-version": productionGoesLiveByVersion,
    "production-fallbacks": productionFallbacks,
    "recording-disclosure": recordingDisclosure,
    "call-duration-limit": callDurationLimit,
    "production-promoted": productionPromoted,
  };
