/**
 * An AgentVersion whose inputs name its agent by what the provider process saw of the Agent (the
 * provider side; loads no Pulumi): `agentId` (an id, as `pulumi import` writes it:
 * `agentId: ${host.id}`), expanded from the Agent this process served in the deployment
 * (`agentAsServed`), and the plugin's `agent` reference, expanded from the Agent it saw by URN. Both
 * expand through {@link inputsFromSeen}, as the class expands `agent` from the Agent's outputs
 * (`versionInputsFromAgent`), so the version follows its agent alike: a change of the agent's
 * configuration previews as the AgentVersion changing.
 */
import { deepEqual, dropUndefined } from "../../provider/normalize";
import type { Props } from "../../provider/resource";
import { containsUnknown, UNKNOWN } from "../../provider/unknowns";
import { AGENT_CONFIG_FIELDS } from "../agent/fields";
import { CONTENT_HASH_INPUT } from "../agent/projection";
import { agentAsServed, DRAFT_OUTPUTS } from "../agent/provider";
import { type AgentView, versionInputsFromAgent } from "./fromAgent";
import { DRAFT_FIELDS, NEXT_HASH_KEY } from "./layout";

/** The Agent's outputs an AgentVersion reads, its id first. */
export const AGENT_VIEW_KEYS: readonly (keyof AgentView)[] = ["agentId", ...DRAFT_OUTPUTS];

/**
 * The inputs an AgentVersion (`news`, the handler's names: `pinnedVersion`, `promote`, `watch`)
 * takes from `seen`, its Agent as a program has it at this step (an output it does not have yet is
 * unknown; in the preview of the Agent's change, its checked hash is `__contentHash`): what the
 * class takes from the Agent's outputs, the Agent's declared configuration for a promotion, and its
 * analysis groups for a watch.
 */
export function inputsFromSeen(seen: Props, news: Props): Props {
  const publishing = news.pinnedVersion === undefined;
  const view: AgentView = Object.fromEntries(AGENT_VIEW_KEYS.map((k) => [k, seen[k] ?? UNKNOWN]));
  const config = (keys: readonly string[]) =>
    Object.fromEntries(keys.filter((k) => seen[k] !== undefined).map((k) => [k, seen[k]]));
  const checkedHash = publishing ? seen[CONTENT_HASH_INPUT] : undefined;
  const groups = seen.analysisGroupIds;
  return {
    ...versionInputsFromAgent(view, publishing),
    ...(checkedHash !== undefined ? { [CONTENT_HASH_INPUT]: checkedHash } : {}),
    ...(news.promote !== undefined ? { promoteConfig: config(AGENT_CONFIG_FIELDS) } : {}),
    ...(news.watch !== undefined && groups !== undefined ? { attachedGroupIds: groups } : {}),
  };
}

/** The inputs a program has while its agent is still to be created (its id unknown at preview). */
export const AGENT_TO_COME = { agentId: UNKNOWN, draftVersion: UNKNOWN, documentRevision: UNKNOWN };

/**
 * `news` (the handler's inputs, bookkeeping at the top level) completed from its agent when it names
 * it by id only (`agentId` without anything the class takes from the Agent, `layout.ts`): the agent this process
 * served in the deployment; an id unknown at preview leaves those values unknown. A refusal naming
 * `agentId` when no Agent of the deployment has that id. `olds` equal to `news` (the engine's check
 * of what `pulumi import` read, which it keeps as read) is left as it is.
 */
export function completedById(olds: Props, news: Props): { inputs: Props; problem?: string } {
  const { agentId } = news;
  const fromAgent = [...DRAFT_FIELDS, NEXT_HASH_KEY].some((k) => news[k] !== undefined);
  if (agentId === undefined || fromAgent) return { inputs: news };
  if (deepEqual(olds, news)) return { inputs: news };
  if (containsUnknown(agentId)) return { inputs: { ...news, ...AGENT_TO_COME } };
  const seen = typeof agentId === "string" ? agentAsServed(agentId) : undefined;
  // A pinned version publishes nothing: it needs no draft of its agent's, and is checked as it is.
  if (!seen && news.pinnedVersion !== undefined) return { inputs: news };
  if (!seen) {
    return {
      inputs: news,
      problem:
        `agentId: no Agent of this stack has the id ${JSON.stringify(agentId)}: an AgentVersion publishes what its ` +
        "Agent declares, so declare the Agent (or `pulumi import` it) in the same program, with the same provider",
    };
  }
  // Without the values the Agent does not have (a property map holds no undefined).
  return { inputs: dropUndefined({ ...news, ...inputsFromSeen(seen, news) }) };
}
