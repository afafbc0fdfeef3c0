/**
 * Shared primitives of the wire format: ids, timestamps, phone numbers, time zones and the issue
 * type every validation rule returns.
 */
import { z } from "zod";

/** ISO 8601 timestamp in UTC. */
export const Timestamp = z.string();

/** A resource id (UUID string). */
export const Id = z.string();

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when `value` is a well-formed UUID (any version). */
export function isUuid(value: string): boolean {
  return UUID_RE.test(value);
}

const E164_RE = /^\+[1-9][0-9]{6,14}$/;

/** True when `value` is an E.164 number: `+`, country code, 7 to 15 digits in all, no separators. */
export function isE164(value: string): boolean {
  return E164_RE.test(value);
}

/**
 * Reads a phone number written with spaces, dashes, dots or parentheses, its country code after a
 * `+` or the international prefix `00`, and returns it in E.164, or null when it cannot be one.
 * Digits without a country code (`9800000001`) are not one: a `+` is never added to them, since
 * that would invent a country code (here 98).
 */
export function normalizeE164(value: string): string | null {
  const compact = value.trim().replace(/[\s\-.()]/g, "");
  const withPlus = compact.startsWith("+")
    ? compact
    : compact.startsWith("00")
      ? `+${compact.slice(2)}`
      : null;
  return withPlus !== null && isE164(withPlus) ? withPlus : null;
}

let zoneSet: Set<string> | undefined;

/**
 * True when `value` names an IANA time zone (`Asia/Kolkata`, `UTC`, also legacy links such as
 * `Asia/Calcutta`). Fixed offsets (`+05:30`) and abbreviations (`IST`) are not zone names.
 */
export function isIanaTimeZone(value: string): boolean {
  if (!zoneSet) zoneSet = new Set(Intl.supportedValuesOf("timeZone"));
  if (zoneSet.has(value) || value === "UTC" || value === "Etc/UTC") return true;
  if (!/^[A-Za-z]+(?:[/_-][A-Za-z0-9_+-]+)*$/.test(value) || !value.includes("/")) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

/**
 * One problem found by a schema check or a rule.
 *
 * - `field`: path from the root of the request (`voice.voice_id`,
 *   `builtin_tools.transfer_call.numbers[0].timezone`, `query.limit`, `path.agent_id`).
 * - `code`: a reason code (`document_invalid`, `voice_not_found`, `voice_config_invalid`,
 *   `prompt_tool_reference_invalid`) or, for schema problems, a validation type
 *   (`missing`, `extra_forbidden`, `less_than_equal`, ...).
 * - `message`: a sentence that names the field (the service's words: the emulator answers them).
 * - `expected`, `got`: for a value of the wrong type, what was expected and what was given
 *   (`a number`, `the string "1.2"`), so a user's message can say both.
 * - `suggestion`: for an unknown key, the known key of that object nearest to it (wire spelling).
 */
export interface Issue {
  field: string;
  code: string;
  message: string;
  expected?: string;
  got?: string;
  suggestion?: string;
}

/** Reason codes a rule can return that answer 400 (everything else a rule returns is a 422 type). */
export const REASON_CODES = [
  "document_invalid",
  "voice_not_found",
  "voice_config_invalid",
  "prompt_tool_reference_invalid",
  "invalid_request",
] as const;

/** True when the issue's code is a 422 validation type rather than a 400 reason code. */
export function isValidationType(code: string): boolean {
  return !(REASON_CODES as readonly string[]).includes(code);
}

/** Joins path segments the way the service names fields: `a.b[0].c`. */
export function formatPath(path: readonly PropertyKey[], prefix = ""): string {
  let out = prefix;
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else out += out === "" ? String(seg) : `.${String(seg)}`;
  }
  return out;
}
