/**
 * What an AgentVersion takes from its Agent: the one definition of the expansion of `agent` into
 * the inputs the provider side reads (the content hash, the versions the stack has seen, the
 * draft as the Agent last wrote it). The TypeScript class (`index.ts`) applies it to the Agent's
 * outputs in the program; the provider plugin (`src/plugin/`) applies it to the Agent's state in
 * the provider process, since a YAML or Go program runs no such step. Loads nothing.
 */
import { UNKNOWN } from "../../provider/unknowns";

/** The Agent's outputs an AgentVersion reads. */
export interface AgentView {
  agentId?: unknown;
  contentHash?: unknown;
  knownVersions?: unknown;
  draftVersion?: unknown;
  documentRevision?: unknown;
  draftPublished?: unknown;
  draftHash?: unknown;
  latestVersion?: unknown;
}

/** The published version already holding the configuration `hash`, if the stack has seen one. */
export function knownVersionOf(hash: string, known: Record<string, number> | undefined): number | undefined {
  return known?.[hash];
}

/** The highest version number the stack has seen published (-1 when none). */
export function knownUpToOf(known: Record<string, number> | undefined): number {
  return Math.max(-1, ...Object.values(known ?? {}));
}

/**
 * The AgentVersion's inputs taken from its agent, `agent` being the Agent's outputs (values
 * unknown at preview left as they are). `publishing` is false when the version is pinned: then
 * only the agent's id and draft position are taken.
 */
export function versionInputsFromAgent(agent: AgentView, publishing: boolean): Record<string, unknown> {
  const known =
    typeof agent.knownVersions === "object" && agent.knownVersions !== null
      ? (agent.knownVersions as Record<string, number>)
      : undefined;
  const hash = agent.contentHash;
  // Unknown in, unknown out (the preview of the agent's change), as the program's `apply` gives it.
  const unknownMap = agent.knownVersions === UNKNOWN;
  return {
    agentId: agent.agentId,
    draftVersion: agent.draftVersion,
    documentRevision: agent.documentRevision,
    ...(publishing
      ? {
          contentHash: hash,
          knownVersion:
            hash === UNKNOWN || unknownMap
              ? UNKNOWN
              : typeof hash === "string"
                ? knownVersionOf(hash, known)
                : undefined,
          knownUpTo: unknownMap ? UNKNOWN : knownUpToOf(known),
          draftPublished: agent.draftPublished,
          draftHash: agent.draftHash,
          latestVersion: agent.latestVersion,
        }
      : {}),
  };
}

/**
 * Why the AgentVersion's agent is not named exactly once (`agent`, the Agent resource, or
 * `agentId`, its id), or undefined when it is: the one rule, applied by the class and by the
 * plugin's check. `hasAgent`/`hasAgentId`: whether each is given (a value unknown at preview is given).
 */
export function agentChoiceProblem(hasAgent: boolean, hasAgentId: boolean): string | undefined {
  if (hasAgent && hasAgentId)
    return "agentId: give either `agent` (the Agent resource) or `agentId` (its id), not both";
  if (!hasAgent && !hasAgentId)
    return "agentId: give the agent whose draft to publish: `agent` (the Agent resource) or `agentId` (its id)";
  return undefined;
}
