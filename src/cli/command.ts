/**
 * What the package's commands share: exit codes, the usage error, command-line parsing with
 * `node:util` `parseArgs` (its errors turned into one-line usage errors), and the run that reports a
 * failure on stderr with the API key never in it and closes the HTTP client's connections.
 */
import { type ParseArgsOptionsConfig, parseArgs } from "node:util";
import { closeDispatchers, ENV_KEYS } from "../client";

/** Exit codes. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** Secrets a command read from elsewhere than the environment (a stack's API key): never printed. */
const hidden = new Set<string>();

/** Masks `secret` in whatever a command reports on failure. */
export function hideSecret(secret: string): void {
  hidden.add(secret);
}

/** A wrong command line: reported with a pointer to --help, exit code 2. */
export class UsageError extends Error {}

/** `parseArgs` in strict mode; an unknown option or a missing value becomes a {@link UsageError}. */
export function parseCommandLine<T extends ParseArgsOptionsConfig>(argv: string[], options: T) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    // parseArgs' own message, first sentence: "Unknown option '--x'", "Option '--out <value>' argument missing".
    const message = (err as Error).message.split(/\.\s/)[0]?.replace(/\.$/, "") ?? String(err);
    throw new UsageError(message.charAt(0).toLowerCase() + message.slice(1), { cause: err });
  }
}

/**
 * Runs a command's body: a failure is one line on stderr prefixed with the command's `name` (a
 * usage error points to --help), with the API key masked whatever failed, and sets the exit code.
 */
export async function runCommand(name: string, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (err) {
    const usage = err instanceof UsageError;
    let message = err instanceof Error ? err.message : String(err);
    // The client's errors are redacted already; this keeps the key out whatever else failed.
    for (const key of [process.env[ENV_KEYS.apiKey]?.trim(), ...hidden]) {
      if (key) message = message.replaceAll(key, "***");
    }
    process.stderr.write(`${name}: ${message}\n${usage ? `Run ${name} --help for the usage.\n` : ""}`);
    process.exitCode = usage ? EXIT.usage : EXIT.failed;
  } finally {
    await closeDispatchers();
  }
}
