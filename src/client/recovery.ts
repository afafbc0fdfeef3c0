/**
 * Helpers for recovering from answers lost after the server committed: the create marker, and the
 * check that a read-back already holds what a lost PATCH sent. See docs/client.md.
 */
import { randomUUID } from "node:crypto";

/** Prefix of the marker a create carries until its answer has been seen. */
export const CREATE_MARKER_PREFIX = "pulumi-voice-agent:create:";

/** A fresh create marker (`pulumi-voice-agent:create:<uuid>`). */
export function newCreateMarker(): string {
  return `${CREATE_MARKER_PREFIX}${randomUUID()}`;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * True when `readBack` already holds everything `sent` asked for, read as a merge-patch: objects
 * are compared key by key (keys not sent are ignored), lists as a whole (lists of objects with a
 * `key` matched by key, since they may read back sorted), scalars exactly (numbers to 1e-9). A `null` sent is matched by a null, empty or absent read-back only, so a reset to a
 * platform default (which reads back as the default object) does not count as a match: the caller
 * then reports the conflict rather than guessing.
 */
export function reflects(sent: unknown, readBack: unknown): boolean {
  if (sent === undefined) return true;
  if (sent === null) {
    return (
      readBack === null ||
      readBack === undefined ||
      (isObject(readBack) && Object.keys(readBack).length === 0) ||
      (Array.isArray(readBack) && readBack.length === 0)
    );
  }
  if (Array.isArray(sent)) {
    if (!Array.isArray(readBack) || readBack.length !== sent.length) return false;
    // Lists of keyed objects (variables, memory fields) may read back in another order.
    const keyOf = (v: unknown): string | undefined =>
      isObject(v) && typeof v.key === "string" ? v.key : undefined;
    if (sent.length > 0 && sent.every((s) => keyOf(s) !== undefined)) {
      const byKey = new Map(readBack.map((r) => [keyOf(r), r] as const));
      return (
        byKey.size === sent.length &&
        sent.every((s) => byKey.has(keyOf(s)) && reflects(s, byKey.get(keyOf(s))))
      );
    }
    return sent.every((s, i) => reflects(s, readBack[i]));
  }
  if (isObject(sent)) {
    return isObject(readBack) && Object.entries(sent).every(([k, v]) => reflects(v, readBack[k]));
  }
  if (typeof sent === "number" && typeof readBack === "number") return Math.abs(sent - readBack) < 1e-9;
  return sent === readBack;
}
