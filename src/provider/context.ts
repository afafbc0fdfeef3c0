/**
 * Provider-process context: where the credentials come from, read at call time.
 *
 * The engine hands the explicit provider resource's inputs to `configure`: they name the stack
 * (`voice-agent:stack`) and the configuration namespace, never a credential. The base URL and the
 * API key are read when first needed, from the stack's own configuration, falling back to the
 * `VOICE_AGENT_*` environment variables. The configuration comes from the program process of the
 * same deployment when it runs (`handoff.ts`), else from `pulumi config --show-secrets`, run in the
 * project folder; either way a secret stays in the stack's config file and never enters the state.
 */
import { execFile } from "node:child_process";
import type * as pulumi from "@pulumi/pulumi";
import type { VoiceAgentClient } from "../client";
import { fetchSettings } from "./handoff";
import type { ProviderContext } from "./resource";

/** Provider inputs: what the program tells the provider process about where to read settings. */
export const SETTINGS = { stack: "voice-agent:stack", namespace: "voice-agent:namespace" } as const;

let settings: { stack?: string; namespace: string } = { namespace: "voice-agent" };
/** The stack's settings as read, and why `pulumi config` could not read them, if it could not. */
interface StackConfig {
  values: Record<string, string>;
  failure?: Error;
}
let stackConfig: Promise<StackConfig> | undefined;
let cachedClient: VoiceAgentClient | undefined;

/** Called by Pulumi with the provider resource's inputs, once per kind of resource in the process. */
export async function configure(req: pulumi.dynamic.ConfigureRequest): Promise<void> {
  const next = {
    stack: req.config.get(SETTINGS.stack) ?? undefined,
    namespace: req.config.get(SETTINGS.namespace) ?? "voice-agent",
  };
  if (next.stack === settings.stack && next.namespace === settings.namespace) return;
  settings = next;
  stackConfig = undefined;
  cachedClient = undefined;
}

/**
 * Starts reading the stack's configuration (about 0.4 s with a passphrase-protected stack), so it
 * runs alongside whatever the caller does next. A command that calls the service only for changed
 * resources (a no-op `preview` or `up` calls nothing) never reads it.
 */
function warmUp(): void {
  if (!cachedClient) stackConfig ??= readStackConfig(settings.stack, settings.namespace);
}

/**
 * The stack's configuration, decrypted, as `namespace:key` → value: from the program process when
 * it serves it, else from `pulumi config`. When `pulumi config` fails (a wrong passphrase, no CLI
 * on the PATH), the failure is kept: it is reported if the settings are then missing, instead of a
 * bare "missing voice-agent:apiKey".
 */
async function readStackConfig(stack: string | undefined, namespace: string): Promise<StackConfig> {
  if (!stack) return { values: {} };
  // The dynamic provider's argument is the engine's address, the key of the program's socket.
  const served = await fetchSettings(process.argv[2], stack, namespace);
  if (served) return { values: served };
  return runPulumiConfig(stack).then(
    (values) => ({ values }),
    (failure: Error) => ({ values: {}, failure }),
  );
}

/**
 * `pulumi config --json --show-secrets` of `stack` (run in `cwd`, the project folder, when given);
 * rejects with the command's own words.
 */
export function runPulumiConfig(stack: string, cwd?: string): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const bin = process.env.VOICE_AGENT_PULUMI_BIN || "pulumi";
    execFile(
      bin,
      ["config", "--json", "--show-secrets", "--stack", stack],
      { encoding: "utf8", maxBuffer: 16 * 1024 * 1024, timeout: 60_000, ...(cwd ? { cwd } : {}) },
      (err, stdout, stderr) => {
        if (err) {
          const said = String(stderr ?? "")
            .trim()
            .split("\n")
            .slice(-3)
            .join(" ");
          return reject(
            new Error(`\`${bin} config --stack ${stack}\` failed: ${said || err.message}`, { cause: err }),
          );
        }
        try {
          const parsed = JSON.parse(stdout) as Record<string, { value?: unknown }>;
          const out: Record<string, string> = {};
          for (const [k, v] of Object.entries(parsed)) {
            if (typeof v?.value === "string") out[k] = v.value;
          }
          resolve(out);
        } catch (parseError) {
          reject(new Error(`\`${bin} config --stack ${stack}\` did not print JSON`, { cause: parseError }));
        }
      },
    );
  });
}

/** The client for this provider process, built on first use from the stack config and environment. */
async function client(): Promise<VoiceAgentClient> {
  if (cachedClient) return cachedClient;
  stackConfig ??= readStackConfig(settings.stack, settings.namespace);
  const { values, failure } = await stackConfig;
  const ns = settings.namespace;
  const source = { get: (key: string) => values[key.replace(/^voice-agent:/, `${ns}:`)] };
  const env = ns === "voice-agent" ? process.env : {};
  const { ClientConfigError, VoiceAgentClient, configFromPulumi } = await clientModule();
  try {
    const built = new VoiceAgentClient(configFromPulumi(source, env));
    cachedClient = built;
    return built;
  } catch (err) {
    if (failure && err instanceof ClientConfigError) {
      // The settings are missing because the stack's configuration could not be read: say why.
      throw new ClientConfigError(
        `The provider could not read the stack's configuration (${ns}:baseUrl, ${ns}:apiKey): ${failure.message}`,
        { cause: failure },
      );
    }
    // Name the keys of this provider's namespace, not the default one.
    if (ns === "voice-agent" || !(err instanceof Error)) throw err;
    throw new ClientConfigError(
      err.message
        .replaceAll("voice-agent:", `${ns}:`)
        .replace(/ or the VOICE_AGENT_\w+ environment variable/, ""),
      { cause: err },
    );
  }
}

let loadedClient: Promise<typeof import("../client")> | undefined;

/**
 * The client module (undici), loaded on first use: a program loads this file (for the provider's
 * settings) but never builds a client, so it never pays for loading one.
 */
export function clientModule(): Promise<typeof import("../client")> {
  loadedClient ??= import("../client/index.js");
  return loadedClient;
}

/** The provider process's context: the client built from the stack's settings. */
export const providerContext: ProviderContext = { client, warmUp };

/** A context on a given client: for tests, and for tools that call the handlers directly. */
export function contextFor(c: VoiceAgentClient): ProviderContext {
  return { client: async () => c, warmUp: () => undefined };
}
