/**
 * The rule the watch adds to the judge: a rate or status rate with `minMeasured` is inconclusive on
 * fewer measured calls, however far over its bound the share is (five calls, all negative, never
 * roll a version back); from that many on, the Wilson interval decides as before.
 */
import { describe, expect, test } from "vitest";
import { addCall, emptySample, judgeSample, type Requirement } from "../../src/evidence";

const scope = { agentId: "a", version: 1, origins: ["inbound"], since: "2026-01-01T00:00:00Z" };

function sampleOf(requirements: Requirement[], calls: { status: string; sentiment?: string }[]) {
  const s = emptySample(scope, requirements, "2026-01-01T01:00:00Z");
  for (const c of calls)
    addCall(s, requirements, {
      status: c.status,
      custom_analysis:
        c.sentiment === undefined ? {} : { "Default Analysis": { "User Sentiment": c.sentiment } },
    });
  return s;
}

const negative = (n: number) =>
  Array.from({ length: n }, () => ({ status: "completed", sentiment: "negative" }));

describe("minMeasured", () => {
  const rate: Requirement = {
    analysis: "Default Analysis/User Sentiment",
    value: "negative",
    atMost: 0.2,
    confidence: 0.95,
    minMeasured: 20,
  };

  test("five calls all over the bound: inconclusive, saying how many are needed", () => {
    const j = judgeSample(sampleOf([rate], negative(5)), [rate], Date.parse("2026-01-01T01:00:00Z"));
    expect(j.verdict).toBe("inconclusive");
    expect(j.findings[0]?.reason).toBe(
      'Default Analysis/User Sentiment measured on 5 of the 5 calls, "negative" on 5: too few to judge (at least 20 measured calls needed; at most 20%)',
    );
  });

  test("from minMeasured calls on, the interval decides: fail", () => {
    const j = judgeSample(sampleOf([rate], negative(20)), [rate], Date.parse("2026-01-01T01:00:00Z"));
    expect(j.verdict).toBe("fail");
  });

  test("a status rate counts finished calls, never-connected ones included", () => {
    const failed: Requirement = {
      status: ["failed", "no_answer"],
      atMost: 0.05,
      confidence: 0.95,
      minMeasured: 20,
    };
    const calls = [...Array.from({ length: 12 }, () => ({ status: "failed" })), ...negative(8)];
    const j = judgeSample(sampleOf([failed], calls), [failed], Date.parse("2026-01-01T01:00:00Z"));
    expect(j.verdict).toBe("fail");
    const few = judgeSample(
      sampleOf([failed], calls.slice(0, 19)),
      [failed],
      Date.parse("2026-01-01T01:00:00Z"),
    );
    expect(few.verdict).toBe("inconclusive");
  });
});
