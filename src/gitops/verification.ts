/**
 * Verified go-live in the report: before the run, how many test calls an AgentVersion step will
 * place and to which numbers; after it (the event stream of `pulumi up --json`), the verification
 * that failed, under its resource.
 */

import { UNKNOWN } from "../provider/unknowns";
import { backticks, code } from "./markdown";
import { choosesVersion, isRecord, type PreviewJson, type PreviewStep, typeOf } from "./preview";

/**
 * How an error of the AgentVersion provider that is a failed verification begins (verify.ts): it
 * failed, timed out, or a test call could not be placed.
 */
const FAILED_VERIFICATION = /^Verification of version \d+ of agent \S+( failed| timed out|: test call \d+ )/;

/**
 * True when the step will put a version live, so that its `verify` places test calls: it chooses
 * its version anew, or puts the version it kept back live (`isLive` false before): unless it was
 * taken off air since this stack put it live (`rolledBack`) and `reinstate` is not raised.
 */
export function goesLive(step: PreviewStep): boolean {
  if (step.newState?.inputs?.live === false) return false;
  if (choosesVersion(step)) return true;
  const old = step.oldState?.outputs ?? {};
  if (old.isLive !== false) return false;
  return old.rolledBack === undefined || reinstates(step);
}

/** Whether the step raises `reinstate`: asks for a version taken off air to go back live. */
export function reinstates(step: PreviewStep): boolean {
  const before = step.oldState?.outputs?.reinstate ?? 0;
  const after = step.newState?.inputs?.reinstate ?? 0;
  return typeof before === "number" && typeof after === "number" && after > before;
}

/** A number in the report: in a code span, or "known after apply". */
const number = (n: unknown): string =>
  n === UNKNOWN || typeof n !== "string" ? "*(known after apply)*" : code(n);

/**
 * What the step's `verify` will do, in words; empty when it places no calls (no `verify`, not going
 * live, or only `verify` changed on a live version).
 */
export function verificationPlan(step: PreviewStep): string {
  if (typeOf(step) !== "AgentVersion") return "";
  const verify = step.newState?.inputs?.verify;
  if (verify === undefined || verify === null || !goesLive(step)) return "";
  const after =
    "it goes live only if every expectation holds; otherwise the update fails, the version stays " +
    "published and the live version stays live.";
  const calls = isRecord(verify) ? verify.calls : UNKNOWN;
  if (!Array.isArray(calls))
    return `Before it goes live, places test calls pinned to it (known after apply); ${after}\n`;
  const numbers = calls.map((c) => number(isRecord(c) ? c.toNumber : c));
  const list = numbers.length > 1 ? `${numbers.slice(0, -1).join(", ")} and ${numbers.at(-1)}` : numbers[0];
  const n = calls.length;
  return `Before it goes live (unless it is live already), places **${n} test call${n === 1 ? "" : "s"}** pinned to it, to ${list}; ${after}\n`;
}

/** Per AgentVersion URN, the message of its failed verification in a run (the engine's errors). */
export function failedVerifications(preview: PreviewJson): Map<string, string> {
  const out = new Map<string, string>();
  for (const d of preview.diagnostics ?? []) {
    const message = d.message.trim();
    if (d.severity === "error" && d.urn && FAILED_VERIFICATION.test(message)) out.set(d.urn, message);
  }
  return out;
}

/** The failed verification of a step, as a block under its resource; empty when there is none. */
export function failedVerificationBlock(step: PreviewStep, failed: ReadonlyMap<string, string>): string {
  const message = failed.get(step.urn);
  if (message === undefined) return "";
  const fence = backticks(message, 3);
  return `\n**Verification failed**: the version did not go live.\n\n${fence}text\n${message}\n${fence}\n`;
}
