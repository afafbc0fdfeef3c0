/**
 * The emulator's command line (`voice-agent-emulator --help` prints the whole usage); started by
 * `cli.ts` once the Node.js version is known to be recent enough.
 *
 * First stdout line: `voice-agent emulator listening on http://HOST:PORT` (the real port when 0).
 */
import { BlockList, isIP } from "node:net";
import { parseArgs as parseArgv } from "node:util";
import {
  DEFAULT_CALL_SECONDS,
  DEFAULT_RATE_LIMIT,
  DEFAULT_RATE_WINDOW_MS,
  MAX_CALL_SECONDS,
  startEmulator,
  type WorkspaceConfig,
} from "./index";

/** The text of `--help`. */
export const USAGE = `usage: voice-agent-emulator [options]

A local emulator of the voice-agent service: the /v1 API, and the control API under /_emulator/.

options:
  --host ADDRESS               interface to listen on (default 127.0.0.1). Only loopback addresses
                               (127.0.0.0/8, ::1, localhost) unless --allow-remote is given
  --allow-remote               allow a --host that is not loopback. The control API (/_emulator/:
                               reset, faults, revoked keys, ...) has no authentication, so anyone who
                               can reach the port can change or wipe the emulator's state
  --port N                     port, 0 to 65535 (default 8787; 0 picks a free port)
  --db FILE                    keep the state in this SQLite file (default: in memory)
  --seed FILE                  a JSON file of the agents, knowledge bases, analysis groups and
                               numbers each workspace holds from the start and after every reset
  --workspace NAME:KEY         a workspace and its API key; repeat for more (default: one workspace
                               'default' with key 'va_test_local')
  --rate-limit N               requests per key in the rate-limit window (default ${DEFAULT_RATE_LIMIT}; 0 disables)
  --rate-window-seconds S      length of the moving rate-limit window in seconds (default ${DEFAULT_RATE_WINDOW_MS / 1000},
                               the service's); shorter windows let tests see the limit lift quickly
  --call-seconds S             how long a placed call's whole life takes, from ringing to
                               call.processing.completed (default ${DEFAULT_CALL_SECONDS}; more than 0, at most ${MAX_CALL_SECONDS})
  -h, --help                   print this help and exit

The first line printed is 'voice-agent emulator listening on http://HOST:PORT' (the real port
when --port 0), then the workspaces and keys, then where the state is kept. Bad arguments exit
with code 2; SIGINT and SIGTERM stop it cleanly.
`;

/** Parsed command line. */
export interface CliOptions {
  /** Interface to listen on. */
  host: string;
  /** Port (0: a free one). */
  port: number;
  /** SQLite file, when the state is kept on disk. */
  db?: string;
  /** JSON seed file. */
  seed?: string;
  /** Workspaces and keys (empty: the default workspace). */
  workspaces: WorkspaceConfig[];
  /** Requests per key in the window (0: no limit). */
  rateLimitPerMinute: number;
  /** Length of the rate-limit window in ms. */
  rateWindowMs: number;
  /** How long a placed call's whole life takes, in seconds. */
  callSeconds: number;
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

/** Whether `host` names this machine only: 127.0.0.0/8, ::1 (IPv4-mapped forms too), localhost. */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  if (h === "localhost") return true;
  const family = isIP(h);
  return family !== 0 && LOOPBACK.check(h, family === 4 ? "ipv4" : "ipv6");
}

/**
 * Parses the arguments (node:util parseArgs, strict: unknown options and stray arguments are
 * refused). Throws an `Error` whose message says what is wrong.
 */
export function parseArgs(argv: string[]): CliOptions | "help" {
  const { values } = parse(argv);
  if (values.help) return "help";
  const out: CliOptions = {
    host: values.host ?? "127.0.0.1",
    port: 8787,
    workspaces: [],
    rateLimitPerMinute: DEFAULT_RATE_LIMIT,
    rateWindowMs: DEFAULT_RATE_WINDOW_MS,
    callSeconds: DEFAULT_CALL_SECONDS,
  };
  if (!values["allow-remote"] && !isLoopback(out.host))
    throw new Error(
      `--host ${out.host} is not a loopback address: the control API (/_emulator/) has no authentication, ` +
        "so anyone who can reach it could reset or change the emulator; add --allow-remote to bind it anyway",
    );
  if (values.port !== undefined) {
    const v = values.port;
    if (!/^\d+$/.test(v) || Number(v) > 65535) throw new Error(`--port must be 0 to 65535, got '${v}'`);
    out.port = Number(v);
  }
  if (values.db !== undefined) out.db = values.db;
  if (values.seed !== undefined) out.seed = values.seed;
  for (const v of values.workspace ?? []) {
    const colon = v.indexOf(":");
    if (colon <= 0 || colon === v.length - 1) throw new Error(`--workspace must be NAME:KEY, got '${v}'`);
    out.workspaces.push({ name: v.slice(0, colon), key: v.slice(colon + 1) });
  }
  if (values["rate-limit"] !== undefined) {
    const v = values["rate-limit"];
    if (!/^\d+$/.test(v)) throw new Error(`--rate-limit must be a whole number of requests, got '${v}'`);
    out.rateLimitPerMinute = Number(v);
  }
  if (values["rate-window-seconds"] !== undefined) {
    const v = values["rate-window-seconds"];
    const ms = Math.round(Number(v) * 1000);
    if (!/^\d+(\.\d+)?$/.test(v) || ms <= 0)
      throw new Error(
        `--rate-window-seconds must be a positive number of seconds (0.001 or more), got '${v}'`,
      );
    out.rateWindowMs = ms;
  }
  if (values["call-seconds"] !== undefined) {
    const v = values["call-seconds"];
    const n = Number(v);
    if (!/^\d+(\.\d+)?$/.test(v) || n <= 0 || n > MAX_CALL_SECONDS)
      throw new Error(
        `--call-seconds must be a number of seconds above 0 and at most ${MAX_CALL_SECONDS}, got '${v}'`,
      );
    out.callSeconds = n;
  }
  return out;
}

function parse(argv: string[]) {
  return parseArgv({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      host: { type: "string" },
      "allow-remote": { type: "boolean" },
      port: { type: "string" },
      db: { type: "string" },
      seed: { type: "string" },
      workspace: { type: "string", multiple: true },
      "rate-limit": { type: "string" },
      "rate-window-seconds": { type: "string" },
      "call-seconds": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
}

/** Runs the emulator with these arguments until SIGINT or SIGTERM; exit code 2 on bad arguments, 1 if it cannot start. */
export async function main(argv: string[]): Promise<void> {
  try {
    await run(argv);
  } catch (err) {
    process.stderr.write(`voice-agent-emulator: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}

async function run(argv: string[]): Promise<void> {
  let opts: CliOptions | "help";
  try {
    opts = parseArgs(argv);
  } catch (err) {
    process.stderr.write(`voice-agent-emulator: ${(err as Error).message}\n(--help lists the options)\n`);
    process.exit(2);
  }
  if (opts === "help") {
    process.stdout.write(USAGE);
    return;
  }
  // The launcher's shell, read before anything is printed: whoever reads the first line may stop
  // the launcher at once, and the emulator must not take its new parent for the launcher.
  const launcher = process.ppid;
  const emu = await startEmulator({
    host: opts.host,
    port: opts.port,
    db: opts.db,
    seed: opts.seed,
    workspaces: opts.workspaces,
    rateLimitPerMinute: opts.rateLimitPerMinute,
    rateWindowMs: opts.rateWindowMs,
    callSeconds: opts.callSeconds,
  });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    void emu.close().then(() => process.exit(0));
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  stopWithLauncher(launcher, stop);
  process.stdout.write(`voice-agent emulator listening on ${emu.url}\n`);
  for (const w of emu.workspaces) process.stdout.write(`workspace ${w.name}: key ${w.key}\n`);
  process.stdout.write(opts.db ? `state: ${opts.db}\n` : "state: in memory\n");
  if (opts.seed) process.stdout.write(`seed: ${opts.seed}\n`);
}

/** How often a launched emulator looks for its launcher's shell (reading `process.ppid`: nothing measurable). */
const LAUNCHER_INTERVAL_MS = 250;

/**
 * Run by npm (`npx voice-agent-emulator`, `npm exec`, a package script), the emulator is the child
 * of a `sh -c` that npm starts; npm passes SIGTERM to that shell, which dies without passing it on,
 * and the emulator would be left running, re-parented. So when npm launched it, the emulator stops
 * as soon as its parent is gone (`launcher`: its parent when it started, read before it printed
 * anything). Started any other way (directly, `&` in a script), it stays up until it is sent SIGINT
 * or SIGTERM.
 */
function stopWithLauncher(launcher: number, stop: () => void): void {
  if (process.env.npm_command === undefined || process.platform === "win32") return;
  const timer = setInterval(() => {
    if (process.ppid === launcher) return;
    clearInterval(timer);
    stop();
  }, LAUNCHER_INTERVAL_MS);
  timer.unref();
}
