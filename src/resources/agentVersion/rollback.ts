/**
 * Rollback-aware deploys: what the deploy history says of a version this stack put live that is no
 * longer live, and why, when the watch (`voice-agent-diff --watch`) took it off air. Shared by the
 * AgentVersion's `read` and `update` (`provider.ts`), the drift alarm and the watch; it loads no
 * `@pulumi/pulumi`.
 *
 * Why the watch rolled a version back is written where the service lets anyone see it: in the
 * notes of the version it put back live (notes stay editable on a published version), one line per
 * rollback, keyed by the deploy-history row's `at` and the version taken off air
 * ({@link rollbackNote}). The version taken off air keeps its notes: those are the program's
 * (`notes`), and a note of ours there would read as drift.
 *
 * Off air is our own record, not the row's label (the service writes `rollback` only when the
 * number goes down, so the watch's rollback to a newer version reads `activate`): a version stays
 * off air ({@link offAirBy}) when the watch's line for the row that took it off air is in the notes
 * of the version that row put live, when that row is a `rollback`, or when the stack recorded it
 * taken off air while it had it live (an AgentVersion's `offAir`). Only `reinstate` or a pin brings
 * it back: neither the watch's choice of a version to put back nor a reuse by content does.
 */
import type { ActivationRowT, VoiceAgentClient } from "../../client";

/** What took a version off air: the deploy-history row, and why when the watch did it. */
export interface RolledBack {
  /** When (the row's `at`); `null` when the history no longer reaches that row. */
  at: string | null;
  /** The row's action: `rollback`, `activate`, `deactivate` (or `unknown` without the row). */
  action: string;
  /** The version put live instead; `null` when the agent was taken off air. */
  to: number | null;
  /** Why, when the watch did it (read from the notes of the version it put back live). */
  reason?: string;
  /**
   * False while only a refresh has seen it: a deploy of this stack has not recorded it yet, so the
   * refresh shows the resource changing and the next `up` records it (an update that writes nothing
   * to the service). True once a deploy recorded it; absent in states of earlier releases (recorded).
   */
  recorded?: boolean;
}

/** How many deploy-history rows are read to find the one that took a version off air. */
const HISTORY_ROWS = 200;

/** The first words of a line of the watch in a version's notes. */
const MARK = "[voice-agent watch]";

/** How many of the watch's lines a version's notes keep (the newest). */
const KEPT_LINES = 5;

/**
 * The newest deploy-history row that took `version` off air (its `previous_version` is `version`
 * and it put another version live, or none), reading at most {@link HISTORY_ROWS} rows; none when
 * a newer row put it live (it is live, or was live again since).
 */
export async function rowThatTookOff(
  c: VoiceAgentClient,
  agentId: string,
  version: number,
): Promise<ActivationRowT | undefined> {
  let rows = 0;
  for await (const row of c.versions.activations(agentId)) {
    if (row.version === version) return undefined;
    if (row.previous_version === version) return row;
    if (++rows >= HISTORY_ROWS) break;
  }
  return undefined;
}

/**
 * What took `version` off air, with the watch's reason when it did it. `recorded` is what an
 * earlier read found: the same row keeps its reason without reading the notes again.
 * `liveNow` is the agent's live version, for the record when the history no longer reaches the row.
 */
export async function takenOffAir(
  c: VoiceAgentClient,
  agentId: string,
  version: number,
  liveNow: number | null,
  recorded?: RolledBack,
): Promise<RolledBack> {
  const row = await rowThatTookOff(c, agentId, version);
  if (!row) return { at: null, action: "unknown", to: liveNow };
  return withReason(c, agentId, version, row, recorded);
}

/** The record of `row`, which took `version` off air, with the watch's reason read from the version it put live. */
async function withReason(
  c: VoiceAgentClient,
  agentId: string,
  version: number,
  row: ActivationRowT,
  recorded?: RolledBack,
): Promise<RolledBack> {
  const found: RolledBack = { at: row.at, action: row.action, to: row.version };
  if (recorded && recorded.at === found.at && recorded.to === found.to && recorded.action === found.action)
    return recorded;
  if (row.version === null) return found;
  const put = await c.agents.get(agentId, { version: row.version }).catch(() => undefined);
  const reason = put ? reasonIn(put.notes, row.at, version) : undefined;
  return reason === undefined ? found : { ...found, reason };
}

/**
 * The versions of `rows` (the deploy history, newest first) that are off air and have not been live
 * since, each with the row that took it off air (whatever its label: `rollback`, `activate`,
 * `deactivate`). A version put live again since (`reinstate`, a pin) is not among them.
 */
export function departures(rows: readonly ActivationRowT[]): Map<number, ActivationRowT> {
  const off = new Map<number, ActivationRowT>();
  // Versions whose newest row was met: only that row tells whether they stay off air.
  const seen = new Set<number>();
  for (const row of rows) {
    const from = row.previous_version;
    if (from !== null && from !== row.version && !seen.has(from)) {
      seen.add(from);
      off.set(from, row);
    }
    if (row.version !== null) seen.add(row.version);
  }
  return off;
}

/**
 * The versions of `rows` (the deploy history, newest first) that a row labelled `rollback` took
 * off air and that have not been live since, each with that row: a person's rollback (the
 * dashboard, or a Git revert: any activation of an older version). The label is only one of the
 * signs: the service writes `rollback` only when the number goes down, so the watch's own rollback
 * to a newer version reads `activate`; {@link offAirBy} adds our own record.
 */
export function offAirByRollback(rows: readonly ActivationRowT[]): Map<number, ActivationRowT> {
  return new Map([...departures(rows)].filter(([, row]) => row.action === "rollback"));
}

/**
 * Why `version`, taken off air by `row` (its newest departure, nothing put it live since), stays
 * off air, or undefined when it may come back: the watch judged it failing (`watchReason`: its
 * line for this very row and version in the notes of the version `row` put live, {@link reasonIn});
 * `row` is a `rollback`; or this stack recorded it taken off air while it had it live
 * (`recorded`: the versions of its AgentVersions' `offAir` and `rolledBack`). Whatever label the
 * service gave the row: only `reinstate` or an explicit pin brings such a version back.
 */
export function offAirBy(
  row: ActivationRowT,
  version: number,
  watchReason: string | undefined,
  recorded: ReadonlySet<number> = new Set(),
): string | undefined {
  if (watchReason !== undefined)
    return `version ${version} was judged failing by the watch and taken off air at ${row.at}`;
  if (row.action === "rollback") return `version ${version} was taken off air by a rollback at ${row.at}`;
  if (recorded.has(version))
    return `version ${version} was taken off air at ${row.at} (\`${row.action}\`) while this stack had it live`;
  return undefined;
}

/** The deploy history, newest first, at most {@link HISTORY_ROWS} rows (one page in the common case). */
export async function deployHistory(c: VoiceAgentClient, agentId: string): Promise<ActivationRowT[]> {
  const rows: ActivationRowT[] = [];
  for await (const row of c.versions.activations(agentId)) {
    rows.push(row);
    if (rows.length >= HISTORY_ROWS) break;
  }
  return rows;
}

/**
 * Whether `version` stays off air: nothing put it live since the row that took it off air, and that
 * row is a rollback, or the watch judged it failing (its line in the notes of the version it put
 * live), or this stack recorded it taken off air while it had it live (`recorded`, {@link offAirBy}).
 * What did it (and why, when the watch did it), or undefined. Whichever resource or stack asks: a
 * Git revert then a re-apply, a new AgentVersion for the same agent, `live` turned back on, all
 * find it.
 */
export async function rolledBackInHistory(
  c: VoiceAgentClient,
  agentId: string,
  version: number,
  recorded?: ReadonlySet<number>,
): Promise<RolledBack | undefined> {
  const row = await rowThatTookOff(c, agentId, version);
  if (!row) return undefined;
  const found: RolledBack = { at: row.at, action: row.action, to: row.version };
  // Off air by the row's label or the stack's record already: the notes only add why.
  const known = offAirBy(row, version, undefined, recorded) !== undefined;
  // Otherwise the notes of the version put live say whether the watch did it; unread, nothing is
  // assumed (the deploy fails, saying why, rather than putting back a version judged failing).
  let reason: string | undefined;
  if (row.version !== null) {
    const put = await c.agents.get(agentId, { version: row.version }).catch((err: unknown) => {
      if (known) return undefined;
      throw new Error(
        `could not tell whether version ${version} stays off air: the notes of version ${row.version} ` +
          `(put live at ${row.at}) could not be read: ${(err as Error).message}`,
        { cause: err },
      );
    });
    reason = reasonIn(put?.notes, row.at, version);
  }
  if (!known && reason === undefined) return undefined;
  return reason === undefined ? found : { ...found, reason };
}

/** The versions this stack recorded as taken off air while it had them live: an AgentVersion's `offAir`. */
export function recordedOffAir(offAir: unknown): Set<number> {
  const out = new Set<number>();
  if (offAir !== null && typeof offAir === "object")
    for (const v of Object.values(offAir)) if (typeof v === "number") out.add(v);
  return out;
}

/** The line the watch writes into the notes of the version it put back live. */
export function rollbackLine(at: string, from: number, to: number, reason: string): string {
  return `${MARK} ${at}: version ${from} taken off air, version ${to} put back live: ${reason.replace(/\s+/g, " ")}`;
}

/** The watch's reason for the rollback of `from` at `at`, from a version's notes; undefined when absent. */
export function reasonIn(notes: string | null | undefined, at: string, from: number): string | undefined {
  const head = `${MARK} ${at}: version ${from} taken off air, version `;
  for (const line of (notes ?? "").split("\n")) {
    if (!line.startsWith(head)) continue;
    const cut = line.indexOf(": ", head.length);
    if (cut >= 0) return line.slice(cut + 2);
  }
  return undefined;
}

/**
 * The notes of the version put back live with the watch's line added: its own text kept, and the
 * newest {@link KEPT_LINES} lines of the watch.
 */
export function rollbackNote(notes: string | null | undefined, line: string): string {
  const lines = (notes ?? "").split("\n");
  const own = lines
    .filter((l) => !l.startsWith(MARK))
    .join("\n")
    .trimEnd();
  const ours = [...lines.filter((l) => l.startsWith(MARK)), line].slice(-KEPT_LINES);
  return own === "" ? ours.join("\n") : `${own}\n\n${ours.join("\n")}`;
}

/** The rollback in words: "rolled back at T to version M" (and why, when the watch did it). */
export function rolledBackWords(r: RolledBack): string {
  const to = r.to === null ? "the agent is off air" : `version ${r.to} is live`;
  const how =
    r.action === "rollback"
      ? `rolled back at ${r.at} to version ${r.to}`
      : r.action === "activate"
        ? `replaced at ${r.at} by version ${r.to}`
        : r.action === "deactivate"
          ? `taken off air at ${r.at} (the agent is off air)`
          : `taken off air (the deploy history no longer shows when; ${to})`;
  return `${how}${r.reason ? `, by the watch: ${r.reason}` : ""}`;
}
