#!/usr/bin/env node
/**
 * voice-agent-emulator [--host 127.0.0.1] [--port 8787|0] [--db FILE] [--workspace NAME:KEY]...
 *                      [--rate-limit PER_MINUTE]
 *
 * First stdout line: `voice-agent emulator listening on http://HOST:PORT` (the real port when 0).
 */
import { DEFAULT_RATE_LIMIT, startEmulator, type WorkspaceConfig } from "./index";

const USAGE =
  "usage: voice-agent-emulator [--host 127.0.0.1] [--port 8787|0] [--db FILE] [--workspace NAME:KEY]... [--rate-limit PER_MINUTE]";

/** Parsed command line. */
export interface CliOptions {
  host: string;
  port: number;
  db?: string;
  workspaces: WorkspaceConfig[];
  rateLimitPerMinute: number;
}

/** Parses the arguments (throws with a message on a bad one). */
export function parseArgs(argv: string[]): CliOptions | "help" {
  const out: CliOptions = {
    host: "127.0.0.1",
    port: 8787,
    workspaces: [],
    rateLimitPerMinute: DEFAULT_RATE_LIMIT,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const eq = arg.indexOf("=");
    const flag = arg.startsWith("--") && eq > 0 ? arg.slice(0, eq) : arg;
    const inline = arg.startsWith("--") && eq > 0 ? arg.slice(eq + 1) : undefined;
    const value = (): string => {
      if (inline !== undefined) return inline;
      const v = argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case "-h":
      case "--help":
        return "help";
      case "--host":
        out.host = value();
        break;
      case "--port": {
        const v = value();
        const n = Number(v);
        if (!/^\d+$/.test(v) || n > 65535) throw new Error(`--port must be 0 to 65535, got '${v}'`);
        out.port = n;
        break;
      }
      case "--db":
        out.db = value();
        break;
      case "--workspace": {
        const v = value();
        const colon = v.indexOf(":");
        if (colon <= 0 || colon === v.length - 1) throw new Error(`--workspace must be NAME:KEY, got '${v}'`);
        out.workspaces.push({ name: v.slice(0, colon), key: v.slice(colon + 1) });
        break;
      }
      case "--rate-limit": {
        const v = value();
        if (!/^\d+$/.test(v))
          throw new Error(`--rate-limit must be a whole number of requests per minute, got '${v}'`);
        out.rateLimitPerMinute = Number(v);
        break;
      }
      default:
        throw new Error(`unknown argument '${arg}'`);
    }
  }
  return out;
}

async function main(): Promise<void> {
  let opts: CliOptions | "help";
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`voice-agent-emulator: ${(err as Error).message}\n${USAGE}\n`);
    process.exit(2);
  }
  if (opts === "help") {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const emu = await startEmulator({
    host: opts.host,
    port: opts.port,
    db: opts.db,
    workspaces: opts.workspaces,
    rateLimitPerMinute: opts.rateLimitPerMinute,
  });
  process.stdout.write(`voice-agent emulator listening on ${emu.url}\n`);
  for (const w of emu.workspaces) process.stdout.write(`workspace ${w.name}: key ${w.key}\n`);
  process.stdout.write(opts.db ? `state: ${opts.db}\n` : "state: in memory\n");
  const stop = () => {
    void emu.close().then(() => process.exit(0));
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`voice-agent-emulator: ${(err as Error).message ?? String(err)}\n`);
    process.exit(1);
  });
}
