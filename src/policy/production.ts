/**
 * The two policies about production stacks (`productionStacks`):
 *
 * - `production-goes-live-by-version` (mandatory): every Agent of a production stack is put live by
 *   an AgentVersion of the same stack. An Agent alone only writes the working draft, which answers
 *   no calls: the change would look deployed and not be. A stack policy: it sees every resource.
 *   The AgentVersion is linked to its Agent by the `agentId` input's dependency on the Agent (what
 *   is known at preview, when a new agent has no id yet) or, failing that, by the id's value.
 * - `production-fallbacks` (advisory): a production Agent declares a fallback model, voice and
 *   transcriber (from another provider), so one provider's outage does not end its calls.
 */
import type { PolicyResource, ResourceValidationPolicy, StackValidationPolicy } from "@pulumi/policy";
import {
  describe,
  inProduction,
  productionStacksParameter,
  refusingUnknownParameters,
  subject,
  typeName,
} from "./common";
import { inputs, NOT_YET_KNOWN, valueAt } from "./values";

export const productionGoesLiveByVersion: StackValidationPolicy = refusingUnknownParameters({
  name: "production-goes-live-by-version",
  description:
    "In a production stack every Agent is put live by an AgentVersion of the same stack: a draft alone answers no calls.",
  enforcementLevel: "mandatory",
  configSchema: { properties: { ...productionStacksParameter } },
  validateStack: (args, reportViolation) => {
    const agents = args.resources.filter((r) => typeName(r.type) === "Agent");
    const first = agents[0];
    if (!first) return;
    if (!inProduction(args, first.urn)) return;
    const versions = args.resources.filter((r) => typeName(r.type) === "AgentVersion");
    for (const agent of agents) {
      const agentId = valueAt(inputs(agent.props), "agentId");
      const putLive = versions.some((version) => {
        const props = inputs(version.props);
        // `agentId` from an Agent's output (TypeScript), or `agent` naming the Agent (the plugin).
        const deps = [
          ...(version.propertyDependencies.agentId ?? []),
          ...(version.propertyDependencies.agent ?? []),
        ];
        const byDependency = deps.some((r: PolicyResource) => r.urn === agent.urn);
        const id = valueAt(props, "agentId");
        const byValue = typeof agentId === "string" && id === agentId;
        if (!byDependency && !byValue) return false;
        // A `live` not known yet (preview) counts as going live, for this version's own agent only;
        // the pack checks again once it is known.
        const live = valueAt(props, "live");
        return live !== false;
      });
      if (!putLive) {
        reportViolation(
          `${describe("Agent", agent.name)} has no AgentVersion putting it live in this production stack: its ` +
            "configuration would only be written to the working draft, which answers no calls. Add " +
            `\`new AgentVersion("${agent.name}-live", { agent: ${agent.name} })\` (live by default).`,
          agent.urn,
        );
      }
    }
  },
});

/** The three fallbacks: the field the program sets, and what it keeps going. */
const FALLBACKS = [
  ["model.fallback", "the language model"],
  ["voice.fallback", "the voice"],
  ["transcriber.fallback", "the transcriber"],
] as const;

export const productionFallbacks: ResourceValidationPolicy = refusingUnknownParameters({
  name: "production-fallbacks",
  description:
    "A production agent declares a fallback model, voice and transcriber from another provider, so one provider's outage does not end its calls.",
  enforcementLevel: "advisory",
  configSchema: { properties: { ...productionStacksParameter } },
  validateResource: (args, reportViolation) => {
    const agent = subject(args, ["Agent"]);
    if (!agent) return;
    if (!inProduction(args, agent.urn)) return;
    for (const [path, what] of FALLBACKS) {
      const value = valueAt(agent.props, path);
      if (value === NOT_YET_KNOWN || (value !== undefined && value !== null)) continue;
      reportViolation(
        `${agent.label}: ${path} is not set, so an outage of ${what}'s provider ends this production agent's calls: ` +
          `declare ${path} with another provider's ${path.startsWith("voice") ? "{ provider, voiceId }" : "{ model }"}.`,
      );
    }
  },
});
