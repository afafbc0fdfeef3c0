/**
 * Where a command finds the service: `VOICE_AGENT_BASE_URL` and `VOICE_AGENT_API_KEY` (they win:
 * CI sets them), else the stack named by `--stack` (in the project folder `--cwd`), whose
 * `voice-agent:baseUrl` and secret `voice-agent:apiKey` are read through the Pulumi CLI
 * (`pulumi config --show-secrets --json`, as the provider process does). The key is never printed.
 */
import { type ClientConfig, CONFIG_KEYS, configFromPulumi, ENV_KEYS } from "../client";
import { runPulumiConfig } from "../provider/context";
import { hideSecret, UsageError } from "./command";

/** The command-line options of a command that reads a stack's settings. */
export const STACK_OPTIONS = {
  stack: { type: "string" },
  cwd: { type: "string" },
} as const;

/** The `--stack` and `--cwd` options as parsed. */
export interface StackChoice {
  /** The stack whose configuration holds the service's URL and key. */
  stack?: string | undefined;
  /** The Pulumi project's folder (default: the current one). */
  cwd?: string | undefined;
}

/** The help text of `--stack` and `--cwd`, aligned at `width`. */
export function stackHelp(width: number): string {
  return (
    `  ${"--stack NAME".padEnd(width)} read ${CONFIG_KEYS.baseUrl} and the secret ${CONFIG_KEYS.apiKey} from this\n` +
    `  ${"".padEnd(width)} stack's configuration (\`pulumi config\`; the environment variables win)\n` +
    `  ${"--cwd DIR".padEnd(width)} with --stack: the Pulumi project's folder (default: the current one)\n`
  );
}

const envOf = (qualified: string): string | undefined => {
  const key = (Object.keys(CONFIG_KEYS) as (keyof typeof CONFIG_KEYS)[]).find(
    (k) => CONFIG_KEYS[k] === qualified,
  );
  const value = key === undefined ? undefined : process.env[ENV_KEYS[key]]?.trim();
  return value === "" ? undefined : value;
};

/**
 * The client configuration for `purpose` (an option, or the command's name): from the environment
 * where it holds both settings, else from `--stack`'s configuration with each environment variable
 * set still winning. Throws a message naming what is missing and how to give it.
 */
export async function serviceConfig(purpose: string, choice: StackChoice): Promise<ClientConfig> {
  if (choice.cwd !== undefined && choice.stack === undefined)
    throw new UsageError("--cwd names the project folder of --stack: give --stack NAME too");
  if (envOf(CONFIG_KEYS.baseUrl) !== undefined && envOf(CONFIG_KEYS.apiKey) !== undefined)
    return configFromPulumi(undefined);
  if (choice.stack === undefined) {
    const missing = [ENV_KEYS.baseUrl, ENV_KEYS.apiKey].filter((k) => !process.env[k]?.trim());
    throw new Error(
      `${purpose} asks the service: give --stack NAME to read ${CONFIG_KEYS.baseUrl} and ${CONFIG_KEYS.apiKey} ` +
        `from that stack's configuration, or set ${missing.join(" and ")}`,
    );
  }
  let values: Record<string, string>;
  try {
    values = await runPulumiConfig(choice.stack, choice.cwd);
  } catch (err) {
    throw new Error(
      `${purpose}: could not read the configuration of stack ${choice.stack}` +
        `${choice.cwd ? ` in ${choice.cwd}` : ""}: ${(err as Error).message}`,
      { cause: err },
    );
  }
  const key = values[CONFIG_KEYS.apiKey];
  if (key) hideSecret(key.trim());
  try {
    return configFromPulumi({ get: (k) => envOf(k) ?? values[k] }, {});
  } catch (err) {
    throw new Error(`${purpose}: stack ${choice.stack}: ${(err as Error).message}`, { cause: err });
  }
}
