/**
 * voice-agent-emulator: the local emulator of the service, on the command line. Loaded by `cli.ts`.
 *
 * First stdout line: `voice-agent emulator listening on http://HOST:PORT` (the real port when 0).
 */
import { parseArgs as parseNodeArgs } from "node:util";
import { isLoopbackHost } from "../client/config";
import { DEFAULT_RATE_LIMIT, startEmulator, type WorkspaceConfig } from "./index";

/** The complete `--help`. */
export const USAGE = `usage: voice-agent-emulator [options]

A local emulator of the voice-agent service: the /v1 API and a control API under /_emulator/
(no key: reset, faults, request log, dashboard actions; see docs/emulator.md).

Options:
  --host HOST               interface to listen on (default 127.0.0.1); a host other than a
                            loopback address needs --allow-remote
  --allow-remote            allow a non-loopback --host: anyone who can reach it can use the
                            control API, which has no authentication
  --port N                  port, 0 for a free one (default 8787)
  --db FILE                 keep the state in a SQLite file (default: in memory)
  --workspace NAME:KEY      a workspace and its API key; repeatable (default default:va_test_local)
  --rate-limit N            requests per minute per key, moving window; 0 disables (default ${DEFAULT_RATE_LIMIT})
  --rate-window-seconds N   the rate limit's window in seconds (default 60, as the service's)
  -h, --help                this text

Exit codes: 0 stopped by SIGINT or SIGTERM; 1 could not start; 2 the command line was wrong.
`;

/** Parsed command line. */
export interface CliOptions {
  host: string;
  port: number;
  db?: string;
  workspaces: WorkspaceConfig[];
  rateLimitPerMinute: number;
  rateWindowMs: number;
}

const wholeNumber = (flag: string, v: string, max = Number.MAX_SAFE_INTEGER): number => {
  if (!/^\d+$/.test(v) || Number(v) > max)
    throw new Error(`${flag} must be a whole number up to ${max}, got '${v}'`);
  return Number(v);
};

/** Parses the arguments (throws with a message on a bad one). */
export function parseArgs(argv: string[]): CliOptions | "help" {
  const { values, positionals } = parseNodeArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      host: { type: "string", default: "127.0.0.1" },
      "allow-remote": { type: "boolean", default: false },
      port: { type: "string", default: "8787" },
      db: { type: "string" },
      workspace: { type: "string", multiple: true, default: [] },
      "rate-limit": { type: "string", default: String(DEFAULT_RATE_LIMIT) },
      "rate-window-seconds": { type: "string", default: "60" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) return "help";
  if (positionals.length > 0) throw new Error(`unexpected argument '${positionals[0]}'`);
  if (!isLoopbackHost(values.host) && !values["allow-remote"]) {
    throw new Error(
      `--host ${values.host} is not a loopback address: the control API (/_emulator/) has no ` +
        "authentication, so anyone who can reach it could reset or fault the emulator. Add --allow-remote to do it anyway.",
    );
  }
  const workspaces = values.workspace.map((v) => {
    const colon = v.indexOf(":");
    if (colon <= 0 || colon === v.length - 1) throw new Error(`--workspace must be NAME:KEY, got '${v}'`);
    return { name: v.slice(0, colon), key: v.slice(colon + 1) };
  });
  const windowSeconds = wholeNumber("--rate-window-seconds", values["rate-window-seconds"]);
  if (windowSeconds === 0) throw new Error("--rate-window-seconds must be at least 1");
  return {
    host: values.host,
    port: wholeNumber("--port", values.port, 65535),
    ...(values.db !== undefined ? { db: values.db } : {}),
    workspaces,
    rateLimitPerMinute: wholeNumber("--rate-limit", values["rate-limit"]),
    rateWindowMs: windowSeconds * 1000,
  };
}

/** Runs the command with `argv` (without the node and script paths). */
export function main(argv: string[]): void {
  let opts: CliOptions | "help";
  try {
    opts = parseArgs(argv);
  } catch (err) {
    process.stderr.write(`voice-agent-emulator: ${(err as Error).message}\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  if (opts === "help") {
    process.stdout.write(USAGE);
    return;
  }
  serve(opts).catch((err: unknown) => {
    process.stderr.write(`voice-agent-emulator: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}

async function serve(opts: CliOptions): Promise<void> {
  const emu = await startEmulator(opts);
  process.stdout.write(`voice-agent emulator listening on ${emu.url}\n`);
  if (!isLoopbackHost(opts.host)) {
    process.stderr.write(
      `voice-agent-emulator: warning: listening on ${opts.host} (--allow-remote): the control API has no authentication\n`,
    );
  }
  for (const w of emu.workspaces) process.stdout.write(`workspace ${w.name}: key ${w.key}\n`);
  process.stdout.write(opts.db ? `state: ${opts.db}\n` : "state: in memory\n");
  const stop = () => {
    void emu.close().then(() => process.exit(0));
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
