/**
 * The `voice-agent-diff` command as a CI job runs it: the compiled dist/gitops/cli.js (built by
 * scripts/setup.sh or `npx tsc -p tsconfig.build.json`), its output, messages and exit codes.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, test } from "vitest";
import { DEFAULT_API_KEY } from "../../src/emulator";
import { findBreaking } from "../../src/gitops/breaking";
import { HELP, OPTIONS } from "../../src/gitops/main";
import { recordedReuse } from "../../src/gitops/report";
import { REPO_ROOT } from "../support/pulumi";
import { fixture } from "./previews";

const CLI = path.join(REPO_ROOT, "dist/gitops/cli.js");
const FIXTURE = path.join(REPO_ROOT, "test/fixtures/previews/support-agent-prompt-change.json");
/** Every kind of break outside the service, and only harmless neighbours (breaking.e2e.test.ts). */
const BREAKING = path.join(REPO_ROOT, "test/fixtures/previews/breaking-all.json");
const HARMLESS = path.join(REPO_ROOT, "test/fixtures/previews/breaking-harmless.json");

function run(args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv; node?: string } = {}) {
  const r = spawnSync(opts.node ?? process.execPath, [CLI, ...args], {
    input: opts.input ?? "",
    encoding: "utf8",
    env: {
      ...process.env,
      VOICE_AGENT_BASE_URL: "",
      VOICE_AGENT_API_KEY: "",
      VOICE_AGENT_ACKNOWLEDGE: "",
      ...opts.env,
    },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A system Node.js older than 22 (outside scripts/env.sh), when the machine has one. */
const OLD_NODE = ["/usr/bin/node", "/usr/local/bin/node"].find((node) => {
  if (!existsSync(node)) return false;
  const version = spawnSync(node, ["--version"], { encoding: "utf8" }).stdout.trim();
  return /^v(\d+)\./.test(version) && Number(version.slice(1).split(".")[0]) < 22;
});

describe("voice-agent-diff", () => {
  test("reads a file or stdin and writes the report", () => {
    const fromFile = run([FIXTURE]);
    expect(fromFile.code).toBe(0);
    expect(fromFile.stdout).toContain("#### ~ Agent `support`: update");
    const fromStdin = run(["--title", "Voice agents: prod"], { input: readFileSync(FIXTURE, "utf8") });
    expect(fromStdin.code).toBe(0);
    expect(fromStdin.stdout).toMatch(/^### Voice agents: prod\n/);
    expect(run([`--title=prod`, FIXTURE]).stdout).toMatch(/^### prod\n/);
  });

  test("--help lists every option, the environment it reads, the exit codes and an example", () => {
    const r = run(["--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(HELP);
    expect(run(["-h"]).stdout).toBe(HELP);
    for (const [name, option] of Object.entries(OPTIONS)) {
      expect(r.stdout).toContain("short" in option ? `-${option.short}, --${name}` : `--${name}`);
    }
    for (const env of [
      "VOICE_AGENT_ACKNOWLEDGE",
      "VOICE_AGENT_BASE_URL",
      "VOICE_AGENT_API_KEY",
      "VOICE_AGENT_RATE_LIMIT",
      "VOICE_AGENT_DEBUG",
    ])
      expect(r.stdout).toContain(env);
    expect(r.stdout).toMatch(
      /Exit codes:\n {2}0 .*\n {2}1 [\s\S]*\n {2}2 [\s\S]*\n {2}3 {2}with --drift: [\s\S]*\n {2}4 /,
    );
    expect(r.stdout).toMatch(/Examples:\n {2}pulumi preview .*--json > preview\.json\n {2}voice-agent-diff /);
  });

  test.each([
    [["--bogus", "preview.json"], "unknown option '--bogus'"],
    [["-x"], "unknown option '-x'"],
    [["--title"], "option '--title <value>' argument missing"],
    [["--resolve=yes", "preview.json"], "option '--resolve' does not take an argument"],
    [["a.json", "b.json"], "one preview file at most, got 2: a.json b.json"],
    [["--drift", "--resolve"], "--resolve is for a preview; --drift always asks the service"],
    [
      ["--drift", "--fail-on-breaking"],
      "--fail-on-breaking and --acknowledge are for a preview, not --drift",
    ],
    [["--watch", "--drift"], "--drift and --watch are two commands: give one"],
    [
      ["--watch", "--resolve"],
      "--resolve, --fail-on-breaking and --acknowledge are for a preview, not --watch",
    ],
    [["--dry-run", "preview.json"], "--every, --dry-run and --json are options of --watch"],
    [["--watch", "--every", "0"], '--every: a number of seconds > 0, got "0"'],
    [["--watch", "--every", "soon"], '--every: a number of seconds > 0, got "soon"'],
  ])("refuses %j with exit code 2 and a clear message", (args, message) => {
    const r = run(args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(`voice-agent-diff: ${message}\nRun voice-agent-diff --help for the usage.\n`);
  });

  test("input that cannot be read or is not preview JSON: exit code 1, one line, no stack trace", () => {
    const missing = run(["no-such-preview.json"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^voice-agent-diff: cannot read no-such-preview\.json: ENOENT[^\n]*\n$/);
    const text = run([], { input: "not json" });
    expect(text.code).toBe(1);
    expect(text.stderr).toBe("voice-agent-diff: stdin is not the JSON of `pulumi preview --json`\n");
    const shape = run([], { input: '{"steps": {}}' });
    expect(shape.code).toBe(1);
    expect(shape.stderr).toMatch(/^voice-agent-diff: not a `pulumi preview --json` document at steps: /);
  });

  test("--resolve names what it lacks, and never prints the API key", () => {
    const none = run(["--resolve", FIXTURE]);
    expect(none.code).toBe(1);
    expect(none.stderr).toBe(
      "voice-agent-diff: --resolve asks the service: give --stack NAME to read voice-agent:baseUrl and voice-agent:apiKey from that stack's configuration, or set VOICE_AGENT_BASE_URL and VOICE_AGENT_API_KEY\n",
    );
    const insecure = run(["--resolve", FIXTURE], {
      env: { VOICE_AGENT_BASE_URL: "http://voice.example.com", VOICE_AGENT_API_KEY: DEFAULT_API_KEY },
    });
    expect(insecure.code).toBe(1);
    expect(insecure.stderr).toMatch(/^voice-agent-diff: --resolve: .*http/);
    expect(insecure.stderr + insecure.stdout).not.toContain(DEFAULT_API_KEY);
  });

  describe("--fail-on-breaking", () => {
    // The ids breaking.test.ts checks one by one (14, every kind).
    const preview = fixture("breaking-all");
    const ALL = findBreaking(preview, recordedReuse(preview)).map((b) => b.id);

    test("the fixture holds every kind of break", () => {
      expect(new Set(ALL.map((id) => id.split(":")[0]))).toEqual(
        new Set([
          "analysis",
          "knowledge-base",
          "language",
          "off-air",
          "rollback",
          "transfer-number",
          "variable",
          "widget-key",
          "widget-origin",
          "widget-status",
        ]),
      );
    });

    test("exit code 4 while a break is not acknowledged: the report on stdout, the open ids on stderr", () => {
      const r = run(["--fail-on-breaking", "--acknowledge", "widget-key:support", BREAKING]);
      expect(r.code).toBe(4);
      expect(r.stdout).toMatch(/^### Voice agents: preview\n\n#### Breaks outside the service\n/);
      expect(r.stdout).toContain("- `widget-key:support` (acknowledged): ");
      expect(r.stdout).toContain("- `off-air:retired`: ");
      const open = ALL.filter((id) => id !== "widget-key:support");
      expect(r.stderr).toBe(
        `voice-agent-diff: ${open.length} breaks outside the service are not acknowledged:\n` +
          open.map((id) => `  ${id}\n`).join("") +
          "Acknowledge each intended one with --acknowledge ID (repeatable) or VOICE_AGENT_ACKNOWLEDGE (comma-separated ids).\n",
      );
    });

    test("exit code 0 once every break is acknowledged, by options and the environment together", () => {
      const [first, second, ...rest] = ALL;
      const r = run(["--fail-on-breaking", "--acknowledge", first!, `--acknowledge=${second}`, BREAKING], {
        env: { VOICE_AGENT_ACKNOWLEDGE: ` ${rest.join(" , ")} ,` },
      });
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      for (const id of ALL) expect(r.stdout).toContain(`- \`${id}\` (acknowledged): `);
    });

    test("without the option, or with only harmless changes: exit code 0; a stale acknowledgement is a note", () => {
      const plain = run([BREAKING]);
      expect(plain.code).toBe(0);
      expect(plain.stderr).toBe("");
      expect(plain.stdout).toContain("#### Breaks outside the service");
      const harmless = run(["--fail-on-breaking", "--acknowledge", "widget-key:support", HARMLESS]);
      expect(harmless.code).toBe(0);
      expect(harmless.stdout).not.toContain("Breaks outside the service");
      expect(harmless.stderr).toBe(
        "voice-agent-diff: note: acknowledged but not in this preview: widget-key:support\n",
      );
    });
  });

  test("a document made with --show-secrets is refused: its secrets would go into the comment", () => {
    const preview = JSON.parse(readFileSync(BREAKING, "utf8"));
    const widget = preview.steps.find((s: { urn: string }) => s.urn.endsWith("Widget::support-widget"));
    expect(widget.oldState.outputs.publicKey).toBe("[secret]");
    widget.oldState.outputs.publicKey = "pk_live_0123456789abcdef";
    for (const args of [[], ["--drift"]]) {
      const r = run(args, { input: JSON.stringify(preview) });
      expect(r.code).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain(
        "was made with --show-secrets (the publicKey of Widget `support-widget` is shown)",
      );
      expect(r.stderr).not.toContain("pk_live");
    }
  });

  test("--drift: the refresh preview's shape, the credentials it lacks, the key never printed", () => {
    // A refresh preview of a stack holding no voice-agent resource: nothing to read.
    const empty = JSON.stringify({
      steps: [{ op: "refresh", urn: "urn:pulumi:prod::agents::pulumi:pulumi:Stack::agents-prod" }],
      changeSummary: { same: 1 },
    });
    const none = run(["--drift"], { input: empty });
    expect(none.code).toBe(1);
    expect(none.stderr).toBe(
      "voice-agent-diff: --drift asks the service: give --stack NAME to read voice-agent:baseUrl and voice-agent:apiKey from that stack's configuration, or set VOICE_AGENT_BASE_URL and VOICE_AGENT_API_KEY\n",
    );
    const creds = { VOICE_AGENT_BASE_URL: "https://voice.example.com", VOICE_AGENT_API_KEY: DEFAULT_API_KEY };
    const clean = run(["--drift"], { input: empty, env: creds });
    expect(clean.code).toBe(0);
    expect(clean.stdout).toBe(
      "### Voice agents: drift of stack `prod`\n\nNo drift: the service holds what the stack recorded " +
        "(0 voice-agent resources read). Pulumi's refresh preview counts 1 unchanged.\n",
    );
    for (const r of [none, clean]) expect(r.stdout + r.stderr).not.toContain(DEFAULT_API_KEY);

    const preview = run(["--drift", FIXTURE], { env: creds });
    expect(preview.code).toBe(1);
    expect(preview.stderr).toMatch(
      /^voice-agent-diff: not the output of `pulumi refresh --preview-only --json`: step `[^`]+` is a "\w+", not a refresh/,
    );
    const shape = run(["--drift"], { input: '{"steps": {}}', env: creds });
    expect(shape.code).toBe(1);
    expect(shape.stderr).toMatch(
      /^voice-agent-diff: not a `pulumi refresh --preview-only --json` document at steps: /,
    );
  });

  test.skipIf(!OLD_NODE)("on Node.js 20 it says which Node.js it needs, without a stack trace", () => {
    const r = run(["--help"], { node: OLD_NODE as string });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/^voice-agent-diff: needs Node\.js >= 22\.19; this is Node\.js 20\.\d+\.\d+\. /);
    expect(r.stderr.split("\n")).toHaveLength(2);
  });
});
