/**
 * Each policy's validation called as `@pulumi/policy` calls it, without the engine: values unknown
 * at preview never fail a policy, parameters from the configuration file are honoured, and the
 * stack policy links versions to agents by dependency when the agent's id is not known yet.
 */
import type {
  PolicyResource,
  ResourceValidationArgs,
  ResourceValidationPolicy,
  StackValidationArgs,
} from "@pulumi/policy";
import { unknownCheckingProxy } from "@pulumi/policy";
import { describe, expect, test } from "vitest";
import { callDurationLimit, recordingDisclosure } from "../../src/policy/calls";
import { TYPES } from "../../src/policy/common";
import { policies } from "../../src/policy/index";
import { productionFallbacks, productionGoesLiveByVersion } from "../../src/policy/production";
import { noSecretsInAgentText } from "../../src/policy/secrets";
import { widgetOrigins } from "../../src/policy/widgetOrigins";

const UNKNOWN_SENTINEL = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
type Type = keyof typeof TYPES;

const urn = (stack: string, type: Type, name: string) => `urn:pulumi:${stack}::app::${TYPES[type]}::${name}`;

function args(
  type: Type,
  props: Record<string, unknown>,
  stack = "dev",
  config: object = {},
): ResourceValidationArgs {
  return {
    type: TYPES[type],
    name: "r",
    urn: urn(stack, type, "r"),
    props: unknownCheckingProxy(props),
    getConfig: <T extends object>() => config as T,
  } as unknown as ResourceValidationArgs;
}

async function run(policy: ResourceValidationPolicy, a: ResourceValidationArgs): Promise<string[]> {
  const found: string[] = [];
  const validate = policy.validateResource;
  if (!validate || Array.isArray(validate)) throw new Error("one validation expected");
  await validate(a, (message) => found.push(message));
  return found;
}

test("the pack holds exactly the seven policies, by name, at their default levels", () => {
  expect(policies.map((p) => [p.name, p.enforcementLevel])).toEqual([
    ["no-secrets-in-agent-text", "mandatory"],
    ["widget-origins", "mandatory"],
    ["production-goes-live-by-version", "mandatory"],
    ["production-fallbacks", "advisory"],
    ["recording-disclosure", "advisory"],
    ["call-duration-limit", "advisory"],
    ["production-promoted", "advisory"],
  ]);
});

describe("values unknown at preview never fail a policy", () => {
  test("every resource policy, every field unknown", async () => {
    const unknown = {
      name: UNKNOWN_SENTINEL,
      systemPrompt: UNKNOWN_SENTINEL,
      greeting: UNKNOWN_SENTINEL,
      call: UNKNOWN_SENTINEL,
      model: UNKNOWN_SENTINEL,
      voice: UNKNOWN_SENTINEL,
      transcriber: UNKNOWN_SENTINEL,
      allowedOrigins: UNKNOWN_SENTINEL,
      defaultVariables: UNKNOWN_SENTINEL,
      documents: UNKNOWN_SENTINEL,
    };
    for (const policy of [
      noSecretsInAgentText,
      widgetOrigins,
      productionFallbacks,
      recordingDisclosure,
      callDurationLimit,
    ]) {
      for (const type of ["Agent", "Widget", "KnowledgeBase"] as const) {
        expect(await run(policy, args(type, unknown, "prod")), `${policy.name} on ${type}`).toEqual([]);
      }
    }
  });

  test("an unknown origin is skipped, the known ones checked", async () => {
    const found = await run(
      widgetOrigins,
      args("Widget", { allowedOrigins: [UNKNOWN_SENTINEL, "http://example.com"] }),
    );
    expect(found).toEqual([
      expect.stringMatching(
        /allowedOrigins\[1\] "http:\/\/example\.com" is refused by the service: must use https/,
      ),
    ]);
  });
});

describe("parameters", () => {
  test("recording-disclosure: pattern, case-insensitive; recording off needs no disclosure", async () => {
    const greeting = { message: "Calls are RECORDED." };
    expect(await run(recordingDisclosure, args("Agent", { greeting }))).toEqual([]);
    expect(
      await run(recordingDisclosure, args("Agent", { greeting }, "dev", { pattern: "grabad" })),
    ).toHaveLength(1);
    expect(await run(recordingDisclosure, args("Agent", { call: { recordingEnabled: false } }))).toEqual([]);
    expect(await run(recordingDisclosure, args("Agent", {}))).toEqual([
      expect.stringMatching(/no greeting\.message to say so/),
    ]);
  });

  test("call-duration-limit: maxMinutes", async () => {
    const agent = { call: { maxDurationMinutes: 30 } };
    expect(await run(callDurationLimit, args("Agent", agent))).toEqual([]);
    expect(await run(callDurationLimit, args("Agent", agent, "dev", { maxMinutes: 20 }))).toEqual([
      expect.stringMatching(/call\.maxDurationMinutes is 30, above the limit of 20 minutes/),
    ]);
  });

  test("production-fallbacks: only in the stacks productionStacks names", async () => {
    expect(await run(productionFallbacks, args("Agent", {}, "dev"))).toEqual([]);
    expect(await run(productionFallbacks, args("Agent", {}, "prod"))).toHaveLength(3);
    expect(await run(productionFallbacks, args("Agent", {}, "prod", { productionStacks: ["live"] }))).toEqual(
      [],
    );
    expect(
      await run(productionFallbacks, args("Agent", {}, "live", { productionStacks: ["live"] })),
    ).toHaveLength(3);
  });
});

describe("production-goes-live-by-version", () => {
  function resource(
    type: Type,
    name: string,
    props: Record<string, unknown>,
    deps: Record<string, PolicyResource[]> = {},
  ): PolicyResource {
    return {
      type: TYPES[type],
      name,
      urn: urn("prod", type, name),
      props: unknownCheckingProxy(props),
      dependencies: [],
      propertyDependencies: deps,
    } as unknown as PolicyResource;
  }

  function check(resources: PolicyResource[]): string[] {
    const found: string[] = [];
    productionGoesLiveByVersion.validateStack(
      { resources, getConfig: <T extends object>() => ({}) as T } as unknown as StackValidationArgs,
      (message) => found.push(message),
    );
    return found;
  }

  test("linked by the agentId dependency while the id is unknown, or by the id once known", () => {
    const newAgent = resource("Agent", "new", { name: "New", agentId: UNKNOWN_SENTINEL });
    const oldAgent = resource("Agent", "old", { name: "Old", agentId: "agt_1" });
    const orphan = resource("Agent", "orphan", { name: "Orphan", agentId: "agt_2" });
    const resources = [
      newAgent,
      oldAgent,
      orphan,
      resource(
        "AgentVersion",
        "new-live",
        { agentId: UNKNOWN_SENTINEL, live: true },
        { agentId: [newAgent] },
      ),
      resource("AgentVersion", "old-live", { agentId: "agt_1", live: true }),
      resource("AgentVersion", "orphan-published", { agentId: "agt_2", live: false }),
    ];
    expect(check(resources)).toEqual([
      expect.stringMatching(/^Agent "orphan" has no AgentVersion putting it live/),
    ]);
  });

  test("an AgentVersion whose live is unknown counts for its own agent only", () => {
    const a = resource("Agent", "a", { name: "A", agentId: "agt_a" });
    const b = resource("Agent", "b", { name: "B", agentId: "agt_b" });
    const resources = [
      a,
      b,
      resource("AgentVersion", "a-live", { agentId: "agt_a", live: UNKNOWN_SENTINEL }),
    ];
    expect(check(resources)).toEqual([
      expect.stringMatching(/^Agent "b" has no AgentVersion putting it live/),
    ]);
  });
});

describe("the configuration file", () => {
  test("a misspelt parameter is refused, naming it and the policy's parameters", async () => {
    const agent = { call: { maxDurationMinutes: 30 } };
    await expect(run(callDurationLimit, args("Agent", agent, "dev", { maxMinute: 20 }))).rejects.toThrow(
      'call-duration-limit: unknown parameter "maxMinute" in the policy pack configuration (its parameters: maxMinutes)',
    );
    // Checked whatever the resource: a stack whose resources the policy does not check still hears of it.
    await expect(
      run(widgetOrigins, args("KnowledgeBase", {}, "dev", { productionStack: ["live"] })),
    ).rejects.toThrow('widget-origins: unknown parameter "productionStack"');
    await expect(run(noSecretsInAgentText, args("Agent", {}, "dev", { pattern: "x" }))).rejects.toThrow(
      'no-secrets-in-agent-text: unknown parameter "pattern" in the policy pack configuration (it takes none)',
    );
    expect(() =>
      productionGoesLiveByVersion.validateStack(
        {
          resources: [],
          getConfig: <T extends object>() => ({ productionStacks: [], extra: 1 }) as T,
        } as unknown as StackValidationArgs,
        () => undefined,
      ),
    ).toThrow('production-goes-live-by-version: unknown parameter "extra"');
  });
});

describe("no-secrets-in-agent-text reads every text", () => {
  const token = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
  const paths = async (type: Type, props: Record<string, unknown>) =>
    (await run(noSecretsInAgentText, args(type, props))).map((m) => /: (\S+) holds/.exec(m)?.[1]);

  test("memory texts, the language switch trigger, document urls, the widget's logo url", async () => {
    expect(
      await paths("Agent", {
        memory: { labelInstructions: `label with ${token}`, fields: [{ key: "k", label: `L ${token}` }] },
        language: { default: "en-IN", switchTrigger: `say ${token}` },
      }),
    ).toEqual(["memory.labelInstructions", "memory.fields[0].label", "language.switchTrigger"]);
    expect(
      await paths("KnowledgeBase", {
        documents: [{ name: "d", url: "https://bob:s3cretpass@docs.example.com/x" }],
      }),
    ).toEqual(["documents[0].url"]);
    expect(
      await paths("Widget", { theme: { logoUrl: "https://bob:s3cretpass@cdn.example.com/logo.png" } }),
    ).toEqual(["theme.logoUrl"]);
  });

  test("ids and the provider's own inputs are not text", async () => {
    expect(
      await paths("Agent", { __provider: `code ${token}`, knowledgeBaseIds: [token], adoptId: token }),
    ).toEqual([]);
  });

  test("the message shows where the credential is, not the text around it (the field may be a secret)", async () => {
    const [message] = await run(
      noSecretsInAgentText,
      args("Agent", { systemPrompt: `## Agent Purpose\nDoor code 4471. Deploy with ${token} now.` }),
    );
    expect(message).toContain("systemPrompt holds what looks like a GitHub Token");
    expect(message).toContain("at line 2, column 29");
    expect(message).not.toContain("4471");
    expect(message).not.toContain("now");
  });
});
