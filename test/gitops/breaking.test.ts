/**
 * "Breaks outside the service" on the previews recorded by breaking.e2e.test.ts (RECORD_PREVIEWS=1):
 * `breaking-all` holds every breaking change, `breaking-harmless` only their harmless neighbours.
 * Each case below edits one of them the way another program or preview would produce it: the
 * consequence kinds the e2e program does not make (a widget adopted or removed, a group disabled,
 * custom analysis off, a pin), values known only after apply, and a preview without `--show-sames`.
 */
import { describe, expect, test } from "vitest";
import { findBreaking } from "../../src/gitops/breaking";
import { type PreviewJson, type PreviewStep, recordedReuse, renderReport } from "../../src/gitops/report";
import { fixture, stepOf } from "./previews";

const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** The ids found in `preview`, as `voice-agent-diff` finds them (versions put back as recorded). */
const ids = (preview: PreviewJson): string[] =>
  findBreaking(preview, recordedReuse(preview)).map((b) => b.id);

/** `breaking-harmless` with one step changed by `edit`. */
function harmlessWith(name: string, edit: (step: PreviewStep) => void): PreviewJson {
  const preview = fixture("breaking-harmless");
  edit(stepOf(preview, name));
  return preview;
}

const inputs = (step: PreviewStep) => step.newState!.inputs!;

describe("breaks outside the service", () => {
  test("every kind the engine's preview holds, each line saying what breaks and for whom", () => {
    const found = findBreaking(fixture("breaking-all"), recordedReuse(fixture("breaking-all")));
    const what = Object.fromEntries(found.map((b) => [b.id, b.what]));
    expect(what["analysis:Quality/Resolved"]).toBe(
      'calls of `support` will publish `custom_analysis["Quality"]["Issue resolved"]` instead of ' +
        '`custom_analysis["Quality"]["Resolved"]` (the item is renamed): dashboards and data pipelines that read the old key get nothing from them.',
    );
    expect(what["analysis:Sales/Interested"]).toContain(
      '`custom_analysis["Revenue"]["Interested"]` instead of',
    );
    expect(what["analysis:Sales/Interested"]).toContain("(the group is renamed)");
    expect(what["analysis:Quality/Escalated"]).toContain("nothing instead of");
    expect(what["analysis:Quality/Escalated"]).toContain("(the item is disabled)");
    expect(what["analysis:Legacy/Old score"]).toContain("(the group is deleted)");
    expect(what["analysis:Survey/NPS"]).toContain("(the group is detached from `support`)");
    expect(what["variable:support/order_id"]).toContain("(`order_ref` is added)");
    expect(what["rollback:rollback"]).toContain("goes back to version 0 (live now: 1)");
    expect(what["widget-key:support"]).toContain("`rotateKeyTrigger` changed");
    expect(what["off-air:retired"]).toContain("`retired` goes off air");
    expect(Object.keys(what)).toHaveLength(14);
  });

  test("the harmless neighbours list nothing, and the report has no such section", () => {
    const preview = fixture("breaking-harmless");
    expect(ids(preview)).toEqual([]);
    expect(renderReport(preview)).not.toContain("Breaks outside the service");
  });

  test("the report puts the section first, one line per id, marking the acknowledged ones", () => {
    const md = renderReport(fixture("breaking-all"), {
      acknowledged: new Set(["widget-key:support", "off-air:retired"]),
    });
    const section = md.slice(0, md.indexOf("**5 to update"));
    expect(section).toMatch(/^### Voice agents: preview\n\n#### Breaks outside the service\n\n/);
    expect(section.match(/^- `[^`]+`/gm)).toHaveLength(14);
    expect(section).toContain(
      "- `widget-key:support` (acknowledged): the widget key of `support` is rotated",
    );
    expect(section).toContain("- `off-air:retired` (acknowledged): ");
    expect(section).toContain("- `widget-status:support`: the widget of `support` is paused");
  });

  test.each([
    ["support-agent-create", []],
    ["support-agent-no-change", []],
    ["support-agent-prompt-change", []],
    ["two-agents-add", []],
    ["two-agents-change", []],
    ["two-agents-revert", ["rollback:alpha"]],
    ["rollback-label", []],
    ["rollback-revert", ["rollback:reservations"]],
    ["rollback-delete", ["off-air:reservations"]],
  ])("the other recorded previews: %s lists %j", (name, expected) => {
    expect(ids(fixture(name))).toEqual(expected);
  });

  describe("analysis keys", () => {
    test("a group disabled: every item of it; its description edited beside: nothing more", () => {
      const preview = harmlessWith("quality", (s) => {
        inputs(s).enabled = false;
      });
      expect(ids(preview)).toEqual(["analysis:Quality/Escalated", "analysis:Quality/Resolved"]);
      expect(findBreaking(preview, new Map())[0]?.what).toContain("(the group is disabled)");
    });

    test("custom analysis switched off on the agent: every key it published", () => {
      const preview = harmlessWith("support", (s) => {
        inputs(s).call = { customAnalysisEnabled: false };
      });
      expect(ids(preview)).toEqual([
        "analysis:Legacy/Old score",
        "analysis:Quality/Escalated",
        "analysis:Quality/Resolved",
        "analysis:Sales/Interested",
        "analysis:Survey/NPS",
      ]);
      expect(findBreaking(preview, new Map())[0]?.what).toContain("(custom analysis is switched off)");
    });

    test("an adopted group (it may run for agents outside the stack) renamed, attached to no agent here", () => {
      const preview = harmlessWith("quality", (s) => {
        s.oldState!.outputs!.adoptDefault = true;
        inputs(s).name = "Quality checks";
      });
      preview.steps = preview.steps!.filter((s) => !s.urn.endsWith("Agent::support"));
      const [only, ...rest] = findBreaking(preview, new Map());
      expect(rest.map((b) => b.id)).toEqual(["analysis:Quality/Resolved"]);
      expect(only?.id).toBe("analysis:Quality/Escalated");
      expect(only?.what).toMatch(
        /^calls of every agent the group runs for will publish `custom_analysis\["Quality checks"\]/,
      );
    });

    test("a group's name, items or the attached list known only after apply raise no alarm", () => {
      for (const edit of [
        (s: PreviewStep) => {
          inputs(s).name = UNKNOWN;
        },
        (s: PreviewStep) => {
          inputs(s).items = UNKNOWN;
        },
      ])
        expect(ids(harmlessWith("quality", edit))).toEqual([]);
      expect(
        ids(
          harmlessWith("support", (s) => {
            inputs(s).analysisGroupIds = UNKNOWN;
          }),
        ),
      ).toEqual([]);
    });

    test("a group replaced (its new id unknown at preview) is still attached: only its rename is listed", () => {
      const preview = fixture("breaking-all");
      const sales = stepOf(preview, "sales");
      sales.op = "replace";
      const agent = inputs(stepOf(preview, "support"));
      const salesId = sales.oldState!.id;
      agent.analysisGroupIds = (agent.analysisGroupIds as string[]).map((id) =>
        id === salesId ? UNKNOWN : id,
      );
      expect(ids(preview).filter((id) => id.startsWith("analysis:"))).toEqual([
        "analysis:Legacy/Old score",
        "analysis:Quality/Escalated",
        "analysis:Quality/Resolved",
        "analysis:Sales/Interested",
        "analysis:Survey/NPS",
      ]);
      expect(
        findBreaking(preview, new Map()).find((b) => b.id === "analysis:Sales/Interested")?.what,
      ).toContain("(the group is renamed)");
    });
  });

  describe("widget", () => {
    test("adopting an existing agent's widget rotates its key, unless rotateKeyOnCreate is false", () => {
      const adopt = (rotate: boolean | undefined) =>
        harmlessWith("support-widget", (s) => {
          s.op = "create";
          s.oldState = null;
          if (rotate !== undefined) inputs(s).rotateKeyOnCreate = rotate;
        });
      expect(ids(adopt(undefined))).toEqual(["widget-key:support"]);
      expect(findBreaking(adopt(undefined), new Map())[0]?.what).toContain("adopts the agent's widget");
      expect(ids(adopt(false))).toEqual([]);
      expect(ids(adopt(UNKNOWN as unknown as boolean))).toEqual([]);
    });

    test("removing the Widget resource pauses it; an already paused one is not listed", () => {
      const remove = (status: string) =>
        harmlessWith("support-widget", (s) => {
          s.op = "delete";
          s.newState = null;
          s.oldState!.outputs!.status = status;
        });
      expect(ids(remove("active"))).toEqual(["widget-status:support"]);
      expect(findBreaking(remove("active"), new Map())[0]?.what).toContain("its Widget resource is removed");
      expect(ids(remove("paused"))).toEqual([]);
    });

    test("a trigger or origins known only after apply raise no alarm", () => {
      const preview = fixture("breaking-all");
      const widget = inputs(stepOf(preview, "support-widget"));
      widget.rotateKeyTrigger = UNKNOWN;
      widget.allowedOrigins = [UNKNOWN];
      expect(ids(preview).filter((id) => id.startsWith("widget"))).toEqual(["widget-status:support"]);
    });

    test("the agent is named from the widget's dependency when the preview does not show it", () => {
      const preview = harmlessWith("support-widget", (s) => {
        inputs(s).rotateKeyTrigger = "2";
      });
      preview.steps = preview.steps!.filter((s) => !s.urn.endsWith("Agent::support"));
      expect(ids(preview)).toEqual(["widget-key:support"]);
    });

    test("removing the trigger rotates too (the provider compares it with null)", () => {
      const preview = harmlessWith("support-widget", (s) => {
        delete inputs(s).rotateKeyTrigger;
      });
      expect(ids(preview)).toEqual(["widget-key:support"]);
    });
  });

  describe("agent", () => {
    test("agent-level changes count only when its configuration goes live (not for a draft left unpublished)", () => {
      const preview = fixture("breaking-all");
      const version = stepOf(preview, "support-live");
      inputs(version).live = false;
      expect(ids(preview)).toEqual([
        "analysis:Legacy/Old score",
        "analysis:Quality/Escalated",
        "analysis:Quality/Resolved",
        "analysis:Sales/Interested",
        "off-air:retired",
        "rollback:rollback",
        "widget-key:support",
        "widget-origin:support/https://help.example",
        "widget-status:support",
      ]);
    });

    test("transfer switched off: each of its numbers", () => {
      const preview = harmlessWith("support", (s) => {
        const tools = inputs(s).builtinTools as { transferCall: { enabled: boolean } };
        tools.transferCall.enabled = false;
      });
      // The two numbers the live agent has (the third is only being added).
      expect(ids(preview)).toEqual([
        "transfer-number:support/+15550100",
        "transfer-number:support/+15550101",
      ]);
    });

    test("the default language changed: the old default, unless it stays as an additional one", () => {
      const change = (additional: string[]) =>
        harmlessWith("support", (s) => {
          inputs(s).language = { default: "hi-IN", additional };
        });
      expect(ids(change(["ta-IN", "mr-IN"]))).toEqual(["language:support/en-IN"]);
      expect(ids(change(["en-IN", "ta-IN"]))).toEqual([]);
    });

    test("lists known only after apply raise no alarm; a field the program stops declaring keeps its value", () => {
      for (const edit of [
        (i: Record<string, unknown>) => {
          i.variables = [{ key: UNKNOWN }];
        },
        (i: Record<string, unknown>) => {
          i.knowledgeBaseIds = UNKNOWN;
        },
        (i: Record<string, unknown>) => {
          i.language = { default: "en-IN", additional: UNKNOWN };
        },
        (i: Record<string, unknown>) => {
          delete i.variables;
          delete i.builtinTools;
        },
      ])
        expect(ids(harmlessWith("support", (s) => edit(inputs(s))))).toEqual([]);
    });

    test("a pin to an earlier version is a rollback; a pin to the live one is not", () => {
      const pin = (version: number) =>
        harmlessWith("rollback-live", (s) => {
          inputs(s).pinnedVersion = version;
        });
      expect(ids(pin(0))).toEqual(["rollback:rollback"]);
      expect(ids(pin(1))).toEqual([]);
    });

    test("a transfer number respelt (spaces, dashes) is the same number, not a removed one", () => {
      const preview = harmlessWith("support", (s) => {
        const tools = inputs(s).builtinTools as { transferCall: { numbers: { number: string }[] } };
        tools.transferCall.numbers[0]!.number = "+1 555-0100";
        tools.transferCall.numbers[1]!.number = "00 1 555 0101";
      });
      expect(ids(preview)).toEqual([]);
    });

    /** `breaking-harmless` whose `rollback-live` step keeps its state and is renamed `rollback-pinned`. */
    function renamedVersion(edit: (inputs: Record<string, unknown>) => void): PreviewJson {
      const preview = fixture("breaking-harmless");
      const step = stepOf(preview, "rollback-live");
      const gone: PreviewStep = { op: "delete", urn: step.urn, oldState: step.oldState, newState: null };
      step.op = "create";
      step.urn = step.urn.replace(/rollback-live$/, "rollback-pinned");
      step.oldState = null;
      edit(inputs(step));
      preview.steps!.push(gone);
      return preview;
    }

    test("a new or renamed AgentVersion pinned below the live version is a rollback", () => {
      expect(
        ids(
          renamedVersion((i) => {
            i.pinnedVersion = 0;
          }),
        ),
      ).toEqual(["rollback:rollback"]);
      expect(
        ids(
          renamedVersion((i) => {
            i.pinnedVersion = 1;
          }),
        ),
      ).toEqual([]);
      expect(
        ids(
          renamedVersion((i) => {
            i.pinnedVersion = 0;
            i.live = false;
          }),
        ),
      ).toEqual([]);
    });

    test("a pin lowered in place (an update step) is a rollback; raised, or unchanged, is not", () => {
      const pinned = (before: number, after: number) => {
        const preview = fixture("breaking-harmless");
        const agent = stepOf(preview, "rollback");
        agent.newState!.inputs = { ...agent.oldState!.inputs };
        const step = stepOf(preview, "rollback-live");
        step.op = "update";
        Object.assign(step.oldState!.inputs!, { pinnedVersion: before });
        Object.assign(step.oldState!.outputs!, { pinnedVersion: before, version: before, isLive: true });
        step.newState!.inputs = { ...step.oldState!.inputs, pinnedVersion: after };
        return preview;
      };
      expect(ids(pinned(1, 0))).toEqual(["rollback:rollback"]);
      expect(findBreaking(pinned(1, 0), new Map())[0]?.what).toContain(
        "goes back to version 0 (live now: 1)",
      );
      expect(ids(pinned(0, 1))).toEqual([]);
      expect(ids(pinned(1, 1))).toEqual([]);
    });

    test("an earlier version put back live in place (live: false -> true) is a rollback", () => {
      const preview = fixture("breaking-harmless");
      const agent = stepOf(preview, "rollback");
      agent.newState!.inputs = { ...agent.oldState!.inputs };
      agent.oldState!.outputs!.liveVersion = 1;
      const step = stepOf(preview, "rollback-live");
      step.op = "update";
      Object.assign(step.oldState!.inputs!, { live: false });
      Object.assign(step.oldState!.outputs!, { live: false, isLive: false, version: 0 });
      step.newState!.inputs = { ...step.oldState!.inputs, live: true };
      expect(ids(preview)).toEqual(["rollback:rollback"]);
      expect(findBreaking(preview, new Map())[0]?.what).toContain("goes back to version 0 (live now: 1)");
      // Nothing live before: going live is not a rollback.
      agent.oldState!.outputs!.liveVersion = null;
      expect(ids(preview)).toEqual([]);
    });

    test("--resolve's answer counts: a version found in the service is a rollback", () => {
      const preview = fixture("breaking-harmless");
      const urn = stepOf(preview, "rollback-live").urn;
      expect(findBreaking(preview, new Map([[urn, 0]])).map((b) => b.id)).toEqual(["rollback:rollback"]);
    });
  });

  test("a preview without --show-sames: an unchanged group or knowledge base detached is named by its id", () => {
    const preview = fixture("breaking-all");
    const survey = stepOf(preview, "survey").oldState!.id!;
    const pricing = stepOf(preview, "pricing").oldState!.id!;
    preview.steps = preview.steps!.filter((s) => s.op !== "same");
    const found = findBreaking(preview, recordedReuse(preview));
    expect(found.map((b) => b.id)).toContain(`analysis:${survey}/*`);
    expect(found.map((b) => b.id)).toContain(`knowledge-base:support/${pricing}`);
    expect(found.find((b) => b.id === `analysis:${survey}/*`)?.what).toContain("--show-sames");
    expect(found.map((b) => b.id)).not.toContain("analysis:Survey/NPS");
  });
});
