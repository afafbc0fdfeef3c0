/**
 * What staging's live version has shown (the proof of a promotion), and each requirement of
 * `promote`, met or not, in words: shared by the provider's refusal at `up`, the preview's warning
 * (the program side, `index.ts`) and the pull-request report's Promotion line. The counting and the
 * judging are the evidence module's (`src/evidence/`): only analysed conversations count, a rate's
 * share is over the calls that carry a value, and missing evidence is never met. No I/O.
 */
import type { Finding, Verdict } from "../../evidence/verdict";
import { metAndMissing } from "../../evidence/words";

/** A rate's share among the counted calls that carry a value for its analysis, against its bound. */
interface RateProof {
  analysis: string;
  value: string | number | boolean;
  atMost: number;
  /** Calls whose analysis holds the value. */
  matching: number;
  /** Counted calls that carry a value for the analysis (the share's denominator). */
  measured: number;
  /** matching / measured; `null` when no call carries a value. */
  share: number | null;
}

/** What staging's live version has shown. */
export interface Proof {
  fromAgentId: string;
  fromVersion: number;
  /** When it went live (the deploy history's `at`), when the history shows it. */
  liveSince: string | null;
  minutesLive: number | null;
  /** Calls of the counted origins answered by that version since it went live that became a conversation and were analysed. */
  calls: number;
  /** Calls of that version left out of every count: never connected, voicemail, awaiting analysis, still running, unknown status. */
  notCounted: number;
  rates: RateProof[];
  /** The origins counted. */
  origins: string[];
  soakMinutes: number;
  minCalls: number;
  /** The digest of the compared configuration (ignored fields left out): equal on both sides. */
  configDigest: string;
  /** The evidence's verdict: only `pass` promotes. */
  verdict: Verdict;
  /** Each requirement judged (`src/evidence/judge.ts`). */
  findings: Finding[];
}

/** Each requirement of the proof, met or not, in words. */
export function proofLines(p: Pick<Proof, "findings">): { met: string[]; missing: string[] } {
  return metAndMissing(p);
}

/**
 * The preview's warning on a promotion whose proof falls short (`pulumi up` refuses it), or
 * nothing when every requirement holds.
 */
export function shortfallWarning(p: Proof): string | undefined {
  const { missing } = proofLines(p);
  if (missing.length === 0 && p.verdict === "pass") return undefined;
  return (
    `promotion from agent ${p.fromAgentId} version ${p.fromVersion} not yet proven: ${missing.join("; ")}; ` +
    "`pulumi up` will refuse until it is"
  );
}
