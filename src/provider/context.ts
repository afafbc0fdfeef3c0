/**
 * Provider-process context: where the credentials come from, read at call time.
 *
 * The engine hands the explicit provider resource's inputs to `configure`: they name the stack
 * (`voice-agent:stack`) and the configuration namespace, never a credential. The base URL and the
 * API key are read when first needed, from the stack's own configuration (`pulumi config
 * --show-secrets`, run in the project folder, so a secret stays in the stack's config file and is
 * never copied into state), falling back to the `VOICE_AGENT_*` environment variables.
 */
import { execFile } from "node:child_process";
import type * as pulumi from "@pulumi/pulumi";
import { configFromPulumi, VoiceAgentClient } from "../client";

/** Provider inputs: what the program tells the provider process about where to read settings. */
export const SETTINGS = { stack: "voice-agent:stack", namespace: "voice-agent:namespace" } as const;

let settings: { stack?: string; namespace: string } = { namespace: "voice-agent" };
let stackConfig: Promise<Record<string, string>> | undefined;
let cachedClient: VoiceAgentClient | undefined;

/** Called once per provider process by Pulumi with the provider resource's inputs. */
export async function configure(req: pulumi.dynamic.ConfigureRequest): Promise<void> {
  settings = {
    stack: req.config.get(SETTINGS.stack) ?? undefined,
    namespace: req.config.get(SETTINGS.namespace) ?? "voice-agent",
  };
  // Start reading the stack's configuration now (about 0.4 s), alongside the rest of start-up.
  stackConfig = readStackConfig(settings.stack);
  cachedClient = undefined;
}

/** The stack's configuration, decrypted, as `namespace:key` → value. Empty when it cannot be read. */
function readStackConfig(stack: string | undefined): Promise<Record<string, string>> {
  if (!stack) return Promise.resolve({});
  return new Promise((resolve) => {
    const bin = process.env.VOICE_AGENT_PULUMI_BIN || "pulumi";
    execFile(
      bin,
      ["config", "--json", "--show-secrets", "--stack", stack],
      { encoding: "utf8", maxBuffer: 16 * 1024 * 1024, timeout: 60_000 },
      (err, stdout) => {
        if (err) return resolve({});
        try {
          const parsed = JSON.parse(stdout) as Record<string, { value?: unknown }>;
          const out: Record<string, string> = {};
          for (const [k, v] of Object.entries(parsed)) {
            if (typeof v?.value === "string") out[k] = v.value;
          }
          resolve(out);
        } catch {
          resolve({});
        }
      },
    );
  });
}

/** The client for this provider process, built on first use from the stack config and environment. */
export async function client(): Promise<VoiceAgentClient> {
  if (cachedClient) return cachedClient;
  stackConfig ??= readStackConfig(settings.stack);
  const values = await stackConfig;
  const ns = settings.namespace;
  const source = { get: (key: string) => values[key.replace(/^voice-agent:/, `${ns}:`)] };
  const env = ns === "voice-agent" ? process.env : {};
  try {
    cachedClient = new VoiceAgentClient(configFromPulumi(source, env));
  } catch (err) {
    // Name the keys of this provider's namespace, not the default one.
    if (ns === "voice-agent" || !(err instanceof Error)) throw err;
    throw new Error(
      err.message
        .replaceAll("voice-agent:", `${ns}:`)
        .replace(/ or the VOICE_AGENT_\w+ environment variable/, ""),
    );
  }
  return cachedClient;
}

/** For tests and lookups in the program process: use this client instead of reading config. */
export function useClient(c: VoiceAgentClient | undefined): void {
  cachedClient = c;
}
