/**
 * What a resource implements for the provider process, and what it is handed: a leaf module (it
 * loads nothing at run time), so resource files, the registry and the tests can all depend on it.
 */
import type * as pulumi from "@pulumi/pulumi";
import type { VoiceAgentClient } from "../client";

/** What the provider process hands every resource: the client, built once from the stack's settings. */
export interface ProviderContext {
  /** The client for this provider process, built on first use from the stack's settings. */
  client(): Promise<VoiceAgentClient>;
  /** Starts reading the settings in the background, so a later `client()` waits less. */
  warmUp(): void;
  /**
   * Aborted when the engine cancels the deployment (`Cancel`, the provider plugin's): the long
   * waits of a step (a knowledge base's readiness, test calls) end early and fail their step as
   * cancelled (`src/provider/cancel.ts`). None: nothing cancels them.
   */
  signal?: AbortSignal;
}

/** Property maps as the engine passes them: inputs, or the outputs recorded in state. */
export type Props = Record<string, unknown>;

/** The lifecycle of one kind of resource, bound to a provider context. */
export interface ResourceHandler {
  check(olds: Props, news: Props): Promise<pulumi.dynamic.CheckResult>;
  diff(id: string, olds: Props, news: Props): Promise<pulumi.dynamic.DiffResult>;
  create(inputs: Props): Promise<pulumi.dynamic.CreateResult>;
  read(id: string, props: Props): Promise<pulumi.dynamic.ReadResult>;
  update(id: string, olds: Props, news: Props): Promise<pulumi.dynamic.UpdateResult>;
  delete(id: string, props: Props): Promise<void>;
}

/** How a resource module makes its handler for a context. */
export type HandlerFactory = (ctx: ProviderContext) => ResourceHandler;
