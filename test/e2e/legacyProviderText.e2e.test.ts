/**
 * A stack a linked checkout deployed before the registry moved to `src/resources/` holds provider
 * texts that require `dist/provider/kinds/<kind>.js` (by a path relative to the project folder).
 * `refresh` and `destroy` load the text from the state, and so does every resource an `up` leaves
 * unchanged: the build keeps that path as an alias of the kind's module (scripts/legacy-kinds.js),
 * so such a stack refreshes, previews and destroys as any other.
 */
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { DEFAULT_API_KEY, startEmulator } from "../../src/emulator";
import { PulumiProject } from "../support/pulumi";

let emu: Awaited<ReturnType<typeof startEmulator>>;
beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
});
afterAll(async () => {
  await emu?.close();
});

test("a state whose provider texts name dist/provider/kinds/<kind>.js refreshes and destroys", async () => {
  const p = await PulumiProject.create({
    program: `
import * as va from "pulumi-voice-agent";
const agent = new va.Agent("legacy", { name: "Legacy", systemPrompt: "## Agent Purpose\\nHelp." });
new va.AgentVersion("legacy-live", { agent });
export const agentId = agent.agentId;
`,
    config: { "voice-agent:baseUrl": emu.url },
    secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
  });
  try {
    await p.upAndSettle();
    // The state as the earlier layout wrote it: every provider text, in inputs and outputs.
    const state = (await p.exportState(false)).replace(
      /dist\/resources\/(agent|agentVersion)\/kind\.js/g,
      "dist/provider/kinds/$1.js",
    );
    expect(state).toContain("dist/provider/kinds/agentVersion.js");
    const file = path.join(p.dir, "legacy-state.json");
    writeFileSync(file, state);
    await p.pulumi(["stack", "import", "--file", file]);
    await p.refresh({ expectNoChanges: true });
    await p.preview({ expectNoChanges: true });
    await p.destroy();
  } finally {
    p.cleanup();
  }
}, 300_000);
