/**
 * The pull-request report on a stack with two agents, through the real Pulumi CLI against the
 * emulator: each AgentVersion's section must speak of its own agent. The report of each preview is
 * checked against what the following `pulumi up` really does.
 *
 * With RECORD_PREVIEWS=1 the `pulumi preview --json` documents are written to
 * test/fixtures/previews/two-agents-*.json, where report.test.ts reads them.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { closeDispatchers, VoiceAgentClient } from "../../src/client";
import { DEFAULT_API_KEY, startEmulator } from "../../src/emulator";
import { findReusedVersions, renderReport } from "../../src/gitops/report";
import { PulumiProject } from "../support/pulumi";
import { section } from "./markdown";
import { preview } from "./previews";

type Emulator = Awaited<ReturnType<typeof startEmulator>>;
let emu: Emulator;

const prompt = (purpose: string) =>
  `## Agent Purpose\n${purpose}\n\n## Call Flow\nAnswer the question, then use <end_call>.\n`;

/** Alpha (adopted, with a history) and, when `beta` is given, a second agent Beta. */
function program(alpha: { id: string; purpose: string }, beta?: { purpose: string }): string {
  const second = beta
    ? `
const beta = new va.Agent("beta", {
  name: "Beta",
  systemPrompt: ${JSON.stringify(prompt(beta.purpose))},
  builtinTools: { endCall: { enabled: true } },
});
const betaLive = new va.AgentVersion("beta-live", { agent: beta, label: "beta" });
export const betaVersion = betaLive.version;
export const betaOrigin = betaLive.origin;`
    : "";
  return `
import * as va from "pulumi-voice-agent";
const alpha = new va.Agent("alpha", {
  name: "Alpha",
  adoptId: ${JSON.stringify(alpha.id)},
  systemPrompt: ${JSON.stringify(prompt(alpha.purpose))},
  builtinTools: { endCall: { enabled: true } },
});
const alphaLive = new va.AgentVersion("alpha-live", { agent: alpha, label: "alpha" });
export const alphaVersion = alphaLive.version;
export const alphaOrigin = alphaLive.origin;${second}
`;
}

beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
});
afterAll(async () => {
  await closeDispatchers();
  await emu?.close();
});

describe("voice-agent-diff on a stack with two agents", () => {
  test("each version's section names the version its own agent will publish or bring back", async () => {
    const client = new VoiceAgentClient({ baseUrl: emu.url, apiKey: DEFAULT_API_KEY });
    // Alpha has a history: versions 0 to 5, published in the dashboard before the stack adopts it.
    let alpha = await client.agents.create({ name: "Alpha", system_prompt: prompt("Dashboard edit 0.") });
    for (let v = 0; v < 6; v++) {
      if (v > 0)
        alpha = await client.agents.patch(alpha.id, { system_prompt: prompt(`Dashboard edit ${v}.`) });
      alpha = await client.versions.publish(alpha.id, alpha.version);
    }
    expect(alpha.version).toBe(5);

    const p = await PulumiProject.create({
      program: program({ id: alpha.id, purpose: "Answer questions about Alpha." }),
      config: { "voice-agent:baseUrl": emu.url },
      secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
    });
    try {
      await p.upAndSettle();
      expect(await p.outputs()).toMatchObject({ alphaVersion: 6, alphaOrigin: "published" });

      // Alpha changes (publishes 7) and Beta is added (publishes its first version, 0).
      p.setProgram(
        program({ id: alpha.id, purpose: "Answer questions about Alpha, politely." }, { purpose: "Beta 1." }),
      );
      let md = renderReport(await preview(p, "two-agents-add", emu.url));
      expect(section(md, "alpha-live")).toContain("Publishes the agent's draft as version **7**");
      expect(section(md, "beta-live")).toContain("Publishes the agent's draft as version **0**");
      await p.upAndSettle();
      expect(await p.outputs()).toMatchObject({ alphaVersion: 7, betaVersion: 0 });

      // Both change: Alpha publishes 8, Beta 1.
      p.setProgram(
        program({ id: alpha.id, purpose: "Answer questions about Alpha, briefly." }, { purpose: "Beta 2." }),
      );
      md = renderReport(await preview(p, "two-agents-change", emu.url));
      expect(section(md, "alpha-live")).toContain("Publishes the agent's draft as version **8**");
      expect(section(md, "beta-live")).toContain("Publishes the agent's draft as version **1**");
      await p.upAndSettle();
      expect(await p.outputs()).toMatchObject({ alphaVersion: 8, betaVersion: 1 });

      // Alpha is reverted (version 7 comes back), Beta changes again (publishes 2).
      p.setProgram(
        program({ id: alpha.id, purpose: "Answer questions about Alpha, politely." }, { purpose: "Beta 3." }),
      );
      const doc = await preview(p, "two-agents-revert", emu.url);
      md = renderReport(doc);
      expect(section(md, "alpha-live")).toContain("this stack published version **7**");
      expect(section(md, "beta-live")).toContain("Publishes the agent's draft as version **2**");
      const reused = await findReusedVersions(doc, client);
      expect([...reused].map(([urn, v]) => [urn.replace(/.*::/, ""), v])).toEqual([["alpha-live", 7]]);
      await p.upAndSettle();
      expect(await p.outputs()).toMatchObject({
        alphaVersion: 7,
        alphaOrigin: "reused",
        betaVersion: 2,
        betaOrigin: "published",
      });
    } finally {
      p.cleanup();
    }
  }, 600_000);
});
