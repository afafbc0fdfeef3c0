/**
 * The `promote` input of an AgentVersion and its `promotion` output (program side: types only).
 * The provider side is `promote.ts`.
 */
import type * as pulumi from "@pulumi/pulumi";

/**
 * A bound on the share of staging's counted calls holding a value, among those that carry a value
 * for the analysis. A rate with no such call is not met.
 */
export interface PromoteRateArgs {
  /**
   * `<group>/<analysis>` as calls key their `custom_analysis`, e.g. `Default Analysis/User Sentiment`;
   * compared exactly with what staging's agent produces (a name it does not produce is refused at preview).
   */
  analysis: pulumi.Input<string>;
  /** The value counted, e.g. `negative`. */
  value: pulumi.Input<string | number | boolean>;
  /** The largest share of counted calls allowed to hold it, 0 to 1 (`0.1` is 10%). */
  atMost: pulumi.Input<number>;
}

/** Where a version is promoted from, and the proof it needs there. */
export interface PromoteArgs {
  /** The staging agent's id, typically a `StackReference` output of the staging stack. */
  from: pulumi.Input<string>;
  /** Staging's live version has been live at least this long (deploy history). Fractions allowed. Default 0. */
  soakMinutes?: pulumi.Input<number>;
  /**
   * At least this many calls answered by staging's live version since it went live that became a
   * conversation and were analysed (a call that never connected, reached voicemail or awaits its
   * analysis does not count; docs/service-decisions.md, "Calls as evidence"). Default 1: `0` promotes
   * without a call.
   */
  minCalls?: pulumi.Input<number>;
  /**
   * Bounds on analysis shares over those calls. Each is judged only over at least `minCalls` calls
   * that carry its analysis's value (fewer is not met). Default: none.
   */
  rates?: pulumi.Input<pulumi.Input<PromoteRateArgs>[]>;
  /**
   * Judge each rate by the top of its Wilson score interval at this confidence (e.g. 0.95; between
   * 0.5 and 1) instead of the observed share: a rate passes only when the share is within its bound
   * with that confidence. Default: unset (the observed share).
   */
  confidence?: pulumi.Input<number>;
  /**
   * The call origins that count (`widget`, `dashboard`, `batch`, `inbound`, `demo`, `api`). Default:
   * `widget`, `batch`, `inbound`: test calls placed through the API (`api`, verification) and a person
   * trying the agent (`dashboard`, `demo`) do not count as callers; list them to count them.
   */
  origins?: pulumi.Input<pulumi.Input<string>[]>;
  /**
   * Paths of the configuration, in the program's spelling, that may differ between environments
   * (`name`, `numbers`, `variables[callee_region].defaultValue`: list elements by their key). Default: none.
   */
  ignore?: pulumi.Input<pulumi.Input<string>[]>;
  /** Staging workspace's API key when it is not this stack's (kept a secret). Default: this stack's provider settings. */
  apiKey?: pulumi.Input<string>;
  /** Staging's service URL, with `apiKey`. Default: this stack's. */
  baseUrl?: pulumi.Input<string>;
}

/** What an AgentVersion promoted. */
export interface Promotion {
  /** Staging's agent. */
  fromAgentId: string;
  /** Staging's live version when it was promoted. */
  fromVersion: number;
  /** When that version went live in staging (the deploy history's `at`). */
  liveSince: string | null;
  /** Calls of the counted origins it answered since that became a conversation and were analysed. */
  calls: number;
  /**
   * Each rate's share over the counted calls that carry a value for its analysis (`measured`; a
   * missing key or `null` is no value), and its bound.
   */
  rates: {
    analysis: string;
    value: string | number | boolean;
    share: number | null;
    measured: number;
    atMost: number;
  }[];
  /** Digest of the compared configuration (fields in `ignore` left out): the same on both sides. */
  configDigest: string;
}
