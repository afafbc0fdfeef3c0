/**
 * `production-promoted` (advisory): in a production stack (`productionStacks`), every AgentVersion
 * that publishes the agent's configuration (no `version` pin) sets `promote`, so what goes live in
 * production is what staging ran, with proof (docs/gitops.md, "Promoting staging to production").
 */
import type { ResourceValidationPolicy } from "@pulumi/policy";
import { inProduction, productionStacksParameter, refusingUnknownParameters, subject } from "./common";
import { NOT_YET_KNOWN, valueAt } from "./values";

export const productionPromoted: ResourceValidationPolicy = refusingUnknownParameters({
  name: "production-promoted",
  description:
    "In a production stack every AgentVersion that publishes sets `promote` (this policy checks only that it is set; the AgentVersion compares with staging and enforces the proof: soak, answered calls, rates over calls that carry a value).",
  enforcementLevel: "advisory",
  configSchema: { properties: { ...productionStacksParameter } },
  validateResource: (args, reportViolation) => {
    const version = subject(args, ["AgentVersion"]);
    if (!version) return;
    if (!inProduction(args, version.urn)) return;
    // A pin publishes nothing (a rollback); an unknown pin is not counted as missing anything.
    const pinned = valueAt(version.props, "pinnedVersion");
    if (pinned !== undefined) return;
    const promote = valueAt(version.props, "promote");
    if (promote === NOT_YET_KNOWN || (promote !== undefined && promote !== null)) return;
    reportViolation(
      `${version.label} publishes its agent's configuration in production without \`promote\`: nothing ties it ` +
        "to what staging ran. Add `promote: { from: <the staging agent's id, e.g. a StackReference output>, " +
        'soakMinutes, minCalls }` (docs/gitops.md, "Promoting staging to production").',
    );
  },
});
