/**
 * After go-live, in the pull-request report: the bounds `voice-agent-diff --watch` will hold an
 * AgentVersion going live to (its `watch`), and the agents whose version was taken off air since
 * this stack put it live (`rolledBack`, recorded by a refresh): what the deploy does about it.
 */
import { UNKNOWN } from "../provider/unknowns";
import { type RolledBack, rolledBackWords } from "../resources/agentVersion/rollback";
import {
  DEFAULT_WATCH_CONFIDENCE,
  DEFAULT_WATCH_MIN_CALLS,
  DEFAULT_WATCH_ORIGINS,
} from "../resources/agentVersion/watch";
import { code, literal } from "./markdown";
import {
  agentStepOf,
  choosesVersion,
  isRecord,
  nameOf,
  type PreviewJson,
  type PreviewStep,
  typeOf,
} from "./preview";

const AFTER_APPLY = "*(known after apply)*";
const pct = (v: unknown) => (typeof v === "number" ? `${Math.round(v * 1000) / 10}%` : AFTER_APPLY);
const shown = (v: unknown) => (v === UNKNOWN || v === undefined ? AFTER_APPLY : code(String(v)));

/** One rate of `watch` in words. */
function rateWords(r: unknown): string {
  if (!isRecord(r)) return AFTER_APPLY;
  if ("status" in r) {
    const status = Array.isArray(r.status) ? r.status.map(shown).join(" or ") : shown(r.status);
    return `status ${status} at most ${pct(r.atMost)}`;
  }
  return `${shown(r.analysis)} = ${r.value === UNKNOWN ? AFTER_APPLY : code(JSON.stringify(r.value))} at most ${pct(r.atMost)}`;
}

/**
 * What `watch` on an AgentVersion step means once it is live, in words; empty without `watch` or
 * when the program keeps the version off air (`live: false`).
 */
export function watchPlan(step: PreviewStep): string {
  if (typeOf(step) !== "AgentVersion" || step.op.startsWith("delete")) return "";
  const inputs = step.newState?.inputs ?? {};
  const watch = inputs.watch;
  if (watch === undefined || watch === null || inputs.live === false) return "";
  if (!isRecord(watch))
    return "After go-live, `voice-agent-diff --watch` judges its callers' calls (bounds known after apply).\n";
  const rates = Array.isArray(watch.rates) ? watch.rates.map(rateWords).join("; ") : AFTER_APPLY;
  const origins = Array.isArray(watch.origins)
    ? watch.origins.map(shown).join(", ")
    : DEFAULT_WATCH_ORIGINS.join(", ");
  const window =
    watch.windowMinutes === undefined
      ? "since it went live"
      : `of the current ${shown(watch.windowMinutes)}-minute window (back to back from go-live, the confidence split across windows)`;
  const minCalls = watch.minCalls === undefined ? String(DEFAULT_WATCH_MIN_CALLS) : shown(watch.minCalls);
  const confidence = watch.confidence === undefined ? pct(DEFAULT_WATCH_CONFIDENCE) : pct(watch.confidence);
  return (
    `Watched after go-live: \`voice-agent-diff --watch\` judges the calls of ${origins} ${window} and puts the ` +
    `version live before it back live when, over at least ${minCalls} measured calls, a bound is exceeded ` +
    `at ${confidence} confidence: ${rates}.\n`
  );
}

/** The `rolledBack` a step's state records, in words; undefined when none. */
function rolledBackOf(step: PreviewStep): { version: unknown; words: string } | undefined {
  const outs = step.oldState?.outputs;
  const r = outs?.rolledBack;
  if (!isRecord(r)) return undefined;
  const rolledBack: RolledBack = {
    at: typeof r.at === "string" ? r.at : null,
    action: typeof r.action === "string" ? r.action : "unknown",
    to: typeof r.to === "number" ? r.to : null,
    ...(typeof r.reason === "string" ? { reason: r.reason } : {}),
  };
  return { version: outs?.version, words: literal(rolledBackWords(rolledBack)) };
}

/** Whether a step changes something (the report lists it). */
const changes = (s: PreviewStep | undefined) =>
  s !== undefined && !["same", "read", "refresh"].includes(s.op);

/**
 * The report's "Taken off air" lines: per AgentVersion whose version was taken off air since this
 * stack put it live, when the preview touches its agent (the AgentVersion, its Agent or its
 * Widget), what happened and what this deploy does about it.
 */
export function rolledBackSection(preview: PreviewJson): string {
  const steps = preview.steps ?? [];
  const lines: string[] = [];
  for (const step of steps) {
    if (typeOf(step) !== "AgentVersion") continue;
    const off = rolledBackOf(step);
    if (!off) continue;
    const agent = agentStepOf(step, steps);
    const agentId = step.oldState?.outputs?.agentId;
    const widget = steps.find(
      (s) => typeOf(s) === "Widget" && changes(s) && s.newState?.inputs?.agentId === agentId,
    );
    if (!changes(step) && !changes(agent) && !widget) continue;
    const before = step.oldState?.inputs?.reinstate ?? 0;
    const after = step.newState?.inputs?.reinstate ?? 0;
    const does = step.op.startsWith("delete")
      ? "the stack stops tracking it"
      : choosesVersion(step)
        ? step.newState?.inputs?.contentHash === UNKNOWN
          ? // The Agent changes at preview (after a refresh, it may only take in what is live now).
            "if the agent's configuration changes, this deploy publishes it and puts it live as usual; otherwise it stays off air"
          : "this deploy chooses a new version and puts it live as usual"
        : typeof after === "number" && typeof before === "number" && after > before
          ? `this deploy puts it back live (\`reinstate\` ${before} → ${after})`
          : "it stays off air in this deploy; fix forward, revert, or raise `reinstate` to put it back";
    lines.push(`- ${code(nameOf(step.urn))}: version **${String(off.version)}** was ${off.words}; ${does}.`);
  }
  if (lines.length === 0) return "";
  return `#### Taken off air\n\nVersions this stack put live that were taken off air since (the watch, or the dashboard).\n\n${lines.join("\n")}\n\n`;
}
