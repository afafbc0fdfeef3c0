/**
 * The Pulumi type names of the five resources, in one place: a dynamic resource registers as
 * `pulumi-nodejs:dynamic/voice-agent:<Type>` (`pulumi.dynamic.Resource`'s form). The resources
 * register under them; the pull-request report, the drift alarm and the policy pack recognise them.
 * Imports nothing, so the report and the pack load no SDK for it.
 */

/** Before every resource's type name: `pulumi-nodejs:dynamic/voice-agent:`. */
export const TYPE_PREFIX = "pulumi-nodejs:dynamic/voice-agent:";

/** Before every resource's type name when the provider plugin serves it: `voice-agent:index:` (docs/plugin.md). */
export const PLUGIN_TYPE_PREFIX = "voice-agent:index:";

/** The five resources' type names, after {@link TYPE_PREFIX} (or {@link PLUGIN_TYPE_PREFIX}). */
export const RESOURCE_TYPES = ["Agent", "AgentVersion", "Widget", "KnowledgeBase", "AnalysisGroup"] as const;

/** `Agent`, `AgentVersion`, `Widget`, `KnowledgeBase` or `AnalysisGroup`. */
export type ResourceType = (typeof RESOURCE_TYPES)[number];

/**
 * The resource type named by a full Pulumi type (`Agent` for `…voice-agent:Agent`, or the plugin's
 * `voice-agent:index:Agent`), or `undefined`.
 */
export function resourceTypeOf(type: string): ResourceType | undefined {
  const prefix = [TYPE_PREFIX, PLUGIN_TYPE_PREFIX].find((p) => type.startsWith(p));
  if (prefix === undefined) return undefined;
  const name = type.slice(prefix.length);
  return RESOURCE_TYPES.find((t) => t === name);
}
