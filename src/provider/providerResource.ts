/**
 * The explicit provider every resource of this package uses.
 *
 * Pulumi's default provider for dynamic resources receives, and stores in state, the stack's whole
 * configuration, secrets included. This provider's inputs only name the stack and the
 * configuration namespace; the provider process reads the base URL and API key itself, at call time
 * (see `context.ts`), from this program process when it can (`handoff.ts`). So the API key never
 * enters the state, not even encrypted.
 */
import * as pulumi from "@pulumi/pulumi";
import { SETTINGS } from "./context";
import { serveSettings } from "./handoff";

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
    const stack = `${pulumi.getOrganization()}/${pulumi.getProject()}/${pulumi.getStack()}`;
    const namespace = args.namespace ?? "voice-agent";
    super("pulumi-nodejs", name, { [SETTINGS.stack]: stack, [SETTINGS.namespace]: namespace }, opts);
    // The provider process reads this namespace's configuration from here instead of running
    // `pulumi config`: the values never leave the machine's memory (see handoff.ts).
    const values: Record<string, string> = {};
    for (const [key, value] of Object.entries(programConfig())) {
      if (key.startsWith(`${namespace}:`)) values[key] = value;
    }
    serveSettings(stack, namespace, values);
  }
}

/**
 * The program's configuration. A language host that sends `null` for a stack without any (as ours
 * did before 0.2.0) makes the SDK's reader throw a TypeError: that means no configuration.
 */
function programConfig(): Record<string, string> {
  try {
    return pulumi.runtime.allConfig();
  } catch (err) {
    if (err instanceof TypeError && process.env.PULUMI_CONFIG === "null") return {};
    throw err;
  }
}

let shared: Provider | undefined;

/** The options with this package's provider: the caller's own, or one shared default per program. */
export function withProvider<T extends pulumi.CustomResourceOptions>(opts: T | undefined): T {
  if (opts?.provider) return opts;
  shared ??= new Provider("voice-agent");
  return { ...(opts ?? ({} as T)), provider: shared };
}
