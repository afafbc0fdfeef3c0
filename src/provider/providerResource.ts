/**
 * The explicit provider every resource of this package uses.
 *
 * Pulumi's default provider for dynamic resources receives, and stores in state, the stack's whole
 * configuration, secrets included. This provider's inputs only name the stack and the
 * configuration namespace; the provider process reads the base URL and API key itself, at call time
 * (see `context.ts`). So the API key never enters the state, not even encrypted.
 */
import * as pulumi from "@pulumi/pulumi";
import { SETTINGS } from "./context";

/** Options of a {@link Provider}. */
export interface ProviderArgs {
  /**
   * Configuration namespace holding `baseUrl` and the secret `apiKey` (and optionally
   * `rateLimitPerMinute`). Default `voice-agent`. Use another one (e.g. `voice-agent-eu`) to manage
   * a second workspace from the same program; the `VOICE_AGENT_*` environment fallbacks apply to
   * the default namespace only.
   */
  namespace?: string;
}

/** A voice-agent provider: which stack configuration the resources using it read their credentials from. */
export class Provider extends pulumi.ProviderResource {
  constructor(name: string, args: ProviderArgs = {}, opts?: pulumi.ResourceOptions) {
    super(
      "pulumi-nodejs",
      name,
      {
        [SETTINGS.stack]: `${pulumi.getOrganization()}/${pulumi.getProject()}/${pulumi.getStack()}`,
        [SETTINGS.namespace]: args.namespace ?? "voice-agent",
      },
      opts,
    );
  }
}

let shared: Provider | undefined;

/** The options with this package's provider: the caller's own, or one shared default per program. */
export function withProvider<T extends pulumi.CustomResourceOptions>(opts: T | undefined): T {
  if (opts?.provider) return opts;
  shared ??= new Provider("voice-agent");
  return { ...(opts ?? ({} as T)), provider: shared };
}
