/**
 * `widget-origins` (mandatory): the origins an active widget serves are its security boundary (any
 * page on them may use the public key and start conversations billed to the workspace). So an
 * active widget lists at least one origin; every one is what the service accepts (the spec's rule:
 * the exact `https://host[:port]`, no wildcard, path or credentials, `http://` only for `localhost`
 * and `127.0.0.1`, any port); and in production none
 * is a loopback, `localhost` or private-network origin (a production key would then work from any
 * developer's machine or an internal page). A paused widget serves nothing and is not checked.
 */
import { BlockList, isIP } from "node:net";
import type { ResourceValidationPolicy } from "@pulumi/policy";
import { originProblem } from "../spec/widget";
import { inProduction, productionStacksParameter, refusingUnknownParameters, subject } from "./common";
import { fieldsAt, NOT_YET_KNOWN, valueAt } from "./values";

/** Loopback, private, link-local and unique-local networks (RFC 1918, 6598, 3927, 4193, 4291). */
const PRIVATE = new BlockList();
PRIVATE.addSubnet("127.0.0.0", 8, "ipv4");
PRIVATE.addSubnet("10.0.0.0", 8, "ipv4");
PRIVATE.addSubnet("172.16.0.0", 12, "ipv4");
PRIVATE.addSubnet("192.168.0.0", 16, "ipv4");
PRIVATE.addSubnet("100.64.0.0", 10, "ipv4");
PRIVATE.addSubnet("169.254.0.0", 16, "ipv4");
PRIVATE.addSubnet("0.0.0.0", 8, "ipv4");
PRIVATE.addAddress("::1", "ipv6");
PRIVATE.addAddress("::", "ipv6");
PRIVATE.addSubnet("fc00::", 7, "ipv6");
PRIVATE.addSubnet("fe80::", 10, "ipv6");

/**
 * What is wrong with an origin, or `undefined` when it is fine: first the service's own rule (the
 * spec's {@link originProblem}: the exact `https://host[:port]`, http only for localhost and
 * 127.0.0.1, no wildcard, path or credentials), then, with `production`, the policy's own: no
 * loopback, localhost or private-network origin. Phrased to follow the origin in a message.
 */
export function widgetOriginProblem(origin: string, production: boolean): string | undefined {
  const refused = originProblem(origin);
  if (refused !== null) return `is refused by the service: ${refused}`;
  if (!production) return undefined;
  const host = new URL(origin).hostname.replace(/^\[|\]$/g, "").toLowerCase();
  const local = host === "localhost" || host.endsWith(".localhost");
  const ip = isIP(host);
  if (local || (ip !== 0 && PRIVATE.check(host, ip === 6 ? "ipv6" : "ipv4")))
    return "is a loopback, localhost or private-network origin, which a production widget must not serve: list the public https origins of your site";
  return undefined;
}

export const widgetOrigins: ResourceValidationPolicy = refusingUnknownParameters({
  name: "widget-origins",
  description:
    "An active widget lists the exact https origins that may use its public key: at least one, no wildcard, " +
    "http only for localhost outside production, no loopback or private-network origin in production.",
  enforcementLevel: "mandatory",
  configSchema: { properties: { ...productionStacksParameter } },
  validateResource: (args, reportViolation) => {
    const widget = subject(args, ["Widget"]);
    if (!widget) return;
    const status = valueAt(widget.props, "status");
    if (status === NOT_YET_KNOWN || status === "paused") return;
    const origins = valueAt(widget.props, "allowedOrigins");
    if (origins === NOT_YET_KNOWN) return;
    const production = inProduction(args, widget.urn);
    if (!Array.isArray(origins) || origins.length === 0) {
      reportViolation(
        `${widget.label}: allowedOrigins lists no origin, so the active widget serves no page (or, once ` +
          "origins are added in the dashboard, pages nobody reviewed): list the https origins of the pages that embed it, " +
          'e.g. allowedOrigins: ["https://www.example.com"], or set status: "paused".',
      );
      return;
    }
    for (const { path, value } of fieldsAt(widget.props, "allowedOrigins[]")) {
      if (typeof value !== "string") continue;
      const problem = widgetOriginProblem(value, production);
      if (problem) reportViolation(`${widget.label}: ${path} "${value}" ${problem}.`);
    }
  },
});
