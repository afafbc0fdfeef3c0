import { redactString } from "./redact";

/** Environment variable that turns on one stderr line per HTTP attempt. */
export const DEBUG_ENV = "VOICE_AGENT_DEBUG";

/** True when `VOICE_AGENT_DEBUG` is `1` or `true` (read at every call). */
export function debugEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env[DEBUG_ENV];
  return v === "1" || v?.toLowerCase() === "true";
}

/** What one debug line says. Never headers, bodies or queries. */
export interface AttemptRecord {
  method: string;
  /** Path without the query string. */
  path: string;
  /** HTTP status, or the connection error code when no answer came. */
  status: number | string;
  durationMs: number;
  requestId: string | undefined;
  /** 0 for the first attempt of an operation, then 1, 2, ... */
  retry: number;
}

/** Format one attempt as a logfmt line. */
export function formatAttempt(r: AttemptRecord, secrets: readonly string[]): string {
  const line =
    `voice-agent method=${r.method} path=${r.path} status=${r.status} duration_ms=${Math.round(r.durationMs)} ` +
    `request_id=${r.requestId ?? "-"} retry=${r.retry}`;
  return redactString(line, secrets);
}

/** Write the line to stderr when debugging is on. */
export function logAttempt(r: AttemptRecord, secrets: readonly string[]): void {
  if (!debugEnabled()) return;
  process.stderr.write(`${formatAttempt(r, secrets)}\n`);
}
