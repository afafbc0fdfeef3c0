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
}

/** How many deploy-history rows are read to find the one that took a version off air. */
const HISTORY_ROWS = 200;

/** The first words of a line of the watch in a version's notes. */
const MARK = "[voice-agent watch]";

/** How many of the watch's lines a version's notes keep (the newest). */
const KEPT_LINES = 5;

/**
 * The newest deploy-history row that took `version` off air (its `previous_version` is `version`
 * and it put another version live, or none), reading at most {@link HISTORY_ROWS} rows.
 */
export async function rowThatTookOff(
  c: VoiceAgentClient,
  agentId: string,
  version: number,
): Promise<ActivationRowT | undefined> {
  let rows = 0;
  for await (const row of c.versions.activations(agentId)) {
    if (row.previous_version === version && row.version !== version) return row;
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
  const found: RolledBack = { at: row.at, action: row.action, to: row.version };
  if (recorded && recorded.at === found.at && recorded.to === found.to && recorded.action === found.action)
    return recorded;
  if (row.version === null) return found;
  const put = await c.agents.get(agentId, { version: row.version }).catch(() => undefined);
  const reason = put ? reasonIn(put.notes, row.at, version) : undefined;
  return reason === undefined ? found : { ...found, reason };
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
