/**
 * The watch (`voice-agent-diff --watch`): after go-live, judges the real calls each watched live
 * version answered and takes a bad one off air, from `pulumi refresh --preview-only --json` (the
 * drift alarm's input).
 *
 * For each AgentVersion of the stack with `watch` that this stack put live (the state says `live`
 * and `isLive`, no `rolledBack`) and that the deploy history shows live now:
 *
 * 1. its calls since the deploy-history row that put it live (with `windowMinutes`, only the
 *    current one of back-to-back windows of that length from go-live, each judged at its share of
 *    the error budget: `windowConfidence`), of `origins` (default `widget`, `batch`, `inbound`: not
 *    the tests' `api`, `dashboard`, `demo`), are tallied by `src/evidence` (one listing of the
 *    workspace's calls per pass, shared by every watched version: `CallMemory.read`);
 * 2. each rate is judged by the confidence sequence at `confidence` (valid over every pass:
 *    `src/evidence/sequential.ts`), over at least `minCalls` measured calls (`judgeSample`,
 *    fail-closed): `fail` when it rules out a share within `atMost`, `pass` when it rules out one
 *    above, `inconclusive` otherwise (too few calls, no values; a rate no call measured on a group
 *    the version does not attach is reported "not measured", exit 5);
 * 3. a `fail` puts back live the newest version that was live before it, is published, not blocked,
 *    and is not off air by our own record (`offAirBy`, whatever label the service gave the row that
 *    took it off air): the watch judged it failing (its line in the notes of the version it put
 *    live), a `rollback` took it off air, or the stack recorded it taken off air while it had it
 *    live (an AgentVersion's `offAir` or `rolledBack`), so a version known to be bad never answers
 *    callers again. None: the pointer stays, the result is `failing` ("nothing safe to return
 *    to", with what a person should do) and the exit code 7.
 *    The history is read again right before the activation, and a row written since (a deploy)
 *    wins: nothing is done, and it is reported. After the activation, its row must have taken the
 *    judged version off air; if a deploy slipped in between, that is reported and no notes are
 *    written. Why is written into the notes of the version put back live (`rollback.ts`), where the
 *    next refresh (`rolledBack`), the drift alarm and a person in the dashboard read it; the write
 *    is a compare-and-set (`If-Match`), read again and merged when a person edited them meanwhile.
 *
 * Which watched version is live comes from the agents listing (one listing for every stack of a
 * pass: {@link watchStacks}); the deploy history's newest row only for an agent whose pointer moved
 * onto a watched version since the last pass. With a {@link WatchMemory} (`--every`), the calls
 * are held from pass to pass as tallies per window (`./watchCalls`): a pass reads the calls that
 * are new and those still to settle, not every window again.
 *
 * It never places a call, and touches nothing else. `--dry-run` says what it would do.
 */

import { setFlagsFromString } from "node:v8";
import { type ActivationRowT, ApiError, REVISION_CONFLICT, type VoiceAgentClient } from "../client";
import {
  type CallSample,
  judgeSample,
  pct,
  type Requirement,
  shareInterval,
  tallyKey,
  towardFail,
  type Verdict,
  windowConfidence,
  windowOf,
} from "../evidence";
import { forgetListedNames } from "../resources/agent/names";
import {
  departures,
  deployHistory,
  offAirBy,
  reasonIn,
  recordedOffAir,
  rollbackLine,
  rollbackNote,
  rolledBackWords,
} from "../resources/agentVersion/rollback";
import {
  DEFAULT_WATCH_CONFIDENCE,
  DEFAULT_WATCH_MIN_CALLS,
  DEFAULT_WATCH_ORIGINS,
  parseWatch,
  unattachedGroups,
  type WatchSpec,
  watchRequirements,
} from "../resources/agentVersion/watch";
import { INCOMPLETE_EXIT } from "./drift";
import { code, literal, prose } from "./markdown";
import { isOurs, isRecord, nameOf, type PreviewJson, typeOf } from "./preview";
import { CallMemory, inBatches, type Track } from "./watchCalls";

/** The exit code of `voice-agent-diff --watch` when at least one version was rolled back (or, with `--dry-run`, would be). */
export const ROLLED_BACK_EXIT = 6;
/** The exit code of `voice-agent-diff --watch` when a version fails its bounds and nothing is safe to return to: a person decides. */
export const NOTHING_SAFE_EXIT = 7;
export { INCOMPLETE_EXIT };

/** Items of the calls listing one pass reads at most (every watched version's window together). */
const MAX_CALLS = 2_000_000;

/**
 * Pages of the agents listing (100 agents each) one pass of a watch that holds what it read
 * (`--every`) reads at most: a longer listing is read across passes, each going on where the last
 * one stopped (at 5,000 agents, half the listing a pass). An agent not on this pass's pages keeps
 * the pointer a pass read less than a round of the listing ago; one whose watched versions changed
 * since (a deploy of its stack) has its deploy history read at once.
 */
export const AGENT_PAGES_PER_PASS = 25;

/** What the watch concluded for one watched AgentVersion. */
export type WatchOutcome =
  /** A bound exceeded with confidence: the previous version was put back live. */
  | "rolled_back"
  /** With `--dry-run`: it would have been rolled back. */
  | "would_roll_back"
  /** A bound exceeded with confidence, but nothing is safe to return to (none, rolled back, missing, blocked): it stays live. */
  | "failing"
  /** A bound exceeded, but a deploy moved the live pointer since the pass read it: the deploy wins. */
  | "superseded"
  /** Every bound held with confidence. */
  | "healthy"
  /** Not enough evidence (too few calls, no values): nothing was done. */
  | "inconclusive"
  /** The version is not live (any more): nothing to judge. */
  | "not_live"
  /** It could not be judged (the watch setting, the history or the calls could not be read). */
  | "error";

/** One rate as judged. */
export interface RateResult {
  /** The bound in words, e.g. `Default Analysis/User Sentiment = "negative" at most 20%`. */
  requirement: string;
  /** Calls that hold the value (or one of the statuses). */
  matching: number;
  /** The denominator: calls that carry a value for the analysis, or finished calls for a status rate. */
  measured: number;
  /** matching / measured; null with none measured. */
  share: number | null;
  /** The confidence sequence at `confidence` (the shares neither side rules out); null with none measured. */
  low: number | null;
  high: number | null;
  atMost: number;
  verdict: Verdict;
  /** The judge's sentence. */
  reason: string;
}

/** The watch's result for one watched AgentVersion. */
export interface WatchResult {
  urn: string;
  /** The resource's name in the program. */
  name: string;
  agentId: string;
  /** The version the stack put live. */
  version: number;
  outcome: WatchOutcome;
  /** When it went live (the deploy-history row), when known. */
  liveSince: string | null;
  /** The version live right before it, when known. */
  previous: number | null;
  /** The version a rollback puts (or, with `--dry-run`, would put) back live: the newest safe one. */
  target?: number;
  /** The calls judged: since when, of which origins, and how they were counted. */
  calls?: {
    from: string | null;
    origins: string[];
    analysed: number;
    finished: number;
    neverConnected: number;
    voicemail: number;
    awaitingAnalysis: number;
    running: number;
    unknownStatus: number;
    truncated: boolean;
  };
  confidence: number;
  minCalls: number;
  rates: RateResult[];
  /** What was done, or why nothing was, in words. */
  action: string;
  /** The deploy-history row of the rollback (`rolled_back`), or of the deploy that won (`superseded`). */
  row?: ActivationRowT;
  /** A problem to fix (an `error`, a `failing` version, a note that could not be written). */
  problem?: string;
}

/** One pass of the watch. */
export interface WatchReport {
  /** The stack, from the resources' URNs. */
  stack?: string;
  /** When the pass started (ISO). */
  at: string;
  dryRun: boolean;
  results: WatchResult[];
}

/** Options of a pass. */
export interface WatchOptions {
  dryRun?: boolean;
  /** The clock (epoch ms). Default `Date.now`. */
  now?: () => number;
  /** Items of the calls listing one pass reads at most. Default 2 000 000 (a first pass over a busy day: 480 000). */
  maxCalls?: number;
  /**
   * The analysis groups each published version attaches, as earlier passes read them (a published
   * version is frozen): hand the same map to every pass of one watch, and each is read once.
   */
  attached?: Map<string, readonly string[]>;
  /**
   * What earlier passes of this watch read (`--every`): each agent's live pointer and the
   * deploy-history row that put it live, the settled calls' tallies per window and the calls still
   * to settle ({@link newWatchMemory}). Hand the same object to every pass: a pass then reads the
   * agents listing, the history of an agent whose pointer moved, and only the calls that are new or
   * still pending. Without it, a pass reads everything afresh (and keeps nothing).
   */
  memory?: WatchMemory;
  /** With `memory`: pages of the agents listing a pass reads at most. Default {@link AGENT_PAGES_PER_PASS}. */
  agentPagesPerPass?: number;
  /**
   * With `memory`, after a pass: a look between passes, at a version nearing a `fail`
   * (`WatchMemory.nearing`): the calls only (new, and those still to settle), each agent's live
   * pointer as the last pass read it (a rollback still reads the deploy history right before it acts).
   */
  look?: boolean;
}

/**
 * How far toward a `fail` a version's evidence must have gone (`towardFail`) for the watch to look
 * again sooner ({@link WatchMemory.nearing}).
 */
export const NEAR_FAIL = 0.5;
/**
 * The parts a `--every` period is cut into while a version nears a `fail`: a pass, then a look at
 * the start of each other part (three looks between two passes).
 */
export const LOOKS_PER_PERIOD = 4;

/** An agent's live pointer as the agents listing (or its deploy history) last showed it, with the row that put it there. */
interface Pointer {
  live: number | null;
  /** The deploy history's newest row when it was read for this pointer (undefined: the history is empty). */
  row: ActivationRowT | undefined;
  /** The pass (`WatchMemory.agents.pass`) that read it; undefined: read again before it is trusted. */
  pass?: number;
  /** The agent's watched versions then (a deploy of its stack changes them: the pointer is read again). */
  watched?: string;
}

/** Where the agents listing stands for a watch that reads it across passes ({@link AGENT_PAGES_PER_PASS}). */
interface AgentsListing {
  /** Passes so far. */
  pass: number;
  /** The cursor the next pass goes on from (undefined: the top). */
  next: string | undefined;
  /** Pages of a whole listing, as last counted (undefined before one was read whole). */
  pages: number | undefined;
  /** Pages read since the top, across passes. */
  sinceTop: number;
}

/** What a watch holds from pass to pass (see {@link WatchOptions.memory}). */
export interface WatchMemory {
  /** The analysis groups each published version attaches (frozen): read once a watch. */
  attached: Map<string, readonly string[]>;
  /** Per agent: its live pointer and the row that put it live, as last read. */
  pointers: Map<string, Pointer>;
  /** Where the agents listing stands, pass to pass. */
  agents: AgentsListing;
  /** The calls: tallies of settled ones per window, those still to settle, where the listing stood. */
  calls: CallMemory;
  /** Requests the last pass sent, by kind (the bench reads it). */
  last: { agentPages: number; historyReads: number; callPages: number; callReads: number };
  /**
   * Live watched versions the last pass (or look) left inconclusive with their evidence past
   * {@link NEAR_FAIL} of the way to a `fail`: while there are any, a `--every` watch looks again
   * sooner ({@link LOOKS_PER_PERIOD}).
   */
  nearing: number;
}

/**
 * How much V8 lets the old generation grow past what a full collection found live, in percent
 * (V8's `--heap-growing-percent`), in a watch's process ({@link boundWatchHeap}).
 */
export const WATCH_HEAP_GROWING_PERCENT = 25;

/**
 * Keeps this process's heap close to what it holds (`voice-agent-diff --watch` calls it first
 * thing). What a watch holds is small (tallies and the calls in flight: about 26 MB at 5,000
 * agents) but a first pass reads thousands of pages, and V8's defaults are sized for throughput:
 * the young generation grows to tens of MB once objects survive, and the old one up to several
 * times its live set before it is collected again. Over 5,000 agents and a day of calls that took
 * the resident set to 360 MB after the first pass and 470 MB over a day. Here the young generation
 * keeps its initial size (`--semi-space-growth-factor=1`: more, smaller scavenges) and the old one
 * grows by {@link WATCH_HEAP_GROWING_PERCENT} % past its live set (`--heap-growing-percent`), so
 * the peak stays under 300 MB (docs/deploys.md "What it costs"). V8 reads both at each collection,
 * so setting them once the process runs takes effect; no heap limit is set (a larger workspace
 * collects more often, it does not run out).
 */
export function boundWatchHeap(): void {
  setFlagsFromString(`--heap-growing-percent=${WATCH_HEAP_GROWING_PERCENT}`);
  setFlagsFromString("--semi-space-growth-factor=1");
}

/** An empty memory for a watch's first pass. */
export function newWatchMemory(attached = new Map<string, readonly string[]>()): WatchMemory {
  return {
    attached,
    pointers: new Map(),
    agents: { pass: 0, next: undefined, pages: undefined, sinceTop: 0 },
    calls: new CallMemory(),
    last: { agentPages: 0, historyReads: 0, callPages: 0, callReads: 0 },
    nearing: 0,
  };
}

/** A watched AgentVersion this stack put live, with its setting parsed. */
interface Watched {
  urn: string;
  name: string;
  agentId: string;
  version: number;
  watch: WatchSpec;
  origins: string[];
  confidence: number;
  minCalls: number;
  requirements: Requirement[];
  /**
   * This stack's own record of the agent's versions taken off air while it had them live (every
   * AgentVersion of the agent: `offAir`, and the version of a `rolledBack`): never put back.
   */
  recorded: ReadonlySet<number>;
}

/** A watched version the history shows live: where its calls start, and where a rollback goes. */
interface Live extends Watched {
  row: ActivationRowT;
  track: Track;
  start: number | undefined;
  sample: CallSample;
}

/** A result with nothing judged. */
function bare(
  w: Pick<Watched, "urn" | "name" | "agentId" | "version">,
  outcome: WatchOutcome,
  action: string,
) {
  return {
    ...w,
    outcome,
    liveSince: null,
    previous: null,
    confidence: DEFAULT_WATCH_CONFIDENCE,
    minCalls: DEFAULT_WATCH_MIN_CALLS,
    rates: [],
    action,
  } satisfies WatchResult;
}

/**
 * The AgentVersions of `refresh` with `watch`: those to judge (this stack put them live), and the
 * results of the others (not live by the program or since a rollback; a setting that cannot be read).
 */
function watchedOf(refresh: PreviewJson): { watched: Watched[]; results: WatchResult[] } {
  const watched: Watched[] = [];
  const results: WatchResult[] = [];
  const recorded = recordedByAgent(refresh);
  for (const step of refresh.steps ?? []) {
    const old = step.oldState;
    if (!old || typeOf(step) !== "AgentVersion" || !isOurs(old.type) || step.op === "delete") continue;
    const inputs = old.inputs ?? {};
    const outs = old.outputs ?? {};
    if (inputs.watch === undefined || inputs.watch === null) continue;
    const { agentId, version } = outs;
    if (typeof agentId !== "string" || typeof version !== "number") continue;
    const who = { urn: step.urn, name: nameOf(step.urn), agentId, version };
    if (JSON.stringify(inputs.watch).includes('"[secret]"')) {
      results.push({
        ...bare(who, "error", "not judged"),
        problem: "its `watch` setting is a secret in the stack, which the refresh JSON hides: make it plain",
      });
      continue;
    }
    const parsed = parseWatch(inputs.watch);
    if (!parsed.ok) {
      results.push({
        ...bare(who, "error", "not judged"),
        problem: `its \`watch\` setting is not valid: ${parsed.problem}`,
      });
      continue;
    }
    if (outs.live === false) {
      results.push(bare(who, "not_live", "not judged: the program keeps it off air (`live: false`)"));
      continue;
    }
    if (isRecord(outs.rolledBack)) {
      const r = outs.rolledBack;
      const words = rolledBackWords({
        at: typeof r.at === "string" ? r.at : null,
        action: typeof r.action === "string" ? r.action : "unknown",
        to: typeof r.to === "number" ? r.to : null,
        ...(typeof r.reason === "string" ? { reason: r.reason } : {}),
      });
      results.push(bare(who, "not_live", `not judged: off air since it was ${words}`));
      continue;
    }
    if (outs.isLive !== true) {
      results.push(bare(who, "not_live", "not judged: this stack has not put it live"));
      continue;
    }
    const watch = parsed.watch;
    watched.push({
      ...who,
      watch,
      origins: watch.origins ?? [...DEFAULT_WATCH_ORIGINS],
      confidence: watch.confidence ?? DEFAULT_WATCH_CONFIDENCE,
      minCalls: watch.minCalls ?? DEFAULT_WATCH_MIN_CALLS,
      requirements: watchRequirements(watch),
      recorded: recorded.get(agentId) ?? new Set(),
    });
  }
  return { watched, results };
}

/**
 * Per agent, the versions this stack recorded as taken off air while it had them live, from every
 * AgentVersion of `refresh` (watched or not): the values of its `offAir`, and its `version` when it
 * records `rolledBack`.
 */
function recordedByAgent(refresh: PreviewJson): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>();
  for (const step of refresh.steps ?? []) {
    const old = step.oldState;
    if (!old || typeOf(step) !== "AgentVersion" || !isOurs(old.type)) continue;
    const outs = old.outputs ?? {};
    if (typeof outs.agentId !== "string") continue;
    const set = out.get(outs.agentId) ?? new Set<number>();
    for (const v of recordedOffAir(outs.offAir)) set.add(v);
    if (isRecord(outs.rolledBack) && typeof outs.version === "number") set.add(outs.version);
    out.set(outs.agentId, set);
  }
  return out;
}

/** The deploy history's newest row, or undefined when it is empty. */
function newestRow(c: VoiceAgentClient, agentId: string): Promise<ActivationRowT | undefined> {
  return c.versions.activations(agentId).find(() => true);
}

/** Each rate of a judged sample, with its interval. */
function rateResults(l: Live, findings: ReturnType<typeof judgeSample>["findings"]): RateResult[] {
  return l.requirements.map((r, i) => {
    const t = l.sample.tallies[tallyKey(r as Parameters<typeof tallyKey>[0])] ?? { measured: 0, matching: 0 };
    const interval = t.measured > 0 ? shareInterval(t.matching, t.measured, l.confidence, true) : null;
    const f = findings[i];
    return {
      requirement: f?.requirement ?? "",
      matching: t.matching,
      measured: t.measured,
      share: t.measured > 0 ? t.matching / t.measured : null,
      low: interval?.low ?? null,
      high: interval?.high ?? null,
      atMost: (r as { atMost: number }).atMost,
      verdict: f?.verdict ?? "error",
      reason: f?.reason ?? "",
    };
  });
}

/**
 * Where a rollback of the judged version goes: the version, its notes and their revision (the
 * notes write is a compare-and-set against it), or why there is none.
 */
type Target = ({ version: number; notes: string | null; revision: number } | { problem: string }) & {
  /** The deploy history's newest row as this read found it. */
  newest: ActivationRowT | undefined;
};

/**
 * The newest version live before `l` (from the deploy history, newest first) that is published, not
 * blocked, and not off air by our own record (`offAirBy`, whatever label the service gave the row
 * that took it off air): the watch judged it failing (its line in the notes of the version it put
 * live), a `rollback` took it off air, or this stack recorded it taken off air while it had it live.
 * A version known to be bad never answers callers again. None: why, version by version, and what a
 * person should do. A version whose record cannot be read is never chosen: the error is the result.
 */
async function safeTarget(c: VoiceAgentClient, l: Live): Promise<Target> {
  const rows = await deployHistory(c, l.agentId);
  const newest = rows[0];
  const from = Math.max(
    0,
    rows.findIndex((r) => r.id === l.row.id),
  );
  const off = departures(rows);
  // The notes of the versions the departures put live (where the watch wrote why), read once each.
  const notes = new Map<number, string | null>();
  const notesOf = async (v: number) => {
    if (!notes.has(v)) {
      const read = await c.agents.get(l.agentId, { version: v }).catch((err: unknown) => {
        throw new Error(
          `the notes of version ${v} (where the watch records what it judged failing) could not be read: ${(err as Error).message}`,
          { cause: err },
        );
      });
      notes.set(v, read.notes);
    }
    return notes.get(v);
  };
  const skipped: string[] = [];
  const tried = new Set<number>([l.version]);
  for (const row of rows.slice(from)) {
    const v = row.previous_version;
    if (v === null || tried.has(v)) continue;
    tried.add(v);
    const dep = off.get(v);
    // The row's label and the stack's record first; then the watch's notes (one read).
    const why =
      dep &&
      (offAirBy(dep, v, undefined, l.recorded) ??
        (dep.version === null
          ? undefined
          : offAirBy(dep, v, reasonIn(await notesOf(dep.version), dep.at, v))));
    if (why) {
      skipped.push(why);
      continue;
    }
    try {
      const detail = await c.agents.get(l.agentId, { version: v });
      if (!detail.is_published) skipped.push(`version ${v} is a draft`);
      else if (detail.blocked_reasons.length > 0)
        skipped.push(`version ${v} is blocked: ${detail.blocked_reasons.join("; ")}`);
      else return { version: v, notes: detail.notes, revision: detail.document_revision, newest };
    } catch (err) {
      if (!(err instanceof ApiError && err.code === "version_not_found")) throw err;
      skipped.push(`version ${v} no longer exists`);
    }
  }
  const why =
    skipped.length > 0
      ? skipped.join("; ")
      : "the agent was off air before this version went live: there is no version to put back";
  return {
    newest,
    problem:
      `nothing safe to return to (${why}). A person decides: fix forward (a new configuration ` +
      "publishes and goes live), pin a good version by name (`version: N`), raise `reinstate` on a " +
      "version known to be good, or take the agent off air in the dashboard",
  };
}

/** The failing rates' sentences: the reason recorded with the rollback. */
function reasonOf(rates: RateResult[]): string {
  return rates
    .filter((r) => r.verdict === "fail")
    .map((r) => r.reason)
    .join("; ");
}

/** Judges one live watched version and acts on a `fail`. */
async function judgeOne(
  c: VoiceAgentClient,
  l: Live,
  now: number,
  dryRun: boolean,
  attached: Map<string, readonly string[]>,
  memory: WatchMemory,
): Promise<WatchResult> {
  const judgement = judgeSample(l.sample, l.requirements, now);
  const s = l.sample;
  const base: WatchResult = {
    urn: l.urn,
    name: l.name,
    agentId: l.agentId,
    version: l.version,
    outcome: "inconclusive",
    liveSince: l.row.at,
    previous: l.row.previous_version,
    calls: {
      from: l.start === undefined ? null : new Date(l.start).toISOString(),
      origins: l.origins,
      analysed: s.analysed,
      finished: Object.values(s.byStatus).reduce((a, b) => a + b, 0),
      neverConnected: s.neverConnected,
      voicemail: s.voicemail,
      awaitingAnalysis: s.awaitingAnalysis,
      running: s.running,
      unknownStatus: s.unknownStatus,
      truncated: s.truncated,
    },
    confidence: l.confidence,
    minCalls: l.minCalls,
    rates: rateResults(l, judgement.findings),
    action: "",
  };
  if (judgement.verdict === "pass")
    return { ...base, outcome: "healthy", action: "kept live: every bound holds" };
  // A rate no call measured on a group the version does not attach never will: said, exit 5.
  const unmeasured = l.requirements.flatMap((r) =>
    "analysis" in r && (l.sample.tallies[tallyKey(r)]?.measured ?? 0) === 0 ? [r.analysis] : [],
  );
  const unattached =
    judgement.verdict === "fail" ? [] : await unattachedGroups(c, l.agentId, l.version, unmeasured, attached);
  if (unattached.length > 0)
    return {
      ...base,
      action: "kept live: not enough evidence to tell",
      problem: `not measured: the version does not attach ${unattached.join(", ")} (attach it to the Agent, or change the rate)`,
    };
  if (judgement.verdict !== "fail")
    return {
      ...base,
      outcome: judgement.verdict === "error" ? "error" : "inconclusive",
      action: "kept live: not enough evidence to tell",
    };
  const reason = reasonOf(base.rates);
  const target = await safeTarget(c, l);
  // The pointer this pass judged by may be a pass or more old (a listing read across passes, a
  // look): a row written since (a deploy, a person's rollback) wins before anything is said or done.
  if (target.newest?.id !== l.row.id) {
    memory.pointers.set(l.agentId, { live: target.newest?.version ?? null, row: target.newest });
    return superseded(base, target.newest);
  }
  if ("problem" in target)
    return {
      ...base,
      outcome: "failing",
      action: "failing: nothing safe to return to; it stays live",
      problem: `a bound is exceeded (${reason}), but ${target.problem}`,
    };
  const to = target.version;
  if (dryRun)
    return { ...base, target: to, outcome: "would_roll_back", action: `would put version ${to} back live` };
  // Right before the activation: a row written since this pass read the history (a deploy) wins.
  const newest = await newestRow(c, l.agentId);
  if (!newest || newest.id !== l.row.id) {
    // The next pass starts from that row (a version put live again starts its calls afresh).
    memory.pointers.set(l.agentId, { live: newest?.version ?? null, row: newest });
    return superseded(base, newest);
  }
  const row = await c.versions.activate(l.agentId, to);
  memory.pointers.set(l.agentId, { live: row.version, row });
  // The activation's row must have taken the judged version off air: a deploy that landed in the
  // one request between the read and the activation gets neither the rollback's notes nor silence.
  if (row.previous_version !== l.version) {
    return {
      ...base,
      target: to,
      outcome: "rolled_back",
      action: `put version ${to} back live at ${row.at} (\`${row.action}\`); no notes were written`,
      row,
      problem:
        `the activation took version ${row.previous_version ?? "none (the agent was off air)"} off air, not version ${l.version}: ` +
        `a deploy put it live between this pass's last read and the activation. Version ${to} is live now. ` +
        `Check version ${row.previous_version} and put it back live if it is good (\`pulumi up\`, with \`reinstate\` raised)`,
    };
  }
  const rolled: WatchResult = {
    ...base,
    target: to,
    outcome: "rolled_back",
    action: `put version ${to} back live at ${row.at} (\`${row.action}\`); why is in version ${to}'s notes`,
    row,
  };
  const line = rollbackLine(row.at, l.version, to, reason);
  try {
    await writeNote(c, l.agentId, to, target, line);
  } catch (err) {
    return {
      ...rolled,
      action: `put version ${to} back live at ${row.at} (\`${row.action}\`)`,
      problem:
        `why could not be written into version ${to}'s notes: ${(err as Error).message}. ` +
        `Nothing of them was overwritten; add this line to version ${to}'s notes by hand: ${line}`,
    };
  }
  return rolled;
}

/** How many times the notes write is tried when they change under it (re-read and merged each time). */
const NOTE_ATTEMPTS = 3;

/**
 * Adds the watch's `line` to the notes of version `to`, as a compare-and-set (`If-Match`: the
 * revision the notes were read at): an edit made since (a person in the dashboard) is never
 * silently overwritten. Refused because they changed, the notes are read again and the line merged
 * into what they hold now, at most {@link NOTE_ATTEMPTS} times; then the refusal is thrown.
 */
async function writeNote(
  c: VoiceAgentClient,
  agentId: string,
  to: number,
  read: { notes: string | null; revision: number },
  line: string,
): Promise<void> {
  let current = read;
  for (let attempt = 1; ; attempt++) {
    try {
      await c.agents.patch(
        agentId,
        { notes: rollbackNote(current.notes, line) },
        { version: to, ifMatch: current.revision },
      );
      return;
    } catch (err) {
      if (!(err instanceof ApiError && err.code === REVISION_CONFLICT)) throw err;
      if (attempt >= NOTE_ATTEMPTS)
        throw new Error(
          `they changed while the watch wrote them (${attempt} times, each read again and merged): ${err.message}`,
          { cause: err },
        );
      const now = await c.agents.get(agentId, { version: to });
      current = { notes: now.notes, revision: now.document_revision };
    }
  }
}

/** A bound exceeded, but a deploy moved the live pointer first: nothing done, the deploy wins. */
function superseded(base: WatchResult, newest: ActivationRowT | undefined): WatchResult {
  return {
    ...base,
    outcome: "superseded",
    action:
      `nothing done: the live pointer moved since this pass read it` +
      (newest
        ? ` (${newest.action} to ${newest.version === null ? "off air" : `version ${newest.version}`} at ${newest.at}): that deploy wins`
        : ""),
    ...(newest ? { row: newest } : {}),
  };
}

/** Whether a rate of `l` judged by the confidence sequence is past {@link NEAR_FAIL} of the way to a `fail`. */
function nearsFail(l: Live): boolean {
  return l.requirements.some((r) => {
    if (!("atMost" in r) || r.sequential !== true || r.confidence === undefined) return false;
    const t = l.sample.tallies[tallyKey(r)];
    return (
      t !== undefined &&
      t.measured > 0 &&
      t.measured >= (r.minMeasured ?? 0) &&
      towardFail(t.matching, t.measured, r.atMost, r.confidence) >= NEAR_FAIL
    );
  });
}

/**
 * The next `budget` pages of the agents listing, going on where the last pass stopped and round to
 * the top at its end (never a page twice in one pass); the pointers of the watched agents on them
 * into `pointers`. A held cursor the service refuses (`invalid_cursor`) starts again from the top.
 */
async function agentsAcross(
  c: VoiceAgentClient,
  agentIds: ReadonlySet<string>,
  pointers: Map<string, number | null>,
  memory: WatchMemory,
  budget: number,
): Promise<void> {
  const place = memory.agents;
  let cursor = place.next;
  let fromTop = cursor === undefined;
  const seen = new Set<string>();
  for (let read = 0; read < budget; read++) {
    if (cursor === undefined) place.sinceTop = 0;
    let page: Awaited<ReturnType<VoiceAgentClient["agents"]["listPage"]>>;
    try {
      memory.last.agentPages++;
      page = await c.agents.listPage({ limit: 100, ...(cursor !== undefined ? { cursor } : {}) });
    } catch (err) {
      if (cursor === undefined || !(err instanceof ApiError) || err.code !== "invalid_cursor") throw err;
      cursor = undefined; // once: a pass without a cursor cannot be refused so
      fromTop = true;
      read--;
      continue;
    }
    place.sinceTop++;
    let again = false;
    for (const a of page.data) {
      if (seen.has(a.id)) again = true;
      seen.add(a.id);
      if (agentIds.has(a.id)) pointers.set(a.id, a.live_version);
    }
    const ended = !page.has_more || !page.next_cursor;
    if (ended) place.pages = place.sinceTop;
    cursor = ended ? undefined : (page.next_cursor as string);
    // Where the next pass goes on from, kept page by page (a page that fails later keeps it).
    place.next = cursor;
    if (page.data.length === 0 || again) break; // empty, or round to where this pass began
    if (ended && fromTop) break; // the whole listing in this pass
  }
}

/**
 * One pass of the watch over the AgentVersions `refresh` lists: judges each watched version this
 * stack put live, rolls back those whose bounds are exceeded with confidence (unless `dryRun`).
 */
export async function watchPass(
  refresh: PreviewJson,
  c: VoiceAgentClient,
  opts: WatchOptions = {},
): Promise<WatchReport> {
  const [report] = await watchStacks([refresh], c, opts);
  return report as WatchReport;
}

/**
 * One pass over several stacks (`--watch` with several refresh files): one agents listing and one
 * calls listing shared by all of them; a report per stack, in the order given.
 *
 * Which watched version is live comes from the agents listing (100 agents a page, read until every
 * watched agent is found); the deploy history's newest row (where the version's calls start) is read
 * only for an agent whose live pointer moved since the last pass of the same `memory` (or that it
 * never read). The calls come from `memory.calls` ({@link CallMemory}): what is new since the last
 * pass, and the calls still to settle.
 */
export async function watchStacks(
  refreshes: readonly PreviewJson[],
  c: VoiceAgentClient,
  opts: WatchOptions = {},
): Promise<WatchReport[]> {
  const now = (opts.now ?? Date.now)();
  const dryRun = opts.dryRun === true;
  const memory = opts.memory ?? newWatchMemory(opts.attached);
  const attached = opts.attached ?? memory.attached;
  memory.last = { agentPages: 0, historyReads: 0, callPages: 0, callReads: 0 };
  memory.nearing = 0;
  const stacks = refreshes.map((refresh) => ({ refresh, ...watchedOf(refresh), live: [] as Live[] }));
  const agentIds = new Set(stacks.flatMap((s) => s.watched.map((w) => w.agentId)));
  const watchedVersions = new Map<string, Set<number>>();
  for (const w of stacks.flatMap((s) => s.watched))
    watchedVersions.set(w.agentId, (watchedVersions.get(w.agentId) ?? new Set()).add(w.version));
  // 1. The live pointers: the agents listing, until every watched agent is found; with a memory
  // and a listing longer than a pass's pages, the next pages of it (see AGENT_PAGES_PER_PASS).
  const pointers = new Map<string, number | null>();
  const place = memory.agents;
  // A look reads no agents page: every pointer as the last pass read it.
  const look = opts.look === true && opts.memory !== undefined && place.pass > 0;
  const budget = look ? 0 : (opts.agentPagesPerPass ?? AGENT_PAGES_PER_PASS);
  const pass = look ? place.pass : ++place.pass;
  const across = look || (opts.memory !== undefined && place.pages !== undefined && place.pages > budget);
  // Fewer watched agents than a pass's pages: each one's newest history row is the cheaper read.
  const byHistory = across && !look && agentIds.size < budget;
  let listingError: Error | undefined;
  if (agentIds.size > 0) {
    try {
      if (across) {
        // With fewer watched agents than a pass's pages, no page: step 2 reads their histories.
        if (!byHistory) await agentsAcross(c, agentIds, pointers, memory, budget);
      } else {
        let pages = 0;
        for await (const page of c.agents.list({ limit: 100 }).pages()) {
          pages++;
          memory.last.agentPages++;
          for (const a of page.data) if (agentIds.has(a.id)) pointers.set(a.id, a.live_version);
          if (pointers.size === agentIds.size) break;
        }
        Object.assign(place, { next: undefined, pages, sinceTop: 0 });
      }
    } catch (err) {
      listingError = err as Error;
    }
  }
  // A pointer read less than a round of the listing ago stands for an agent not on this pass's pages.
  // Until a round reaches the listing's end, its length is known only to be past where it stands.
  const round = look
    ? Number.POSITIVE_INFINITY
    : Math.ceil(Math.max(place.pages ?? 0, place.sinceTop + budget) / budget) + 1;
  const watchedKey = (agentId: string) => [...(watchedVersions.get(agentId) ?? [])].sort().join(",");
  // 2. The newest row of each agent whose pointer moved (or was never read).
  const rows = new Map<string, ActivationRowT | undefined | Error>();
  if (!listingError) {
    await inBatches([...agentIds], async (agentId) => {
      const watched = watchedKey(agentId);
      const held = memory.pointers.get(agentId);
      if (!pointers.has(agentId)) {
        if (!across) return; // not in the whole listing: reported below
        if (!byHistory && held?.pass !== undefined && held.watched === watched && pass - held.pass <= round) {
          pointers.set(agentId, held.live);
          rows.set(agentId, held.row);
          return;
        }
        // Not on this pass's pages, and its stack changed what is watched on it (or it was never
        // read): the newest row of its deploy history says which version is live.
        try {
          memory.last.historyReads++;
          const row = await newestRow(c, agentId);
          const live = row?.version ?? null;
          pointers.set(agentId, live);
          rows.set(agentId, row);
          memory.pointers.set(agentId, { live, row, pass, watched });
        } catch (err) {
          pointers.set(agentId, null);
          rows.set(agentId, err as Error);
        }
        return;
      }
      const live = pointers.get(agentId) ?? null;
      if (held && held.live === live && (held.row?.version ?? null) === live) {
        rows.set(agentId, held.row);
        memory.pointers.set(agentId, { ...held, pass, watched });
        return;
      }
      // A pointer at none of the versions watched on this agent: nothing to judge, nothing read.
      if (!watchedVersions.get(agentId)?.has(live as number)) {
        memory.pointers.set(agentId, { live, row: undefined, pass, watched }); // read afresh once it comes back
        return;
      }
      try {
        memory.last.historyReads++;
        const row = await newestRow(c, agentId);
        rows.set(agentId, row);
        memory.pointers.set(agentId, { live, row, pass, watched });
      } catch (err) {
        rows.set(agentId, err as Error);
      }
    });
  }
  for (const agentId of [...memory.pointers.keys()])
    if (!agentIds.has(agentId)) memory.pointers.delete(agentId);
  // 3. Which watched versions are live, and where their calls start.
  for (const s of stacks) {
    for (const w of s.watched) {
      if (listingError) {
        s.results.push({
          ...bare(w, "error", "not judged"),
          problem: `the agents listing (which version of each agent is live) could not be read: ${listingError.message}`,
        });
        continue;
      }
      if (!pointers.has(w.agentId)) {
        s.results.push({
          ...bare(w, "error", "not judged"),
          problem: "the agent is not in the workspace's agents listing",
        });
        continue;
      }
      const row = rows.get(w.agentId);
      if (row instanceof Error) {
        s.results.push({
          ...bare(w, "error", "not judged"),
          problem:
            row instanceof ApiError && row.status === 404
              ? `the agent is not in the workspace (its deploy history: ${row.message})`
              : `the deploy history could not be read: ${row.message}`,
        });
        continue;
      }
      const liveNow = pointers.get(w.agentId) ?? null;
      if (liveNow !== w.version || !row || row.version !== w.version) {
        const said =
          liveNow === null
            ? "the agent is off air"
            : liveNow !== w.version
              ? `version ${liveNow} is live`
              : "the history is empty";
        const since = row && row.version === liveNow ? `, since ${row.at} (\`${row.action}\`)` : "";
        s.results.push(
          bare(
            w,
            "not_live",
            `not judged: not live any more (${said}${since}); the next \`pulumi refresh\` records it`,
          ),
        );
        continue;
      }
      const windowed = w.watch.windowMinutes !== undefined;
      const track: Track = {
        key: `${w.urn}|${w.agentId}/${w.version}|${row.id}|${JSON.stringify([w.origins, w.requirements, w.watch.windowMinutes ?? null])}`,
        agentId: w.agentId,
        version: w.version,
        since: Date.parse(row.at),
        width: windowed ? (w.watch.windowMinutes as number) * 60_000 : undefined,
        origins: w.origins,
        requirements: w.requirements,
      };
      // Windows (`windowMinutes`) are back to back from go-live, each judged at its share of the
      // error budget (`windowConfidence`), so the promise holds over every window of every pass.
      const window = windowOf(
        {
          agentId: w.agentId,
          version: w.version,
          origins: w.origins,
          since: row.at,
          ...(windowed ? { lastMinutes: w.watch.windowMinutes } : {}),
        },
        now,
      );
      const confidence = windowed ? windowConfidence(w.confidence, window.index) : w.confidence;
      const requirements = windowed ? w.requirements.map((r) => ({ ...r, confidence })) : w.requirements;
      s.live.push({
        ...w,
        confidence,
        requirements,
        row,
        track,
        start: window.start,
        sample: memory.calls.sampleOf(track, requirements, now, new Date(now).toISOString()),
      });
    }
  }
  // 4. The calls: what is new since the last pass, and those still to settle (one listing for all).
  // The groups' names read afresh once this pass (a group may be renamed between passes); each
  // published version's groups once a watch.
  forgetListedNames();
  const live = stacks.flatMap((s) => s.live);
  let listing: Error | undefined;
  // Without the agents listing nothing is judged: the calls held stay as they are for the next pass.
  if (!listingError) {
    try {
      await memory.calls.read(
        c,
        live.map((l) => l.track),
        now,
        opts.maxCalls ?? MAX_CALLS,
      );
    } catch (err) {
      listing = err as Error;
    }
    memory.last.callPages = memory.calls.last.pages;
    memory.last.callReads = memory.calls.last.reads;
  }
  for (const s of stacks) {
    for (const l of s.live) {
      if (listing) {
        s.results.push({
          ...bare(l, "error", "not judged"),
          liveSince: l.row.at,
          previous: l.row.previous_version,
          problem: `the calls could not be read: ${listing.message}`,
        });
        continue;
      }
      l.sample = memory.calls.sampleOf(l.track, l.requirements, now, new Date(now).toISOString());
      try {
        const result = await judgeOne(c, l, now, dryRun, attached, memory);
        s.results.push(result);
        if (result.outcome === "inconclusive" && nearsFail(l)) memory.nearing++;
      } catch (err) {
        s.results.push({
          ...bare(l, "error", "not judged"),
          liveSince: l.row.at,
          previous: l.row.previous_version,
          problem: (err as Error).message,
        });
      }
    }
  }
  return stacks.map((s) => {
    const stack = /^urn:pulumi:([^:]+)::/.exec(s.refresh.steps?.[0]?.urn ?? "")?.[1];
    s.results.sort((a, b) => (a.urn < b.urn ? -1 : a.urn > b.urn ? 1 : 0));
    return { ...(stack ? { stack } : {}), at: new Date(now).toISOString(), dryRun, results: s.results };
  });
}

/**
 * The exit code of a pass: 7 when a version fails with nothing safe to return to (a person
 * decides), else 6 when something was (or would be) rolled back, 5 when incomplete, else 0.
 */
export function watchExitCode(report: WatchReport): number {
  if (report.results.some((r) => r.outcome === "failing")) return NOTHING_SAFE_EXIT;
  if (report.results.some((r) => r.outcome === "rolled_back" || r.outcome === "would_roll_back"))
    return ROLLED_BACK_EXIT;
  if (report.results.some((r) => r.outcome === "error" || r.problem !== undefined)) return INCOMPLETE_EXIT;
  return 0;
}

const HEADINGS: Record<WatchOutcome, string> = {
  rolled_back: "rolled back",
  would_roll_back: "would roll back (dry run)",
  failing: "failing: nothing safe to return to",
  superseded: "failing, a deploy moved the pointer first",
  healthy: "healthy",
  inconclusive: "inconclusive",
  not_live: "not live",
  error: "could not be judged",
};

const share = (v: number | null) => (v === null ? "–" : pct(v));

/** One watched version's section. */
function section(r: WatchResult): string {
  const head = `#### ${r.outcome === "rolled_back" || r.outcome === "would_roll_back" ? "↩" : r.outcome === "healthy" ? "✓" : "·"} AgentVersion ${code(r.name)}: ${HEADINGS[r.outcome]}\n\n`;
  const who = `Agent ${code(r.agentId)}, version **${r.version}**${r.liveSince ? `, live since ${r.liveSince}` : ""}${r.previous !== null ? ` (before it: version ${r.previous})` : ""}${r.target !== undefined && r.target !== r.previous ? `; the newest safe version to return to: ${r.target}` : ""}.`;
  const c = r.calls;
  const counted = c
    ? ` Calls of ${c.origins.map(code).join(", ")} ${r.liveSince && c.from === r.liveSince ? "since it went live" : `since ${c.from ?? "ever"}`}: ` +
      `${c.analysed} analysed conversations, ${c.finished} finished calls` +
      [
        c.neverConnected ? `, ${c.neverConnected} never connected` : "",
        c.voicemail ? `, ${c.voicemail} reached voicemail` : "",
        c.awaitingAnalysis ? `, ${c.awaitingAnalysis} awaiting analysis` : "",
        c.running ? `, ${c.running} still running` : "",
        c.unknownStatus ? `, ${c.unknownStatus} of an unknown status` : "",
      ].join("") +
      `${c.truncated ? "; **the listing was cut short**" : ""}.`
    : "";
  const table = r.rates.length
    ? `\n\n| Rate | Measured | Share | ${pct(r.confidence)} interval | At most | Verdict |\n|---|---|---|---|---|---|\n` +
      r.rates
        .map(
          (x) =>
            `| ${literal(x.requirement.replace(/ at most [\d.]+%$/, ""))} | ${x.matching} of ${x.measured} | ${share(x.share)} | ` +
            `${x.low === null ? "–" : `${pct(x.low)} to ${pct(x.high ?? 1)}`} | ${pct(x.atMost)} | ${x.verdict === "fail" ? "**fail**" : x.verdict} |`,
        )
        .join("\n")
    : "";
  const missing =
    r.outcome === "inconclusive" || r.outcome === "error"
      ? r.rates
          .filter((x) => x.verdict !== "pass")
          .map((x) => `\n- ${prose(x.reason)}`)
          .join("")
      : "";
  const why = missing
    ? `\n\nWhat is missing (at least ${r.minCalls} measured calls per rate):${missing}`
    : "";
  const problem = r.problem ? `\n\n**Problem**: ${prose(r.problem)}` : "";
  return `${head}${who}${counted}${table}${why}\n\n**Did**: ${prose(r.action)}${problem}\n`;
}

/** The watch report as Markdown (a terminal, a job summary, an issue). */
export function renderWatch(report: WatchReport, opts: { title?: string } = {}): string {
  const title =
    opts.title !== undefined
      ? literal(opts.title)
      : `Voice agents: watch${report.stack ? ` of stack ${code(report.stack)}` : ""}`;
  const counts = new Map<WatchOutcome, number>();
  for (const r of report.results) counts.set(r.outcome, (counts.get(r.outcome) ?? 0) + 1);
  const order: WatchOutcome[] = [
    "rolled_back",
    "would_roll_back",
    "failing",
    "superseded",
    "error",
    "inconclusive",
    "healthy",
    "not_live",
  ];
  const summary = order
    .filter((o) => counts.has(o))
    .map((o) => `${counts.get(o)} ${HEADINGS[o]}`)
    .join(", ");
  const n = report.results.length;
  const dry = report.dryRun ? " Dry run: nothing was changed." : "";
  if (n === 0)
    return `### ${title}\n\nNo AgentVersion of this stack has \`watch\`: nothing to judge (pass at ${report.at}).${dry}\n`;
  return (
    `### ${title}\n\n**${summary}** (${n} watched version${n === 1 ? "" : "s"}; pass at ${report.at}).${dry}\n\n` +
    report.results.map(section).join("\n")
  );
}
