/**
 * The one rule for which calls count as evidence, and reading an analysis value.
 *
 * - {@link callState}: where a call is, from its `status` and `custom_analysis`:
 *   `running` (still on the line), `never_connected` (`no_answer`, `busy`, `declined`, `failed`:
 *   nobody spoke, so whatever analysis it carries is not evidence), `voicemail` (a machine
 *   answered: no conversation), `awaiting_analysis` (a conversation ended, its analysis is not in
 *   yet), `analysed` (a conversation ended and was analysed: the only state that counts), or
 *   `unknown_status` (a status the reference does not list: never counted, never assumed finished).
 *   Which statuses "became a conversation" is decided in docs/service-decisions.md ("Calls as
 *   evidence"): `completed`, `transfer_completed`, `transfer_failed`.
 * - {@link isSettled}: nothing more will come of the call (finished, and its analysis in when one
 *   is due): what a verification waits for. A never-connected call is settled whether the service
 *   gives it a full analysis or none (`null`): both answers are read the same.
 * - {@link analysisValue}: a call's value of `"Group/Name"`; a missing group, a missing key
 *   (detached group, switched-off analysis) or `null` is no value, and says which.
 *
 * No I/O; loads no `@pulumi/pulumi`.
 */
import { CALL_ORIGINS, CALL_STATUSES_ACTIVE } from "../spec/calls";

/**
 * Origins the reference calls tests, never callers: `api` (test calls placed through the API, e.g.
 * verification), `dashboard` and `demo` (a person trying the agent in the dashboard or a demo).
 */
export const TEST_ORIGINS: readonly string[] = ["api", "dashboard", "demo"];

/**
 * The origins of callers, counted when a program names none (`promote.origins`, `watch.origins`):
 * every documented one but the tests' ({@link TEST_ORIGINS}): `widget`, `batch`, `inbound`.
 */
export const CALLER_ORIGINS: readonly string[] = CALL_ORIGINS.filter((o) => !TEST_ORIGINS.includes(o));

/** Where a call is, as evidence. */
export type CallState =
  | "running"
  | "never_connected"
  | "voicemail"
  | "awaiting_analysis"
  | "analysed"
  | "unknown_status";

/** Finished statuses of a call that became a conversation (someone spoke with the agent). */
export const CONVERSATION_STATUSES: readonly string[] = [
  "completed",
  "transfer_completed",
  "transfer_failed",
];
/** Finished statuses of a call that never connected. */
export const NEVER_CONNECTED_STATUSES: readonly string[] = ["no_answer", "busy", "declined", "failed"];
/** The finished status of a call a voicemail answered. */
export const VOICEMAIL_STATUS = "voicemail";

/** What {@link callState} reads of a call (the call object has more). */
export interface CallFacts {
  status: string;
  custom_analysis: Record<string, Record<string, string | number | boolean | null>> | null;
}

/** The one rule: where a call is, as evidence (see the file header). */
export function callState(call: CallFacts): CallState {
  if ((CALL_STATUSES_ACTIVE as readonly string[]).includes(call.status)) return "running";
  if (NEVER_CONNECTED_STATUSES.includes(call.status)) return "never_connected";
  if (call.status === VOICEMAIL_STATUS) return "voicemail";
  if (CONVERSATION_STATUSES.includes(call.status))
    return call.custom_analysis === null ? "awaiting_analysis" : "analysed";
  return "unknown_status";
}

/** True when the call has a documented finished status (never connected, voicemail or a conversation). */
export function isFinished(state: CallState): boolean {
  return state !== "running" && state !== "unknown_status";
}

/**
 * True when nothing more will come of the call: it finished, and its analysis is in when one is
 * due (a conversation's, a voicemail's; a call of an unknown status settles once analysed). A
 * never-connected call is settled as soon as it ends, with or without `custom_analysis`.
 */
export function isSettled(call: CallFacts): boolean {
  const state = callState(call);
  if (state === "never_connected" || state === "analysed") return true;
  if (state === "voicemail" || state === "unknown_status") return call.custom_analysis !== null;
  return false;
}

/** Why a call holds no value for an analysis. */
export type NoValue =
  /** `custom_analysis` is null: not analysed (yet). */
  | "not_analysed"
  /** The call has no key for the group: detached, switched off, or renamed. */
  | "no_group"
  /** The group has no key for the analysis: switched off, or renamed. */
  | "no_analysis"
  /** The key is there with `null`: nothing extracted. */
  | "null";

/** A call's value of an analysis, or why there is none. */
export type AnalysisReading =
  | { value: string | number | boolean; missing?: undefined }
  | { value?: undefined; missing: NoValue };

/**
 * Splits `"Group/Name"`: at the `/` after which the call's groups name one (a group name may hold a
 * `/`), else at the first `/`. Undefined without a `/`.
 */
export function splitAnalysis(
  path: string,
  groups: Iterable<string> = [],
): { group: string; name: string } | undefined {
  for (const g of groups)
    if (path.length > g.length + 1 && path.startsWith(g) && path[g.length] === "/")
      return { group: g, name: path.slice(g.length + 1) };
  const cut = path.indexOf("/");
  if (cut <= 0 || cut === path.length - 1) return undefined;
  return { group: path.slice(0, cut), name: path.slice(cut + 1) };
}

/** The call's value of `analysis` (`"Group/Name"`, names compared exactly), or why it has none. */
export function analysisValue(call: Pick<CallFacts, "custom_analysis">, analysis: string): AnalysisReading {
  const ca = call.custom_analysis;
  if (ca === null) return { missing: "not_analysed" };
  const at = splitAnalysis(analysis, Object.keys(ca));
  const group = at ? ca[at.group] : undefined;
  if (!at || group === undefined || !Object.hasOwn(ca, at.group)) return { missing: "no_group" };
  if (!Object.hasOwn(group, at.name)) return { missing: "no_analysis" };
  const value = group[at.name];
  if (value === null || value === undefined) return { missing: "null" };
  return { value };
}
