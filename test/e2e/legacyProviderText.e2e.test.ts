/**
 * A stack a linked checkout deployed before the registry moved to `src/resources/` holds provider
 * texts that require `dist/provider/kinds/<kind>.js` (by a path relative to the project folder).
 * `refresh` and `destroy` load the text from the state, and so does every resource an `up` leaves
 * unchanged: the build keeps that path as an alias of the kind's module (scripts/legacy-kinds.js),
 * so such a stack refreshes, previews and destroys as any other.
 *
 * Earlier releases also wrote the provider text in the closure serializer's long form (a 300-byte
 * wrapper around the same `require`); this release writes one short `require`. A state holding the
 * long form previews and refreshes without changes (the text is bookkeeping: no diff reads it), and
 * its next deploy publishes as any other.
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

/** The closure serializer's form of the text that requires `target`, as earlier releases wrote it. */
function serializerForm(target: string): string {
  return [
    "exports.handler = __f0;",
    `const provider = require(${target});`,
    "",
    "function __f0() {",
    "  return (function() {",
    "    with({ this: undefined, arguments: undefined }) {",
    "",
    "return () => provider;",
    "",
    "    }",
    "  }).apply(undefined, undefined).apply(this, arguments);",
    "}",
    "",
  ].join("\n");
}

test("a state whose provider texts are the serializer's long form previews no change, refreshes and deploys", async () => {
  const program = (purpose: string) => `
import * as va from "pulumi-voice-agent";
const agent = new va.Agent("earlier", { name: "Earlier", systemPrompt: "## Agent Purpose\\n${purpose}" });
const live = new va.AgentVersion("earlier-live", { agent });
export const liveVersion = live.liveVersion;
`;
  const p = await PulumiProject.create({
    program: program("Help."),
    config: { "voice-agent:baseUrl": emu.url },
    secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
  });
  try {
    await p.upAndSettle();
    const state = JSON.parse(await p.exportState(false));
    let rewritten = 0;
    for (const r of state.deployment.resources) {
      for (const props of [r.inputs, r.outputs]) {
        const text = props?.__provider;
        if (typeof text !== "string") continue;
        const target = /^exports\.handler = \(\) => require\((.*)\);\n$/.exec(text)?.[1];
        expect(target, text).toBeDefined();
        props.__provider = serializerForm(target as string);
        rewritten++;
      }
    }
    expect(rewritten).toBe(4);
    const file = path.join(p.dir, "earlier-state.json");
    writeFileSync(file, JSON.stringify(state));
    await p.pulumi(["stack", "import", "--file", file]);
    await p.preview({ expectNoChanges: true });
    await p.refresh({ expectNoChanges: true });
    // The next change deploys as any other: the new text and the earlier one side by side meanwhile.
    p.setProgram(program("Help with returns."));
    await p.upAndSettle();
    expect(await p.outputs()).toMatchObject({ liveVersion: 1 });
    await p.destroy();
  } finally {
    p.cleanup();
  }
}, 300_000);
