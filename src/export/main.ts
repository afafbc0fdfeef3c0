/**
 * voice-agent-export: writes a Pulumi TypeScript project that adopts a workspace's agents, versions,
 * widgets, knowledge bases and analysis groups as they are, so that its first `pulumi up` writes
 * nothing. Loaded by ./cli once the Node.js version is known to be recent enough.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { parseCommandLine, runCommand, UsageError } from "../cli/command";
import { serviceConfig } from "../cli/service";
import { CONFIG_KEYS, DEBUG_ENV, ENV_KEYS, VoiceAgentClient } from "../client";
import { planExport } from "./plan";
import { readWorkspace } from "./read";
import { type Language, renderProject, summarize, type Versions } from "./render";

/** The command's options (`node:util` `parseArgs`, strict). */
export const OPTIONS = {
  out: { type: "string" },
  agent: { type: "string", multiple: true },
  stack: { type: "string" },
  project: { type: "string" },
  cwd: { type: "string" },
  force: { type: "boolean" },
  language: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

/** Default stack name. */
export const DEFAULT_STACK = "dev";

/** `voice-agent-export --help`. */
export const HELP = `usage: voice-agent-export --out DIR [--agent ID]... [--stack NAME [--cwd DIR]] [--project NAME] [--language typescript|yaml] [--force]

Writes a Pulumi TypeScript (or YAML) project that brings a workspace under code: every agent (its working
configuration, its live version, its widget), knowledge base and analysis group, each declared
with its adopt input and exactly the configuration the service holds (fields at their platform
defaults left out), so that the first \`pulumi up\` writes nothing to the service. Only reads the
service. The project: Pulumi.yaml, Pulumi.<stack>.yaml (the base URL; never the API key),
package.json, tsconfig.json, index.ts, prompts/<agent>.md, README.md.

Options:
  --out DIR        the folder to write (required); refused when it is not empty, unless --force
  --agent ID       export this agent, and the knowledge bases and groups it uses; repeat for more
                   (default: every object of the workspace)
  --stack NAME     the stack whose config file is written (default "${DEFAULT_STACK}"); given, and
                   the environment variables below not set, the service's URL and key are read
                   from this stack's configuration (${CONFIG_KEYS.baseUrl}, secret ${CONFIG_KEYS.apiKey})
                   in the Pulumi project of --cwd: export the workspace a stack deploys to
  --cwd DIR        with --stack: the folder of the Pulumi project to read it from (default: the
                   current one)
  --project NAME   the Pulumi project name (default: the name of the --out folder)
  --language LANG  typescript (default): index.ts on this package; yaml: a Pulumi YAML program
                   (Pulumi.yaml) on the voice-agent provider plugin (docs/plugin.md)
  --force          write into a folder that is not empty, replacing files of the same names
  -h, --help       show this help and exit

Environment (each one set wins over --stack's configuration):
  ${ENV_KEYS.baseUrl.padEnd(22)} the service's URL (https; plain http only on a loopback host)
  ${ENV_KEYS.apiKey.padEnd(22)} the workspace API key (never written or printed)
  ${ENV_KEYS.rateLimitPerMinute.padEnd(22)} requests per minute to keep under (default 300)
  ${DEBUG_ENV.padEnd(22)} 1 or true: one line per HTTP request on stderr

Exit codes:
  0  the project was written
  1  it was not: the environment lacks the URL or the key (and --stack's configuration could not
     give them), the service could not be read, an
     --agent is not in the workspace, the folder is not empty (see --force) or cannot be written;
     or Node.js is older than 22.19
  2  wrong usage: an unknown option, an option without its value, no --out, a stray argument,
     or a project or stack name Pulumi would refuse

Examples:
  voice-agent-export --out voice-agents
  voice-agent-export --out support --agent 0b7c6a52-5d7e-4b0e-9f3e-2f1a8c1d9e4f --stack prod
  cd voice-agents && npm install && pulumi stack init dev
  pulumi config set --secret voice-agent:apiKey <key> && pulumi up
`;

const isLanguage = (l: string): l is Language => l === "typescript" || l === "yaml";

/** Names Pulumi accepts for a project or a stack. */
const NAME = /^[A-Za-z0-9_.-]{1,100}$/;

function parse(argv: string[]) {
  const { values, positionals } = parseCommandLine(argv, OPTIONS);
  if (positionals.length > 0) {
    throw new UsageError(`unexpected argument: ${positionals.join(" ")} (the folder goes after --out)`);
  }
  if (values.help) return { help: true as const };
  if (values.out === undefined || values.out.trim() === "") throw new UsageError("--out DIR is required");
  const out = path.resolve(values.out);
  const stack = values.stack ?? DEFAULT_STACK;
  if (!NAME.test(stack)) {
    throw new UsageError(`--stack: "${stack}" is not a stack name (letters, digits, '-', '_' and '.')`);
  }
  const fromFolder = path
    .basename(out)
    .replace(/[^A-Za-z0-9_.-]+/g, "-")
    .replace(/^-+|-+$/g, "");
  const project = values.project ?? (fromFolder === "" ? "voice-agents" : fromFolder.slice(0, 100));
  if (!NAME.test(project)) {
    throw new UsageError(`--project: "${project}" is not a project name (letters, digits, '-', '_' and '.')`);
  }
  const language = values.language ?? "typescript";
  if (!isLanguage(language)) throw new UsageError(`--language: "${language}" is not typescript or yaml`);
  return {
    help: false as const,
    language,
    out,
    stack,
    project,
    force: values.force === true,
    agents: values.agent,
    // The stack to read the service's settings from: only one the command line names.
    from: { stack: values.stack, cwd: values.cwd },
  };
}

/** This package's version and the versions of what the exported project installs with it. */
function versions(): Versions {
  const pkg = JSON.parse(readFileSync(path.join(__dirname, "../../package.json"), "utf8")) as {
    version: string;
    peerDependencies: Record<string, string>;
    devDependencies?: Record<string, string>;
  };
  return {
    self: pkg.version,
    pulumi: pkg.peerDependencies["@pulumi/pulumi"] ?? "^3",
    typescript: pkg.devDependencies?.typescript ?? "^5",
    typesNode: pkg.devDependencies?.["@types/node"] ?? "^22",
  };
}

/** Refuses a folder that holds anything, unless `force`. */
function checkFolder(out: string, force: boolean): void {
  if (!existsSync(out)) return;
  if (!statSync(out).isDirectory()) throw new Error(`--out ${out} is a file, not a folder`);
  const entries = readdirSync(out);
  if (entries.length > 0 && !force) {
    throw new Error(
      `--out ${out} is not empty (${entries.length} entr${entries.length === 1 ? "y" : "ies"}): give an empty or new ` +
        "folder, or --force to write into it (files of the same names are replaced)",
    );
  }
}

/** Runs the command with `argv` (without node and the script); sets `process.exitCode`. */
export function main(argv: string[]): Promise<void> {
  return runCommand("voice-agent-export", async () => {
    const args = parse(argv);
    if (args.help) {
      process.stdout.write(HELP);
      return;
    }
    checkFolder(args.out, args.force);
    const client = new VoiceAgentClient({
      ...(await serviceConfig("the export", args.from)),
      userAgent: "pulumi-voice-agent (voice-agent-export)",
    });
    const snapshot = await readWorkspace(client, args.agents ? { agentIds: args.agents } : {});
    const plan = planExport(snapshot);
    const files = renderProject(plan, {
      project: args.project,
      stack: args.stack,
      versions: versions(),
      language: args.language,
    });
    for (const [name, content] of files) {
      const file = path.join(args.out, name);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, content);
    }
    for (const w of plan.warnings) process.stderr.write(`voice-agent-export: warning: ${w}\n`);
    const shown = path.relative(process.cwd(), args.out) || ".";
    process.stdout.write(
      `Exported ${summarize(plan)} from ${plan.baseUrl} to ${shown}/\n` +
        "Next (the first `pulumi up` writes nothing to the service):\n" +
        `  cd ${shown}\n${args.language === "yaml" ? "  pulumi plugin install resource voice-agent <version> --file <the plugin's tarball>\n" : "  npm install\n"}  pulumi stack init ${args.stack}\n` +
        "  pulumi config set --secret voice-agent:apiKey <your key>\n  pulumi up\n",
    );
  });
}
