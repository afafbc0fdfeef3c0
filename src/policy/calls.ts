/**
 * The two advisory policies about calls:
 *
 * - `recording-disclosure`: an agent that records calls (recording is on unless the program sets
 *   `call.recordingEnabled: false`) says so in its greeting. Parameter `pattern` (a regular
 *   expression, case-insensitive, default `record`) is what the greeting must contain; many
 *   jurisdictions require callers be told before a recording starts.
 * - `call-duration-limit`: `call.maxDurationMinutes` at most the parameter `maxMinutes` (default 30):
 *   a runaway call (a loop, a caller who never hangs up) costs by the minute.
 */
import type { ResourceValidationPolicy } from "@pulumi/policy";
import { parameters, refusingUnknownParameters, subject } from "./common";
import { NOT_YET_KNOWN, valueAt } from "./values";

/** Default of `recording-disclosure`'s `pattern`. */
export const DEFAULT_DISCLOSURE_PATTERN = "record";
/** Default of `call-duration-limit`'s `maxMinutes`. */
export const DEFAULT_MAX_MINUTES = 30;

export const recordingDisclosure: ResourceValidationPolicy = refusingUnknownParameters({
  name: "recording-disclosure",
  description: "An agent that records calls says so in its greeting.",
  enforcementLevel: "advisory",
  configSchema: {
    properties: {
      pattern: {
        type: "string",
        minLength: 1,
        default: DEFAULT_DISCLOSURE_PATTERN,
        description: "Regular expression (case-insensitive) the greeting must match when calls are recorded.",
      },
    },
  },
  validateResource: (args, reportViolation) => {
    const agent = subject(args, ["Agent"]);
    if (!agent) return;
    const recording = valueAt(agent.props, "call.recordingEnabled");
    if (recording === NOT_YET_KNOWN || recording === false) return;
    const greeting = valueAt(agent.props, "greeting.message");
    if (greeting === NOT_YET_KNOWN) return;
    const { pattern } = parameters(args, { pattern: DEFAULT_DISCLOSURE_PATTERN });
    let disclosure: RegExp;
    try {
      disclosure = new RegExp(pattern, "i");
    } catch (err) {
      throw new Error(
        `recording-disclosure: the parameter pattern ${JSON.stringify(pattern)} is not a regular expression`,
        {
          cause: err,
        },
      );
    }
    if (typeof greeting === "string" && disclosure.test(greeting)) return;
    const why =
      recording === undefined
        ? "records calls (call.recordingEnabled is unset, and recording is on by default)"
        : "records calls (call.recordingEnabled: true)";
    const what =
      typeof greeting === "string"
        ? `greeting.message does not say so (it does not match /${pattern}/i)`
        : "it declares no greeting.message to say so";
    reportViolation(
      `${agent.label} ${why}, but ${what}: tell callers in the greeting, e.g. "This call is recorded for quality.", ` +
        "or set call.recordingEnabled: false.",
    );
  },
});

export const callDurationLimit: ResourceValidationPolicy = refusingUnknownParameters({
  name: "call-duration-limit",
  description: "An agent's longest call (call.maxDurationMinutes) is at most maxMinutes (default 30).",
  enforcementLevel: "advisory",
  configSchema: {
    properties: {
      maxMinutes: {
        type: "number",
        exclusiveMinimum: 0,
        default: DEFAULT_MAX_MINUTES,
        description: "Longest call allowed, in minutes.",
      },
    },
  },
  validateResource: (args, reportViolation) => {
    const agent = subject(args, ["Agent"]);
    if (!agent) return;
    const minutes = valueAt(agent.props, "call.maxDurationMinutes");
    if (typeof minutes !== "number") return;
    const { maxMinutes } = parameters(args, { maxMinutes: DEFAULT_MAX_MINUTES });
    if (minutes <= maxMinutes) return;
    reportViolation(
      `${agent.label}: call.maxDurationMinutes is ${minutes}, above the limit of ${maxMinutes} minutes: lower it ` +
        "(a call that runs away costs by the minute), or raise the policy's maxMinutes in the policy pack configuration.",
    );
  },
});
