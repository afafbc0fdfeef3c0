/**
 * What the plugin does per kind of resource before and after calling its handler: the work a
 * TypeScript program does in the program (a YAML or Go program runs none), each through the same
 * function the TypeScript class calls. Nothing here decides what a field means.
 *
 * - Agent: its create marker comes from its URN (the class hashes its stack, type and name); what
 *   it looks like (state, or the checked inputs of a change at preview) is remembered by URN for
 *   its AgentVersions.
 * - AgentVersion: `agent` (a reference to the Agent resource) is expanded by
 *   `versionInputsFromAgent` (`src/resources/agentVersion/fromAgent.ts`, which the class calls too)
 *   from what this process last saw of that Agent in the same deployment; `version` is the pin.
 */
import { createHash } from "node:crypto";
import { CREATE_MARKER_PREFIX } from "../client/recovery";
import { deepEqual } from "../provider/normalize";
import { UNKNOWN } from "../provider/unknowns";
import { CONTENT_HASH_INPUT } from "../resources/agent/projection";
import { AGENT_TO_COME, AGENT_VIEW_KEYS, inputsFromSeen } from "../resources/agentVersion/byId";
import { agentChoiceProblem } from "../resources/agentVersion/fromAgent";
import { copiedFromAgent, engineInputs } from "../resources/inputSpecs";
import type { ResourceKind } from "../resources/registry";
import { type Path, type Props, resourceRef } from "./values";

/** What a face is handed besides the properties. */
export interface Face {
  urn: string;
  /** What each Agent of this deployment last looked like, by URN. */
  agents: Map<string, Props>;
  /** The properties that are secrets, of what `seen` records. */
  secrets?: ReadonlySet<string>;
}

export interface KindFace {
  kind: ResourceKind;
  /** The outputs an update keeps: the resource's identity, known at the preview of a change. */
  identity: readonly string[];
  /** The handler's `news` at check, from the program's inputs. */
  newsIn(news: Props, fc: Face): Props;
  /** The checked inputs for the engine, from the handler's. */
  checkedOut(checked: Props, news: Props, fc: Face): Props;
  /** The outputs for the engine, from the handler's (`inputs`: the checked inputs). */
  outputsOut(outs: Props, inputs: Props): Props;
  /**
   * The inputs a refresh hands back, from the handler's (`oldInputs`: those in state; `imported`:
   * `pulumi import`'s read, whose old inputs are what the program would declare).
   */
  readInputsOut(inputs: Props, oldInputs: Props, imported: boolean): Props;
  /** The user's property names for the handler's changed keys. */
  userFields(keys: readonly string[], olds?: Props, news?: Props): string[];
  /**
   * Whether the user's `field` has a value in `props` (the state, or the checked inputs), for the
   * kind of its change (added, deleted, updated); default: the key is there.
   */
  holds?(field: string, props: Props): boolean;
  /** The handler's inputs, from the checked inputs the engine hands back (default: the same). */
  handlerIn?(checked: Props): Props;
  /**
   * Why the change from the state `olds` to the checked inputs `news` cannot honour the program's
   * `ignoreChanges` (`ignored`), or undefined.
   */
  ignoreRefused?(ignored: readonly string[], olds: Props, news: Props): string | undefined;
  /** Records what the resource looks like now (`planned`: checked inputs at preview). */
  seen(urn: string, props: Props, fc: Face, planned?: boolean): void;
  /** Why the program's inputs are refused before the handler sees them (a rule of the program's shape). */
  refused?(news: Props): string | undefined;
  /** The id `pulumi import` records, from the outputs read (default: the id it was given). */
  importedId?(outs: Props): string | undefined;
  /** Where the inputs `news` (the handler's) copy another resource's secret (`inputSpecs.ts`). */
  copiedSecrets?(news: Props, fc: Face): Path[];
}

const same: Omit<KindFace, "kind" | "identity"> = {
  newsIn: (news) => news,
  checkedOut: (checked) => checked,
  outputsOut: (outs) => outs,
  readInputsOut: (inputs) => inputs,
  userFields: (keys) => [...new Set(keys)],
  seen: () => undefined,
};

/**
 * The create marker of the resource at `urn`: the URN names its project, stack, type, parents'
 * types and name, which is what the class's marker hashes (with the organization).
 */
export function markerOf(urn: string): string {
  return `${CREATE_MARKER_PREFIX}${createHash("sha256").update(urn).digest("hex").slice(0, 32)}`;
}

const withMarker: Pick<KindFace, "newsIn"> = {
  newsIn: (news, fc) => ({ ...news, createMarker: news.createMarker ?? markerOf(fc.urn) }),
};

/** In an Agent's view at preview: the hash its state holds (its `contentHash` is then the checked one). */
const STATE_HASH = Symbol("the hash in state");
/** In an Agent's view: its properties that are secrets. */
const SECRET_KEYS = Symbol("the secret properties");

/** The properties of an Agent's view that are secrets. */
const secretKeysOf = (view: Props | undefined): ReadonlySet<string> =>
  (view as Record<symbol, ReadonlySet<string> | undefined> | undefined)?.[SECRET_KEYS] ?? new Set();

const agent: KindFace = {
  ...same,
  ...withMarker,
  kind: "agent",
  identity: ["agentId"],
  seen(urn, props, fc, planned) {
    // A change at preview: the checked inputs over the state; the hash the check computed
    // (`__contentHash`, the Agent's checked input), unknown until checked.
    const before = fc.agents.get(urn);
    const view = planned
      ? {
          ...before,
          ...props,
          contentHash: props[CONTENT_HASH_INPUT] ?? UNKNOWN,
          [STATE_HASH]: props.contentHash ?? before?.[STATE_HASH as unknown as string],
        }
      : { ...props };
    (view as Record<symbol, unknown>)[SECRET_KEYS] = fc.secrets ?? secretKeysOf(before);
    fc.agents.set(urn, view);
  },
};

/**
 * What a program has of an Agent whose configuration changes at preview (`seen` planned, its checked
 * hash not the one in state): its id and checked `__contentHash`, every output its write will
 * change unknown (the engine plans a change's outputs as its checked inputs). Otherwise the view.
 */
function asProgramSees(seen: Props): Props {
  const stateHash = (seen as Record<symbol, unknown>)[STATE_HASH];
  const hash = seen.contentHash;
  if (stateHash === undefined || hash === stateHash || hash === UNKNOWN) return seen;
  const unknown = Object.fromEntries(AGENT_VIEW_KEYS.filter((k) => k !== "agentId").map((k) => [k, UNKNOWN]));
  return { ...seen, ...unknown, [CONTENT_HASH_INPUT]: hash };
}

/**
 * The AgentVersion's own inputs, by the user's field. The agent's values its inputs copy (its
 * configuration's hash, its draft) are not the user's `agent`: a reference to the same Agent is no
 * change of `agent`, whatever changed in that Agent (its own diff shows it, and this version's line
 * says what it publishes).
 */
const VERSION_FIELDS: Record<string, readonly string[]> = {
  agent: ["agentId"],
  version: ["pinnedVersion"],
  label: ["label"],
  notes: ["notes"],
  live: ["live"],
  verify: ["verify"],
  watch: ["watch"],
  reinstate: ["reinstate"],
  promote: ["promote"],
};

const agentVersion: KindFace = {
  ...same,
  kind: "agentVersion",
  identity: ["agentId"],
  refused: (news) => agentChoiceProblem(news.agent !== undefined, news.agentId !== undefined),
  newsIn(news, fc) {
    const { agent: ref, ...rest } = news;
    // Renamed and defaulted as the class does (`inputSpecs.ts`): `version` is the pin, `live` true.
    const own = engineInputs("AgentVersion", rest);
    // Named by id (`agentId`): the provider side completes it from the Agent it served (`byId.ts`).
    if (ref === undefined) return own;
    if (ref === UNKNOWN) return { ...own, ...AGENT_TO_COME };
    const target = resourceRef(ref);
    if (!target) return own;
    const seen = fc.agents.get(target.urn);
    if (!seen) {
      throw new Error(
        `AgentVersion: its agent (${target.urn}) is not one this provider serves in this deployment: ` +
          "give the Agent and its AgentVersion the same provider",
      );
    }
    // Values the Agent does not have yet (a new agent at preview) are unknown, as in a program.
    const sees = asProgramSees(seen);
    const taken = inputsFromSeen(sees, own);
    if (seen.agentId === undefined && target.id) taken.agentId = target.id;
    return { ...own, ...taken };
  },
  // The pin stays `version` in the checked inputs (the state's inputs) beside the handler's
  // `pinnedVersion`: the engine's `ignoreChanges: ["version"]` puts back the state's `version`
  // before the check, which then keeps the pin (without it the pin would be dropped, and the
  // draft published).
  checkedOut: (checked, news) => ({
    ...checked,
    ...(news.agent !== undefined ? { agent: news.agent } : {}),
    ...(checked.pinnedVersion !== undefined ? { version: checked.pinnedVersion } : {}),
  }),
  // The handler's `version` is the published version (an output), its pin `pinnedVersion`.
  handlerIn: ({ version: _pin, ...rest }) => rest,
  // A state an earlier plugin wrote holds the pin as `pinnedVersion` alone: the engine, finding no
  // `version` there, removed the program's, and the check dropped the pin. Refused rather than
  // publishing the draft.
  ignoreRefused: (ignored, olds, news) =>
    ignored.includes("version") &&
    olds.pinnedVersion !== undefined &&
    olds.pinnedVersion !== null &&
    !deepEqual(olds.pinnedVersion, news.pinnedVersion ?? null)
      ? `version: ignoreChanges ["version"] cannot keep the pin (version ${String(olds.pinnedVersion)}): this ` +
        "stack's state, written by an earlier voice-agent plugin, holds no `version` input for the engine to " +
        "put back, so the pin would be dropped and the agent's draft published. Run `pulumi refresh` once " +
        "(it records the pin as `version`), then preview again."
      : undefined,
  holds: (field, props) =>
    (VERSION_FIELDS[field] ?? [field]).some((k) => props[k] !== undefined && props[k] !== null),
  // Its Agent by reference, else by id among the Agents of the deployment: what it copies of a secret.
  copiedSecrets(news, fc) {
    const target = resourceRef(news.agent);
    const view = target
      ? fc.agents.get(target.urn)
      : [...fc.agents.values()].find((v) => news.agentId !== undefined && v.agentId === news.agentId);
    return copiedFromAgent(secretKeysOf(view));
  },
  // An import (no old inputs): the agent's id is `agentId` (the code generator writes a reference to
  // an Agent imported alongside: `agentId: ${host.id}`). The pin is `version`, at an import as in
  // the checked inputs (a refresh keeps it for `ignoreChanges`).
  readInputsOut: (inputs, oldInputs) => ({
    ...inputs,
    ...(oldInputs.agent !== undefined ? { agent: oldInputs.agent } : {}),
    ...(inputs.pinnedVersion !== undefined ? { version: inputs.pinnedVersion } : {}),
  }),
  userFields(keys, olds, news) {
    const agentField = news?.agent !== undefined ? "agent" : "agentId";
    if (!olds || !news) return [...new Set(keys.map((k) => (k === "agentId" ? agentField : k)))];
    const changed = Object.entries(VERSION_FIELDS)
      .filter(([, internal]) => internal.some((k) => !deepEqual(olds[k] ?? null, news[k] ?? null)))
      .map(([field]) => (field === "agent" ? agentField : field));
    return changed;
  },
};

/** Each resource token's face. */
export const KINDS: Record<string, KindFace> = {
  "voice-agent:index:Agent": agent,
  "voice-agent:index:AgentVersion": agentVersion,
  "voice-agent:index:Widget": {
    ...same,
    kind: "widget",
    identity: ["agentId", "widgetId"],
    // Imported by its agent's id (an agent has one widget), recorded by its own id, as a Widget
    // Pulumi creates is: the agent's id stays the Agent's, so the code generator writes a reference
    // to the Agent imported alongside for an AgentVersion's `agentId` (it drops an id two
    // resources share).
    importedId: (outs) => (typeof outs.widgetId === "string" ? outs.widgetId : undefined),
  },
  "voice-agent:index:KnowledgeBase": {
    ...same,
    ...withMarker,
    kind: "knowledgeBase",
    identity: ["knowledgeBaseId"],
  },
  "voice-agent:index:AnalysisGroup": { ...same, ...withMarker, kind: "analysisGroup", identity: ["groupId"] },
};
