/**
 * voice-agent-diff: turns `pulumi preview --json` into Markdown for a pull-request comment, and
 * with `--drift`, `pulumi refresh --preview-only --json` into a drift report (./drift).
 * Loaded by ./cli once the Node.js version is known to be recent enough.
 */
import { readFileSync } from "node:fs";
import { parseCommandLine, runCommand, UsageError } from "../cli/command";
import { configFromPulumi, DEBUG_ENV, ENV_KEYS, VoiceAgentClient } from "../client";
import { assertRefresh, DRIFT_EXIT, findDrift, REFRESH_PREVIEW, renderDrift } from "./drift";
import { findReusedVersions, parsePreview, renderReport } from "./report";

/** The command's options (`node:util` `parseArgs`, strict). */
export const OPTIONS = {
  title: { type: "string" },
  resolve: { type: "boolean" },
  drift: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/** `voice-agent-diff --help`. */
export const HELP = `usage: voice-agent-diff [--title TEXT] [--resolve] [preview.json]
       voice-agent-diff --drift [--title TEXT] [refresh.json]

Turns the output of \`pulumi preview --json\` into Markdown for a pull-request comment: per
voice-agent resource the action, the changed arguments, line diffs of long text (the system
prompt), which version of each agent will be published or put back live, then the preview's
warnings and errors. Reads preview.json, or stdin without a file; writes the Markdown to stdout.

With --drift: the drift alarm. Reads the output of \`pulumi refresh --preview-only --json\`, reads
each voice-agent resource from the service as \`pulumi refresh\` would, and reports what changed
outside Pulumi: per resource the arguments with old and new values (the system prompt as a line
diff), resources deleted outside Pulumi, and an agent whose live version was changed outside
Pulumi with the deploy-history rows that did it (when, which action). Exits 3 when anything drifted.

Options:
  --title TEXT   the report's heading (default "Voice agents: preview"; with --drift,
                 "Voice agents: drift of stack NAME")
  --resolve      ask the service which published version a revert brings back, also finding
                 versions published outside the stack (the dashboard); without it, only versions
                 this stack recorded are named and the service is not contacted
  --drift        read refresh.json (\`pulumi refresh --preview-only --json\`) and report drift;
                 always asks the service
  -h, --help     show this help and exit

Environment (read only with --resolve or --drift):
  ${ENV_KEYS.baseUrl.padEnd(22)} the service's URL (https; plain http only on a loopback host)
  ${ENV_KEYS.apiKey.padEnd(22)} the workspace API key (never printed)
  ${ENV_KEYS.rateLimitPerMinute.padEnd(22)} requests per minute to keep under (default 300)
  ${DEBUG_ENV.padEnd(22)} 1 or true: one line per HTTP request on stderr

Exit codes:
  0  the report was written
  1  the input could not be read or is not \`pulumi preview --json\` output (with --drift,
     \`pulumi refresh --preview-only --json\` output); with --resolve or --drift, the service
     could not be asked or its credentials are not set; or Node.js is older than 22.19
  2  wrong usage: an unknown option, an option without its value, more than one file, or no
     file while stdin is a terminal
  3  with --drift: something changed outside Pulumi (the report says what); 0 when nothing did

Examples:
  pulumi preview --stack prod --json > preview.json
  voice-agent-diff --resolve --title "Voice agents: prod" preview.json > report.md
  pulumi preview --json | voice-agent-diff > report.md
  pulumi refresh --stack prod --preview-only --json > refresh.json
  voice-agent-diff --drift refresh.json > drift.md   # exit code 3: drift
`;

function parse(argv: string[]) {
  const { values, positionals } = parseCommandLine(argv, OPTIONS);
  if (positionals.length > 1) {
    throw new UsageError(`one preview file at most, got ${positionals.length}: ${positionals.join(" ")}`);
  }
  return { ...values, file: positionals[0] };
}

function read(file: string | undefined): string {
  if (file === undefined && process.stdin.isTTY) {
    throw new UsageError("no input: give the preview file, or pipe `pulumi preview --json` into stdin");
  }
  try {
    return readFileSync(file ?? 0, "utf8");
  } catch (err) {
    throw new Error(`cannot read ${file ?? "stdin"}: ${(err as Error).message}`, { cause: err });
  }
}

/** A client from the environment, for an option that asks the service; the message names what is missing. */
function serviceClient(option: string): VoiceAgentClient {
  const missing = [ENV_KEYS.baseUrl, ENV_KEYS.apiKey].filter((k) => !process.env[k]?.trim());
  if (missing.length > 0) throw new Error(`${option} asks the service: set ${missing.join(" and ")}`);
  try {
    return new VoiceAgentClient(configFromPulumi(undefined));
  } catch (err) {
    throw new Error(`${option}: ${(err as Error).message}`, { cause: err });
  }
}

/** `--drift`: the drift report of a refresh preview on stdout; exit code 3 when something drifted. */
async function drift(json: unknown, title: string | undefined): Promise<void> {
  const refresh = parsePreview(json, REFRESH_PREVIEW);
  assertRefresh(refresh);
  const report = await findDrift(refresh, serviceClient("--drift"));
  process.stdout.write(renderDrift(report, title !== undefined ? { title } : {}));
  if (report.drifted.length > 0) process.exitCode = DRIFT_EXIT;
}

/** Runs the command with `argv` (without node and the script); sets `process.exitCode`. */
export function main(argv: string[]): Promise<void> {
  return runCommand("voice-agent-diff", async () => {
    const args = parse(argv);
    if (args.help) {
      process.stdout.write(HELP);
      return;
    }
    if (args.drift && args.resolve)
      throw new UsageError("--resolve is for a preview; --drift always asks the service");
    const text = read(args.file);
    const command = args.drift ? REFRESH_PREVIEW : "pulumi preview --json";
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new Error(`${args.file ?? "stdin"} is not the JSON of \`${command}\``, { cause: err });
    }
    if (args.drift) return drift(json, args.title);
    const preview = parsePreview(json);
    let reused: Map<string, number> | undefined;
    if (args.resolve) reused = await findReusedVersions(preview, serviceClient("--resolve"));
    process.stdout.write(
      renderReport(preview, {
        ...(args.title !== undefined ? { title: args.title } : {}),
        ...(reused ? { reused } : {}),
      }),
    );
  });
}
