/**
 * API client of the voice-agent service: typed methods, one undici transport, shared pacing,
 * retries inside a budget, lost-answer recovery and redacted errors. See docs/client.md.
 */
export {
  type ActivationRowT,
  type AgentCreateInput,
  type AgentCreateOptions,
  type AgentDetailT,
  type AgentPatchInput,
  type AgentSummaryT,
  Agents,
  Analysis,
  type AnalysisGroup,
  type AnalysisItem,
  type CallListOptions,
  Calls,
  type CallT,
  Catalogue,
  createClient,
  DRAFT_AMBIGUOUS,
  type KnowledgeBase,
  type KnowledgeBaseDocument,
  KnowledgeBases,
  type MarkedCreateOptions,
  type PlaceCallInput,
  type PlacedCall,
  REVISION_CONFLICT,
  type Recording,
  type VersionRowT,
  type VersionSelector,
  Versions,
  VoiceAgentClient,
  WidgetApi,
  type WidgetKeyT,
  type WidgetPatchInput,
  type WidgetT,
} from "./client";
export {
  type ClientConfig,
  CONFIG_KEYS,
  type ConfigSource,
  configFromPulumi,
  DEFAULT_RATE_LIMIT_PER_MINUTE,
  DEFAULT_RETRY_BUDGET_MS,
  DEFAULT_TIMEOUT_MS,
  ENV_KEYS,
  isLoopbackHost,
  validateConfig,
} from "./config";
export {
  ApiError,
  AuthError,
  BadRequestError,
  ClientConfigError,
  ConflictError,
  ConnectionError,
  type FieldError,
  NotFoundError,
  parseErrorBody,
  RateLimitError,
  ResponseShapeError,
  ResponseTooLargeError,
  ServiceError,
  ValidationError,
  VoiceAgentError,
} from "./errors";
export { MovingWindowLimiter, sharedLimiter } from "./limiter";
export { DEBUG_ENV } from "./log";
export { type Page, PageIterator } from "./pagination";
export { CREATE_MARKER_PREFIX } from "./recovery";
export { closeDispatchers, mayHaveCommitted } from "./transport";
export type { AnalysisGroupBody, KnowledgeBaseBody } from "./undocumented";
