/**
 * The `watch` input of an AgentVersion (provider side): the bounds production's callers must stay
 * within once the version is live. The provider only checks and records it (`check`, a change of
 * `watch` alone writes nothing); `voice-agent-diff --watch` (`src/gitops/watch.ts`) reads it from
 * the stack and judges the calls.
 */
import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import type { VoiceAgentClient } from "../../client";
import { CALLER_ORIGINS, splitAnalysis } from "../../evidence/calls";
import type { Requirement } from "../../evidence/requirements";
import { failure } from "../../provider/failures";
import { editDistance } from "../../provider/managed";
import { isPlainObject } from "../../provider/normalize";
import { dependsOnUnknown, unknownPaths } from "../../provider/unknowns";
import { parseWith } from "../../spec/issues";
import { namesOf } from "../agent/names";
import { mayBeDeclared } from "../analysisGroup/declared";
import { type AnalysisLibrary, analysisLibrary, FinishedStatus, shapeOf, valueProblem } from "./values";

/** Default of `watch.minCalls`. */
export const DEFAULT_WATCH_MIN_CALLS = 20;
/** Default of `watch.confidence`. */
export const DEFAULT_WATCH_CONFIDENCE = 0.95;
/** Origins judged when `watch.origins` is not set: `widget`, `batch`, `inbound` (not the tests' `api`, `dashboard`, `demo`). */
export const DEFAULT_WATCH_ORIGINS: readonly string[] = CALLER_ORIGINS;

const Share = z.number().min(0).max(1);

/** A bound on the share of calls whose analysis holds a value (promotion's form). */
const AnalysisRate = z.strictObject({
  analysis: z
    .string()
    .regex(/^[^/]+\/.+$/, 'must be "<group>/<analysis>", e.g. "Default Analysis/User Sentiment"'),
  value: z.union([z.string(), z.number(), z.boolean()]),
  atMost: Share,
});

/** A bound on the share of calls that finished with one of some statuses. */
const StatusRate = z.strictObject({
  status: z.union([FinishedStatus, z.array(FinishedStatus).min(1)]),
  atMost: Share,
});

/**
 * One rate: a status rate when it has `status`, else an analysis rate, so that a problem is
 * reported inside the form the user meant.
 */
const Rate = z.unknown().transform((value, ctx): WatchRate => {
  const form = typeof value === "object" && value !== null && "status" in value ? StatusRate : AnalysisRate;
  const r = form.safeParse(value);
  if (r.success) return r.data;
  for (const issue of r.error.issues) ctx.issues.push({ ...issue, input: value } as never);
  return z.NEVER;
});

/** The `watch` input, as the provider reads it. */
export const WatchSpec = z.strictObject({
  rates: z.array(Rate).min(1),
  minCalls: z.int().min(1).optional(),
  windowMinutes: z.number().positive().optional(),
  origins: z
    .array(z.string().regex(/^[a-z_]+$/, "must be a call origin, e.g. inbound"))
    .min(1)
    .optional(),
  confidence: z.number().gt(0.5).lt(1).optional(),
});
export type WatchSpec = z.infer<typeof WatchSpec>;

/** A rate of `watch`, parsed. */
export type WatchRate = z.infer<typeof AnalysisRate> | z.infer<typeof StatusRate>;

/**
 * The requirements the watch holds a live version to: each rate judged over at least `minCalls`
 * measured calls by the confidence sequence at `confidence`, valid over every pass of the watch
 * (`src/evidence/sequential.ts`).
 */
export function watchRequirements(watch: WatchSpec): Requirement[] {
  const confidence = watch.confidence ?? DEFAULT_WATCH_CONFIDENCE;
  const minMeasured = watch.minCalls ?? DEFAULT_WATCH_MIN_CALLS;
  return watch.rates.map((r) =>
    "status" in r
      ? {
          status: typeof r.status === "string" ? [r.status] : r.status,
          atMost: r.atMost,
          confidence,
          minMeasured,
          sequential: true,
        }
      : { analysis: r.analysis, value: r.value, atMost: r.atMost, confidence, minMeasured, sequential: true },
  );
}

/** Check failures of the `watch` input (`undefined` is fine), skipping what values unknown at preview decide. */
export function watchFailures(value: unknown): pulumi.dynamic.CheckFailure[] {
  if (value === undefined || value === null) return [];
  const unknowns = unknownPaths(value, "watch");
  const parsed = parseWith(WatchSpec, value, "watch");
  if (parsed.ok) return [];
  return parsed.issues
    .filter((i) => !dependsOnUnknown(i.field, i.code, unknowns))
    .map((i) => failure(i, i.field === "body" ? "watch" : i.field));
}

/**
 * Why each analysis rate of `watch` cannot be measured, read at preview when `watch` is new or
 * changed (one listing of the analysis library; values unknown at preview are left alone):
 * - it names an analysis no enabled group of the workspace has (names compared exactly, as calls
 *   key them), unless an AnalysisGroup of this deployment declares it (created, or given the item,
 *   by this very deploy): such a rate never measures a call, and the watch would stay inconclusive
 *   for ever;
 * - its `value` is not one the analysis can take (`values.ts`): the rate could never fire;
 * - its group is not among `attached` (the names of the groups the version attaches, when known at
 *   preview): no call of the version carries it.
 */
export async function watchAnalysisFailures(
  c: VoiceAgentClient,
  value: unknown,
  attached?: (library: AnalysisLibrary) => Promise<readonly string[] | undefined>,
): Promise<pulumi.dynamic.CheckFailure[]> {
  // Each analysis rate that is valid on its own (another rate's problem is reported by watchFailures).
  const list = isPlainObject(value) && Array.isArray(value.rates) ? value.rates : [];
  const rates = list.flatMap((r, i) => {
    const rate = AnalysisRate.safeParse(r);
    return rate.success ? [{ i, ...rate.data }] : [];
  });
  if (rates.length === 0) return [];
  const library = await analysisLibrary(c);
  const produced = [...library.analyses.keys()];
  const groups = attached ? await attached(library) : undefined;
  const out: pulumi.dynamic.CheckFailure[] = [];
  for (const { i, analysis, value: v } of rates) {
    if (!library.analyses.has(analysis) && !mayBeDeclared(analysis)) {
      const property = `watch.rates[${i}].analysis`;
      const closest = [...produced].sort(
        (a, b) =>
          editDistance(a.toLowerCase(), analysis.toLowerCase()) -
          editDistance(b.toLowerCase(), analysis.toLowerCase()),
      )[0];
      out.push({
        property,
        reason:
          `${property}: no enabled analysis group of this workspace has an enabled analysis ${JSON.stringify(analysis)} ` +
          `(names are compared exactly, as calls key them)${closest ? `; the closest is ${JSON.stringify(closest)}` : ""}: ` +
          "no call would ever carry it, and the watch would never judge this rate",
      });
      continue;
    }
    const shape = shapeOf(analysis, library.analyses);
    const problem = shape && valueProblem(analysis, shape, v);
    if (problem) {
      const property = `watch.rates[${i}].value`;
      out.push({ property, reason: `${property}: ${problem}: the rate could never fire` });
    }
    const group = groups && splitAnalysis(analysis, groups)?.group;
    if (groups && (group === undefined || !groups.includes(group))) {
      const property = `watch.rates[${i}].analysis`;
      const name = group ?? analysis.slice(0, analysis.indexOf("/"));
      out.push({
        property,
        reason:
          `${property}: the version does not attach the analysis group ${JSON.stringify(name)} (it attaches ${groups.length ? groups.map((g) => JSON.stringify(g)).join(", ") : "none"}): ` +
          "no call of it would carry this analysis, and the watch would never judge this rate. Attach the group to the Agent (analysisGroupIds), or watch an analysis it has",
      });
    }
  }
  return out;
}

/**
 * The groups of `analyses` (`"Group/Name"`, rates that measured no call) that version `version` of
 * the agent does not attach: no call of it will ever carry them, so the watch says "not measured"
 * instead of waiting for ever. What preview could not tell (a group created alongside, an agent
 * created in the same deploy). Reads the version, and the groups' names from the process's shared
 * listing (`../agent/names.ts`). `attached` keeps a published version's group ids, keyed
 * `agentId/version`: a published version is frozen, so the map may be handed from pass to pass of
 * a watch, and each version is read once.
 */
export async function unattachedGroups(
  c: VoiceAgentClient,
  agentId: string,
  version: number,
  analyses: readonly string[],
  attached: Map<string, readonly string[]> = new Map(),
): Promise<string[]> {
  if (analyses.length === 0) return [];
  const key = `${agentId}/${version}`;
  let ids = attached.get(key);
  if (!ids) {
    const detail = await c.agents.get(agentId, { version });
    ids = detail.analysis_group_ids;
    // A draft may still change: only a published version's groups are kept.
    if (detail.is_published) attached.set(key, ids);
  }
  const names = Object.values((await namesOf(c, { knowledgeBases: [], analysisGroups: ids })).analysisGroups);
  const groups = analyses.map((a) => splitAnalysis(a, names)?.group ?? a.slice(0, a.indexOf("/")));
  return [...new Set(groups.filter((g) => !names.includes(g)))];
}

/** The `watch` input as the state records it, parsed; a message naming the field when it is not valid. */
export function parseWatch(value: unknown): { ok: true; watch: WatchSpec } | { ok: false; problem: string } {
  const parsed = parseWith(WatchSpec, value, "watch");
  if (parsed.ok) return { ok: true, watch: parsed.data };
  return { ok: false, problem: parsed.issues.map((i) => i.message).join("; ") };
}

/** Whether `news` raises `reinstate` above what `olds` recorded: the program asks for the version again. */
export function reinstates(olds: Record<string, unknown>, news: Record<string, unknown>): boolean {
  const [was, now] = [olds.reinstate ?? 0, news.reinstate ?? 0];
  return typeof was === "number" && typeof now === "number" && now > was;
}

/** Check failures of the `reinstate` input. */
export function reinstateFailures(value: unknown): pulumi.dynamic.CheckFailure[] {
  if (value === undefined || (typeof value === "number" && Number.isInteger(value) && value >= 0)) return [];
  if (unknownPaths(value, "reinstate").length > 0) return [];
  return [
    {
      property: "reinstate",
      reason:
        "reinstate: must be an integer >= 0 (raise it to put a version that was taken off air back live)",
    },
  ];
}
