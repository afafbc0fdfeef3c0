/**
 * Program side: the name of each KnowledgeBase and AnalysisGroup of the program, by its id output.
 * An Agent that attaches one by its `id` (`knowledgeBaseIds: [kb.id]`) sends the names it attaches
 * as an input of its own (`attachedNames`), so renaming a knowledge base or analysis group updates
 * the Agent in the same deployment: its `configDigest` names what it attaches as the workspace
 * names it, and the refresh after the deploy finds nothing to change. Ids that do not come from a
 * resource of the program (a literal, a stack reference) have no entry: the provider reads their
 * names at the agent's next write or refresh.
 */
import * as pulumi from "@pulumi/pulumi";

const names = new WeakMap<object, pulumi.Output<string | undefined>>();

/** Records the name output of a KnowledgeBase or AnalysisGroup under its id output. */
export function recordAttachable(id: pulumi.Output<string>, name: pulumi.Output<string | undefined>): void {
  names.set(id, name);
}

/**
 * The names the lists of ids attach, of the program's own knowledge bases and analysis groups
 * (sorted), or undefined when none of the ids is one of them.
 */
export function attachedNames(...lists: unknown[]): pulumi.Output<string[]> | undefined {
  const found: pulumi.Output<string | undefined>[] = [];
  for (const list of lists) {
    if (!Array.isArray(list)) continue;
    for (const id of list) {
      const name = typeof id === "object" && id !== null ? names.get(id) : undefined;
      if (name) found.push(name);
    }
  }
  if (found.length === 0) return undefined;
  return pulumi
    .all(found)
    .apply((all) => all.filter((n): n is string => typeof n === "string").sort((a, b) => a.localeCompare(b)));
}
