/**
 * The pull-request report, fed with `pulumi preview --json` documents recorded from real runs of the
 * examples (test/e2e/examples.e2e.test.ts with RECORD_PREVIEWS=1).
 */
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, test } from "vitest";
import type { VoiceAgentClient } from "../../src/client";
import {
  findReusedVersions,
  type PreviewJson,
  parsePreview,
  recordedReuse,
  renderReport,
} from "../../src/gitops/report";
import { toWire } from "../../src/provider/normalize";
import { declaredConfig } from "../../src/resources/agent/projection";
import { foldedDraft } from "../../src/resources/agentVersion/layout";
import { REPO_ROOT } from "../support/pulumi";
import { codeSpans, fencedBlocks, section } from "./markdown";
import { fixture, fixtureNames, stepOf } from "./previews";

describe("voice-agent-diff report", () => {
  test("creation: every resource to create, with the declared fields", () => {
    const md = renderReport(fixture("support-agent-create"));
    expect(md).toMatch(/\*\*\d+ to create\*\*/);
    expect(md).toContain("#### + Agent `support`: create");
    expect(md).toContain("#### + AgentVersion `support-live`: create");
    expect(md).toMatch(/\| `voice\.voiceId` \| +\| `"meera"` \|/);
    expect(md).toMatch(/\| `numbers\.inboundPhone` \| +\| `"\+918065550101"` \|/);
    expect(md).toMatch(/Publishes the agent's draft as version \*\*0\*\* and puts it live/);
  });

  test("a prompt change: the prompt's line diff and the version that will go live", () => {
    const md = renderReport(fixture("support-agent-prompt-change"));
    expect(md).toContain("#### ~ Agent `support`: update");
    expect(md).toContain("| `systemPrompt` |");
    expect(md).toContain("```diff");
    expect(md).toMatch(/^-.*arrange returns\.$/m);
    expect(md).toMatch(/^\+.*arrange returns and exchanges\.$/m);
    // The version changes in place (one engine step): no replacement.
    expect(md).toContain("#### ~ AgentVersion `support-live`: update\n");
    expect(md).toContain(
      "Publishes the agent's draft as version **1** and puts it live (replacing live version 0)",
    );
    expect(md).not.toContain("`agentId`");
  });

  test("a revert names the version it can bring back when the service is asked", () => {
    const preview = fixture("rollback-revert");
    const urn = preview.steps!.find((s) => s.urn.endsWith("::reservations-live"))!.urn;
    const md = renderReport(preview, { reused: new Map([[urn, 0]]) });
    expect(md).toContain("Published version **0** already holds exactly this configuration");
    expect(md).toContain("(a rollback)");
    expect(md).toMatch(/^-Ask about dietary needs\.$/m);
  });

  test("a revert names the version the stack recorded, without asking the service", () => {
    const md = renderReport(fixture("rollback-revert"));
    expect(md).toContain(
      "A revert: this stack published version **0** with this configuration, so it is put back live",
    );
    expect(md).toContain("(a rollback)");
  });

  test("--resolve reads the recorded version and the versions published since, not the whole history", async () => {
    const preview = fixture("rollback-revert");
    const step = preview.steps!.find((s) => s.urn.endsWith("::reservations-live"))!;
    const agentInputs = preview.steps!.find((s) => s.urn.endsWith("::reservations"))!.newState!.inputs!;
    /** A service holding versions 0..9 (2..9 published in the dashboard) and the open draft 10. */
    const service = (holding: number) => {
      const reads: number[] = [];
      const client = {
        versions: {
          async *list() {
            for (let v = 10; v >= 0; v--) yield { version: v, is_published: v < 10 };
          },
        },
        agents: {
          async get(_id: string, { version }: { version: number }) {
            reads.push(version);
            const config =
              version === holding ? agentInputs : { ...agentInputs, systemPrompt: `v${version}` };
            return { ...(toWire(declaredConfig(config)) as object), version, is_published: true };
          },
        },
      };
      return { reads, client: client as unknown as VoiceAgentClient };
    };
    // The stack recorded version 0 for this configuration: one read.
    let s0 = service(0);
    expect((await findReusedVersions(preview, s0.client)).get(step.urn)).toBe(0);
    expect(s0.reads).toEqual([0]);
    // Had version 0 not held it (a stale record), version 5 (published in the dashboard) is found:
    // after the recorded one, the versions above the newest recorded (1), newest first; never 1.
    s0 = service(5);
    expect((await findReusedVersions(preview, s0.client)).get(step.urn)).toBe(5);
    expect(s0.reads).toEqual([0, 9, 8, 7, 6, 5]);
  });

  test("a new configuration is not mistaken for a revert", () => {
    const md = renderReport(fixture("support-agent-prompt-change"));
    expect(md).not.toContain("A revert");
    expect(md).toContain("Publishes the agent's draft as version **1**");
  });

  test("an in-place update of the version: a label", () => {
    const md = renderReport(fixture("rollback-label"));
    expect(md).toContain("#### ~ AgentVersion `reservations-live`: update");
    expect(md).toContain("relabels version 0 to `2026.11.2`");
    expect(md).not.toContain("Agent `reservations`");
  });

  test("no change says so in one line", () => {
    expect(renderReport(fixture("support-agent-no-change"))).toBe(
      "### Voice agents: preview\n\nNo changes: the service already matches this commit.\n",
    );
  });

  test("deletion: what goes, and that history stays", () => {
    const md = renderReport(fixture("rollback-delete"));
    expect(md).toContain("#### - Agent `reservations`: delete");
    expect(md).toContain("#### - AgentVersion `reservations-live`: delete");
    expect(md).toContain("stays published in the service's history");
  });

  test("warnings and errors of the preview are listed", () => {
    const preview = fixture("rollback-label");
    preview.diagnostics = [
      { severity: "warning", message: "voice 'x' will be withdrawn\n", urn: "urn:a::b" },
    ];
    expect(renderReport(preview)).toContain("- **warning** `b`: voice 'x' will be withdrawn");
  });

  test("text from the engine goes into Markdown escaped: no markup, no HTML, one line", () => {
    const preview = fixture("rollback-label");
    preview.diagnostics = [
      {
        severity: "error",
        message:
          "bad <img src=x onerror=alert(1)> **bold** [link](https://evil.example) `code` a|b\n# heading",
        urn: "urn:a::b",
      },
    ];
    expect(renderReport(preview, { title: "Voice agents: *prod*" })).toContain(
      "- **error** `b`: bad \\<img src=x onerror=alert(1)\\> \\*\\*bold\\*\\* \\[link\\](https://evil.example) \\`code\\` a\\|b \\# heading",
    );
    expect(renderReport(preview, { title: "Voice agents: *prod*" })).toMatch(
      /^### Voice agents: \\\*prod\\\*\n/,
    );
  });

  describe("two agents in one stack: each version is matched to its own agent", () => {
    test("an agent changed (publishes 7) and an agent added (publishes its first version, 0)", () => {
      const md = renderReport(fixture("two-agents-add"));
      expect(section(md, "alpha-live")).toContain(
        "Publishes the agent's draft as version **7** and puts it live (replacing live version 6)",
      );
      expect(section(md, "beta-live")).toContain(
        "Publishes the agent's draft as version **0** and puts it live.",
      );
    });

    test("both agents changed: 8 for one, 1 for the other", () => {
      const md = renderReport(fixture("two-agents-change"));
      expect(section(md, "alpha-live")).toContain(
        "version **8** and puts it live (replacing live version 7)",
      );
      expect(section(md, "beta-live")).toContain("version **1** and puts it live (replacing live version 0)");
    });

    test("matched by the agent's id when the preview has no property dependencies", () => {
      const preview = fixture("two-agents-change");
      for (const step of preview.steps ?? []) {
        for (const state of [step.oldState, step.newState]) if (state) delete state.propertyDependencies;
      }
      const md = renderReport(preview);
      expect(section(md, "alpha-live")).toContain("version **8**");
      expect(section(md, "beta-live")).toContain("version **1**");
    });

    test("a revert of one agent next to a change of the other", () => {
      const preview = fixture("two-agents-revert");
      const md = renderReport(preview);
      expect(section(md, "alpha-live")).toContain("A revert: this stack published version **7**");
      expect(section(md, "beta-live")).toContain("Publishes the agent's draft as version **2**");
      expect(section(md, "beta-live")).not.toContain("revert: this stack");
      expect([...recordedReuse(preview).keys()]).toEqual([stepOf(preview, "alpha-live").urn]);
    });
  });

  describe("text that holds backticks stays inside its code", () => {
    /** rollback-revert, the prompt holding a fenced example (and a longer backtick run) near the change. */
    function withCodeInPrompt(): PreviewJson {
      const preview = fixture("rollback-revert");
      const agent = stepOf(preview, "reservations");
      const prompt = (last: string) =>
        "## Agent Purpose\nBook tables.\n\n## Call Flow\nEnd like this:\n```\n<end_call>\n```\n" +
        `Never say \`\`\`\`.\n${last}\n`;
      agent.oldState!.inputs!.systemPrompt = prompt("Say goodbye.");
      agent.newState!.inputs!.systemPrompt = prompt("Say goodbye warmly.");
      return preview;
    }

    test("the prompt's line diff: one fence, longer than any backtick run of the prompt", () => {
      const md = renderReport(withCodeInPrompt());
      const diffs = fencedBlocks(md).filter((b) => b.info === "diff");
      expect(diffs).toHaveLength(1);
      expect(diffs[0]!.lines).toEqual([
        "@@ -7,4 +7,4 @@",
        " <end_call>",
        " ```",
        " Never say ````.",
        "-Say goodbye.",
        "+Say goodbye warmly.",
      ]);
      // Nothing after the diff is swallowed into a code block.
      expect(md).toMatch(/^#### ~ AgentVersion `reservations-live`/m);
      expect(fencedBlocks(md.slice(md.indexOf("#### ~ AgentVersion")))).toEqual([]);
    });

    test("inline code: labels, values and names keep their backticks", () => {
      const label = fixture("rollback-label");
      stepOf(label, "reservations-live").newState!.inputs!.label = "`v2` (hotfix)";
      const md = renderReport(label);
      const line = md.split("\n").find((l) => l.startsWith("In place: relabels version 0 to"))!;
      expect(codeSpans(line)).toEqual(["`v2` (hotfix)"]);
      const row = md.split("\n").find((l) => l.startsWith("| `` `label` ``") || l.startsWith("| `label`"))!;
      expect(codeSpans(row)).toEqual(["label", '"`v2` (hotfix)"']);

      const revert = withCodeInPrompt();
      stepOf(revert, "reservations").newState!.inputs!.name = "Tables ``for`` two | four";
      const nameRow = renderReport(revert)
        .split("\n")
        .find((l) => l.startsWith("| `name`"))!;
      // A pipe inside a table cell is escaped for the table, not for the code.
      expect(codeSpans(nameRow.replace(/\\\|/g, "|"))).toEqual([
        "name",
        '"Reservations"',
        '"Tables ``for`` two | four"',
      ]);
    });
  });

  describe("only the program's arguments are listed", () => {
    /** Inputs that are plumbing: what the provider computes or copies, never what a program writes. */
    const PLUMBING = [
      "__provider",
      "contentHash",
      "knownVersions",
      "knownVersion",
      "knownUpTo",
      "draftVersion",
      "documentRevision",
      "draftPublished",
      "draftHash",
      "latestVersion",
      "liveVersion",
      "dashboardUrl",
    ];
    /** An AgentVersion's arguments are `agent` and `version`; these are the provider's names. */
    const VERSION_PLUMBING = [...PLUMBING, "agentId", "pinnedVersion"];

    /** The names a report lists as changed (table rows, replacement causes) that are not arguments. */
    function plumbingListed(md: string): string[] {
      const found: string[] = [];
      let internal = PLUMBING;
      for (const line of md.split("\n")) {
        if (line.startsWith("#### "))
          internal = line.includes(" AgentVersion ") ? VERSION_PLUMBING : PLUMBING;
        const names: string[] = [];
        if (line.startsWith("| ")) names.push((codeSpans(line)[0] ?? "").split(/[.[]/)[0] as string);
        const because = / \(because of (.*)\)$/.exec(line);
        if (line.startsWith("#### ") && because) names.push(...codeSpans(because[1] as string));
        found.push(...names.filter((n) => internal.includes(n)));
      }
      return found;
    }

    test.each(fixtureNames())("%s", (name) => {
      expect(plumbingListed(renderReport(fixture(name)))).toEqual([]);
    });

    test("a new version because of the agent's configuration says what it publishes, not the hash", () => {
      const md = renderReport(fixture("two-agents-change"));
      expect(md).toContain("#### ~ AgentVersion `beta-live`: update\n");
      expect(md).toMatch(
        /Publishes the agent's draft as version \*\*\d+\*\* and puts it live \(replacing live version \d+\)/,
      );
      expect(md).not.toContain("contentHash");
    });

    test("outputs kept among the inputs are not listed as changed", () => {
      const preview = fixture("support-agent-prompt-change");
      const agent = stepOf(preview, "support");
      Object.assign(agent.oldState!.inputs!, {
        draftPublished: true,
        draftHash: "sha256:9b1f0c1e0e4a4a6c8f7e2d3b5a6c7d8e",
        latestVersion: 0,
        knownVersions: {},
        dashboardUrl: "https://dashboard.voice-agent.example/agents/x?version=0",
      });
      Object.assign(agent.newState!.inputs!, {
        draftPublished: false,
        draftHash: "sha256:2c4e6a8b0d1f3e5a7c9b1d3f5e7a9c0b",
        latestVersion: 1,
        knownVersions: { "sha256:0f95522da4496adba29fa762a610dd88": 0 },
        dashboardUrl: "https://dashboard.voice-agent.example/agents/x?version=1",
      });
      const md = renderReport(preview);
      expect(md).toContain("| `systemPrompt` |");
      expect(plumbingListed(md)).toEqual([]);
    });

    test("a preview of the layout that hides the bookkeeping from the engine's diff reads the same", () => {
      // What this release's checked inputs hold: the AgentVersion's bookkeeping under `__draft`, the
      // Agent's hash as `__contentHash` (names the engine never displays).
      for (const name of ["two-agents-change", "support-agent-prompt-change"]) {
        const raw = JSON.parse(
          readFileSync(path.join(REPO_ROOT, `test/fixtures/previews/${name}.json`), "utf8"),
        );
        for (const step of raw.steps ?? []) {
          for (const state of [step.oldState, step.newState]) {
            if (!state?.inputs) continue;
            if (state.type.endsWith(":AgentVersion")) state.inputs = foldedDraft(state.inputs);
            else if (state.type.endsWith(":Agent") && state.inputs.contentHash !== undefined) {
              state.inputs.__contentHash = state.inputs.contentHash;
              delete state.inputs.contentHash;
            }
          }
        }
        expect(renderReport(parsePreview(raw))).toBe(renderReport(fixture(name)));
      }
    });

    test("a pinned version is listed under the argument's name, `version`", () => {
      const preview = fixture("rollback-label");
      const step = stepOf(preview, "reservations-live");
      step.newState!.inputs!.pinnedVersion = 3;
      const md = renderReport(preview);
      expect(md).toMatch(/^\| `version` \| \*\(not set\)\* \| `3` \|$/m);
    });
  });

  test("what is not a preview document is refused, naming where", () => {
    expect(() => parsePreview({ steps: [{ op: "create" }] })).toThrow(
      /not a `pulumi preview --json` document at steps\.0\.urn/,
    );
    expect(() => parsePreview([])).toThrow(/not a `pulumi preview --json` document/);
  });
});
