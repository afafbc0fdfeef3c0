/**
 * Traffic at volume (`POST /_emulator/traffic`, docs/emulator.md "Traffic at volume"): many calls
 * to one agent at once, each finishing on the call clock like any other, with an outcome mix:
 * exact proportions interleaved evenly, or with a `seed` a seeded draw per call.
 */
import { z } from "zod";
import { CALL_ORIGINS } from "../spec";
import { type CallRuntime, MAX_CALL_SECONDS, OutcomeRule } from "./calls";
import type { EmulatorSettings } from "./context";
import { mulberry32 } from "./faults";
import { type ApiError, apiError, invalidRequest } from "./http";
import { outcomeOf, type PreparedCall, placePrepared, prepareCall } from "./routes/calls";
import type { AgentRecord, CallOutcome, State, WorkspaceState } from "./state";

/** Most calls one traffic request places. */
export const MAX_TRAFFIC_CALLS = 1_000_000;

/** Most agents one traffic request spreads its calls over (`agent_ids`). */
export const MAX_TRAFFIC_AGENTS = 20_000;

/** Longest `spread_seconds` (30 days). */
const MAX_SPREAD_SECONDS = 30 * 86_400;

/** One entry of the mix: its share of the calls and the outcome they finish with. */
export const TrafficMixEntry = z.strictObject({
  share: z.number().min(0).max(1),
  status: OutcomeRule.shape.status,
  duration_seconds: OutcomeRule.shape.duration_seconds,
  analysis: OutcomeRule.shape.analysis,
});
export type TrafficMixEntry = z.infer<typeof TrafficMixEntry>;

/** A range of seconds `{min, max}` each call draws from (uniformly; min = max for one value). */
const secondsRange = (min: number, max: number, minExclusive: boolean) =>
  z
    .strictObject({
      min: minExclusive ? z.number().gt(min).max(max) : z.number().min(min).max(max),
      max: minExclusive ? z.number().gt(min).max(max) : z.number().min(min).max(max),
    })
    .refine((r) => r.min <= r.max, { message: "min must not be more than max", path: ["max"] });

/** `POST /_emulator/traffic` body. */
export const TrafficBody = z
  .strictObject({
    agent_id: z.guid().optional(),
    agent_ids: z.array(z.guid()).min(1).max(MAX_TRAFFIC_AGENTS).optional(),
    workspace: z.string().min(1).optional(),
    version: z.int().min(0).optional(),
    count: z.int().min(1).max(MAX_TRAFFIC_CALLS),
    origin: z.enum(CALL_ORIGINS).optional(),
    direction: z.enum(["inbound", "outbound", "web"]).optional(),
    mix: z.array(TrafficMixEntry).max(100).optional(),
    seed: z.int().optional(),
    spread_seconds: z.number().gt(0).max(MAX_SPREAD_SECONDS).optional(),
    until_seconds_ago: z.number().min(0).max(MAX_SPREAD_SECONDS).optional(),
    call_seconds: secondsRange(0, MAX_CALL_SECONDS, true).optional(),
    analysis_delay_seconds: secondsRange(0, 86_400, false).optional(),
    list_calls: z.boolean().optional(),
  })
  .superRefine((b, ctx) => {
    const total = (b.mix ?? []).reduce((sum, e) => sum + e.share, 0);
    // A little room for shares written as decimals (0.1 + 0.2 + 0.7).
    if (total > 1 + 1e-9)
      ctx.addIssue({
        code: "custom",
        path: ["mix"],
        message: `the shares add up to ${Math.round(total * 1e6) / 1e6}; they must add up to at most 1`,
      });
    const targets = [b.agent_id, b.agent_ids, b.workspace].filter((t) => t !== undefined).length;
    if (targets !== 1)
      ctx.addIssue({
        code: "custom",
        path: ["agent_id"],
        message: "name exactly one of agent_id, agent_ids and workspace",
      });
    if (b.until_seconds_ago !== undefined && b.spread_seconds === undefined)
      ctx.addIssue({
        code: "custom",
        path: ["until_seconds_ago"],
        message: "until_seconds_ago ends a spread: give it with spread_seconds",
      });
    if (b.version !== undefined && b.agent_id === undefined)
      ctx.addIssue({
        code: "custom",
        path: ["version"],
        message: "version pins the calls of one agent: give it with agent_id only",
      });
  });
export type TrafficBody = z.infer<typeof TrafficBody>;

/** The direction a traffic call takes when the body names none. */
export function trafficDirection(origin: string, direction?: "inbound" | "outbound" | "web") {
  if (direction) return direction;
  return origin === "widget" ? "web" : origin === "inbound" ? "inbound" : "outbound";
}

/**
 * Which mix entry each of `count` calls finishes with (an index into `mix`, or -1 for the default
 * outcome). With `seed`: each call draws from a seeded PRNG (mulberry32) and takes the entry its
 * draw falls in. Without: exactly round(share × count) calls per entry (entries in order, never more
 * than the calls left), interleaved evenly: call j goes to the outcome furthest behind its share at j.
 */
export function assignMix(mix: readonly { share: number }[], count: number, seed?: number): number[] {
  if (seed !== undefined) {
    const next = mulberry32(seed);
    return Array.from({ length: count }, () => {
      const u = next();
      let cumulative = 0;
      for (const [i, e] of mix.entries()) {
        cumulative += e.share;
        if (u < cumulative) return i;
      }
      return -1;
    });
  }
  const wanted: number[] = [];
  let left = count;
  for (const e of mix) {
    const n = Math.min(Math.round(e.share * count), left);
    wanted.push(n);
    left -= n;
  }
  // The default outcome is the last category.
  wanted.push(left);
  const given = wanted.map(() => 0);
  const out: number[] = [];
  for (let j = 0; j < count; j++) {
    let best = -1;
    let bestDeficit = 0;
    for (const [k, n] of wanted.entries()) {
      if ((given[k] as number) >= n) continue;
      const deficit = ((j + 1) * n) / count - (given[k] as number);
      if (best < 0 || deficit > bestDeficit) {
        best = k;
        bestDeficit = deficit;
      }
    }
    given[best] = (given[best] as number) + 1;
    out.push(best === mix.length ? -1 : best);
  }
  return out;
}

/** What placing traffic needs of the emulator. */
export interface TrafficDeps {
  state: State;
  settings: EmulatorSettings;
  calls: CallRuntime;
}

/** `POST /_emulator/traffic` answer: the calls placed in placing order (unless `list_calls` is false). */
export interface TrafficResult {
  workspace: WorkspaceState;
  count: number;
  calls?: { id: string; status: "started" }[];
}

/** Second stream of a seeded request (agents, times, lengths), apart from the mix's draws. */
const TIMING_STREAM = 0x5bd1e995;

/** murmur3's 32-bit finaliser: a bijection of 32-bit integers that mixes every bit. */
function fmix32(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** FNV-1a of a string (32 bits). */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

const HEX_DIGITS = Buffer.from("0123456789abcdef", "latin1");
const idBuffer = Buffer.alloc(36);

/**
 * The id of the call with ordering number `seq` in a seeded request (`salt` from the workspace and
 * the seed): a version-4 UUID whose first group is a bijection of `seq`, so two calls of one
 * emulator never share an id, and the same seed, workspace and ordering give the same ids. Written
 * into one buffer and read back as one flat string (cheaper than a hash, and no slices kept alive).
 */
export function seededCallId(salt: number, seq: number): string {
  const w0 = fmix32(seq ^ salt);
  const w1 = ((fmix32(w0 ^ 0x68e31da4) & 0xffff0fff) | 0x00004000) >>> 0;
  const w2 = ((fmix32(w1 ^ salt ^ 0x1b873593) & 0x3fffffff) | 0x80000000) >>> 0;
  const w3 = fmix32(w2 ^ 0xcc9e2d51);
  let at = 0;
  const put = (word: number, digits: number) => {
    for (let shift = digits * 4 - 4; shift >= 0; shift -= 4) {
      if (at === 8 || at === 13 || at === 18 || at === 23) idBuffer[at++] = 0x2d; // -
      idBuffer[at++] = HEX_DIGITS[(word >>> shift) & 0xf] as number;
    }
  };
  put(w0, 8);
  put(w1, 8);
  put(w2, 8);
  put(w3, 8);
  return idBuffer.toString("latin1");
}

/** The salt of a seeded request's ids. */
export function idSalt(workspace: string, seed: number): number {
  return fmix32(fnv1a(workspace) ^ Math.imul(seed | 0, 0x9e3779b1));
}

/**
 * The same text as one flat string: a derived id is built of slices and concatenations that keep
 * their parts alive (several times the id's size); a call is kept as long as the workspace.
 */
export function flat(text: string): string {
  return Buffer.from(text, "latin1").toString("latin1");
}

function refuse(status: number, code: string, message: string, param: string): ApiError {
  return apiError(status, code, message, { param });
}

/** The agents a traffic body names, all in one workspace, in the order named (creation order for `workspace`). */
function targetsOf(d: TrafficDeps, b: TrafficBody): { ws: WorkspaceState; agents: AgentRecord[] } {
  if (b.workspace !== undefined) {
    const ws = d.state.workspaces.get(b.workspace);
    if (!ws)
      throw refuse(404, "workspace_not_found", `workspace: no workspace '${b.workspace}'`, "workspace");
    const agents = [...ws.agents.values()].filter((a) => a.live_version !== null);
    if (!agents.length)
      throw refuse(
        409,
        "agent_not_published",
        `workspace: no agent of workspace '${ws.name}' has a live version`,
        "workspace",
      );
    return { ws, agents };
  }
  const ids = b.agent_ids ?? [b.agent_id as string];
  let ws: WorkspaceState | undefined;
  const agents = ids.map((id, i) => {
    const found = d.state.findAgentAnywhere(id);
    const param = b.agent_ids ? `agent_ids[${i}]` : "agent_id";
    if (!found) throw refuse(404, "agent_not_found", `${param}: no agent '${id}'`, param);
    if (ws && found.ws !== ws)
      throw invalidRequest(
        `${param}: agent '${id}' is in workspace '${found.ws.name}', the others in '${ws.name}'; one request places calls in one workspace`,
        param,
      );
    ws = found.ws;
    return found.agent;
  });
  return { ws: ws as WorkspaceState, agents };
}

/**
 * Places a traffic body's calls (docs/emulator.md "Traffic at volume"). The version of every agent
 * that takes a call is resolved and checked before the first call is placed, so a refusal places
 * none (and an agent no call goes to costs nothing). The calls of one
 * agent and mix entry share their outcome, numbers and variables (a call is a small record), and
 * with a database they are written in one transaction.
 */
export function placeTraffic(d: TrafficDeps, b: TrafficBody): TrafficResult {
  const { ws, agents } = targetsOf(d, b);
  const origin = b.origin ?? "inbound";
  const direction = trafficDirection(origin, b.direction);
  const mix = b.mix ?? [];
  const plan = assignMix(mix, b.count, b.seed);
  const rules = mix.map(
    (e): OutcomeRule => ({ status: e.status, duration_seconds: e.duration_seconds, analysis: e.analysis }),
  );
  const outcomes = new Map<number, CallOutcome>();
  const outcome = (agentIndex: number, k: number): CallOutcome => {
    const key = agentIndex * (mix.length + 1) + (k + 1);
    let o = outcomes.get(key);
    if (!o) {
      const p = prepared[agentIndex] as PreparedCall;
      const rule = rules[k];
      o = outcomeOf(d.calls, ws, rule ? { ...p, arrival: { ...p.arrival, rule } } : p);
      outcomes.set(key, o);
    }
    return o;
  };
  const seeded = b.seed !== undefined;
  const draw = seeded ? mulberry32((b.seed as number) ^ TIMING_STREAM) : Math.random;
  const now = Date.now();
  // Which agent each call goes to: a seeded draw, else in turn.
  const agentOf = new Uint32Array(b.count);
  for (let j = 0; j < b.count; j++)
    agentOf[j] = seeded ? Math.min(agents.length - 1, Math.floor(draw() * agents.length)) : j % agents.length;
  // The agents that take a call, each resolved and checked before the first call is placed.
  const prepared: (PreparedCall | undefined)[] = new Array(agents.length);
  for (const a of agentOf)
    prepared[a] ??= prepareCall(d.state, ws, {
      agent_id: (agents[a] as AgentRecord).id,
      version: b.version,
      direction,
      origin,
    });
  // When each call was placed: now, or spread over the spread_seconds that end until_seconds_ago
  // (ascending: placing order). The listing is in placing order, newest first: a spread may not
  // begin before the workspace's newest call.
  let created: Float64Array | null = null;
  if (b.spread_seconds !== undefined) {
    const span = b.spread_seconds * 1000;
    const from = now - Math.round((b.until_seconds_ago ?? 0) * 1000) - span;
    const newest = ws.callList.at(-1)?.created_ms;
    if (newest !== undefined && from < newest)
      throw invalidRequest(
        `spread_seconds: the spread begins at ${new Date(from).toISOString()}, before the workspace's newest call (${new Date(newest).toISOString()}); calls are listed in placing order, newest first, so backdated calls must come after the calls already placed (fill the oldest period first, or reset)`,
        "spread_seconds",
      );
    created = new Float64Array(b.count);
    for (let j = 0; j < b.count; j++)
      created[j] = Math.floor(from + (seeded ? draw() * span : (j * span) / b.count));
    if (seeded) created.sort();
  }
  const between = (r: { min: number; max: number } | undefined): number | undefined =>
    r === undefined ? undefined : Math.round((r.min + (r.max - r.min) * draw()) * 1000);
  const list = b.list_calls !== false;
  const salt = seeded ? idSalt(ws.name, b.seed as number) : undefined;
  const calls: { id: string; status: "started" }[] = [];
  d.state.batch(() => {
    for (let j = 0; j < b.count; j++) {
      const a = agentOf[j] as number;
      const seq = d.state.peekSeq();
      const call = placePrepared(d.state, d.settings, d.calls, ws, prepared[a] as PreparedCall, null, {
        id: salt === undefined ? undefined : seededCallId(salt, seq),
        created_ms: created ? (created[j] as number) : now,
        call_ms: between(b.call_seconds),
        analysis_delay_ms: between(b.analysis_delay_seconds),
        outcome: outcome(a, plan[j] as number),
      });
      if (list) calls.push({ id: call.id, status: "started" });
    }
  });
  return { workspace: ws, count: b.count, ...(list ? { calls } : {}) };
}
