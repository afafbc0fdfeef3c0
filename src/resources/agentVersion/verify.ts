/**
 * Verified go-live: before an AgentVersion puts a version live, test calls pinned to that version
 * (while it is not live) must meet their expectations.
 *
 * - {@link verifyFailures} checks the `verify` input at preview: every problem named by its field,
 *   unknown keys refused, values unknown at preview left alone.
 * - {@link runVerification} places each test call pinned to the version (`agent_version_id`) under
 *   an Idempotency-Key derived from what the check is ({@link testCallKey}), so an interrupted or
 *   retried `up` is answered the calls it already placed instead of dialling again; then reads each
 *   call until it is finished and analysed, and judges it. It returns what was verified, or throws
 *   a message naming the version, each failing call (id and dashboard link) and each expectation
 *   with what the call gave; or, past `timeoutSeconds`, the calls that had not finished.
 *
 * Nothing here moves the live pointer: the caller goes live only when this returns.
 */
import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import type { CallT, VoiceAgentClient } from "../../client";
import { isSettled } from "../../evidence/calls";
import { CANCELLED, pauseUnlessCancelled } from "../../provider/cancel";
import { ExpectedFailure, failure } from "../../provider/failures";
import { canonicalJson, contentHash, deepEqual, type Json } from "../../provider/normalize";
import { containsUnknown, dependsOnUnknown, unknownPaths } from "../../provider/unknowns";
import { CALL_STATUSES_ACTIVE, CallVariables } from "../../spec/calls";
import { isE164, normalizeE164 } from "../../spec/common";
import { parseWith } from "../../spec/issues";
import { analysisLibrary, FinishedStatus, shapeOf, valueProblem } from "./values";

/** Default of `verify.timeoutSeconds`. */
const DEFAULT_VERIFY_TIMEOUT_SECONDS = 600;
/** Default of `expect.status`. */
const DEFAULT_EXPECTED_STATUS = "completed";

const Scalar = z.union([z.string(), z.number(), z.boolean()]);
type Scalar = z.infer<typeof Scalar>;

/** Why a pattern does not compile, or nothing. */
function patternProblem(pattern: string): string | undefined {
  try {
    new RegExp(pattern, "u");
    return undefined;
  } catch (err) {
    return `not a valid regular expression: ${(err as Error).message}`;
  }
}

const Pattern = z.strictObject({
  pattern: z.string().superRefine((p, ctx) => {
    const problem = patternProblem(p);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  }),
});

/**
 * One expected analysis value: the value itself, a list of accepted values, or `{ pattern }`. Told
 * apart by shape first, so a problem is reported inside the form the user meant.
 */
const Expected = z.unknown().transform((value, ctx): ExpectedValue => {
  const issue = (message: string, path: PropertyKey[] = []) => {
    ctx.issues.push({ code: "custom", message, input: value, path });
    return z.NEVER;
  };
  if (typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : issue("must be a finite number");
  if (Array.isArray(value)) {
    if (value.length === 0) return issue("a list of accepted values must not be empty");
    value.forEach((v, i) => {
      if (!Scalar.safeParse(v).success) issue("must be a string, number or boolean", [i]);
    });
    return value as Scalar[];
  }
  if (typeof value === "object" && value !== null) {
    const r = Pattern.safeParse(value);
    if (r.success) return r.data;
    for (const i of r.error.issues) {
      if (i.code === "unrecognized_keys") {
        for (const k of i.keys)
          issue("unknown key (an expectation is a value, a list of values, or { pattern })", [k]);
      } else if (i.code === "invalid_type") {
        issue("must be a string (a regular expression the value must match)", i.path);
      } else issue(i.message, i.path);
    }
    return z.NEVER;
  }
  return issue(
    "must be a value (string, number or boolean), a list of accepted values, or { pattern: string }",
  );
});
/** An expected analysis value. */
export type ExpectedValue = Scalar | Scalar[] | { pattern: string };

const Status = z.union([FinishedStatus, z.array(FinishedStatus).min(1)], {
  error: "must be a status (e.g. 'completed') or a non-empty list of statuses",
});

const E164 = z.string().superRefine((v, ctx) => {
  if (isE164(v)) return;
  const suggestion = normalizeE164(v);
  ctx.addIssue({
    code: "custom",
    message: `must be an E.164 number: + then the country code and number, no spaces${suggestion ? ` (${suggestion}?)` : ""}`,
  });
});

/** One test call and what it must give. */
export const VerifyCall = z.strictObject({
  toNumber: E164,
  variables: CallVariables.optional(),
  metadata: z.record(z.string(), z.json()).optional(),
  expect: z
    .strictObject({
      status: Status.optional(),
      analysis: z.record(z.string(), z.record(z.string(), Expected)).optional(),
    })
    .optional(),
});
export type VerifyCall = z.infer<typeof VerifyCall>;

/** The `verify` input, as the provider reads it. */
export const VerifySpec = z.strictObject({
  calls: z.array(VerifyCall).min(1),
  timeoutSeconds: z.number().positive().max(86_400).optional(),
  attempt: z.int().min(0).optional(),
});
export type VerifySpec = z.infer<typeof VerifySpec>;

/** What the output `verification` records of one test call (kept small: it is in the state). */
const VerifiedCall = z.object({
  id: z.string(),
  toNumber: z.string(),
  status: z.string(),
  /** The analysis values that were checked, by group then analysis. */
  analysis: z.record(z.string(), z.record(z.string(), z.json())).optional(),
  passed: z.boolean(),
});
type VerifiedCall = z.infer<typeof VerifiedCall>;

/** The output `verification`: the version verified, the attempt, and each test call. */
export const Verification = z.object({
  version: z.int(),
  attempt: z.int(),
  passed: z.boolean(),
  calls: z.array(VerifiedCall),
});
export type Verification = z.infer<typeof Verification>;

/** Check failures of the `verify` input (`undefined` is fine), skipping what values unknown at preview decide. */
export function verifyFailures(value: unknown): pulumi.dynamic.CheckFailure[] {
  if (value === undefined || value === null) return [];
  const unknowns = unknownPaths(value, "verify");
  const parsed = parseWith(VerifySpec, value, "verify");
  if (parsed.ok) return [];
  return parsed.issues
    .filter((i) => !dependsOnUnknown(i.field, i.code, unknowns))
    .map((i) => failure(i, i.field === "body" ? "verify" : i.field));
}

/**
 * Why an expected analysis value of `verify` is not one its analysis can take (`values.ts`), by
 * field: such an expectation could never pass. Read at preview when `verify` is new or changed (one
 * listing of the analysis library, only when an expectation names an analysis); a value unknown at
 * preview, a pattern and an analysis the library does not know are left alone.
 */
export async function verifyValueFailures(
  c: Pick<VoiceAgentClient, "analysis">,
  value: unknown,
): Promise<pulumi.dynamic.CheckFailure[]> {
  const parsed = VerifySpec.safeParse(value);
  if (!parsed.success) return [];
  const expected = parsed.data.calls.flatMap((call, i) =>
    Object.entries(call.expect?.analysis ?? {}).flatMap(([group, items]) =>
      Object.entries(items).map(([name, want]) => ({
        property: `verify.calls[${i}].expect.analysis[${JSON.stringify(group)}][${JSON.stringify(name)}]`,
        analysis: `${group}/${name}`,
        want,
      })),
    ),
  );
  if (expected.length === 0) return [];
  const library = await analysisLibrary(c);
  const out: pulumi.dynamic.CheckFailure[] = [];
  for (const { property, analysis, want } of expected) {
    const shape = shapeOf(analysis, library.analyses);
    if (!shape || containsUnknown(want as Json)) continue;
    const values: [string, unknown][] = Array.isArray(want)
      ? want.map((v, j) => [`${property}[${j}]`, v])
      : typeof want === "object"
        ? []
        : [[property, want]];
    for (const [at, v] of values) {
      const problem = valueProblem(analysis, shape, v);
      if (problem) out.push({ property: at, reason: `${at}: ${problem}: the test call could never pass` });
    }
  }
  return out;
}

/** The `verify` input, parsed (it passed `check`). */
export function parseVerify(value: unknown): VerifySpec | undefined {
  if (value === undefined || value === null) return undefined;
  const r = VerifySpec.safeParse(value);
  if (!r.success)
    throw new Error(`verify: ${r.error.issues.map((i) => i.message).join("; ")}`, { cause: r.error });
  return r.data;
}

/** What of a test call is placed (the expectation only judges it): what its key is derived from. */
const placed = (call: VerifyCall) => ({
  toNumber: call.toNumber,
  variables: call.variables ?? null,
  metadata: call.metadata ?? null,
});

/** What names one check: the version verified, its own go-live history and the attempt. */
interface CheckIdentity {
  agentId: string;
  /** The uuid of the version verified. */
  versionId: string;
  /**
   * The id of the newest deploy-history row that put this version live ("none" when it never was
   * live): the same until this version goes live again, whatever other versions do.
   */
  occasion: string;
  /** `verify.attempt`. */
  attempt: number;
}

/**
 * The Idempotency-Key of a test call: a UUID (version 8, name-based) derived from the agent, the
 * version's uuid, a digest of what is placed (number, variables, metadata), which occurrence of an
 * identical call it is (`occurrence`: 0 for the first call placing exactly this, 1 for the next),
 * the attempt, and the occasion: this version's newest go-live row, which stays the same until
 * this version goes live. So the same check of the same version always has the same key, and the
 * service answers a repeated place with the call already placed (an interrupted or retried `up`,
 * a call added in front of it, another version's activation or a dashboard rollback in between);
 * a new version, a changed call (its metadata too), a raised `attempt`, or a later go-live of this
 * version (a verified rollback) places a new one. The expectation is not part of it: changing it
 * judges the same calls again.
 */
export function testCallKey(id: CheckIdentity, occurrence: number, call: VerifyCall): string {
  const digest = contentHash(placed(call));
  const h = createHash("sha256")
    .update(
      [
        "pulumi-voice-agent/verify/2",
        id.agentId,
        id.versionId,
        id.occasion,
        String(id.attempt),
        digest,
        String(occurrence),
      ].join("\n"),
    )
    .digest();
  h[6] = ((h[6] ?? 0) & 0x0f) | 0x80;
  h[8] = ((h[8] ?? 0) & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** For each call, which occurrence of an identical placed call it is (0, 1, ... in list order). */
export function occurrences(calls: readonly VerifyCall[]): number[] {
  const seen = new Map<string, number>();
  return calls.map((call) => {
    const digest = contentHash(placed(call));
    const n = seen.get(digest) ?? 0;
    seen.set(digest, n + 1);
    return n;
  });
}

/** Statuses of a call still in progress. */
const IN_PROGRESS: ReadonlySet<string> = new Set(CALL_STATUSES_ACTIVE);

const show = (v: unknown): string => (v === undefined ? "no value" : JSON.stringify(v));

/** One expectation not met: what was expected, and what the call gave. */
interface Shortfall {
  /** `status`, or `analysis "Group" / "Name"`. */
  what: string;
  expected: string;
  got: string;
}

/**
 * Judges one finished call against its expectations; with `pinned`, a call answered by another
 * version than the one it was pinned to fails (it is no evidence of that version).
 */
export function judge(
  call: CallT,
  spec: VerifyCall,
  pinned?: number,
): { shortfalls: Shortfall[]; checked: Record<string, Record<string, Json>> } {
  const shortfalls: Shortfall[] = [];
  if (pinned !== undefined && call.agent_version !== pinned)
    shortfalls.push({
      what: "version",
      expected: `version ${pinned} (the call was pinned to it)`,
      got: `version ${call.agent_version}`,
    });
  const statuses = spec.expect?.status ?? DEFAULT_EXPECTED_STATUS;
  const accepted = Array.isArray(statuses) ? statuses : [statuses];
  if (!accepted.includes(call.status)) {
    shortfalls.push({
      what: "status",
      expected: accepted.length === 1 ? show(accepted[0]) : `one of ${accepted.map(show).join(", ")}`,
      got: show(call.status),
    });
  }
  const checked: Record<string, Record<string, Json>> = {};
  for (const [group, items] of Object.entries(spec.expect?.analysis ?? {})) {
    for (const [name, expected] of Object.entries(items)) {
      const groupValues = call.custom_analysis?.[group];
      const got = groupValues && Object.hasOwn(groupValues, name) ? groupValues[name] : undefined;
      const seen = checked[group] ?? {};
      seen[name] = got === undefined ? null : (got as Json);
      checked[group] = seen;
      if (matches(expected, got)) continue;
      shortfalls.push({
        what: `analysis ${JSON.stringify(group)} / ${JSON.stringify(name)}`,
        expected: Array.isArray(expected)
          ? expected.length === 1
            ? show(expected[0])
            : `one of ${expected.map(show).join(", ")}`
          : typeof expected === "object"
            ? `a match of /${expected.pattern}/`
            : show(expected),
        got:
          got === undefined
            ? groupValues
              ? `no value (the group has no analysis ${JSON.stringify(name)})`
              : `no value (the call has no analysis group ${JSON.stringify(group)})`
            : show(got),
      });
    }
  }
  return { shortfalls, checked };
}

function matches(expected: ExpectedValue, got: unknown): boolean {
  if (got === undefined || got === null) return false;
  if (Array.isArray(expected)) return expected.some((e) => deepEqual(e, got));
  if (typeof expected === "object") {
    const text = typeof got === "string" ? got : canonicalJson(got);
    return new RegExp(expected.pattern, "u").test(text);
  }
  return deepEqual(expected, got);
}

/** The version verified. */
interface VerifyTarget {
  agentId: string;
  version: number;
  versionId: string;
  /** See {@link CheckIdentity.occasion}. */
  occasion: string;
  /** The version live while this one is verified (for the message), or null. */
  liveVersion: number | null;
}

/** Hooks for tests: the clock and the wait between reads. */
interface VerifyTiming {
  now?: () => number;
  wait?: (ms: number) => Promise<unknown>;
  /** The engine's cancel: the wait for the calls ends, and the verification fails as cancelled. */
  signal?: AbortSignal;
}

/** A verification that did not pass (its message says why and what to do). */
export class VerificationFailed extends ExpectedFailure {}

/** First wait before reading the calls, then ×1.5 per round up to {@link MAX_POLL_MS}. */
const FIRST_POLL_MS = 500;
const MAX_POLL_MS = 10_000;

/**
 * Places the test calls pinned to `target`, waits for them to finish and be analysed, and judges
 * them. Returns the verification when every expectation holds; throws {@link VerificationFailed}
 * otherwise (failed expectations, or calls not finished within the timeout).
 */
async function runVerification(
  c: VoiceAgentClient,
  target: VerifyTarget,
  spec: VerifySpec,
  timing: VerifyTiming = {},
): Promise<Verification> {
  const now = timing.now ?? Date.now;
  const wait = timing.wait ?? sleep;
  const attempt = spec.attempt ?? 0;
  const timeoutMs = (spec.timeoutSeconds ?? DEFAULT_VERIFY_TIMEOUT_SECONDS) * 1000;
  const started = now();
  const what = `version ${target.version} of agent ${target.agentId}`;

  const occurrence = occurrences(spec.calls);
  const placedCalls = await Promise.all(
    spec.calls.map(async (call, index) => {
      try {
        return await c.calls.place(
          {
            agent_id: target.agentId,
            agent_version_id: target.versionId,
            to_number: call.toNumber,
            ...(call.variables === undefined ? {} : { variables: call.variables }),
            ...(call.metadata === undefined ? {} : { metadata: call.metadata }),
          },
          { idempotencyKey: testCallKey({ ...target, attempt }, occurrence[index] ?? 0, call) },
        );
      } catch (err) {
        throw new Error(
          `Verification of ${what}: test call ${index} (to ${call.toNumber}) could not be placed: ${(err as Error).message}. ` +
            `The version is published and not live; ${liveNote(target)}.`,
          { cause: err },
        );
      }
    }),
  );

  const settled = new Map<number, CallT>();
  const latest = new Map<number, CallT>();
  let pause = FIRST_POLL_MS;
  for (;;) {
    const remaining = started + timeoutMs - now();
    if (remaining <= 0) break;
    await pauseUnlessCancelled(Math.min(pause, remaining), timing.signal, wait);
    if (timing.signal?.aborted) break;
    pause = Math.min(MAX_POLL_MS, pause * 1.5);
    const pending = placedCalls.map((p, i) => ({ p, i })).filter(({ i }) => !settled.has(i));
    const read = await Promise.all(pending.map(({ p }) => c.calls.get(p.id)));
    pending.forEach(({ i }, k) => {
      const call = read[k] as CallT;
      latest.set(i, call);
      if (isSettled(call)) settled.set(i, call);
    });
    if (settled.size === placedCalls.length) break;
  }

  if (settled.size < placedCalls.length) {
    const lines = placedCalls.flatMap((p, i) => {
      if (settled.has(i)) return [];
      const call = latest.get(i);
      const state = call
        ? `status ${show(call.status)}${IN_PROGRESS.has(call.status) ? "" : ", analysis not in yet"}`
        : `status ${show(p.status)}`;
      return [
        `  test call ${i} to ${spec.calls[i]?.toNumber}: ${p.id} (${state})${call ? ` ${call.dashboard_url}` : ""}`,
      ];
    });
    throw new VerificationFailed(
      [
        (timing.signal?.aborted
          ? `Verification of ${what} ${CANCELLED}: `
          : `Verification of ${what} timed out after ${spec.timeoutSeconds ?? DEFAULT_VERIFY_TIMEOUT_SECONDS} s: `) +
          `${lines.length} of ${placedCalls.length} test calls had not finished and been analysed:`,
        ...lines,
        `The version is published and not live; ${liveNote(target)}. Run \`pulumi up\` again to wait for ` +
          "the same calls (none is placed again), or raise verify.timeoutSeconds.",
      ].join("\n"),
    );
  }

  const calls: VerifiedCall[] = [];
  const failing: string[] = [];
  spec.calls.forEach((callSpec, i) => {
    const call = settled.get(i) as CallT;
    const { shortfalls, checked } = judge(call, callSpec, target.version);
    calls.push({
      id: call.id,
      toNumber: callSpec.toNumber,
      status: call.status,
      ...(Object.keys(checked).length > 0 ? { analysis: checked } : {}),
      passed: shortfalls.length === 0,
    });
    if (shortfalls.length > 0) {
      failing.push(`  test call ${i} to ${callSpec.toNumber}: ${call.id} ${call.dashboard_url}`);
      for (const s of shortfalls) failing.push(`    ${s.what}: expected ${s.expected}, got ${s.got}`);
    }
  });
  const failed = calls.filter((x) => !x.passed).length;
  if (failed > 0) {
    throw new VerificationFailed(
      [
        `Verification of ${what} failed: ${failed} of ${calls.length} test calls did not meet expectations:`,
        ...failing,
        `The version is published and not live; ${liveNote(target)}. Running \`pulumi up\` again judges ` +
          "the same calls (none is placed again); to place them anew, raise verify.attempt.",
      ].join("\n"),
    );
  }
  return { version: target.version, attempt, passed: true, calls };
}

const liveNote = (t: VerifyTarget): string =>
  t.liveVersion === null ? "the agent has no live version" : `version ${t.liveVersion} stays live`;

/**
 * The hook before a version goes live: with `verify` set, runs the verification of `detail`'s
 * version (pinned to it, while the agent's live version is `detail.live_version`) and returns the
 * output `verification`; without it, nothing. Reads the deploy history first for this version's
 * newest go-live row (the occasion of the test calls' keys). Throws when the verification does not
 * pass, and for a blocked version (it places no call and cannot go live), naming its reasons.
 */
export async function verifyBeforeLive(
  c: VoiceAgentClient,
  agentId: string,
  verify: VerifySpec | undefined,
  detail: {
    version: number;
    version_id: string;
    live_version: number | null;
    blocked_reasons: string[];
    created_at: string;
  },
  timing?: VerifyTiming,
): Promise<Verification | undefined> {
  if (!verify) return undefined;
  if (detail.blocked_reasons.length > 0)
    throw new VerificationFailed(
      `Verification of version ${detail.version} of agent ${agentId}: the version is blocked and cannot take a test call ` +
        `or go live: ${detail.blocked_reasons.join("; ")}. Nothing was put live; ` +
        `${detail.live_version === null ? "the agent has no live version" : `version ${detail.live_version} stays live`}. ` +
        "Next: fix what blocks it (a retired model, a withdrawn voice, a deleted knowledge base) in the program and `pulumi up` again.",
    );
  // This version's own newest go-live row (deploy history, newest first): other versions' do not
  // count. Rows older than the version cannot be its own: the reading stops there (a version never
  // live reads one page, not the agent's whole history).
  let newest: { id: string } | undefined;
  const born = Date.parse(detail.created_at);
  for await (const row of c.versions.activations(agentId)) {
    if (Date.parse(row.at) < born) break;
    if (row.version === detail.version && row.action !== "deactivate") {
      newest = row;
      break;
    }
  }
  return runVerification(
    c,
    {
      agentId,
      version: detail.version,
      versionId: detail.version_id,
      liveVersion: detail.live_version,
      occasion: newest?.id ?? "none",
    },
    verify,
    timing,
  );
}
