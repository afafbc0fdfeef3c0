/**
 * After go-live in the pull-request report: an AgentVersion going live with `watch` shows its
 * bounds; an agent whose version was taken off air says so in the next report that touches it, with
 * what the deploy does about it (stays off air, back live on `reinstate`, a new configuration).
 */
import { describe, expect, test } from "vitest";
import { renderReport } from "../../src/gitops/report";
import { fixture, stepOf } from "./previews";

const WATCH = {
  rates: [
    { analysis: "Default Analysis/User Sentiment", value: "negative", atMost: 0.2 },
    { status: ["failed", "no_answer"], atMost: 0.05 },
  ],
  windowMinutes: 60,
};

describe("watch bounds", () => {
  test("a version going live with watch shows its bounds, defaults named", () => {
    const preview = fixture("support-agent-prompt-change");
    stepOf(preview, "support-live").newState!.inputs!.watch = WATCH;
    const md = renderReport(preview);
    expect(md).toContain(
      "Watched after go-live: `voice-agent-diff --watch` judges the calls of widget, batch, inbound " +
        "of the current `60`-minute window (back to back from go-live, the confidence split across windows) and puts the version live before it back live when, over at least 20 measured calls, " +
        'a bound is exceeded at 95% confidence: `Default Analysis/User Sentiment` = `"negative"` at most 20%; ' +
        "status `failed` or `no_answer` at most 5%.",
    );
  });

  test("without watch, or kept off air (live: false), nothing is said", () => {
    const preview = fixture("support-agent-prompt-change");
    expect(renderReport(preview)).not.toContain("Watched after go-live");
    const step = stepOf(preview, "support-live");
    Object.assign(step.newState!.inputs!, { watch: WATCH, live: false });
    expect(renderReport(preview)).not.toContain("Watched after go-live");
  });
});

describe("a version taken off air", () => {
  const rolledBack = {
    at: "2026-05-02T10:00:00.000Z",
    action: "rollback",
    to: 0,
    reason: 'Default Analysis/User Sentiment = "negative" on 15 of 30 calls',
  };

  /** The prompt-change preview whose AgentVersion state records a rollback, its step `op` and inputs as given. */
  function offAir(op: string, inputs: Record<string, unknown> = {}) {
    const preview = fixture("support-agent-prompt-change");
    const step = stepOf(preview, "support-live");
    Object.assign(step.oldState!.outputs!, { rolledBack, isLive: false, version: 1 });
    step.newState!.inputs = { ...step.oldState!.inputs, ...inputs };
    step.op = op;
    return preview;
  }

  test("a new configuration: said, and it goes live as usual", () => {
    const preview = fixture("support-agent-prompt-change");
    const step = stepOf(preview, "support-live");
    Object.assign(step.oldState!.outputs!, { rolledBack, isLive: false, version: 1 });
    const md = renderReport(preview);
    expect(md).toContain("#### Taken off air");
    expect(md).toContain(
      "- `support-live`: version **1** was rolled back at 2026-05-02T10:00:00.000Z to version 0, by the watch: " +
        'Default Analysis/User Sentiment = "negative" on 15 of 30 calls; this deploy chooses a new version and puts it live as usual.',
    );
  });

  test("the program unchanged but its agent touched: it stays off air", () => {
    const preview = offAir("same");
    const md = renderReport(preview);
    expect(md).toContain(
      "stays off air in this deploy; fix forward, revert, or raise `reinstate` to put it back.",
    );
  });

  test("reinstate raised: back live on purpose; the plan says so", () => {
    const preview = offAir("update", { reinstate: 1 });
    const md = renderReport(preview);
    expect(md).toContain("this deploy puts it back live (`reinstate` 0 → 1).");
    expect(md).toContain("puts version 1 back live on purpose (`reinstate`; it was taken off air)");
  });

  test("a label change only: the plan says the version stays off air", () => {
    const preview = offAir("update", { label: "hotfix" });
    expect(renderReport(preview)).toContain("leaves version 1 off air (it was taken off air)");
  });

  test("a report that does not touch the agent does not mention it", () => {
    const preview = offAir("same");
    for (const s of preview.steps!) s.op = "same";
    expect(renderReport(preview)).not.toContain("Taken off air");
  });
});
