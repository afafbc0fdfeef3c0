/**
 * AgentVersion: publishing the agent's working draft as a frozen version, and putting it live.
 *
 * - A configuration change of the {@link Agent} changes its `contentHash`, which updates this
 *   resource in place: it publishes the draft the Agent wrote (guarded by `If-Match` with the
 *   revision the Agent wrote) and puts it live. Its `version`, `versionId`, `origin` and
 *   `activation` outputs change (unknown at preview); its id, `<agentId>/<version>`, keeps naming the
 *   version chosen when it was created. Only another `agent` replaces it (removing an AgentVersion
 *   never deletes history).
 * - Publishing is content-addressed: when a published version already holds exactly the draft's
 *   configuration it is reused instead of publishing a duplicate, so a Git revert puts the earlier
 *   version number back live (the service records a rollback). The Agent records the versions
 *   this stack saw published by content hash (`knownVersions`), so finding that version costs one
 *   read, whatever the agent's history; only versions published outside the stack's sight (the
 *   dashboard, an interrupted `up`) are listed and compared.
 * - `version` pins an existing published version instead (a rollback without publishing); setting,
 *   changing or removing the pin also updates in place.
 * - `label` and `notes` change in place on the published version; `live` moves the live pointer.
 * - Rollback-aware: when the version this resource put live is taken off air afterwards (by the
 *   watch, `watch`, or by a person in the dashboard), `refresh` records it (`rolledBack`), the
 *   preview says so, and no deploy puts that version back live until the program chooses another
 *   version or raises `reinstate`.
 * - `verify` lists test calls pinned to the version that must pass before it goes live
 *   (`verify.ts`).
 *
 * This file is the program side; the provider side is `provider.ts`, and the search for a version
 * to reuse (shared with `voice-agent-diff --resolve`) is `reuse.ts`.
 */
import * as pulumi from "@pulumi/pulumi";
import type { Agent } from "../agent";
import { AGENT_CONFIG_FIELDS } from "../agent/fields";
import { type AGENT_VERSION_INPUTS, engineInputs, heldSecretInputs } from "../inputSpecs";
import { ServiceResource } from "../serviceResource";
import { agentChoiceProblem, knownUpToOf, knownVersionOf } from "./fromAgent";
import { DRAFT_KEY, NEXT_HASH_KEY, OUTCOME_FIELDS, OUTCOME_KEY } from "./layout";
import { PLAN_KEY, previewNote } from "./plan";
import type { PromoteArgs, PromoteRateArgs, Promotion } from "./promoteArgs";
import { type Proof, shortfallWarning } from "./proof";

export type { PromoteArgs, PromoteRateArgs, Promotion };

import type { RolledBack } from "./rollback";
import type { Verification } from "./verify";

export type { RolledBack, Verification };

/** An analysis value a test call must give: the value, a list of accepted values, or `{ pattern }` (a regular expression). */
export type ExpectedAnalysisValue =
  | string
  | number
  | boolean
  | (string | number | boolean)[]
  | { pattern: string };

/** One test call of a verification, and what it must give. */
export interface VerifyCallArgs {
  /** The number to call, E.164 (`+14155550100`): a test line that plays the caller. */
  toNumber: pulumi.Input<string>;
  /** Custom variables of the call (the agent's `{{variables}}`). Default: none. */
  variables?: pulumi.Input<Record<string, pulumi.Input<string>>>;
  /** Passthrough JSON returned on the call and in its events (e.g. the commit). Default: none. */
  metadata?: pulumi.Input<Record<string, unknown>>;
  /** What the finished call must give. Default: status `completed`, any analysis. */
  expect?: pulumi.Input<{
    /** The accepted final status, or a list of them. Default `completed`. */
    status?: pulumi.Input<string | string[]>;
    /**
     * Analysis values, by group name then analysis name, as the call's `custom_analysis` keys them
     * (`{ "Default Analysis": { "User Sentiment": ["positive", "neutral"] } }`).
     */
    analysis?: pulumi.Input<Record<string, Record<string, ExpectedAnalysisValue>>>;
  }>;
}

/**
 * Verified go-live: test calls a version must pass before it goes live (docs/deploys.md,
 * "Verified go-live").
 */
export interface VerifyArgs {
  /** The test calls, placed pinned to the version while it is not live; at least one. */
  calls: pulumi.Input<pulumi.Input<VerifyCallArgs>[]>;
  /** How long to wait for every call to finish and be analysed. Default 600. */
  timeoutSeconds?: pulumi.Input<number>;
  /**
   * Raise (0, 1, 2, ...) to place the test calls anew. Each call is placed once per version,
   * call and attempt: a repeated or interrupted `up` judges the calls already placed. Default 0.
   */
  attempt?: pulumi.Input<number>;
}

/** A bound on the share of watched calls whose analysis holds a value (promotion's form). */
export interface WatchAnalysisRateArgs {
  /** `<group>/<analysis>` as calls key their `custom_analysis`, e.g. `Default Analysis/User Sentiment`. */
  analysis: pulumi.Input<string>;
  /** The value counted, e.g. `negative`. */
  value: pulumi.Input<string | number | boolean>;
  /** The largest share of measured calls allowed to hold it, 0 to 1 (`0.2` is 20%). */
  atMost: pulumi.Input<number>;
}

/** A bound on the share of watched calls that finished with one of some statuses. */
export interface WatchStatusRateArgs {
  /** The final status counted, or a list of them (e.g. `["failed", "no_answer"]`). */
  status: pulumi.Input<string | pulumi.Input<string>[]>;
  /** The largest share of finished calls allowed to end so, 0 to 1 (`0.05` is 5%). */
  atMost: pulumi.Input<number>;
}

/**
 * After go-live: the bounds production's callers must stay within. `voice-agent-diff --watch`
 * (docs/deploys.md, "After go-live: the watch") judges the real calls this version answered and
 * puts the previous version back live when a bound is exceeded with confidence.
 */
export interface WatchArgs {
  /** The bounds; at least one. */
  rates: pulumi.Input<pulumi.Input<WatchAnalysisRateArgs | WatchStatusRateArgs>[]>;
  /** Calls measured before any verdict (fewer is inconclusive: nothing is done). Default 20. */
  minCalls?: pulumi.Input<number>;
  /**
   * Judge the calls in windows of this many minutes, back to back from go-live, the current one at a
   * time; window `i` is judged at `1 - (1 - confidence) / (i (i + 1))`, so `confidence` still holds
   * over every window. Default: every call since the version went live.
   */
  windowMinutes?: pulumi.Input<number>;
  /** The call origins judged. Default: `widget`, `batch`, `inbound` (not `api`, `dashboard`, `demo`: tests). */
  origins?: pulumi.Input<pulumi.Input<string>[]>;
  /**
   * Confidence a verdict needs, between 0.5 and 1, held over every pass of the watch (a confidence
   * sequence): a version whose true share is at its bound is rolled back with a chance of at most
   * 1 - confidence, however long it is watched. Default 0.95.
   */
  confidence?: pulumi.Input<number>;
}

/** Inputs of an {@link AgentVersion}. */
export interface AgentVersionArgs {
  /**
   * The agent whose working draft to publish (the Agent resource). Its configuration hash decides
   * when a new version is needed. Give this or `agentId`.
   */
  agent?: Agent;
  /**
   * The id of the agent whose working draft to publish, instead of `agent`: the id of an Agent of
   * the same stack (`host.id`, as `pulumi import` writes it), which the version follows as it follows
   * `agent`. Give this or `agent`.
   */
  agentId?: pulumi.Input<string>;
  /** Short name of the version, e.g. a release tag; editable after publishing. Default: none. */
  label?: pulumi.Input<string>;
  /** Free text about the version, e.g. the commit message; editable after publishing. Default: none. */
  notes?: pulumi.Input<string>;
  /** Put this version live (make it answer calls). Default `true`. `false` publishes without moving the live pointer. */
  live?: pulumi.Input<boolean>;
  /**
   * Pin an existing published version by number instead of publishing the draft: a rollback that
   * publishes nothing. The program asking by name: it goes live even if a rollback took it off air.
   * Default: unset (publish the draft).
   */
  version?: pulumi.Input<number>;
  /**
   * Test calls that must pass before this version goes live (also for a pinned or reused version: a
   * verified rollback). When they fail or time out, the update fails: the version stays published
   * and the earlier live version stays live. A version already live places no calls. Default: none.
   */
  verify?: pulumi.Input<VerifyArgs>;
  /**
   * Promotion with proof (docs/gitops.md, "Promoting staging to production"): publish only the
   * configuration live on a staging agent (`from`), once it has been live long enough, on enough
   * calls, with analysis shares within bounds. A configuration that differs from staging's fails
   * the preview; a proof that falls short is a warning at preview (proof accumulates until the
   * deploy), and `up` refuses it before anything is published or put live. Default: none (publish
   * whatever the program declares).
   */
  promote?: PromoteArgs;
  /**
   * Bounds on what production's callers get once this version is live, judged by
   * `voice-agent-diff --watch`, which rolls back to the previous version when one is exceeded with
   * confidence. Changing it alone writes nothing. Default: none (nothing is watched).
   */
  watch?: pulumi.Input<WatchArgs>;
  /**
   * Raise (0, 1, 2, ...) to put this version back live after it was taken off air (a rollback by
   * the watch or in the dashboard): until then no deploy puts it back, nor one that finds it by its
   * configuration (a revert then a re-apply, a new AgentVersion for the agent). Default 0.
   */
  reinstate?: pulumi.Input<number>;
}

/** A published version of an agent, and whether it is live. */
export class AgentVersion extends ServiceResource {
  /** The agent's id. */
  declare readonly agentId: pulumi.Output<string>;
  /** The published version number. */
  declare readonly version: pulumi.Output<number>;
  /** The version's uuid (accepted by the place-a-call operation as `agent_version_id`). */
  declare readonly versionId: pulumi.Output<string>;
  /** Whether this version answers calls (as last read). */
  declare readonly isLive: pulumi.Output<boolean>;
  /**
   * The version of the agent that answers calls, or `null` when it is off air: this version once it
   * goes live, another after a rollback (as last read: `pulumi refresh` reads it anew).
   */
  declare readonly liveVersion: pulumi.Output<number | null>;
  /** `published` (a new version), `reused` (a published version already held this configuration) or `pinned`. */
  get origin(): pulumi.Output<"published" | "reused" | "pinned"> {
    return this.outcome("origin");
  }
  /** The deploy-history action of the last activation: `activate`, `rollback`, or `none`. */
  get activation(): pulumi.Output<string> {
    return this.outcome("activation");
  }
  /** Why the version cannot go live (retired model, withdrawn voice, deleted knowledge base). */
  get blockedReasons(): pulumi.Output<string[]> {
    return this.outcome("blockedReasons");
  }
  /**
   * What the last verification checked before this version went live: per test call its id,
   * number, final status, the analysis values checked, and whether it passed. Unset when nothing
   * was verified (no `verify`, or the version was already live).
   */
  get verification(): pulumi.Output<Verification | undefined> {
    return this.outcome("verification");
  }
  /**
   * What was promoted: staging's agent and version, since when it was live, the calls and analysis
   * shares it had, and the digest of the compared configuration. Unset without `promote`.
   */
  get promotion(): pulumi.Output<Promotion | undefined> {
    return this.outcome("promotion");
  }
  /**
   * Set while the version this resource put live is off air because something took it off since
   * (recorded by `pulumi refresh`, or by a deploy that found it so): the deploy-history row's `at`
   * and `action`, the version live `to` instead, and the `reason` when the watch did it.
   */
  get rolledBack(): pulumi.Output<RolledBack | undefined> {
    return this.outcome("rolledBack");
  }
  declare readonly label: pulumi.Output<string | undefined>;
  declare readonly notes: pulumi.Output<string | undefined>;
  /**
   * What staging has shown, as `check` measured it for a promotion this deploy publishes (known at
   * preview: the checked inputs); read for the preview's warning.
   */
  declare private readonly promoteProof: pulumi.Output<Proof | undefined>;
  /**
   * What the deploy will do to the agent's versions, found by the provider's check for the
   * preview's one line (`plan.ts`; known at preview: the checked inputs; never an output).
   */
  declare private readonly __plan: pulumi.Output<unknown>;
  /**
   * The six properties above, as one registered output (`layout.ts`): each registered property
   * costs the program an Output and its promises per resource. Derived on first use.
   */
  declare private readonly __outcome: pulumi.Output<Partial<Outcome> | undefined>;
  private derived?: Map<keyof Outcome, pulumi.Output<unknown>>;

  constructor(name: string, args: AgentVersionArgs, opts?: pulumi.CustomResourceOptions) {
    const problem = agentChoiceProblem(args.agent !== undefined, args.agentId !== undefined);
    if (problem) throw new Error(`AgentVersion ${name}: ${problem}`);
    // Named by id: the provider completes the rest from the Agent of that id it served (byId.ts).
    const agent = args.agent;
    const publishing = args.version === undefined && agent !== undefined;
    // Keys the inputs do not have (a misspelt `lable`, from JavaScript or YAML-loaded settings) go
    // to the provider, which refuses them by name at preview instead of dropping them.
    const {
      agent: _agent,
      agentId: _agentId,
      label: _label,
      notes: _notes,
      live: _live,
      version: _version,
      verify: _verify,
      promote: _promote,
      watch: _watch,
      reinstate: _reinstate,
      ...unknown
    } = args;
    // The outcome's names are the class's own getters: refused here, as the provider refuses any
    // other key that is not an input (the engine could not set them on the resource).
    const outputs = Object.keys(unknown).filter((k) => (OUTCOME_FIELDS as readonly string[]).includes(k));
    if (outputs.length > 0) {
      throw new Error(
        `AgentVersion ${name}: ${outputs.map((k) => `${k}: not an input of AgentVersion (an output)`).join("; ")}`,
      );
    }
    const promote = args.promote;
    // Renamed, defaulted and kept secret by the one definition the plugin reads too (`inputSpecs.ts`):
    // `version` is the pin, `live` defaults to true, staging's key is a secret wherever Pulumi keeps it.
    const own = engineInputs(
      "AgentVersion",
      {
        label: args.label,
        notes: args.notes,
        live: args.live,
        version: args.version,
        verify: args.verify,
        watch: args.watch,
        reinstate: args.reinstate,
        promote,
      },
      (v) => pulumi.secret(v),
    );
    const secretOutputs = heldSecretInputs("AgentVersion", own);
    super(
      "agentVersion",
      "AgentVersion",
      name,
      // Only the inputs the program gives, and the outputs: each registered property costs the
      // program memory per resource (an Output and its promises), and an undefined input reaches
      // no one (the engine drops it).
      withoutUndefinedInputs({
        ...unknown,
        agentId: agent ? agent.agentId : args.agentId,
        // What the provider reads of the Agent to choose the version without reading it (the
        // content hash, the versions the stack has seen, the draft as the Agent last wrote it), as
        // one input: one registered property, and one dependency on the Agent in the state.
        [DRAFT_KEY]: agent ? draftOf(agent, publishing) : undefined,
        ...own,
        // The analysis groups the Agent declares: a watch rate on a group it does not attach is refused at preview.
        attachedGroupIds:
          args.watch === undefined || !agent ? undefined : agentConfig(agent).analysisGroupIds,
        // What the Agent declares, compared with staging's live configuration at preview.
        promoteConfig: promote === undefined || !agent ? undefined : agentConfig(agent),
        // Private, read only for a promotion's warning: registered only then.
        ...(promote === undefined ? {} : { promoteProof: undefined }),
        // The preview's plan, read only in a preview: registered only then.
        ...(pulumi.runtime.isDryRun() ? { [PLAN_KEY]: undefined } : {}),
        version: undefined,
        versionId: undefined,
        isLive: undefined,
        liveVersion: undefined,
        [OUTCOME_KEY]: undefined,
      }),
      {
        ...opts,
        dependsOn: opts?.dependsOn ?? agent,
        ...(secretOutputs.length > 0
          ? {
              additionalSecretOutputs: [
                ...new Set([...(opts?.additionalSecretOutputs ?? []), ...secretOutputs]),
              ],
            }
          : {}),
      },
    );
    // From the state as last read (`pulumi preview --refresh` reads it anew), at every preview and
    // deploy: a version taken off air after this resource put it live stays off air until the
    // program chooses another version or raises `reinstate`; a version that became blocked (a
    // model retired, a voice withdrawn, a knowledge base deleted) cannot go live again.
    pulumi.all([this.version, this.__outcome]).apply(([version, outcome]) => {
      const note = previewNote({ version, rolledBack: outcome?.rolledBack }, name);
      if (note) pulumi.log.warn(note.message, this);
      const reasons = outcome?.blockedReasons;
      if (reasons && reasons.length > 0) {
        pulumi.log.warn(
          `version ${version} is blocked and cannot go live again: ${reasons.join("; ")}`,
          this,
        );
      }
    });
    // Otherwise, in the preview of a step that chooses the version: which version it publishes, or
    // which comes back (one line, from the provider's plan; said by the plugin from the same code).
    if (pulumi.runtime.isDryRun()) {
      this.__plan.apply((plan) => {
        const note = previewNote({ [PLAN_KEY]: plan }, name);
        if (note) pulumi.log.info(note.message, this);
      });
    }
    // A promotion whose proof falls short passes the preview (proof accumulates until the deploy),
    // said here; `up` refuses it. Only a deploy that publishes has a proof: a no-op says nothing.
    if (promote !== undefined && pulumi.runtime.isDryRun()) {
      this.promoteProof.apply((proof) => {
        const warning = proof && shortfallWarning(proof);
        if (warning) pulumi.log.warn(warning, this);
      });
    }
  }

  /**
   * The property `key` of the outcome: unset when the state's record lacks it, except in a
   * preview whose record is partial (a change's, which knows only some of it, or a state written
   * before `__outcome`), where it is unknown: never reported missing.
   */
  private outcome<K extends keyof Outcome>(key: K): pulumi.Output<Outcome[K]> {
    this.derived ??= new Map();
    let out = this.derived.get(key);
    if (!out) {
      out = this.__outcome.apply((o) =>
        o !== undefined && (key in o || "origin" in o)
          ? o[key]
          : pulumi.runtime.isDryRun()
            ? pulumi.unknown
            : undefined,
      );
      this.derived.set(key, out);
    }
    return out as pulumi.Output<Outcome[K]>;
  }
}

/** What the deploy made of the version: the six properties the class derives from `__outcome`. */
interface Outcome {
  origin: "published" | "reused" | "pinned";
  activation: string;
  blockedReasons: string[];
  verification: Verification | undefined;
  promotion: Promotion | undefined;
  rolledBack: RolledBack | undefined;
}

/**
 * The bookkeeping the AgentVersion takes from `agent`'s outputs, field for field as
 * `versionInputsFromAgent` takes it from the Agent's state in the provider plugin (without the
 * id). A plain object of Outputs, not one Output: each value stays unknown or known on its own in a
 * preview (an output an older Agent state lacks is unknown there, and must not make the content
 * hash unknown with it), while the program registers one property and the state records one
 * dependency. A pinned version (not `publishing`) takes the draft's position alone.
 */
function draftOf(agent: Agent, publishing: boolean): Record<string, pulumi.Input<unknown>> {
  const position = { draftVersion: agent.draftVersion, documentRevision: agent.documentRevision };
  if (!publishing) return position;
  return {
    ...position,
    contentHash: agent.contentHash,
    // The Agent's checked hash, known in the preview of the Agent's change, when its output
    // `contentHash` is not (the provider reads the one that is known: layout.ts).
    [NEXT_HASH_KEY]: contentHashInput(agent),
    knownVersion: pulumi
      .all([agent.contentHash, agent.knownVersions])
      .apply(([hash, known]) => knownVersionOf(hash, known)),
    knownUpTo: agent.knownVersions.apply(knownUpToOf),
    draftPublished: agent.draftPublished,
    draftHash: agent.draftHash,
    latestVersion: agent.latestVersion,
  };
}

/** The Agent's checked `__contentHash` (registered by the Agent, not a public output). */
function contentHashInput(agent: Agent): pulumi.Output<string> | undefined {
  return (agent as unknown as Record<string, pulumi.Output<string> | undefined>).__contentHash;
}

/** The configuration an Agent declares, as its outputs (known at preview: the Agent's checked inputs). */
function agentConfig(agent: Agent): Record<string, unknown> {
  const outputs = agent as unknown as Record<string, unknown>;
  return Object.fromEntries(
    AGENT_CONFIG_FIELDS.filter((k) => outputs[k] !== undefined).map((k) => [k, outputs[k]]),
  );
}

/** The outputs the class declares: registered even while undefined, so that each is an Output. */
const OUTPUTS = new Set([
  "agentId",
  "version",
  "versionId",
  "liveVersion",
  "isLive",
  OUTCOME_KEY,
  "promoteProof",
  PLAN_KEY,
  "label",
  "notes",
]);

/** `props` without the inputs whose value is undefined (the declared outputs all stay). */
function withoutUndefinedInputs(props: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(props).filter(([k, v]) => v !== undefined || OUTPUTS.has(k)));
}

/** Every input `inputSpecs.ts` defines for the AgentVersion is one of its arguments (a compile-time check). */
const _specsNameArguments: Record<
  Exclude<keyof typeof AGENT_VERSION_INPUTS, keyof AgentVersionArgs>,
  never
> = {};
void _specsNameArguments;
