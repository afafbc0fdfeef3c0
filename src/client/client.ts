/**
 * The typed API client, one endpoint group per area of the API (stripe-node's shape):
 * `client.agents`, `client.versions`, `client.widget`, `client.knowledgeBases`, `client.analysis`,
 * `client.catalogue`, `client.calls`. All I/O goes through `send` (transport.ts); each group maps its endpoints to
 * requests and parses the answers; `core.ts` holds what they share, the create-with-marker flow
 * included (see docs/client.md, "Lost answers").
 */
import { inspect } from "node:util";
import { Agents } from "./api/agents";
import { Analysis } from "./api/analysis";
import { Calls } from "./api/calls";
import { Catalogue } from "./api/catalogue";
import { KnowledgeBases } from "./api/knowledgeBases";
import { Versions } from "./api/versions";
import { WidgetApi } from "./api/widget";
import { type ClientConfig, validateConfig } from "./config";
import { ClientCore } from "./core";
import { limiterFor } from "./transport";

/**
 * Typed client of the voice-agent REST API.
 *
 * The configuration (and so the key) is kept in a private field: it is not enumerable, not in
 * `JSON.stringify(client)` and not in `util.inspect(client)`.
 */
export class VoiceAgentClient {
  readonly #core: ClientCore;
  /** Agents: list, create, read, merge-patch. */
  readonly agents: Agents;
  /** An agent's versions: list, read, publish; the deploy history and the live pointer. */
  readonly versions: Versions;
  /** An agent's widget: read, merge-patch, rotate the public key. */
  readonly widget: WidgetApi;
  /** Knowledge bases: list, read, create, replace, delete. */
  readonly knowledgeBases: KnowledgeBases;
  /** Custom-analysis groups: list, read, create, replace, delete. */
  readonly analysis: Analysis;
  /** Catalogues (models, voices, transcribers, languages, TTS capabilities) and holdings. */
  readonly catalogue: Catalogue;
  /** Calls: place (with an Idempotency-Key), read, list, recordings. */
  readonly calls: Calls;

  /** @throws {ClientConfigError} for a missing key or a non-https, non-loopback base URL. */
  constructor(config: ClientConfig) {
    validateConfig(config);
    this.#core = new ClientCore(Object.freeze({ ...config }));
    this.agents = new Agents(this.#core);
    this.versions = new Versions(this.#core);
    this.widget = new WidgetApi(this.#core);
    this.knowledgeBases = new KnowledgeBases(this.#core);
    this.analysis = new Analysis(this.#core);
    this.catalogue = new Catalogue(this.#core);
    this.calls = new Calls(this.#core);
  }

  /** The base URL this client talks to. */
  get baseUrl(): string {
    return this.#core.config.baseUrl;
  }

  /**
   * Whether the service is being heard from, for waits that must tell a silent service from the
   * rate limit: `heardAt`, the `performance.now()` instant since which nothing has been heard
   * (its last answer to this key in this process, any status, or the end of the last hold by the
   * rate limit), and `holding`, whether the rate limit holds requests now.
   */
  pace(): { heardAt: number; holding: boolean } {
    const limiter = limiterFor(this.#core.config);
    return { heardAt: limiter.heardAt, holding: limiter.holding };
  }

  /** Serializes to the base URL only. */
  toJSON(): { baseUrl: string } {
    return { baseUrl: this.baseUrl };
  }

  [inspect.custom](): string {
    return `VoiceAgentClient { baseUrl: ${JSON.stringify(this.baseUrl)} }`;
  }
}

/** Same as `new VoiceAgentClient(config)`. */
export function createClient(config: ClientConfig): VoiceAgentClient {
  return new VoiceAgentClient(config);
}

export type {
  AgentCreateInput,
  AgentCreateOptions,
  AgentDetailT,
  AgentPatchInput,
  AgentSummaryT,
  VersionSelector,
} from "./api/agents";
export type { AnalysisGroup, AnalysisItem } from "./api/analysis";
export type { CallListOptions, CallT, PlaceCallInput, PlacedCall, Recording } from "./api/calls";
export type { KnowledgeBase, KnowledgeBaseDocument, MarkedCreateOptions } from "./api/knowledgeBases";
export type { ActivationRowT, VersionRowT } from "./api/versions";
export type { WidgetKeyT, WidgetPatchInput, WidgetT } from "./api/widget";
export { DRAFT_AMBIGUOUS, REVISION_CONFLICT } from "./undocumented";
export { Agents, Analysis, Calls, Catalogue, KnowledgeBases, Versions, WidgetApi };
