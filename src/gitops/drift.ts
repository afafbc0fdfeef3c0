/**
 * The drift alarm (`voice-agent-diff --drift`): what changed in the service outside Pulumi since
 * the stack last saw it, from `pulumi refresh --preview-only --json`.
 *
 * That JSON lists the stack's resources with what the state recorded (each step's `oldState`) and
 * counts the changes a refresh would make (`changeSummary`), but its steps carry no value read from
 * the service (Pulumi 3.259: each step's `newState` equals its `oldState`; only a resource the
 * service no longer has shows, as a `delete` step). So this reads the
 * service itself, with each resource's own refresh (the provider's `read`, the code `pulumi
 * refresh` runs), and compares what that read returns with what the state recorded:
 *
 * - per resource changed outside Pulumi, the arguments the program sets whose value differs,
 *   old → new, in the program's spelling (long text as a line diff, like the pull-request report);
 *   an argument recorded as a secret is never compared nor shown (the JSON hides its value);
 * - a resource the service no longer has (a refresh would drop it from the stack): Pulumi's refresh
 *   preview shows it as a `delete` step; a resource its step shows present that the service answers
 *   404 for is read with other credentials than the stack's (another workspace), an error, not drift;
 * - a widget whose public key was rotated outside Pulumi (its `publicKeyPrefix` changed);
 * - an AgentVersion this stack put live that is no longer live (a rollback by the watch or in the
 *   dashboard, an activation, a deactivation): what is live now, the deploy-history rows that did
 *   it (when, which action) and, when the watch did it, why. It is reported until a deploy records
 *   it (`rolledBack.recorded`; a refresh alone does not), as `pulumi refresh` shows it until then;
 *   no deploy puts it back.
 *
 * A resource that cannot be read (the service fails, the state is unreadable) does not stop the
 * others: the report names it and says it is incomplete ({@link INCOMPLETE_EXIT}). Credentials the
 * service refuses (401, 403) or that reach another workspace end the command (exit code 1).
 */
import { type ActivationRowT, AuthError, ConnectionError, type VoiceAgentClient } from "../client";
import { contextFor } from "../provider/context";
import { deepEqual } from "../provider/normalize";
import type { Props } from "../provider/resource";
import { RESOURCES, type ResourceKind } from "../resources/registry";
import { code, literal } from "./markdown";
import { isOurs, nameOf, type PreviewJson, type PreviewStep, TYPE_PREFIX, typeOf } from "./preview";
import { fieldChanges, userInputs } from "./report";

/** The exit code of `voice-agent-diff --drift` when something drifted. */
export const DRIFT_EXIT = 3;

/** The exit code of `voice-agent-diff --drift` when a resource could not be read (with or without drift). */
export const INCOMPLETE_EXIT = 5;

/** The command whose JSON `--drift` reads. */
export const REFRESH_PREVIEW = "pulumi refresh --preview-only --json";

/** The live pointer of an agent moved away from the version an AgentVersion of the stack put live. */
export interface LiveDrift {
  agentId: string;
  /** The version the stack recorded live. */
  recorded: number;
  /** The version live now; `null` when the agent is off air, `undefined` when the history is empty. */
  now: number | null | undefined;
  /**
   * The deploy-history rows since the stack's version left the air, newest first: the last one is
   * the row that took it off (when the history reaches back that far).
   */
  rows: ActivationRowT[];
  /** Why, when the watch took it off air (from the notes of the version it put back live). */
  reason?: string;
}

/** One resource changed outside Pulumi. */
export interface ResourceDrift {
  urn: string;
  /** The resource's type without the package prefix (`Agent`). */
  type: string;
  id: string;
  /** The service no longer has it: a refresh would drop it from the stack. */
  deleted: boolean;
  /** The changed arguments as the state recorded them, in the program's spelling. */
  before: Record<string, unknown>;
  /** The same arguments as the service holds them now. */
  after: Record<string, unknown>;
  live?: LiveDrift;
  /** The widget's public key rotated outside Pulumi: its prefix as recorded, and now. */
  keyRotated?: { before: string; after: string };
  /** Where to see it: the dashboard page of the agent's version that holds the change. */
  dashboardUrl?: string;
}

/** A resource whose read failed, and why. */
export interface ReadFailure {
  urn: string;
  type: string;
  id: string;
  message: string;
}

/**
 * The read came back with other credentials than the stack's, or none the service accepts, or
 * nothing answers at the address: every read would say the same, so the command stops (exit code 1)
 * rather than report drift, saying it once.
 */
class CredentialsError extends Error {}

/** What `--drift` found. */
export interface DriftReport {
  /** The stack, from the resources' URNs. */
  stack?: string;
  /** How many resources of this package were read. */
  checked: number;
  drifted: ResourceDrift[];
  /** The resources that could not be read: the report says nothing about them. */
  failed: ReadFailure[];
  /** Arguments not compared because the state holds them as secrets: `name.argument`. */
  secrets: string[];
  /** The refresh preview's own count of what a refresh would change (`changeSummary`). */
  counted: Record<string, number>;
}

const SECRET = '"[secret]"';

/** The provider kind of a type (`AgentVersion` → `agentVersion`), when this package has it. */
function kindOf(type: string): ResourceKind | undefined {
  const kind = type.charAt(0).toLowerCase() + type.slice(1);
  return kind in RESOURCES ? (kind as ResourceKind) : undefined;
}

/** The type of the stack's own resource, which every deployed stack has. */
const STACK_TYPE = "pulumi:pulumi:Stack";

/**
 * Checks that a parsed `pulumi preview --json`-shaped document is a refresh preview: the stack's own
 * step a `refresh`, every step a `refresh` or a `delete` (a resource the service no longer has), or
 * an `update` (a plugin's resource whose read changed). A
 * `pulumi preview --json` given by mistake (`same`, `update`, `create` steps) would otherwise read as
 * "no drift", and a `pulumi destroy --preview-only --json` (all `delete`) as everything deleted.
 * A document without steps (a stack never deployed) has nothing to check.
 *
 * @throws {Error} naming the stack's step or the first step that is neither.
 */
export function assertRefresh(doc: PreviewJson): void {
  const steps = doc.steps ?? [];
  const stackStep = steps.find(
    (s) => (s.oldState?.type ?? s.newState?.type) === STACK_TYPE || s.urn.includes(`::${STACK_TYPE}::`),
  );
  // Under a provider plugin (the YAML program's), the engine shows a resource whose read changed
  // as an `update` of the refresh (the stack's own step a `refresh`).
  const refreshOps = stackStep?.op === "refresh" ? ["refresh", "delete", "update"] : ["refresh", "delete"];
  const other = steps.find((s) => !refreshOps.includes(s.op));
  if (other) {
    throw new Error(
      `not the output of \`${REFRESH_PREVIEW}\`: step ${code(nameOf(other.urn))} is a "${other.op}", ` +
        "not a refresh (for `pulumi preview --json`, run voice-agent-diff without --drift)",
    );
  }
  const stack = stackStep;
  if (stack && stack.op !== "refresh") {
    throw new Error(
      `not the output of \`${REFRESH_PREVIEW}\`: the stack's step is a "${stack.op}", not a refresh ` +
        "(a `pulumi destroy --preview-only --json`?)",
    );
  }
  if (!stack && steps.length > 0) {
    throw new Error(
      `not the output of \`${REFRESH_PREVIEW}\`: no step of the stack itself (\`${STACK_TYPE}\`) that is a refresh`,
    );
  }
}

/**
 * The deploy-history rows of `agentId` since version `recorded` left the air, newest first: up to
 * and including the row whose previous version is `recorded` (the one that took it off air), at
 * most 20.
 */
async function rowsSince(client: VoiceAgentClient, agentId: string, recorded: number) {
  const rows: ActivationRowT[] = [];
  for await (const row of client.versions.activations(agentId)) {
    rows.push(row);
    if (row.previous_version === recorded || rows.length >= 20) break;
  }
  return rows;
}

/** What one resource's refresh would change, by the provider's own read; undefined when nothing. */
async function readDrift(
  step: PreviewStep,
  client: VoiceAgentClient,
  secrets: string[],
  failed: ReadFailure[],
): Promise<ResourceDrift | undefined> {
  const old = step.oldState;
  const type = typeOf(step);
  const kind = kindOf(type);
  if (!old?.id || !old.outputs || !kind) return undefined;
  const base = { urn: step.urn, type, id: old.id };
  // The refresh preview found it gone (its read came back empty): nothing more to read.
  if (step.op === "delete") return { ...base, deleted: true, before: {}, after: {} };
  const handler = RESOURCES[kind]()(contextFor(client));
  const what = `${type} ${code(nameOf(step.urn))} (${old.id})`;
  let read: { id?: string; props?: Props; inputs?: Props };
  try {
    read = await handler.read(old.id, old.outputs);
  } catch (err) {
    if (err instanceof AuthError)
      throw new CredentialsError(`could not read ${what}: ${err.message}`, { cause: err });
    // Nothing answers at the address (a wrong URL, the emulator stopped): said once, not per resource.
    if (err instanceof ConnectionError && !err.mayHaveCommitted)
      throw new CredentialsError(`${err.message} Nothing was read.`, {
        cause: err,
      });
    failed.push({ ...base, message: (err as Error).message });
    return undefined;
  }
  if (!read.id || !read.props || Object.keys(read.props).length === 0) {
    // Pulumi's own refresh (with the stack's credentials) found it: these reach another workspace.
    throw new CredentialsError(
      `could not read ${what}: the service answers that it does not exist, while Pulumi's refresh ` +
        "preview found it: VOICE_AGENT_BASE_URL and VOICE_AGENT_API_KEY reach another service or " +
        "workspace than the stack's provider (its `voice-agent:baseUrl` and `voice-agent:apiKey`); " +
        "or it was deleted since the refresh preview ran: run both again",
    );
  }
  // The arguments the program sets (the recorded inputs): as the state last saw them in the
  // service (its outputs), and as the refresh reads them now (its inputs, else its outputs).
  const recorded: Props = {};
  const now: Props = {};
  for (const key of Object.keys(old.inputs ?? {})) {
    recorded[key] = old.outputs[key] ?? old.inputs?.[key];
    now[key] = read.inputs?.[key] ?? read.props[key];
  }
  const before: Record<string, unknown> = {};
  const after: Record<string, unknown> = {};
  const nowArgs = userInputs(type, now);
  for (const [arg, value] of Object.entries(userInputs(type, recorded))) {
    if (JSON.stringify(value ?? null).includes(SECRET)) {
      secrets.push(`${nameOf(step.urn)}.${arg}`);
    } else if (!deepEqual(value ?? null, nowArgs[arg] ?? null)) {
      before[arg] = value;
      after[arg] = nowArgs[arg];
    }
  }
  const live = type === "AgentVersion" ? await liveDrift(old.outputs, read.props, client) : undefined;
  const [keyBefore, keyAfter] = [old.outputs.publicKeyPrefix, read.props.publicKeyPrefix];
  const keyRotated =
    type === "Widget" &&
    typeof keyBefore === "string" &&
    typeof keyAfter === "string" &&
    keyBefore !== keyAfter
      ? { before: keyBefore, after: keyAfter }
      : undefined;
  if (Object.keys(before).length === 0 && !live && !keyRotated) return undefined;
  const url = read.props.dashboardUrl;
  return {
    ...base,
    deleted: false,
    before,
    after,
    ...(live ? { live } : {}),
    ...(keyRotated ? { keyRotated } : {}),
    ...(typeof url === "string" ? { dashboardUrl: url } : {}),
  };
}

/** An AgentVersion the stack recorded live that the read finds no longer live: what happened. */
async function liveDrift(
  recorded: Props,
  read: Props,
  client: VoiceAgentClient,
): Promise<LiveDrift | undefined> {
  const { agentId, version } = recorded;
  // Taken off air since the last refresh (recorded live), or seen by a refresh and not yet recorded
  // by a deploy (`rolledBack.recorded` false); once an `up` recorded it, it is no longer news.
  const off = read.rolledBack as { reason?: unknown; recorded?: unknown } | undefined;
  if (read.isLive !== false || (recorded.isLive !== true && off?.recorded !== false)) return undefined;
  if (typeof agentId !== "string" || typeof version !== "number") return undefined;
  const rows = await rowsSince(client, agentId, version);
  const reason = typeof off?.reason === "string" ? { reason: off.reason } : {};
  return { agentId, recorded: version, now: rows[0]?.version, rows, ...reason };
}

/**
 * Reads every resource of this package that `refresh` (a `pulumi refresh --preview-only --json`
 * document) lists, as `pulumi refresh` would, and returns what changed outside Pulumi.
 */
export async function findDrift(refresh: PreviewJson, client: VoiceAgentClient): Promise<DriftReport> {
  const ours = (refresh.steps ?? []).filter((s) => isOurs(s.oldState?.type));
  const secrets: string[] = [];
  const failed: ReadFailure[] = [];
  const found = await Promise.all(ours.map((s) => readDrift(s, client, secrets, failed)));
  const stack = /^urn:pulumi:([^:]+)::/.exec(refresh.steps?.[0]?.urn ?? "")?.[1];
  return {
    ...(stack ? { stack } : {}),
    checked: ours.length,
    drifted: found.filter((d): d is ResourceDrift => d !== undefined),
    failed: failed.sort((a, b) => (a.urn < b.urn ? -1 : a.urn > b.urn ? 1 : 0)),
    secrets: secrets.sort(),
    counted: refresh.changeSummary ?? {},
  };
}

/** One deploy-history row as a table row. */
function historyRow(row: ActivationRowT): string {
  const version = row.version === null ? "off air" : String(row.version);
  const previous = row.previous_version === null ? "off air" : String(row.previous_version);
  return `| ${row.at} | ${code(row.action)} | ${version} | ${previous} |`;
}

/** What happened to the live pointer, in words, and the deploy-history rows that did it. */
function liveSection(live: LiveDrift): string {
  const now =
    live.now === undefined
      ? ""
      : live.now === null
        ? ": the agent is off air"
        : `: version **${live.now}** is`;
  const mover = live.rows.at(-1);
  const did =
    mover && mover.previous_version === live.recorded
      ? `It was taken off air by the deploy-history row of ${mover.at}: ${code(mover.action)}` +
        `${mover.version === null ? "" : ` to version ${mover.version}`}.`
      : `The deploy history's latest ${live.rows.length} rows do not reach the one that took it off air.`;
  const table = live.rows.length
    ? `\n\n| When | Action | Live version | Was live |\n|---|---|---|---|\n${live.rows.map(historyRow).join("\n")}`
    : "";
  const why = live.reason ? ` Why (the watch): ${literal(live.reason)}.` : "";
  return (
    `Version **${live.recorded}**, which this stack put live, is no longer live${now}. ${did}${why} ` +
    "No deploy puts it back live: fix forward (a new configuration publishes and goes live), revert, " +
    `or raise ${code("reinstate")} on the AgentVersion to put it back on purpose.${table}\n`
  );
}

/** One drifted resource's section. */
function section(d: ResourceDrift): string {
  const name = code(nameOf(d.urn));
  if (d.deleted) {
    return (
      `#### - ${d.type} ${name}: deleted outside Pulumi\n\n` +
      `The service no longer has it (id ${code(d.id)}): \`pulumi refresh\` would drop it from the stack, ` +
      "and the next `pulumi up` would create it again.\n"
    );
  }
  const what = d.live ? "live version changed" : "changed";
  const where = d.dashboardUrl ? `In the dashboard: ${d.dashboardUrl}\n\n` : "";
  const step: PreviewStep = {
    op: "update",
    urn: d.urn,
    oldState: { type: `${TYPE_PREFIX}${d.type}`, inputs: d.before },
    newState: { type: `${TYPE_PREFIX}${d.type}`, inputs: d.after },
  };
  const table = Object.keys(d.before).length
    ? fieldChanges(step, ["Recorded by the stack", "In the service now"])
    : "";
  const live = d.live ? `${liveSection(d.live)}\n` : "";
  const key = d.keyRotated
    ? `The widget's public key was rotated outside Pulumi (prefix ${code(d.keyRotated.before)} → ` +
      `${code(d.keyRotated.after)}): every website that embeds the old key stops working, and the stack's ` +
      "`publicKey` output is stale until `pulumi refresh`.\n\n"
    : "";
  return `#### ~ ${d.type} ${name}: ${what} outside Pulumi\n\n${where}${live}${key}${table}`;
}

/** One resource that could not be read, as a list item. */
function failure(f: ReadFailure): string {
  return `- ${f.type} ${code(nameOf(f.urn))} (${literal(f.id)}): ${literal(f.message)}`;
}

/** The refresh preview's `changeSummary` keys, in words. */
const COUNTED: Record<string, string> = { same: "unchanged", update: "to update", delete: "to delete" };

/** The drift report as Markdown (for a terminal, a job summary or an issue). */
export function renderDrift(report: DriftReport, opts: { title?: string } = {}): string {
  const title =
    opts.title !== undefined
      ? literal(opts.title)
      : `Voice agents: drift${report.stack ? ` of stack ${code(report.stack)}` : ""}`;
  const counted = Object.entries(report.counted)
    .filter(([, n]) => n > 0)
    .map(([op, n]) => `${n} ${COUNTED[op] ?? op}`)
    .join(", ");
  const pulumi = counted ? ` Pulumi's refresh preview counts ${counted}.` : "";
  const secrets = report.secrets.length
    ? `\nNot compared (the stack holds them as secrets, which the refresh JSON hides): ${report.secrets.map(code).join(", ")}.\n`
    : "";
  const n = report.drifted.length;
  const f = report.failed.length;
  const incomplete = f
    ? `\n**Incomplete: ${f} resource${f === 1 ? "" : "s"} could not be read**, so nothing is said about ` +
      `${f === 1 ? "it" : "them"}:\n\n${report.failed.map(failure).join("\n")}\n`
    : "";
  const read = report.checked - f;
  if (n === 0) {
    return (
      `### ${title}\n\n${f ? "No drift in the resources read" : "No drift"}: the service holds what the stack recorded ` +
      `(${read} voice-agent resource${read === 1 ? "" : "s"} read).${pulumi}\n${incomplete}${secrets}`
    );
  }
  return (
    `### ${title}\n\n**${n} resource${n === 1 ? "" : "s"} changed outside Pulumi** ` +
    `(${read} read).${pulumi}\n\n${report.drifted.map(section).join("\n")}${incomplete}${secrets}\n` +
    "To keep a change, write it into the program; either way, `pulumi refresh` then `pulumi up` " +
    "brings the stack and the service back in line with the program, except a version taken off " +
    "air, which stays off air until the program changes.\n"
  );
}
