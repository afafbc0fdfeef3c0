/** The request log served at `/_emulator/requests`. */

/** One logged `/v1` request. `status` is 0 when no answer was sent (`dropped` says why). */
export interface LogEntry {
  at: string;
  method: string;
  path: string;
  status: number;
  request_id: string;
  workspace: string | null;
  /** The request's `User-Agent` (which tool sent it: `voice-agent-diff`, the provider), or null. */
  user_agent: string | null;
  dropped?: "reset" | "after_commit" | "held";
}

const MAX_ENTRIES = 10_000;

/** Newest entries last; keeps the latest 10,000. */
export class RequestLog {
  private entries: LogEntry[] = [];

  add(e: LogEntry): void {
    this.entries.push(e);
    if (this.entries.length > MAX_ENTRIES * 1.5) this.entries = this.entries.slice(-MAX_ENTRIES);
  }

  list(): LogEntry[] {
    return this.entries.length > MAX_ENTRIES ? this.entries.slice(-MAX_ENTRIES) : [...this.entries];
  }

  clear(): void {
    this.entries = [];
  }
}
