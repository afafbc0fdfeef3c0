/**
 * The policy pack recognises the provider plugin's resources (`voice-agent:index:<Type>`, docs/plugin.md)
 * as it does the dynamic ones: the same policy, the same verdict on the same properties.
 */
import type { PolicyResource, ResourceValidationArgs, StackValidationArgs } from "@pulumi/policy";
import { unknownCheckingProxy } from "@pulumi/policy";
import { describe, expect, test } from "vitest";
import { TYPES } from "../../src/policy/common";
import { productionGoesLiveByVersion } from "../../src/policy/production";
import { widgetOrigins } from "../../src/policy/widgetOrigins";

const faces = [
  ["dynamic", (t: keyof typeof TYPES) => TYPES[t]],
  ["plugin", (t: keyof typeof TYPES) => `voice-agent:index:${t}`],
] as const;

describe.each(faces)("the %s face's resources", (_face, typeOf) => {
  test("a Widget allowing any origin is refused", async () => {
    const found: string[] = [];
    const validate = widgetOrigins.validateResource;
    if (!validate || Array.isArray(validate)) throw new Error("one validation expected");
    await validate(
      {
        type: typeOf("Widget"),
        name: "w",
        urn: `urn:pulumi:dev::app::${typeOf("Widget")}::w`,
        props: unknownCheckingProxy({ agentId: "a", allowedOrigins: ["http://example.com"] }),
        getConfig: <T extends object>() => ({}) as T,
      } as unknown as ResourceValidationArgs,
      (m) => found.push(m),
    );
    expect(found).toHaveLength(1);
  });

  test("in production, an Agent with no AgentVersion is refused; with one naming it, passes", async () => {
    const agentUrn = `urn:pulumi:prod::app::${typeOf("Agent")}::support`;
    const agent = {
      type: typeOf("Agent"),
      name: "support",
      urn: agentUrn,
      props: { name: "S" },
      propertyDependencies: {},
    };
    const version = {
      type: typeOf("AgentVersion"),
      name: "support-live",
      urn: `urn:pulumi:prod::app::${typeOf("AgentVersion")}::support-live`,
      props: {},
      // TypeScript sends the agent's id output; YAML names the Agent itself (`agent: ${support}`).
      propertyDependencies: {
        [typeOf("Agent").startsWith("voice-agent:index:") ? "agent" : "agentId"]: [agent],
      },
    };
    const verdicts = async (resources: unknown[]) => {
      const found: string[] = [];
      await productionGoesLiveByVersion.validateStack(
        {
          resources: resources as PolicyResource[],
          getConfig: <T extends object>() => ({}) as T,
        } as StackValidationArgs,
        (m) => found.push(m),
      );
      return found;
    };
    expect(await verdicts([agent])).toHaveLength(1);
    expect(await verdicts([agent, version])).toEqual([]);
  });
});
