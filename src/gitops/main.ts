/**
 * voice-agent-diff: turns `pulumi preview --json` into Markdown for a pull-request comment; with
 * `--drift`, `pulumi refresh --preview-only --json` into a drift report (./drift); with `--watch`,
 * the same input into a judgement of each watched live version's calls, rolling back a bad one
 * (./watch).
 * Loaded by ./cli once the Node.js version is known to be recent enough.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseCommandLine, runCommand, UsageError } from "../cli/command";
import { STACK_OPTIONS, type StackChoice, serviceConfig, stackHelp } from "../cli/service";
import { DEBUG_ENV, ENV_KEYS, VoiceAgentClient } from "../client";
import { findBreaking } from "./breaking";
import { assertRefresh, DRIFT_EXIT, findDrift, INCOMPLETE_EXIT, REFRESH_PREVIEW, renderDrift } from "./drift";
import { isEventStream, parseEventStream } from "./events";
import { assertSecretsHidden, nameOf } from "./preview";
import { findReusedVersions, parsePreview, recordedReuse, renderReport } from "./report";
import {
  boundWatchHeap,
  LOOKS_PER_PERIOD,
  NOTHING_SAFE_EXIT,
  newWatchMemory,
  ROLLED_BACK_EXIT,
  renderWatch,
  type WatchReport,
  watchExitCode,
  watchStacks,
} from "./watch";

/** Exit code of `--fail-on-breaking` when a break outside the service is not acknowledged. */
export const EXIT_BREAKING = 4;
/** Comma-separated ids of acknowledged breaks outside the service, added to `--acknowledge`. */
export const ACKNOWLEDGE_ENV = "VOICE_AGENT_ACKNOWLEDGE";

/** The command's options (`node:util` `parseArgs`, strict). */
export const OPTIONS = {
  title: { type: "string" },
  resolve: { type: "boolean" },
  "fail-on-breaking": { type: "boolean" },
  acknowledge: { type: "string", multiple: true },
  drift: { type: "boolean" },
  watch: { type: "boolean" },
  every: { type: "string" },
  "dry-run": { type: "boolean" },
  json: { type: "string" },
  ...STACK_OPTIONS,
  help: { type: "boolean", short: "h" },
} as const;

/** `voice-agent-diff --help`. */
export const HELP = `usage: voice-agent-diff [--title TEXT] [--resolve [--stack NAME [--cwd DIR]]] [--fail-on-breaking]
                        [--acknowledge ID]... [preview.json | up.json]
       voice-agent-diff --drift [--stack NAME [--cwd DIR]] [--title TEXT] [refresh.json]
       voice-agent-diff --watch [--stack NAME [--cwd DIR]] [--dry-run] [--json FILE] [--every SECONDS]
                        [--title TEXT] [refresh.json | DIR]...

Turns the output of \`pulumi preview --json\` into Markdown for a pull-request comment: per
voice-agent resource the action, the changed arguments, line diffs of long text (the system
prompt), which version of each agent will be published or put back live, then the preview's
warnings and errors. At the top, "Breaks outside the service": the valid changes that break someone
else (an analysis key calls publish, the widget's key, origins or status, a custom variable, a
transfer number, a language, a knowledge base, an agent off air, a rollback), one line each, its
stable id first (run the preview with --show-sames, so that unchanged analysis groups and
knowledge bases are named). An AgentVersion with \`verify\` says how many test calls it will place
and to which numbers. Reads preview.json, or stdin without a file; writes the Markdown to stdout.

Given the event stream of a deploy instead (\`pulumi up --json\`), it reports what the deploy did
the same way, and under each AgentVersion whose verification failed, why (each failing call and
expectation); the title is then "Voice agents: deploy".

With --drift: the drift alarm. Reads the output of \`pulumi refresh --preview-only --json\`, reads
each voice-agent resource from the service as \`pulumi refresh\` would, and reports what changed
outside Pulumi: per resource the arguments with old and new values (the system prompt as a line
diff), resources deleted outside Pulumi, and an agent whose live version was changed outside
Pulumi with the deploy-history rows that did it (when, which action). Exits 3 when anything drifted.

With --watch: after go-live, the watch. Reads the same \`pulumi refresh --preview-only --json\`, and
for each AgentVersion with \`watch\` that this stack put live and that is live, judges the real calls
it answered since it went live (of its origins, default widget, batch and inbound, not the tests' api, dashboard and demo; only
the last windowMinutes when set): each rate by a confidence sequence at \`confidence\` (valid over
every pass, however many) over at least \`minCalls\` measured calls. A bound exceeded with confidence
puts back live the newest version live before it that is published, not blocked and was not itself
taken off air by a rollback (read from the deploy history, read again right before the activation:
a deploy that moved the pointer meanwhile wins), and writes why into that version's notes, where the next \`pulumi refresh\`
(\`rolledBack\`), the drift alarm and the dashboard show it. Every bound held is healthy; anything
else is inconclusive and nothing is done. It never places a call. The report (Markdown on stdout)
gives per watched version its calls, each rate with its interval, the verdict and what was done.
Several refresh files (or a folder of them: its *.json files, listed again at every pass), one per
stack of the same workspace, are watched together: one agents listing and one calls listing serve
them all, and the report has a section per stack. With --every, a pass reads only what changed:
the agents listing (past 25 pages, 25 a pass, going on where the last pass stopped), the deploy
history of an agent whose live version moved, and the calls newer than the last pass's plus those
still running or awaiting their analysis; while a version's evidence is past half way to a fail,
a look (the calls only, a report of its own) each quarter of the period between passes.

Options:
  --title TEXT   the report's heading (default "Voice agents: preview"; with --drift,
                 "Voice agents: drift of stack NAME")
  --resolve      ask the service which published version a revert brings back, also finding
                 versions published outside the stack (the dashboard); without it, only versions
                 this stack recorded are named and the service is not contacted
  --fail-on-breaking
                 exit with code ${EXIT_BREAKING} when a break outside the service is not acknowledged
                 (the report is still written)
  --acknowledge ID
                 acknowledge the break with this id (e.g. widget-key:support); repeatable
  --drift        read refresh.json (\`pulumi refresh --preview-only --json\`) and report drift;
                 always asks the service
  --watch        read refresh.json (or several, or a folder of them) and judge each watched live
                 version's calls (see above); always asks the service
  --dry-run      with --watch: say what it would do, change nothing
  --json FILE    with --watch: also write the pass as JSON to FILE (rewritten at every pass and look;
                 with several stacks, {at, dryRun, stacks: [one report per stack]})
  --every SECONDS
                 with --watch: run a pass every SECONDS until stopped (SIGINT, SIGTERM), reading
                 refresh.json again before each pass (stdin is read once); looks between passes
                 while a version nears a fail
${stackHelp(12)}  -h, --help     show this help and exit

Environment:
  ${ACKNOWLEDGE_ENV.padEnd(24)} comma-separated ids to acknowledge, as --acknowledge

Environment (read only with --resolve, --drift or --watch; each one set wins over --stack):
  ${ENV_KEYS.baseUrl.padEnd(24)} the service's URL (https; plain http only on a loopback host)
  ${ENV_KEYS.apiKey.padEnd(24)} the workspace API key (never printed)
  ${ENV_KEYS.rateLimitPerMinute.padEnd(24)} requests per minute to keep under (default 300)
  ${DEBUG_ENV.padEnd(24)} 1 or true: one line per HTTP request on stderr

Exit codes:
  0  the report was written
  1  the input could not be read or is not \`pulumi preview --json\` or \`pulumi up --json\`
     output (with --drift, \`pulumi refresh --preview-only --json\` output), or was made with
     --show-secrets (its secrets would go into the report); with --resolve or --drift, the service
     could not be asked, its credentials are not set (nor in --stack's configuration) or refused,
     or they reach another workspace
     than the stack's (a resource Pulumi's refresh found that the service does not know); or
     Node.js is older than 22.19
  2  wrong usage: an unknown option, an option without its value, more than one file (but with
     --watch), or no file while stdin is a terminal
  3  with --drift: something changed outside Pulumi (the report says what); 0 when nothing did
  ${EXIT_BREAKING}  with --fail-on-breaking: a break outside the service is not acknowledged (stderr
     names each id); the report was written
  ${INCOMPLETE_EXIT}  with --drift: some resource could not be read (the report and stderr name each);
     the report covers the others, drifted or not; with --watch: a watched version could not be
     judged (stderr names each); with --every, when the last pass was skipped (the file empty or
     not whole JSON: a pass that finds it so says so on stderr and reads it again next time)
  ${ROLLED_BACK_EXIT}  with --watch: at least one version was rolled back (with --dry-run: would be);
     with --every, when any pass rolled one back
  ${NOTHING_SAFE_EXIT}  with --watch: a version fails its bounds and nothing is safe to return to (every
     version live before it was rolled back, is blocked, or there is none): the live pointer was
     left alone and a person decides (stderr says what to do); with --every, when any pass found
     one. Takes precedence over ${ROLLED_BACK_EXIT}

Examples:
  pulumi preview --stack prod --show-sames --json > preview.json
  voice-agent-diff --resolve --title "Voice agents: prod" preview.json > report.md
  voice-agent-diff --fail-on-breaking --acknowledge widget-key:support preview.json > report.md
  pulumi preview --show-sames --json | voice-agent-diff > report.md
  pulumi up --yes --json > up.json; voice-agent-diff up.json > deploy.md
  pulumi refresh --stack prod --preview-only --json > refresh.json
  voice-agent-diff --drift refresh.json > drift.md   # exit code 3: drift
  voice-agent-diff --drift --stack prod refresh.json   # the URL and key from stack prod's config
  voice-agent-diff --watch --json watch.json refresh.json > watch.md   # exit code 6: rolled back
  voice-agent-diff --watch --every 60 refresh/   # one watch for every stack's refresh JSON in refresh/
`;

function parse(argv: string[]) {
  const { values, positionals } = parseCommandLine(argv, OPTIONS);
  if (positionals.length > 1 && !values.watch) {
    throw new UsageError(`one preview file at most, got ${positionals.length}: ${positionals.join(" ")}`);
  }
  return { ...values, file: positionals[0], files: positionals };
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

/**
 * A client for an option that asks the service: from the environment, else from `--stack`'s
 * configuration; the message names what is missing.
 */
async function serviceClient(option: string, choice: StackChoice): Promise<VoiceAgentClient> {
  let config: Awaited<ReturnType<typeof serviceConfig>>;
  try {
    config = await serviceConfig(option, choice);
  } catch (err) {
    const message = (err as Error).message;
    throw message.startsWith(option) ? err : new Error(`${option}: ${message}`, { cause: err });
  }
  return new VoiceAgentClient({ ...config, userAgent: "pulumi-voice-agent (voice-agent-diff)" });
}

/** `--drift`: the drift report of a refresh preview on stdout; exit code 3 when something drifted. */
async function drift(
  json: unknown,
  title: string | undefined,
  source: string,
  choice: StackChoice,
): Promise<void> {
  const refresh = parsePreview(json, REFRESH_PREVIEW);
  assertSecretsHidden(refresh, source);
  assertRefresh(refresh);
  const report = await findDrift(refresh, await serviceClient("--drift", choice));
  process.stdout.write(renderDrift(report, title !== undefined ? { title } : {}));
  for (const f of report.failed)
    process.stderr.write(
      `voice-agent-diff: could not read ${f.type} \`${nameOf(f.urn)}\` (${f.id}): ${f.message}\n`,
    );
  if (report.failed.length > 0) process.exitCode = INCOMPLETE_EXIT;
  else if (report.drifted.length > 0) process.exitCode = DRIFT_EXIT;
}

/** `--every SECONDS`, checked: a positive number of seconds. */
function everySeconds(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!(Number.isFinite(n) && n > 0))
    throw new UsageError(`--every: a number of seconds > 0, got ${JSON.stringify(value)}`);
  return n;
}

/**
 * The refresh files `--watch` reads at a pass: each file given, and each folder's `*.json` files
 * (listed again at every pass, so that a stack added later is watched from its next pass).
 */
function refreshFiles(given: readonly string[]): string[] {
  return given.flatMap((g) => {
    let dir = false;
    try {
      dir = statSync(g).isDirectory();
    } catch {
      return [g]; // read() says why it cannot be read
    }
    if (!dir) return [g];
    return readdirSync(g)
      .filter((f) => f.endsWith(".json"))
      .sort()
      .map((f) => path.join(g, f));
  });
}

/**
 * `--watch`: one pass (or, with `--every`, a pass every so many seconds until SIGINT or SIGTERM),
 * each pass's report on stdout (and as JSON in `--json FILE`); problems named on stderr. The exit
 * code: 7 when any pass found a failing version with nothing safe to return to, else 6 when any
 * pass rolled a version back, else 5 when the last pass was incomplete (or skipped), else 0.
 * Several refresh files (or folders of them): one pass judges every stack, sharing the listings.
 */
async function watch(
  args: {
    file?: string;
    files: string[];
    title?: string;
    json?: string;
    "dry-run"?: boolean;
    every?: string;
  } & StackChoice,
  first: string | undefined,
): Promise<void> {
  const every = everySeconds(args.every);
  // A watch reads thousands of pages over its life: V8 collects before the heap outgrows its
  // live set by much, so the process stays small (docs/deploys.md "What it costs").
  boundWatchHeap();
  const client = await serviceClient("--watch", args);
  let stopped = false;
  const stop = new AbortController();
  const onSignal = () => {
    stopped = true;
    stop.abort();
  };
  if (every !== undefined) {
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
  }
  let rolledBack = false;
  let nothingSafe = false;
  let last = 0;
  // What earlier passes read: published versions' groups (frozen), the live pointers and their
  // rows, the settled calls' tallies and the calls still to settle.
  const memory = newWatchMemory();
  // Seconds left until the next pass; while a version nears a `fail`, looks (the calls only) fill
  // the period, one each quarter of it (a confidence sequence holds over every look).
  let untilPass = 0;
  try {
    for (let pass = 0; ; pass++) {
      const look = untilPass > 0;
      if (!look) untilPass = every ?? 0;
      // stdin (read once), or the files given (folders listed again at every pass).
      const sources: { source: string; text: () => string }[] =
        args.files.length === 0
          ? [{ source: "stdin", text: () => first ?? "" }]
          : refreshFiles(args.files).map((f) => ({
              source: f,
              text: () => (pass === 0 && f === args.file && first !== undefined ? first : read(f)),
            }));
      if (sources.length === 0) {
        if (every === undefined) throw new Error(`no refresh file (*.json) in ${args.files.join(", ")}`);
        process.stderr.write(
          `voice-agent-diff: pass skipped: no refresh file (*.json) in ${args.files.join(", ")}\n`,
        );
        last = INCOMPLETE_EXIT;
        untilPass = 0;
        if (stopped || !(await pause(every, stop.signal))) break;
        continue;
      }
      const refreshes = [];
      let skipped = false;
      for (const { source, text } of sources) {
        const body = text();
        let json: unknown;
        try {
          json = JSON.parse(body);
        } catch (err) {
          if (every === undefined || source === "stdin")
            throw new Error(`${source} is not the JSON of \`${REFRESH_PREVIEW}\``, { cause: err });
          // With --every, the file is rewritten between passes (`pulumi refresh ... > refresh.json`
          // empties it first): one caught empty or half-written is skipped, and read again next pass.
          process.stderr.write(
            `voice-agent-diff: ${sources.length === 1 ? "pass" : `${source}`} skipped: ${source} is ${body.trim() === "" ? "empty" : "not whole JSON"} ` +
              `(being rewritten?); read again in ${every} s\n`,
          );
          skipped = true;
          continue;
        }
        const refresh = parsePreview(json, REFRESH_PREVIEW);
        assertSecretsHidden(refresh, source);
        assertRefresh(refresh);
        refreshes.push(refresh);
      }
      let reports: WatchReport[] = [];
      if (refreshes.length > 0) {
        reports = await watchStacks(refreshes, client, { dryRun: args["dry-run"] === true, memory, look });
        const several = sources.length > 1;
        if (several && args.title !== undefined) process.stdout.write(`## ${args.title}\n\n`);
        for (const report of reports)
          process.stdout.write(
            renderWatch(report, !several && args.title !== undefined ? { title: args.title } : {}),
          );
        if (args.json !== undefined) {
          const doc = several
            ? { at: reports[0]?.at, dryRun: args["dry-run"] === true, stacks: reports }
            : reports[0];
          writeFileSync(args.json, `${JSON.stringify(doc, null, 2)}\n`);
        }
        for (const report of reports)
          for (const r of report.results)
            if (r.problem !== undefined)
              process.stderr.write(
                `voice-agent-diff: ${several && report.stack ? `stack ${report.stack}: ` : ""}AgentVersion \`${r.name}\` (${r.agentId} version ${r.version}): ${r.problem}\n`,
              );
      }
      const codes = reports.map(watchExitCode);
      last = codes.includes(NOTHING_SAFE_EXIT)
        ? NOTHING_SAFE_EXIT
        : codes.includes(ROLLED_BACK_EXIT)
          ? ROLLED_BACK_EXIT
          : skipped || codes.includes(INCOMPLETE_EXIT)
            ? INCOMPLETE_EXIT
            : 0;
      if (last === ROLLED_BACK_EXIT) rolledBack = true;
      if (last === NOTHING_SAFE_EXIT) nothingSafe = true;
      if (every === undefined || stopped) break;
      const soon = refreshes.length > 0 && memory.nearing > 0;
      const wait = soon ? Math.min(untilPass, every / LOOKS_PER_PERIOD) : untilPass;
      untilPass = untilPass - wait < 1e-6 ? 0 : untilPass - wait; // no look for a rounding error
      if (!(await pause(wait, stop.signal))) break;
    }
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
  process.exitCode = nothingSafe ? NOTHING_SAFE_EXIT : rolledBack ? ROLLED_BACK_EXIT : last;
}

function isDirectory(file: string): boolean {
  try {
    return statSync(file).isDirectory();
  } catch {
    return false;
  }
}

/** Waits `seconds` unless stopped first: whether to run another pass. */
async function pause(seconds: number, signal: AbortSignal): Promise<boolean> {
  try {
    await sleep(seconds * 1000, undefined, { signal });
    return true;
  } catch {
    return false; // stopped while waiting
  }
}

/** Runs the command with `argv` (without node and the script); sets `process.exitCode`. */
export function main(argv: string[]): Promise<void> {
  return runCommand("voice-agent-diff", async () => {
    const args = parse(argv);
    if (args.help) {
      process.stdout.write(HELP);
      return;
    }
    if (args.drift && args.watch) throw new UsageError("--drift and --watch are two commands: give one");
    if (args.watch && (args.resolve || args["fail-on-breaking"] || args.acknowledge))
      throw new UsageError("--resolve, --fail-on-breaking and --acknowledge are for a preview, not --watch");
    if (!args.watch && (args.every !== undefined || args["dry-run"] || args.json !== undefined))
      throw new UsageError("--every, --dry-run and --json are options of --watch");
    if (args.watch) {
      everySeconds(args.every);
      // The first file is read now (stdin without one); a folder's files at the pass.
      const first =
        args.file === undefined || (args.files.length === 1 && !isDirectory(args.file))
          ? read(args.file)
          : undefined;
      return watch(args, first);
    }
    if (args.drift && args.resolve)
      throw new UsageError("--resolve is for a preview; --drift always asks the service");
    if (args.drift && (args["fail-on-breaking"] || args.acknowledge))
      throw new UsageError("--fail-on-breaking and --acknowledge are for a preview, not --drift");
    if (!args.drift && !args.resolve && (args.stack !== undefined || args.cwd !== undefined))
      throw new UsageError("--stack and --cwd are for --resolve, --drift and --watch, which ask the service");
    const text = read(args.file);
    // A deploy's event stream (`pulumi up --json`): what it did, and what failed under its resource.
    const run = !args.drift && isEventStream(text);
    const command = args.drift ? REFRESH_PREVIEW : "pulumi preview --json";
    let json: unknown;
    if (!run) {
      try {
        json = JSON.parse(text);
      } catch (err) {
        throw new Error(`${args.file ?? "stdin"} is not the JSON of \`${command}\``, { cause: err });
      }
    }
    const source = args.file ?? "stdin";
    if (args.drift) return drift(json, args.title, source, args);
    const preview = run ? parseEventStream(text, source) : parsePreview(json);
    assertSecretsHidden(preview, source);
    const title = args.title ?? (run ? "Voice agents: deploy" : undefined);
    let reused: Map<string, number> | undefined;
    if (args.resolve) reused = await findReusedVersions(preview, await serviceClient("--resolve", args));
    const acknowledged = new Set(
      [...(args.acknowledge ?? []), ...(process.env[ACKNOWLEDGE_ENV] ?? "").split(",")]
        .map((id) => id.trim())
        .filter((id) => id !== ""),
    );
    process.stdout.write(
      renderReport(preview, {
        ...(title !== undefined ? { title } : {}),
        ...(reused ? { reused } : {}),
        acknowledged,
      }),
    );
    checkAcknowledged(
      findBreaking(preview, reused ?? recordedReuse(preview)).map((b) => b.id),
      acknowledged,
      args["fail-on-breaking"] === true,
    );
  });
}

/**
 * Says on stderr which breaks are not acknowledged (with --fail-on-breaking, exit code 4) and which
 * acknowledged ids the preview does not list (a note: a stale acknowledgement is harmless).
 */
function checkAcknowledged(ids: readonly string[], acknowledged: ReadonlySet<string>, fail: boolean): void {
  const unlisted = [...acknowledged].filter((id) => !ids.includes(id));
  if (unlisted.length > 0)
    process.stderr.write(
      `voice-agent-diff: note: acknowledged but not in this preview: ${unlisted.join(", ")}\n`,
    );
  const open = ids.filter((id) => !acknowledged.has(id));
  if (!fail || open.length === 0) return;
  process.stderr.write(
    `voice-agent-diff: ${open.length} break${open.length === 1 ? " outside the service is" : "s outside the service are"} not acknowledged:\n` +
      open.map((id) => `  ${id}\n`).join("") +
      `Acknowledge each intended one with --acknowledge ID (repeatable) or ${ACKNOWLEDGE_ENV} (comma-separated ids).\n`,
  );
  process.exitCode = EXIT_BREAKING;
}
