/**
 * The values a rate or an expectation names, checked at preview: a value that no call can ever hold
 * would make a rate that can never fire (a bound "held" over calls none of which it counts) and an
 * expectation that can never pass.
 *
 * - An analysis value (a `watch` or `promote` rate's `value`, a verification's expected value) must
 *   be one the analysis can take: one of an enum's `enum_values` (names compared exactly, as calls
 *   carry them), a boolean for a boolean analysis, a number for a number, a string for text.
 *   What the analysis can take is read from the workspace's analysis library (one listing), or
 *   from the AnalysisGroup of this deployment that declares it (`../analysisGroup/declared.ts`).
 * - A status (a status rate's, a verification's `expect.status`) must be one of the reference's
 *   statuses of a finished call (a rate and an expectation judge finished calls only).
 *
 * A value unknown at preview is never checked. No Pulumi import.
 */
import { z } from "zod";
import type { VoiceAgentClient } from "../../client";
import { editDistance } from "../../provider/managed";
import { ANALYSIS_ITEM_TYPES } from "../../spec/analysis";
import { CALL_STATUSES_FINISHED } from "../../spec/calls";
import { type AnalysisShape, declaredShape } from "../analysisGroup/declared";

export type { AnalysisShape };

/** The workspace's analysis library: every enabled analysis of every enabled group, and every group's name by id. */
export interface AnalysisLibrary {
  /** What each enabled analysis of an enabled group can hold, by `"Group/Name"`. */
  analyses: Map<string, AnalysisShape>;
  /** Every group's name, by id. */
  groupNames: Map<string, string>;
}

/** The workspace's analysis library (one listing). */
export async function analysisLibrary(c: Pick<VoiceAgentClient, "analysis">): Promise<AnalysisLibrary> {
  const analyses = new Map<string, AnalysisShape>();
  const groupNames = new Map<string, string>();
  for await (const g of c.analysis.list()) {
    groupNames.set(g.id, g.name);
    if (!g.enabled) continue;
    for (const item of g.items) {
      // A type the reference does not list is never checked.
      const type = ANALYSIS_ITEM_TYPES.find((t) => t === item.type);
      if (item.enabled && type)
        analyses.set(`${g.name}/${item.name}`, { type, enumValues: item.enum_values });
    }
  }
  return { analyses, groupNames };
}

/**
 * What `analysis` can hold: as this deployment declares it, else as the library holds it; undefined
 * when neither tells (not declared nor in the library, or declared with an unknown type).
 */
export function shapeOf(
  analysis: string,
  library: ReadonlyMap<string, AnalysisShape>,
): AnalysisShape | undefined {
  const declared = declaredShape(analysis);
  if (declared !== undefined) return declared ?? undefined;
  return library.get(analysis);
}

/** The closest of `options` to `value` (case and small typos), when one is close enough to suggest. */
function closest(value: string, options: readonly string[]): string | undefined {
  const scored = options
    .map((o) => ({ o, d: editDistance(o.toLowerCase(), value.toLowerCase()) }))
    .sort((a, b) => a.d - b.d)[0];
  return scored && scored.d <= Math.max(2, Math.floor(value.length / 3)) ? scored.o : undefined;
}

const quoted = (xs: readonly string[]) => xs.map((x) => JSON.stringify(x)).join(", ");

/**
 * Why `value` is not one `analysis` (of `shape`) can take, naming what is allowed, or undefined when
 * it is. E.g. `"Negative" is not a value of Default Analysis/User Sentiment: an enum of "positive",
 * "neutral", "negative" (names compared exactly); did you mean "negative"?`
 */
export function valueProblem(analysis: string, shape: AnalysisShape, value: unknown): string | undefined {
  const shown = JSON.stringify(value);
  if (shape.type === "enum") {
    const values = shape.enumValues ?? [];
    if (typeof value === "string" && values.includes(value)) return undefined;
    const near =
      typeof value === "string" || typeof value === "number" ? closest(String(value), values) : undefined;
    return (
      `${shown} is not a value of ${analysis}: an enum of ${quoted(values)} (compared exactly, as calls carry them)` +
      (near ? `; did you mean ${JSON.stringify(near)}?` : "")
    );
  }
  const wanted = { boolean: "boolean", number: "number", text: "string" }[shape.type];
  if (typeof value === wanted) return undefined;
  const kind = { boolean: "a boolean (true or false)", number: "a number", text: "text (a string)" }[
    shape.type
  ];
  return `${shown} is not a value of ${analysis}: it holds ${kind}, so no call carries ${shown}`;
}

/** Why `status` is not a status a finished call has (naming them, and the closest), or undefined. */
export function statusProblem(status: string): string | undefined {
  const finished: readonly string[] = CALL_STATUSES_FINISHED;
  if (finished.includes(status)) return undefined;
  const near = closest(status.replace(/-/g, "_"), finished);
  return (
    `${JSON.stringify(status)} is not a status of a finished call; one of ${finished.join(", ")}` +
    (near ? ` (did you mean ${JSON.stringify(near)}?)` : "")
  );
}

/** A status a rate or an expectation names: one of a finished call's (see {@link statusProblem}). */
export const FinishedStatus = z
  .string()
  .min(1)
  .superRefine((status, ctx) => {
    const problem = statusProblem(status);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });
