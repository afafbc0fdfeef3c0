/**
 * pulumi-voice-agent: voice agents as code. Dynamic Pulumi resources for the voice-agent service
 * and lookups of its catalogues. Every resource uses this package's provider (see {@link Provider}),
 * which reads the base URL and the API key at call time from the stack configuration
 * (`voice-agent:baseUrl`, secret `voice-agent:apiKey`) or the `VOICE_AGENT_*` environment.
 */
export { Provider, type ProviderArgs } from "./provider/providerResource";
export {
  Agent,
  type AgentArgs,
  type BuiltinToolsArgs,
  type CallArgs,
  type ConversationArgs,
  type InboundArgs,
  type LanguageArgs,
  type MemoryArgs,
  type MessageArgs,
  type ModelArgs,
  type TranscriberArgs,
  type TransferNumberArgs,
  type VariableArgs,
  type VoiceArgs,
} from "./resources/agent";
export {
  AgentVersion,
  type AgentVersionArgs,
  type ExpectedAnalysisValue,
  type PromoteArgs,
  type PromoteRateArgs,
  type Promotion,
  type RolledBack,
  type Verification,
  type VerifyArgs,
  type VerifyCallArgs,
  type WatchAnalysisRateArgs,
  type WatchArgs,
  type WatchStatusRateArgs,
} from "./resources/agentVersion";
export {
  AnalysisGroup,
  type AnalysisGroupArgs,
  type AnalysisItemArgs,
} from "./resources/analysisGroup";
export {
  KnowledgeBase,
  type KnowledgeBaseArgs,
  type KnowledgeBaseDocumentArgs,
  type KnowledgeBaseDocumentStatus,
  type KnowledgeBaseHeldTextDocumentArgs,
  type KnowledgeBaseTextDocumentArgs,
  type KnowledgeBaseUrlDocumentArgs,
} from "./resources/knowledgeBase";
export * from "./resources/lookups";
export { Widget, type WidgetArgs, type WidgetThemeArgs } from "./resources/widget";
