/**
 * What staging's live version has shown (the proof of a promotion), and each requirement of
 * `promote`, met or not, in words: shared by the provider's refusal at `up`, the preview's warning
 * (the program side, `index.ts`) and the pull-request report's Promotion line. No I/O.
 */

/** The share of counted calls whose analysis holds a value, against its bound. */
interface RateProof {
  analysis: string;
  value: string | number | boolean;
  atMost: number;
  /** Calls whose analysis holds the value. */
  matching: number;
  /** matching / calls; `null` with no calls. */
  share: number | null;
}

/** What staging's live version has shown. */
export interface Proof {
  fromAgentId: string;
  fromVersion: number;
  /** When it went live (the deploy history's `at`), when the history shows it. */
  liveSince: string | null;
  minutesLive: number | null;
  /** Finished calls of the counted origins answered by that version since it went live. */
  calls: number;
  rates: RateProof[];
  /** The origins counted. */
  origins: string[];
  soakMinutes: number;
  minCalls: number;
  /** The digest of the compared configuration (ignored fields left out): equal on both sides. */
  configDigest: string;
}

const pct = (share: number) => `${Math.round(share * 1000) / 10}%`;
const minutes = (m: number) => (m >= 10 ? String(Math.floor(m)) : String(Math.floor(m * 100) / 100));

/** Each requirement of the proof, met or not, in words. */
export function proofLines(p: Proof): { met: string[]; missing: string[] } {
  const met: string[] = [];
  const missing: string[] = [];
  if (p.soakMinutes > 0) {
    const live = p.minutesLive === null ? undefined : minutes(p.minutesLive);
    if (p.minutesLive !== null && p.minutesLive >= p.soakMinutes)
      met.push(`live ${live} minutes (at least ${minutes(p.soakMinutes)})`);
    else
      missing.push(
        `live ${live ?? "for an unknown time (no deploy-history row)"} of ${minutes(p.soakMinutes)} minutes`,
      );
  }
  if (p.minCalls > 0) {
    const origins = `origins ${p.origins.join(", ")}`;
    if (p.calls >= p.minCalls) met.push(`${p.calls} calls (at least ${p.minCalls}; ${origins})`);
    else missing.push(`${p.calls} of ${p.minCalls} calls (${origins})`);
  }
  for (const r of p.rates) {
    const what = `${r.analysis} = ${JSON.stringify(r.value)}`;
    // A rate is measured on the calls `minCalls` asks for: with none asked and none made, it holds.
    if (r.share === null)
      (p.minCalls > 0 ? missing : met).push(`${what}: no calls to measure (at most ${pct(r.atMost)})`);
    else
      (r.share <= r.atMost ? met : missing).push(
        `${what} on ${r.matching} of ${p.calls} calls (${pct(r.share)}, at most ${pct(r.atMost)})`,
      );
  }
  return { met, missing };
}

/**
 * The preview's warning on a promotion whose proof falls short (`pulumi up` refuses it), or
 * nothing when every requirement holds.
 */
export function shortfallWarning(p: Proof): string | undefined {
  const { missing } = proofLines(p);
  if (missing.length === 0) return undefined;
  return (
    `promotion from agent ${p.fromAgentId} version ${p.fromVersion} not yet proven: ${missing.join("; ")}; ` +
    "`pulumi up` will refuse until it is"
  );
}
