/**
 * Promotion between two workspaces, as a user's project runs it: the package installed from its
 * tarball, the program type-checked, under our language host (the `e2e` project;
 * vitest.config.mts). Staging's stack and production's stack each have their own
 * workspace key; production reaches staging's with `promote.apiKey` (a secret in its config).
 * Knowledge bases are compared by name, so the two workspaces' ids differ and nothing is refused;
 * the key to staging's workspace is nowhere in the state or the output. A proof that falls short
 * shows as a warning on the AgentVersion in the preview (which passes).
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { closeDispatchers } from "../../src/client";
import { DEFAULT_API_KEY, type RunningEmulator, startEmulator } from "../../src/emulator";
import { PulumiProject } from "../support/pulumi";

const STAGING_KEY = "va_test_staging_workspace";

const PROGRAM = `
import * as pulumi from "@pulumi/pulumi";
import * as va from "pulumi-voice-agent";

const cfg = new pulumi.Config("app");
const kb = new va.KnowledgeBase("faq", { name: "FAQ", documents: [{ name: "hours", text: "Open 9 to 6." }] });
const agent = new va.Agent("support", {
  name: "Support",
  systemPrompt: "## Agent Purpose\\nHelp customers with orders.\\n\\n## Call Flow\\nAsk for the order number.",
  knowledgeBaseIds: [kb.id],
});
const promoted = cfg.getBoolean("promote") === true;
const minCalls = cfg.getNumber("minCalls");
const live = new va.AgentVersion("support-live", {
  agent,
  ...(promoted
    ? {
        promote: {
          from: new pulumi.StackReference("organization/workspaces/staging").requireOutput("agentId") as pulumi.Output<string>,
          apiKey: cfg.requireSecret("stagingKey"),
          soakMinutes: 0.01,
          ...(minCalls !== undefined ? { minCalls } : {}),
        },
      }
    : {}),
});
export const agentId = agent.agentId;
export const digest = agent.configDigest;
export const promotion = live.promotion;
`;

let emu: RunningEmulator;
let project: PulumiProject;

beforeAll(async () => {
  emu = await startEmulator({
    port: 0,
    workspaces: [
      { name: "production", key: DEFAULT_API_KEY },
      { name: "staging", key: STAGING_KEY },
    ],
  });
  project = await PulumiProject.create({ program: PROGRAM, name: "workspaces", installed: true });
});

afterAll(async () => {
  project?.cleanup();
  await closeDispatchers();
  await emu?.close();
});

test("production promotes from staging's workspace with promote.apiKey; the key stays a secret", async () => {
  const staging = await project.withStack("staging", { "voice-agent:baseUrl": emu.url });
  await staging.pulumi(["config", "set", "--secret", "voice-agent:apiKey", STAGING_KEY]);
  await staging.up();
  // Let staging's live version soak past 0.01 minutes.
  await new Promise((r) => setTimeout(r, 700));

  const prod = await project.withStack("prod", { "voice-agent:baseUrl": emu.url, "app:promote": "true" });
  await prod.pulumi(["config", "set", "--secret", "voice-agent:apiKey", DEFAULT_API_KEY]);
  await prod.pulumi(["config", "set", "--secret", "app:stagingKey", STAGING_KEY]);
  // Before staging has taken a call: the preview passes and says what `up` would refuse.
  await prod.pulumi(["config", "set", "app:minCalls", "1"]);
  const early = await prod.preview();
  expect(`${early.stdout}${early.stderr}`).toMatch(
    /warning: promotion from agent [0-9a-f-]+ version 0 not yet proven: 0 of 1 calls \(origins [a-z, ]+\); `pulumi up` will refuse until it is/,
  );
  // minCalls defaults to 1: this test proves the two workspaces, not the calls.
  await prod.pulumi(["config", "set", "app:minCalls", "0"]);
  const up = await prod.upAndSettle({ quiet: true });

  const [s, p] = [await staging.outputs(), await prod.outputs()];
  expect(p.agentId).not.toBe(s.agentId);
  // Same configuration in two workspaces (knowledge-base ids differ): the same digest.
  expect(p.digest).toBe(s.digest);
  expect(p.promotion).toMatchObject({ fromAgentId: s.agentId, fromVersion: 0, configDigest: s.digest });
  expect(`${up.stdout}${up.stderr}`).not.toContain(STAGING_KEY);
  expect(await prod.exportState()).not.toContain(STAGING_KEY);
}, 300_000);
