/**
 * `production-promoted`, called as `@pulumi/policy` calls it: a production AgentVersion that
 * publishes without `promote` is flagged; a pin, a `promote`, a value unknown at preview or a
 * stack that is not production is not.
 */
import type { ResourceValidationArgs } from "@pulumi/policy";
import { unknownCheckingProxy } from "@pulumi/policy";
import { expect, test } from "vitest";
import { TYPES } from "../../src/policy/common";
import { productionPromoted } from "../../src/policy/promoted";

const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

async function run(props: Record<string, unknown>, stack: string, config: object = {}): Promise<string[]> {
  const args = {
    type: TYPES.AgentVersion,
    name: "support-live",
    urn: `urn:pulumi:${stack}::app::${TYPES.AgentVersion}::support-live`,
    props: unknownCheckingProxy(props),
    getConfig: <T extends object>() => config as T,
  } as unknown as ResourceValidationArgs;
  const found: string[] = [];
  const validate = productionPromoted.validateResource;
  if (!validate || Array.isArray(validate)) throw new Error("one validation expected");
  await validate(args, (message) => found.push(message));
  return found;
}

const publishing = { agentId: "a1", contentHash: "sha256:x", live: true };

test("a production AgentVersion that publishes without promote is flagged, saying what to add", async () => {
  expect(await run(publishing, "prod")).toEqual([
    expect.stringMatching(
      /AgentVersion "support-live" publishes .* without `promote`.*Add `promote: \{ from:/,
    ),
  ]);
});

test("promote set, a pin, a value unknown at preview, or a stack that is not production: nothing", async () => {
  expect(await run({ ...publishing, promote: { from: "a0" } }, "prod")).toEqual([]);
  expect(await run({ ...publishing, promote: UNKNOWN }, "prod")).toEqual([]);
  expect(await run({ ...publishing, pinnedVersion: 3 }, "prod")).toEqual([]);
  expect(await run(publishing, "staging")).toEqual([]);
  expect(await run(publishing, "live", { productionStacks: ["live"] })).toHaveLength(1);
});
