/**
 * The drift alarm on refresh-preview documents built from what the provider's own `create`
 * recorded, through the compiled command (dist/gitops/cli.js) against the emulator: an argument
 * the state holds as a secret is never compared nor shown; a resource the refresh preview found
 * gone is reported without a read; a `pulumi preview --json` document is refused.
 */
import { execFile } from "node:child_process";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import * as path from "node:path";
import { describe, expect, test } from "vitest";
import type { VoiceAgentClient } from "../../src/client";
import { DEFAULT_API_KEY, type RunningEmulator } from "../../src/emulator";
import { assertRefresh } from "../../src/gitops/drift";
import { parsePreview } from "../../src/gitops/report";
import { agentProvider } from "../../src/resources/agent/provider";
import { widgetProvider } from "../../src/resources/widget/provider";
import { checkAndCreate, emulatorForFile, testContext } from "../provider/support";
import { REPO_ROOT } from "../support/pulumi";

const CLI = path.join(REPO_ROOT, "dist/gitops/cli.js");

let emu: RunningEmulator;
let client: VoiceAgentClient;
emulatorForFile({}, (e, c) => {
  emu = e;
  client = c;
});

/** `voice-agent-diff --drift` on `refresh` (stdin), launched without blocking this process's emulator. */
function drift(refresh: object, url = emu.url): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...process.env, VOICE_AGENT_BASE_URL: url, VOICE_AGENT_API_KEY: DEFAULT_API_KEY };
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [CLI, "--drift"], { env }, (err, stdout, stderr) => {
      resolve({ code: err ? Number(err.code) : 0, stdout, stderr });
    });
    child.stdin?.end(JSON.stringify(refresh));
  });
}

const TYPE = "pulumi-nodejs:dynamic/voice-agent:Agent";
const URN = `urn:pulumi:prod::agents::${TYPE}::support`;
/** An agent id the service has never issued. */
const MISSING = "00000000-0000-4000-8000-000000000000";
/** The stack's own step, which a refresh preview lists first. */
const STACK_STEP = {
  op: "refresh",
  urn: "urn:pulumi:prod::agents::pulumi:pulumi:Stack::agents-prod",
  oldState: { type: "pulumi:pulumi:Stack" },
  newState: { type: "pulumi:pulumi:Stack" },
};

/** One step of a refresh preview recording `inputs` and `outputs` for a resource of `type`. */
function stepOf(op: string, id: string, inputs: object, outputs: object, type = TYPE, urn = URN) {
  const state = { type, id, inputs, outputs };
  return { op, urn, oldState: state, newState: state };
}

/** A refresh-preview document with one Agent step recording `inputs` and `outputs`. */
function refreshOf(op: string, id: string, inputs: object, outputs: object) {
  return { steps: [STACK_STEP, stepOf(op, id, inputs, outputs)], changeSummary: { update: 1 } };
}

describe("voice-agent-diff --drift", () => {
  test("an argument recorded as a secret is neither compared nor shown; the others are", async () => {
    const h = agentProvider(testContext);
    const { id, inputs, outs } = await checkAndCreate(h, {
      name: "Secretive",
      systemPrompt: "## Agent Purpose\nThe secret plan.\n",
    });
    await client.agents.patch(id, {
      name: "Renamed",
      system_prompt: "## Agent Purpose\nAnother secret plan.\n",
    });
    // The refresh JSON shows a secret as "[secret]", in the inputs and in the outputs.
    const hidden = { systemPrompt: "[secret]" };
    const r = await drift(refreshOf("refresh", id, { ...inputs, ...hidden }, { ...outs, ...hidden }));
    expect(r.stderr).toBe("");
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(
      /^### Voice agents: drift of stack `prod`\n\n\*\*1 resource changed outside Pulumi\*\* \(1 read\)/,
    );
    expect(r.stdout).toContain('| `name` | `"Secretive"` | `"Renamed"` |');
    expect(r.stdout).toContain(
      "Not compared (the stack holds them as secrets, which the refresh JSON hides): `support.systemPrompt`.",
    );
    expect(r.stdout).not.toContain("secret plan");
  });

  test("a resource the refresh preview found gone is reported deleted, without a read", async () => {
    // No such agent in the service: a read would fail; the step's `delete` says it already.
    const r = await drift(refreshOf("delete", "no-such-agent", { name: "Gone" }, { name: "Gone" }));
    expect(r.stderr).toBe("");
    expect(r.code).toBe(3);
    expect(r.stdout).toContain(
      "#### - Agent `support`: deleted outside Pulumi\n\nThe service no longer has it (id `no-such-agent`)",
    );
  });

  test("a destroy preview (the Stack step a delete) is refused, not reported as deletions", async () => {
    const stack = { ...STACK_STEP, op: "delete", newState: null };
    const gone = stepOf("delete", "some-agent", { name: "Gone" }, { name: "Gone" });
    expect(() => assertRefresh(parsePreview({ steps: [stack, gone] }))).toThrow(
      'not the output of `pulumi refresh --preview-only --json`: the stack\'s step is a "delete", not a refresh',
    );
    const r = await drift({ steps: [gone] });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("no step of the stack itself (`pulumi:pulumi:Stack`) that is a refresh");
    expect(r.stdout).toBe("");
  });

  test("a resource Pulumi's refresh found but the service answers 404 for: a credentials error, not drift", async () => {
    const r = await drift(refreshOf("refresh", MISSING, { name: "Gone" }, { name: "Gone" }));
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`Agent \`support\` (${MISSING})`);
    expect(r.stderr).toContain("VOICE_AGENT_BASE_URL and VOICE_AGENT_API_KEY");
  });

  test("nothing answers at the address: said once, naming it, within seconds, nothing reported", async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, "127.0.0.1", () => {
        const p = (s.address() as AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const two = {
      steps: [
        STACK_STEP,
        stepOf("refresh", MISSING, { name: "A" }, { name: "A" }),
        stepOf("refresh", MISSING, { name: "B" }, { name: "B" }, TYPE, `${URN}-b`),
      ],
    };
    const started = Date.now();
    const r = await drift(two, `http://127.0.0.1:${port}`);
    // About 3 s on an idle machine (2 s of retries); the client's retry budget was 120 s.
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      `voice-agent-diff: connection refused at http://127.0.0.1:${port}: is the service or the emulator running? Nothing was read.\n`,
    );
  });

  test("a widget key rotated in the dashboard is drift", async () => {
    const agentId = (await client.agents.create({ name: "Widget drift" })).id;
    const { id, inputs, outs } = await checkAndCreate(widgetProvider(testContext), {
      agentId,
      allowedOrigins: ["https://shop.example"],
    });
    await client.widget.rotateKey(agentId);
    const type = "pulumi-nodejs:dynamic/voice-agent:Widget";
    const urn = `urn:pulumi:prod::agents::${type}::support-widget`;
    // The refresh JSON hides the secret key; its prefix is plain.
    const hidden = { ...outs, publicKey: "[secret]" };
    const r = await drift({ steps: [STACK_STEP, stepOf("refresh", id, inputs, hidden, type, urn)] });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(3);
    expect(r.stdout).toContain("#### ~ Widget `support-widget`: changed outside Pulumi");
    expect(r.stdout).toContain(
      `The widget's public key was rotated outside Pulumi (prefix \`${outs.publicKeyPrefix}\` → \``,
    );
  });

  test("one resource that cannot be read: the others are still reported, the failure named, exit 5", async () => {
    const h = agentProvider(testContext);
    const { id, inputs, outs } = await checkAndCreate(h, { name: "Half read" });
    await client.agents.patch(id, { name: "Renamed half" });
    const type = "pulumi-nodejs:dynamic/voice-agent:AgentVersion";
    const broken = stepOf(
      "refresh",
      "not-a-version-id",
      {},
      {},
      type,
      `urn:pulumi:prod::agents::${type}::broken`,
    );
    const r = await drift({ steps: [STACK_STEP, stepOf("refresh", id, inputs, outs), broken] });
    expect(r.code).toBe(5);
    expect(r.stdout).toContain('| `name` | `"Half read"` | `"Renamed half"` |');
    expect(r.stdout).toContain("**Incomplete: 1 resource could not be read**");
    expect(r.stdout).toContain("- AgentVersion `broken` (not-a-version-id): AgentVersion: the id");
    expect(r.stderr).toContain("could not read AgentVersion `broken`");
  });

  test("a `pulumi preview --json` document is refused, naming its first step that is no refresh", () => {
    const preview = parsePreview({
      steps: [
        { op: "same", urn: URN },
        { op: "update", urn: URN },
      ],
    });
    expect(() => assertRefresh(preview)).toThrow(
      'not the output of `pulumi refresh --preview-only --json`: step `support` is a "same", not a refresh',
    );
  });
});
