/**
 * The inputs of one object as the service holds it, for `pulumi import` of the provider plugin:
 * what `voice-agent-export` declares for it (`plan.ts`: only what differs from the platform
 * defaults, in the program's camelCase names), with the ids of other objects as literal ids (the
 * import's code generator turns an id of a resource imported alongside into a reference) and the
 * system prompt as its text. The resource's own id replaces its adopt input. Reads only (GET).
 *
 * An import's id: the object's id; a Widget's is its agent's id (an agent has one widget); an
 * AgentVersion's is `<agentId>/<version>`. An AgentVersion's agent comes back as `agentId` (its
 * state needs no more; the code generator writes a reference to the Agent imported alongside).
 */
import type { VoiceAgentClient } from "../client";
import { unlessGone } from "../provider/gone";
import type { JsonObject } from "../provider/normalize";
import { configurationHash, declaredConfig } from "../resources/agent/projection";
import type { ResourceKind } from "../resources/registry";
import { DEFAULT_ANALYSIS_GROUP_NAME } from "../spec";
import {
  agentArgs,
  analysisGroupArgs,
  Code,
  knowledgeBaseArgs,
  newAgentBase,
  type Value,
  widgetArgs,
} from "./plan";
import { type AgentSnapshot, readAgent } from "./read";

/** `value` as JSON: a reference to the adopted agent is its id, the prompt file its text. */
function literal(value: Value, agentId: string, prompt: string): JsonObject[string] {
  if (value instanceof Code) return value.kind === "file" ? prompt : agentId;
  if (Array.isArray(value)) return value.map((v) => literal(v, agentId, prompt));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, literal(v, agentId, prompt)]));
  }
  return value;
}

/** The workspace's Default Analysis group among `groups` (as the export finds it). */
const defaultOf = <G extends { name: string }>(groups: readonly G[]) =>
  groups.find((g) => g.name === DEFAULT_ANALYSIS_GROUP_NAME);

/** The Agent's inputs for agent `a`. */
async function agentInputs(c: VoiceAgentClient, a: AgentSnapshot): Promise<JsonObject> {
  const base = newAgentBase(defaultOf(await c.analysis.list().toArray()));
  const prompt = a.working.system_prompt;
  const args = agentArgs(a, prompt !== null ? "prompt" : undefined, base, new Map(), []);
  return adopted(args, a.summary.id, prompt ?? "");
}

/** The listing's row of agent `id`, if the workspace has it. */
async function summaryOf(c: VoiceAgentClient, id: string) {
  return (await c.agents.list({ limit: 100 }).toArray()).find((a) => a.id === id);
}

/** `args` without the adopt input (the import's id stands for it), as JSON. */
function adopted(args: { [key: string]: Value }, agentId = "", prompt = ""): JsonObject {
  const { adoptId: _adopt, ...rest } = args;
  return literal(rest, agentId, prompt) as JsonObject;
}

/**
 * The inputs (the handlers' names) `pulumi import` declares for the `kind` object `id`; `null` when
 * the service has no such object; `undefined` for an id that is no AgentVersion's.
 */
export async function importedInputs(
  c: VoiceAgentClient,
  kind: ResourceKind,
  id: string,
): Promise<JsonObject | null | undefined> {
  switch (kind) {
    case "knowledgeBase": {
      const kb = await unlessGone(c.knowledgeBases.get(id));
      return kb ? adopted(knowledgeBaseArgs(kb)) : null;
    }
    case "analysisGroup": {
      const groups = await c.analysis.list().toArray();
      const g = groups.find((x) => x.id === id);
      return g ? adopted(analysisGroupArgs(g, g === defaultOf(groups))) : null;
    }
    case "agentVersion": {
      // `<agentId>/<version>`: as the export declares it, without a pin when it is the live
      // version holding the configuration the Agent adopts (its hash, as the Agent's check computes
      // it, is what the state records), else pinned. The agent is named by `agentId`.
      const slash = id.lastIndexOf("/");
      const [agentId, version] = [id.slice(0, slash), Number(id.slice(slash + 1))];
      if (slash < 0 || !Number.isInteger(version)) return undefined;
      const summary = await summaryOf(c, agentId);
      if (!summary) return null;
      const a = await readAgent(c, summary);
      const agent = await agentInputs(c, a);
      const follows = a.release.kind === "live" && a.release.version === version;
      return follows
        ? { agentId, contentHash: configurationHash(declaredConfig(agent)) }
        : { agentId, pinnedVersion: version };
    }
    case "agent":
    case "widget": {
      const summary = await summaryOf(c, id);
      if (!summary) return null;
      const a = await readAgent(c, summary);
      if (kind === "widget") {
        const args = widgetArgs(a, "agent") ?? {
          agentId: Code.ref("agent", "agentId"),
          rotateKeyOnCreate: false,
        };
        return adopted(args, id);
      }
      return agentInputs(c, a);
    }
  }
}
