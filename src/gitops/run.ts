/**
 * voice-agent-diff: turns `pulumi preview --json` into Markdown for a pull-request comment.
 * Loaded by `cli.ts` once the Node.js version is known to be supported.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { closeDispatchers, configFromPulumi, VoiceAgentClient } from "../client";
import { findReusedVersions, type PreviewJson, renderReport } from "./report";

/** The complete `--help`. */
export const USAGE = `usage: voice-agent-diff [options] [preview.json]

Turns the JSON of \`pulumi preview --json\` into Markdown for a pull-request comment: per
resource the action, the changed fields, line diffs of long text (the prompt), the version
that will be published or put back live, then warnings and errors. Reads standard input when
no file is given.

Options:
  --title TEXT   the comment's heading (default "Voice agents: preview")
  --resolve      ask the service which published version a revert brings back (reads
                 VOICE_AGENT_BASE_URL and VOICE_AGENT_API_KEY from the environment)
  -h, --help     this text

Exit codes: 0 the report was written; 1 the input could not be read or the service could
not be asked; 2 the command line was wrong.

Example:
  pulumi preview --json --stack prod > preview.json
  voice-agent-diff --title "prod" preview.json > comment.md
`;

/** Runs the command with `argv` (without the node and script paths). */
export function main(argv: string[]): void {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    process.stderr.write(`voice-agent-diff: ${(err as Error).message}\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  if (parsed.values.help) {
    process.stdout.write(USAGE);
    return;
  }
  report(parsed.values, parsed.positionals[0])
    .catch((err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    })
    .finally(() => closeDispatchers());
}

function parse(argv: string[]) {
  const parsed = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      title: { type: "string" },
      resolve: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (parsed.positionals.length > 1)
    throw new Error(`one preview file at most (got ${parsed.positionals.length})`);
  return parsed;
}

async function report(
  values: { title?: string; resolve?: boolean },
  file: string | undefined,
): Promise<void> {
  const text = readFileSync(file ?? 0, "utf8");
  let doc: PreviewJson;
  try {
    doc = JSON.parse(text) as PreviewJson;
  } catch (err) {
    throw new Error(`voice-agent-diff: ${file ?? "stdin"} is not the JSON of \`pulumi preview --json\``, {
      cause: err,
    });
  }
  const reused = values.resolve
    ? await findReusedVersions(doc, new VoiceAgentClient(configFromPulumi(undefined)))
    : undefined;
  process.stdout.write(
    renderReport(doc, { ...(values.title ? { title: values.title } : {}), ...(reused ? { reused } : {}) }),
  );
}
