/**
 * Credential redaction for everything the client puts in an error or a log line.
 *
 * Two layers: the exact secrets known at the point of use (the API key of the request), and
 * patterns that look like credentials whatever their value (`Bearer <token>`, `Authorization: ...`).
 */

/** What every redacted secret is replaced with. */
export const REDACTED = "[REDACTED]";

const BEARER = /\b(Bearer|Basic)\s+[^\s"',;)}\]]+/gi;
const AUTH_HEADER = /(authorization["']?\s*[:=]\s*["']?)[^"',;\r\n}]+/gi;

/**
 * Replace every occurrence of each secret, and anything shaped like a bearer credential, in `text`.
 * Secrets shorter than 4 characters are ignored (replacing them would mangle ordinary text and
 * they are not credentials worth protecting).
 */
export function redactString(text: string, secrets: readonly (string | undefined)[] = []): string {
  let out = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 4 && out.includes(secret)) {
      out = out.split(secret).join(REDACTED);
    }
  }
  return out.replace(BEARER, `$1 ${REDACTED}`).replace(AUTH_HEADER, `$1${REDACTED}`);
}

/** Deep copy of a JSON-like value with every string passed through {@link redactString}. */
export function redactDeep(
  value: unknown,
  secrets: readonly (string | undefined)[] = [],
  depth = 0,
): unknown {
  if (typeof value === "string") return redactString(value, secrets);
  if (value === null || typeof value !== "object" || depth > 20) return value;
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, secrets, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = /^(authorization|api[-_]?key|x-api-key)$/i.test(k)
      ? REDACTED
      : redactDeep(v, secrets, depth + 1);
  }
  return out;
}
