/**
 * How an Agent's configuration is compared: its field table, what the program declares, what the
 * service holds (projected onto what the program declares) and the content hash that names a
 * configuration. Shared by the provider and by `voice-agent-diff`; it loads neither
 * `@pulumi/pulumi` nor the client.
 */
import type { AgentDetailT } from "../../client";
import { type FieldTable, observe, pickManaged } from "../../provider/managed";
import { contentHash, fromWire, isPlainObject, type Json, type JsonObject } from "../../provider/normalize";
import { normalizeE164 } from "../../spec/common";

/** A phone number in the spelling the service reads it back in (E.164), when it is one. */
const phone = (v: Json): Json => (typeof v === "string" ? (normalizeE164(v) ?? v) : v);

/** The Agent's managed fields (the configuration of the agent body, in input spelling) and their comparison. */
export const AGENT_FIELDS: FieldTable = {
  managed: [
    "name",
    "systemPrompt",
    "greeting",
    "language",
    "transcriber",
    "model",
    "voice",
    "conversation",
    "call",
    "inbound",
    "builtinTools",
    "variables",
    "knowledgeBaseIds",
    "analysisGroupIds",
    "memory",
    "numbers",
  ],
  paths: {
    // `greeting: {}` reads back as an empty object: the same as none.
    greeting: { canonical: (v) => (isPlainObject(v) && v.message === undefined ? null : v) },
    knowledgeBaseIds: { set: true },
    analysisGroupIds: { set: true },
    variables: { keyedBy: "key" },
    // The service adds `systemDefined` and `deletable` to every variable; anything else a program
    // writes stays, so the schema refuses a misspelt key.
    "variables[]": {
      canonical: (v) => {
        if (!isPlainObject(v)) return v;
        const { systemDefined: _s, deletable: _d, ...rest } = v;
        return { ...rest, defaultValue: rest.defaultValue ?? null };
      },
    },
    "memory.fields": { keyedBy: "key" },
    "numbers.inboundPhone": { canonical: phone },
    "numbers.inboundWhatsapp": { canonical: phone },
    // The service refuses a transfer number not written in E.164; spaces and dashes in a number
    // written with its country code are only spelling. Digits without one are never given one.
    "builtinTools.transferCall.numbers[].number": { canonical: phone },
  },
};

/** The Agent's inputs that are not configuration. */
export const AGENT_OWN_INPUTS = ["adoptId", "contentHash", "createMarker"] as const;

/** The managed configuration the program declares (inputs), normalized for comparison and hashing. */
export function declaredConfig(inputs: Readonly<Record<string, unknown>>): JsonObject {
  return pickManaged(AGENT_FIELDS, inputs);
}

/** Every managed field the service holds, in input spelling; system variables only where declared. */
export function serviceConfig(detail: AgentDetailT, declared: JsonObject): JsonObject {
  const camel = fromWire(detail) as JsonObject;
  const declaredKeys = new Set(
    (Array.isArray(declared.variables) ? declared.variables : []).map((v) => (isPlainObject(v) ? v.key : v)),
  );
  if (Array.isArray(camel.variables)) {
    camel.variables = camel.variables.filter(
      (v) => !(isPlainObject(v) && v.systemDefined === true && !declaredKeys.has(v.key ?? null)),
    );
  }
  return pickManaged(AGENT_FIELDS, camel);
}

/** What the service holds, restricted to the fields (and object keys) `declared` sets. */
export function observedConfig(detail: AgentDetailT, declared: JsonObject): JsonObject {
  return observe(AGENT_FIELDS, serviceConfig(detail, declared), declared);
}

/** The hash that names a configuration: equal configurations, equal hashes. */
export function configurationHash(config: JsonObject): string {
  return contentHash(config);
}
