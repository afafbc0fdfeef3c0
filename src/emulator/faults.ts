/** Fault injection for `/v1` routes, deterministic from a seed. */
import { z } from "zod";

/** One write to hold: its method, and a regular expression its path must match. */
const HoldRule = z.strictObject({
  method: z.enum(["POST", "PUT", "PATCH", "DELETE"]),
  path: z.string().min(1),
});

/** `PUT /_emulator/faults` body (missing members are 0). */
export const FaultConfig = z.strictObject({
  error_rate: z.number().min(0).max(1).default(0),
  latency_ms: z.int().min(0).max(60_000).default(0),
  reset_rate: z.number().min(0).max(1).default(0),
  drop_after_commit_rate: z.number().min(0).max(1).default(0),
  /**
   * The next successful write whose method is `method` and whose path matches `path` (a regular
   * expression, anchored at both ends) is committed, then its answer is held until the client
   * goes away: a deterministic "killed after the service committed, before the caller heard" point.
   * Once only: the rule is cleared when it fires. A list holds one write per rule (each fires once,
   * the first matching rule first): several such points in flight at once.
   */
  hold_after_commit: z.union([HoldRule, z.array(HoldRule).min(1).max(20)]).optional(),
  seed: z.int().default(0),
});
export type FaultConfig = z.infer<typeof FaultConfig>;

/** What happens to one request. */
export interface FaultDraw {
  /** Destroy the socket before handling. */
  reset: boolean;
  /** Answer 503 without handling. */
  error: boolean;
  /** For a successful write: commit, then destroy the socket instead of answering. */
  dropAfterCommit: boolean;
  latencyMs: number;
}

/** mulberry32: small, fast, seedable (the tests' random configurations use it too). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NONE: FaultDraw = { reset: false, error: false, dropAfterCommit: false, latencyMs: 0 };

/**
 * The fault plan. Every `/v1` request draws three numbers in a fixed order (reset, error, drop), so
 * the same seed and the same request sequence give the same faults.
 */
export class Faults {
  config: FaultConfig = FaultConfig.parse({});
  private rng = mulberry32(0);

  set(config: FaultConfig): void {
    this.config = config;
    this.rng = mulberry32(config.seed);
  }

  clear(): void {
    this.set(FaultConfig.parse({}));
  }

  /**
   * Whether the answer to this committed write is held (`hold_after_commit`): the first rule that
   * matches fires, and is removed.
   */
  holds(method: string, path: string): boolean {
    const hold = this.config.hold_after_commit;
    if (!hold) return false;
    const rules = Array.isArray(hold) ? hold : [hold];
    const at = rules.findIndex((r) => r.method === method && new RegExp(`^(?:${r.path})$`).test(path));
    if (at < 0) return false;
    const left = rules.filter((_, i) => i !== at);
    this.config = { ...this.config, hold_after_commit: left.length > 0 ? left : undefined };
    return true;
  }

  draw(): FaultDraw {
    const c = this.config;
    if (c.error_rate === 0 && c.reset_rate === 0 && c.drop_after_commit_rate === 0) {
      return c.latency_ms ? { ...NONE, latencyMs: c.latency_ms } : NONE;
    }
    const r1 = this.rng();
    const r2 = this.rng();
    const r3 = this.rng();
    return {
      reset: r1 < c.reset_rate,
      error: r2 < c.error_rate,
      dropAfterCommit: r3 < c.drop_after_commit_rate,
      latencyMs: c.latency_ms,
    };
  }
}
