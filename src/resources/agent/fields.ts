/**
 * The Agent's configuration fields, in the program's spelling: a leaf module (it loads nothing), so
 * the program side (an AgentVersion reading its Agent's configuration) and the projection share
 * one list.
 */
export const AGENT_CONFIG_FIELDS = [
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
] as const;
