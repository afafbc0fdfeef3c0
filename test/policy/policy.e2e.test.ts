/**
 * The policy pack through the real engine (docs/policy.md): each policy's violations at each
 * enforcement level, the `--policy-pack-config` file, production and other stacks, values unknown
 * at preview, and `up` stopped with nothing written. Programs carry several resources and
 * violations each, so few CLI launches cover it all. The pack runs under the language host the
 * harness puts on PATH (`PVA_CACHE_DIR` chooses the toolchain).
 */
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { DEFAULT_API_KEY, type RunningEmulator, startEmulator } from "../../src/emulator";
import { clearRequestLog, requestLog } from "../support/control";
import { expectQuiet, installedPolicyPack, PulumiProject, type RunResult } from "../support/pulumi";

// The pack as users run it: from the package installed out of its tarball.
let PACK: string;

// Credentials that look real to secretlint's rules; none is a live credential.
const GITHUB_TOKEN = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
const SLACK_TOKEN = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx";
const DB_URL = "postgres://app:hunter2pass@db.example.com:5432/app";

/** Every policy broken once (production-only ones apart), plus an agent whose prompt is unknown at preview. */
const violating = `
import * as va from "pulumi-voice-agent";

const kb = new va.KnowledgeBase("faq", {
  name: "FAQ",
  documents: [{ name: "hours", text: "Open 9 to 6." }, { name: "ops", text: "Deploy token ${GITHUB_TOKEN} for the bot." }],
});
const support = new va.Agent("support", {
  name: "Support",
  systemPrompt: "## Agent Purpose\\nHelp customers. Slack: ${SLACK_TOKEN}",
  greeting: { message: "Hello, how can I help?" },
  call: { maxDurationMinutes: 45 },
  builtinTools: { transferCall: { busyMessage: { mode: "custom", text: "Busy. DB ${DB_URL}" } } },
  variables: [{ key: "channel", defaultValue: "web" }, { key: "order_id", defaultValue: "none" }],
});
new va.AgentVersion("support-live", { agent: support });
// Active, and no origin listed.
new va.Widget("site", { agentId: support.agentId, status: "active" });
// Unknown at preview (it waits for the knowledge base): never reported then.
const later = new va.Agent("later", {
  name: "Later",
  systemPrompt: kb.id.apply(() => "## Agent Purpose\\nHelp. Token ${GITHUB_TOKEN}"),
  greeting: { message: kb.id.apply(() => "Hi") },
  call: { recordingEnabled: false },
});
// Accepted outside production.
new va.Widget("later-site", { agentId: later.agentId, allowedOrigins: ["http://localhost:3000", "https://10.0.0.5"] });
`;

/** A production stack done right: versions live, fallbacks, disclosure, public https origins. */
const passingProduction = `
import * as va from "pulumi-voice-agent";

const support = new va.Agent("support", {
  name: "Support",
  systemPrompt: "## Agent Purpose\\nHelp customers track orders.",
  greeting: { message: "Hello! This call is recorded for quality." },
  language: { default: "en-IN" },
  model: { model: "gpt-4o-mini", fallback: { model: "claude-3-5-haiku" } },
  voice: { provider: "sarvam", voiceId: "meera", fallback: { provider: "elevenlabs", voiceId: "rachel" } },
  transcriber: { model: "saarika:v2", fallback: { model: "nova-3" } },
  call: { maxDurationMinutes: 20 },
});
new va.AgentVersion("support-live", { agent: support });
new va.Widget("site", { agentId: support.agentId, allowedOrigins: ["https://www.example.com"] });
`;

/** Production mistakes: a draft-only agent, no fallbacks, an unpublished version, internal origins. */
const productionMistakes = `
import * as va from "pulumi-voice-agent";

const draftOnly = new va.Agent("draft-only", {
  name: "Draft only",
  systemPrompt: "## Agent Purpose\\nHelp.",
  greeting: { message: "This call is recorded." },
});
new va.AgentVersion("draft-only-unpublished", { agent: draftOnly, live: false });
const live = new va.Agent("live", {
  name: "Live",
  systemPrompt: "## Agent Purpose\\nHelp.",
  greeting: { message: "This call is recorded." },
});
new va.AgentVersion("live-version", { agent: live });
new va.Widget("site", {
  agentId: live.agentId,
  allowedOrigins: ["https://www.example.com", "http://localhost:3000", "https://10.0.0.5"],
});
`;

let emu: RunningEmulator;
let env: Record<string, string>;
beforeAll(async () => {
  PACK = installedPolicyPack();
  emu = await startEmulator({ port: 0 });
  env = { VOICE_AGENT_BASE_URL: emu.url, VOICE_AGENT_API_KEY: DEFAULT_API_KEY };
});
afterAll(async () => {
  await emu?.close();
});

function output(result: RunResult): string {
  return `${result.stdout}\n${result.stderr}`;
}

/** The policy lines of a run: `[mandatory]  no-secrets-in-agent-text  (…: faq)` and the messages under them. */
function violations(result: RunResult, policy: string): string[] {
  const text = output(result);
  const found: string[] = [];
  const re = new RegExp(
    `- \\[(advisory|mandatory)\\]\\s+${policy}\\s+\\(([^)]*)\\)\\n\\s+[^\\n]*\\n\\s+([^\\n]*)`,
    "g",
  );
  for (const m of text.matchAll(re)) found.push(`${m[1]} ${m[2]?.split(": ").pop()}: ${m[3]}`);
  return found;
}

/** Write requests the service received since the log was cleared. */
async function writes(): Promise<string[]> {
  return (await requestLog(emu))
    .filter((e) => e.method !== "GET" && !e.path.startsWith("/_control"))
    .map((e) => `${e.method} ${e.path}`);
}

function packConfig(project: PulumiProject, name: string, config: object): string {
  const file = path.join(project.dir, name);
  writeFileSync(file, JSON.stringify(config));
  return file;
}

describe("a non-production stack", () => {
  let app: PulumiProject;
  beforeAll(async () => {
    app = await PulumiProject.create({ program: violating, name: "policy", env });
  });

  test("mandatory violations fail preview and stop up with nothing written; advisory ones warn", async () => {
    const preview = await app.pulumi(["preview", "--policy-pack", PACK], { allowFailure: true });
    expect(preview.code).not.toBe(0);
    const text = output(preview);

    expect(violations(preview, "no-secrets-in-agent-text").sort()).toEqual([
      expect.stringMatching(
        /^mandatory faq: KnowledgeBase "faq": documents\[1\]\.text holds what looks like a GitHub Token \(secretlint rule github\) at line 1, column 14\. /,
      ),
      expect.stringMatching(
        /^mandatory support: Agent "support": builtinTools\.transferCall\.busyMessage\.text holds what looks like a PostgreSQL connection string .* at line 1, column \d+\. /,
      ),
      expect.stringMatching(
        /^mandatory support: Agent "support": systemPrompt holds what looks like a slack token .* at line 2, column 24\. /,
      ),
    ]);
    // Never the secret itself, nor the text around it, anywhere in the output.
    for (const secret of [GITHUB_TOKEN, SLACK_TOKEN, "hunter2pass", "for the bot"])
      expect(text).not.toContain(secret);

    expect(violations(preview, "widget-origins")).toEqual([
      expect.stringMatching(/^mandatory site: Widget "site": allowedOrigins lists no origin/),
    ]);
    expect(violations(preview, "recording-disclosure")).toEqual([
      expect.stringMatching(
        /^advisory support: Agent "support" records calls .* greeting\.message does not say so/,
      ),
    ]);
    expect(violations(preview, "call-duration-limit")).toEqual([
      expect.stringMatching(
        /^advisory support: Agent "support": call\.maxDurationMinutes is 45, above the limit of 30 minutes/,
      ),
    ]);
    // Not a production stack; and the agent whose texts are unknown at preview is not judged on them.
    expect(text).not.toMatch(/production-fallbacks|production-goes-live-by-version/);
    expect(text.slice(text.indexOf("Policies:"))).not.toMatch(/later|can't run policy/);

    await clearRequestLog(emu);
    const up = await app.pulumi(["up", "--yes", "--policy-pack", PACK], { allowFailure: true });
    expect(up.code).not.toBe(0);
    expect(output(up)).toMatch(/no-secrets-in-agent-text/);
    expect(await writes()).toEqual([]);
  }, 180_000);

  test("the --policy-pack-config file sets enforcement levels and parameters", async () => {
    // Mandatory ones disabled, one advisory parameter met: preview passes, the other advisory
    // policy warns, the disabled ones are silent.
    const relaxed = packConfig(app, "relaxed.json", {
      "no-secrets-in-agent-text": "disabled",
      "widget-origins": { enforcementLevel: "disabled" },
      "recording-disclosure": { pattern: "how can i help" },
    });
    const passed = await app.pulumi(["preview", "--policy-pack", PACK, "--policy-pack-config", relaxed]);
    expect(passed.code).toBe(0);
    expect(violations(passed, "call-duration-limit")).toEqual([
      expect.stringMatching(
        /^advisory support: .*call\.maxDurationMinutes is 45, above the limit of 30 minutes/,
      ),
    ]);
    expect(output(passed)).not.toMatch(
      /\[mandatory\]|no-secrets-in-agent-text|widget-origins|recording-disclosure/,
    );

    // An advisory policy made mandatory, with a lower limit, fails alone.
    const strict = packConfig(app, "strict.json", {
      "no-secrets-in-agent-text": "disabled",
      "widget-origins": "disabled",
      "recording-disclosure": "disabled",
      "call-duration-limit": { enforcementLevel: "mandatory", maxMinutes: 40 },
    });
    const failed = await app.pulumi(["preview", "--policy-pack", PACK, "--policy-pack-config", strict], {
      allowFailure: true,
    });
    expect(failed.code).not.toBe(0);
    expect(violations(failed, "call-duration-limit")).toEqual([
      expect.stringMatching(
        /^mandatory support: .*call\.maxDurationMinutes is 45, above the limit of 40 minutes/,
      ),
    ]);
    expect(output(failed)).not.toMatch(/no-secrets-in-agent-text|widget-origins|recording-disclosure/);

    // A misspelt parameter fails the preview, naming it; a misspelt policy name is dropped by the
    // engine (docs/policy.md): "recordng-disclosure" does not make recording-disclosure mandatory.
    const misspelt = packConfig(app, "misspelt.json", {
      "no-secrets-in-agent-text": "disabled",
      "widget-origins": "disabled",
      "call-duration-limit": { maxMinute: 60 },
      "recordng-disclosure": "mandatory",
    });
    const refused = await app.pulumi(["preview", "--policy-pack", PACK, "--policy-pack-config", misspelt], {
      allowFailure: true,
    });
    expect(refused.code).not.toBe(0);
    expect(output(refused)).toContain(
      'call-duration-limit: unknown parameter "maxMinute" in the policy pack configuration (its parameters: maxMinutes)',
    );
  }, 180_000);
});

describe("production stacks", () => {
  test("a production stack done right deploys; its mistakes fail preview there and pass elsewhere", async () => {
    const base = await PulumiProject.create({ program: passingProduction, name: "policyprod", env });
    const prod = await base.withStack("prod");
    // Promotion needs a staging stack to promote from: test/e2e/promote.e2e.test.ts covers it.
    const unpromoted = packConfig(prod, "unpromoted.json", { "production-promoted": "disabled" });
    const up = await prod.pulumi(["up", "--yes", "--policy-pack", PACK, "--policy-pack-config", unpromoted]);
    expect(output(up)).not.toMatch(/\[(advisory|mandatory)\]/);
    expectQuiet(up);

    prod.setProgram(productionMistakes);
    const onProd = await base.withStack("prod-eu");
    const preview = await onProd.pulumi(["preview", "--policy-pack", PACK], { allowFailure: true });
    expect(preview.code).not.toBe(0);
    expect(violations(preview, "production-goes-live-by-version")).toEqual([
      expect.stringMatching(/^mandatory draft-only: Agent "draft-only" has no AgentVersion putting it live/),
    ]);
    expect(violations(preview, "widget-origins")).toEqual([
      expect.stringMatching(
        /allowedOrigins\[1\] "http:\/\/localhost:3000" is a loopback, localhost or private-network origin/,
      ),
      expect.stringMatching(
        /allowedOrigins\[2\] "https:\/\/10\.0\.0\.5" is a loopback, localhost or private-network origin/,
      ),
    ]);
    expect(violations(preview, "production-fallbacks").sort()).toEqual(
      ["draft-only", "live"].flatMap((name) =>
        ["model", "transcriber", "voice"].map((field) =>
          expect.stringMatching(
            new RegExp(`^advisory ${name}: Agent "${name}": ${field}\\.fallback is not set`),
          ),
        ),
      ),
    );

    // The same program passes on a stack `productionStacks` does not name…
    const staging = await base.withStack("staging");
    const relaxed = await staging.pulumi(["preview", "--policy-pack", PACK]);
    expect(output(relaxed)).not.toMatch(/\[(advisory|mandatory)\]/);
    // … unless the configuration file says staging is production too.
    const config = packConfig(prod, "staging.json", {
      "production-goes-live-by-version": { productionStacks: ["stag*"] },
      "widget-origins": "disabled",
      "production-fallbacks": "disabled",
    });
    const named = await staging.pulumi(["preview", "--policy-pack", PACK, "--policy-pack-config", config], {
      allowFailure: true,
    });
    expect(named.code).not.toBe(0);
    expect(violations(named, "production-goes-live-by-version")).toHaveLength(1);
  }, 240_000);
});

test("a violation that appears when an unknown value resolves stops up before that resource is written", async () => {
  const program = `
import * as va from "pulumi-voice-agent";
const kb = new va.KnowledgeBase("faq", { name: "FAQ", documents: [{ name: "hours", text: "Open 9 to 6." }] });
new va.Agent("later", {
  name: "Later",
  systemPrompt: kb.id.apply(() => "## Agent Purpose\\nHelp. Token ${GITHUB_TOKEN}"),
  greeting: { message: "This call is recorded." },
});
`;
  const app = await PulumiProject.create({ program, name: "policyunknown", env });
  await clearRequestLog(emu);
  const up = await app.pulumi(["up", "--yes", "--policy-pack", PACK], { allowFailure: true });
  expect(up.code).not.toBe(0);
  expect(violations(up, "no-secrets-in-agent-text")).toEqual([
    expect.stringMatching(
      /^mandatory later: Agent "later": systemPrompt holds what looks like a GitHub Token/,
    ),
  ]);
  expect(output(up)).not.toContain(GITHUB_TOKEN);
  const written = await writes();
  expect(written).toContain("POST /v1/knowledge-bases");
  expect(written.filter((w) => /agents/.test(w))).toEqual([]);
}, 180_000);

test("the pack installed from the packed tarball runs from node_modules in a fresh project", async () => {
  const program = `
import * as va from "pulumi-voice-agent";
new va.Agent("support", {
  name: "Support",
  systemPrompt: "## Agent Purpose\\nHelp.",
  greeting: { message: "Hi! Slack ${SLACK_TOKEN}" },
  call: { maxDurationMinutes: 45 },
});
`;
  const app = await PulumiProject.create({ program, name: "policyinstalled", env, installed: true });
  const pack = path.join(app.dir, "..", "node_modules", "pulumi-voice-agent", "policy");
  const preview = await app.pulumi(["preview", "--policy-pack", pack], { allowFailure: true });
  expect(preview.code).not.toBe(0);
  expect(output(preview)).toMatch(
    /pulumi-voice-agent@v\d+\.\d+\.\d+ \(local: [^)]*pulumi-voice-agent\/policy\)/,
  );
  expect(violations(preview, "no-secrets-in-agent-text")).toEqual([
    expect.stringMatching(
      /^mandatory support: Agent "support": greeting\.message holds what looks like a slack token .* at line 1, column 11\. /,
    ),
  ]);
  expect(violations(preview, "call-duration-limit")).toHaveLength(1);
  expect(output(preview)).not.toContain(SLACK_TOKEN);
  expect(output(preview)).not.toMatch(/\(node:\d+\)|ExperimentalWarning|npm install/);
}, 240_000);
