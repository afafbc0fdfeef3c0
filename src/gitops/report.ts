/**
 * The pull-request report: `pulumi preview --json` in, Markdown out. Per resource of this package
 * the action, the changed fields as a table, a unified line diff for long text (the system prompt,
 * every platform line), what will be published and what will go live; then warnings and errors.
 */
import { createPatch } from "diff";
import type { VoiceAgentClient } from "../client";
import { deepEqual } from "../provider/normalize";
import { UNKNOWN } from "../provider/unknowns";
import type { AgentArgs } from "../resources/agent";
import { declaredConfig, observedConfig } from "../resources/agent/projection";
import type { AgentVersionArgs } from "../resources/agentVersion";
import { reuseCandidates } from "../resources/agentVersion/reuse";
import type { AnalysisGroupArgs } from "../resources/analysisGroup";
import { inputDefault, maskedSecrets, renamedInputs } from "../resources/inputSpecs";
import type { KnowledgeBaseArgs } from "../resources/knowledgeBase";
import type { WidgetArgs } from "../resources/widget";
import { rolledBackSection, watchPlan } from "./afterLive";
import { type Breaking, findBreaking } from "./breaking";
import { backticks, code, literal } from "./markdown";
import {
  agentStepOf,
  choosesVersion,
  isOurs,
  isRecord,
  nameOf,
  num,
  type PreviewJson,
  type PreviewStep,
  typeOf,
} from "./preview";
import { promotionSection } from "./promotion";
import { failedVerificationBlock, failedVerifications, reinstates, verificationPlan } from "./verification";

export { PreviewJson, type PreviewStep, parsePreview } from "./preview";

/** The words of a space-separated list, as a union type. */
type Words<S extends string> = S extends `${infer Word} ${infer Rest}` ? Word | Words<Rest> : S;

/**
 * A resource's arguments as one space-separated list, each reaching the provider as the input of
 * the same name unless `renamed` names another. It compiles only when the list holds exactly the
 * arguments of `T`, so every list stays equal to its resource's arguments.
 */
function argumentsOf<T>() {
  return <S extends string>(
    names: S & ([Words<S>] extends [keyof T] ? ([keyof T] extends [Words<S>] ? S : never) : never),
    renamed: Partial<Record<Words<S>, string>> = {},
  ): Readonly<Record<string, string>> => {
    const inputs: Partial<Record<string, string>> = renamed;
    return Object.fromEntries(names.split(" ").map((arg) => [arg, inputs[arg] ?? arg]));
  };
}

/**
 * Per resource type, each argument the program gives → the input it reaches the provider as. Only
 * these are shown: the rest of the inputs (the Agent's `contentHash`, what an AgentVersion copies
 * from its Agent to find and publish the draft, `__provider`) is plumbing.
 */
const ARGUMENTS: Record<string, Readonly<Record<string, string>>> = {
  Agent: argumentsOf<AgentArgs>()(
    "name systemPrompt greeting language transcriber model voice conversation call inbound builtinTools variables knowledgeBaseIds analysisGroupIds memory numbers adoptId",
  ),
  AgentVersion: argumentsOf<AgentVersionArgs>()(
    "agent agentId label notes live version verify promote watch reinstate",
    // The engine's names (`inputSpecs.ts`): `agent` reaches it as `agentId`, `version` as `pinnedVersion`.
    renamedInputs("AgentVersion"),
  ),
  Widget: argumentsOf<WidgetArgs>()(
    "agentId name allowedOrigins enabledModes theme defaultVariables status rotateKeyTrigger rotateKeyOnCreate",
  ),
  KnowledgeBase: argumentsOf<KnowledgeBaseArgs>()("name description documents readyTimeoutSeconds adoptId"),
  AnalysisGroup: argumentsOf<AnalysisGroupArgs>()("name description enabled items adoptDefault adoptId"),
};

/** Replacement causes that are not arguments, in words. */
const INTERNAL_REASONS: Record<string, Record<string, string>> = {
  AgentVersion: { contentHash: "the agent's configuration" },
};

/**
 * The program's arguments among `inputs`, under the names the program gives them; a value the
 * resource keeps secret whatever was given (`inputSpecs.ts`: staging's key) is `[secret]`, as the
 * preview shows a secret, even from a state that holds it plain (written before it was kept secret).
 */
export function userInputs(type: string, inputs: Record<string, unknown>): Record<string, unknown> {
  return maskedSecrets(type, namedInputs(type, inputs), "[secret]");
}

function namedInputs(type: string, inputs: Record<string, unknown>): Record<string, unknown> {
  const args = ARGUMENTS[type];
  if (!args) return Object.fromEntries(Object.entries(inputs).filter(([k]) => k !== "__provider"));
  const out: Record<string, unknown> = {};
  // Two arguments reaching one input (an AgentVersion's `agent` and `agentId`) are listed once, as the first.
  const listed = new Set<string>();
  for (const [arg, input] of Object.entries(args)) {
    if (!(input in inputs) || listed.has(input)) continue;
    listed.add(input);
    out[arg] = inputs[input];
  }
  return out;
}

/** Why a step replaces its resource, in the program's terms; empty when no reason is worth showing. */
function replaceReasons(type: string, reasons: readonly string[]): string[] {
  const args = Object.entries(ARGUMENTS[type] ?? {});
  const words = reasons.map((reason) => {
    const arg = ARGUMENTS[type] ? args.find(([, input]) => input === reason)?.[0] : reason;
    return arg !== undefined ? code(arg) : INTERNAL_REASONS[type]?.[reason];
  });
  return [...new Set(words.filter((w): w is string => w !== undefined))];
}

const ACTIONS: Record<string, [string, string]> = {
  create: ["+", "create"],
  update: ["~", "update"],
  replace: ["+-", "replace"],
  "create-replacement": ["", ""],
  delete: ["-", "delete"],
  "delete-replaced": ["", ""],
  same: ["", ""],
  read: ["", ""],
  refresh: ["", ""],
};

/** An inline code span for a table cell: pipes escaped, so they do not end the cell. */
function cell(text: string): string {
  return code(text.replace(/\n/g, " ")).replace(/\|/g, "\\|");
}

/** `body` in a fenced code block whose fence no line of `body` can close. */
function fenced(body: string, info: string): string {
  const fence = backticks(body, 3);
  return `${fence}${info}\n${body}\n${fence}`;
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Leaf values of a nested value, keyed by their path (`a.b[0].c`). */
function flatten(value: unknown, path = "", out: Map<string, unknown> = new Map()): Map<string, unknown> {
  if (Array.isArray(value) && value.some((v) => typeof v === "object" && v !== null)) {
    value.forEach((v, i) => {
      flatten(v, `${path}[${i}]`, out);
    });
  } else if (isRecord(value)) {
    const entries = Object.entries(value);
    if (entries.length === 0 && path) out.set(path, {});
    for (const [k, v] of entries) flatten(v, path ? `${path}.${k}` : k, out);
  } else if (path) {
    out.set(path, value);
  }
  return out;
}

function isLongText(v: unknown): v is string {
  return typeof v === "string" && (v.includes("\n") || v.length > 60);
}

function show(v: unknown): string {
  if (v === undefined) return "*(not set)*";
  if (v === UNKNOWN) return "*(known after apply)*";
  if (v === "[secret]") return "*(secret)*";
  if (isLongText(v)) return `*(${v.split("\n").length} lines)*`;
  return cell(JSON.stringify(v));
}

/** Text as a file for the line diff: empty when absent, else ending with a newline. */
function asLines(text: string | undefined): string {
  if (text === undefined || text === "") return "";
  return text.endsWith("\n") ? text : `${text}\n`;
}

function lineDiff(path: string, before: string | undefined, after: string | undefined): string {
  const patch = createPatch(path, asLines(before), asLines(after), "", "", { context: 3 });
  const body = patch.split("\n").slice(4).join("\n").trimEnd();
  return `<details open><summary><code>${escapeHtml(path)}</code></summary>\n\n${fenced(body, "diff")}\n</details>\n`;
}

/**
 * The changed arguments of one step, as a table and line diffs; `columns` heads the before and
 * after columns of an update.
 */
export function fieldChanges(
  step: PreviewStep,
  columns: readonly [string, string] = ["Now", "After this change"],
): string {
  const type = typeOf(step);
  const before = flatten(step.op === "create" ? {} : userInputs(type, step.oldState?.inputs ?? {}));
  const after = flatten(step.op === "delete" ? {} : userInputs(type, step.newState?.inputs ?? {}));
  const paths = [...new Set([...before.keys(), ...after.keys()])].sort();
  const rows: string[] = [];
  const diffs: string[] = [];
  for (const path of paths) {
    const a = before.get(path);
    const b = after.get(path);
    if (JSON.stringify(a) === JSON.stringify(b)) continue;
    rows.push(`| ${cell(path)} | ${step.op === "create" ? "" : show(a)} | ${show(b)} |`);
    if ((isLongText(a) || isLongText(b)) && b !== UNKNOWN) {
      diffs.push(
        lineDiff(path, a === undefined ? undefined : String(a), b === undefined ? undefined : String(b)),
      );
    }
  }
  if (rows.length === 0) return "";
  const head = step.op === "create" ? "| Field | | Value |" : `| Field | ${columns[0]} | ${columns[1]} |`;
  return `${head}\n|---|---|---|\n${rows.join("\n")}\n\n${diffs.join("\n")}`;
}

/** The recorded `knownVersions` of an Agent's state: content hash → version number. */
function knownVersions(outputs: Record<string, unknown>): Record<string, number> | undefined {
  const known = outputs.knownVersions;
  if (!isRecord(known)) return undefined;
  return Object.fromEntries(
    Object.entries(known).filter((e): e is [string, number] => typeof e[1] === "number"),
  );
}

/**
 * What the stack recorded about an AgentVersion step's agent: the Agent's `knownVersions` (the
 * versions this stack saw published, by content hash), plus the version the AgentVersion published
 * last, which the Agent's update records; the hash the Agent will have; and whether the state has
 * such a record at all (states written before `knownVersions` do not).
 */
function recordOf(step: PreviewStep, steps: readonly PreviewStep[]) {
  const inputs = step.newState?.inputs ?? {};
  if (typeOf(step) !== "AgentVersion" || !choosesVersion(step)) return undefined;
  if (inputs.pinnedVersion !== undefined || typeof inputs.agentId !== "string" || inputs.agentId === UNKNOWN)
    return undefined;
  const agentStep = agentStepOf(step, steps);
  const agentInputs = agentStep?.newState?.inputs;
  if (!agentStep || agentStep.op.startsWith("delete") || !agentInputs) return undefined;
  const old = agentStep.oldState?.outputs ?? {};
  const recordedVersions = knownVersions(old);
  const known: Record<string, number> = { ...recordedVersions };
  const published = num(step.oldState?.outputs?.version);
  if (published !== undefined && published === old.draftVersion && typeof old.contentHash === "string")
    known[old.contentHash] = published;
  const hash = agentInputs.contentHash;
  return {
    agentId: inputs.agentId,
    agentInputs,
    recorded: typeof hash === "string" ? known[hash] : undefined,
    // Versions above this one were published outside the stack's sight; -1 when nothing is recorded.
    knownUpTo: recordedVersions ? Math.max(-1, ...Object.values(known)) : -1,
  };
}

/**
 * The published version each AgentVersion step will put back, from what the stack recorded and
 * without asking the service. A revert of a change made through this stack is found this way;
 * `findReusedVersions` asks the service (`--resolve`), which also finds versions published elsewhere.
 */
export function recordedReuse(preview: PreviewJson): Map<string, number> {
  const found = new Map<string, number>();
  const steps = preview.steps ?? [];
  for (const step of steps) {
    const recorded = recordOf(step, steps)?.recorded;
    if (recorded !== undefined) found.set(step.urn, recorded);
  }
  return found;
}

/**
 * For each AgentVersion that will choose its version (created, or its configuration or pin changed), the published version that holds
 * the configuration its Agent declares (a revert), read from the service: AgentVersion URN →
 * version number. As the provider does, it reads the version the stack recorded for the new
 * configuration, then the published versions newer than the newest recorded one (all of them when
 * the state has no record), newest first. Agents whose new configuration is not fully known
 * (secrets, values known only after apply) are skipped.
 */
export async function findReusedVersions(
  preview: PreviewJson,
  client: VoiceAgentClient,
): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  const steps = preview.steps ?? [];
  for (const step of steps) {
    const record = recordOf(step, steps);
    if (!record) continue;
    const text = JSON.stringify(record.agentInputs);
    if (text.includes(UNKNOWN) || text.includes('"[secret]"')) continue;
    const declared = declaredConfig(record.agentInputs);
    const candidates = await reuseCandidates(client, record.agentId, record.recorded, record.knownUpTo);
    for (const version of candidates) {
      const detail = await client.agents.get(record.agentId, { version });
      if (detail.is_published && deepEqual(observedConfig(detail, declared), declared)) {
        found.set(step.urn, version);
        break;
      }
    }
  }
  return found;
}

/** What an AgentVersion step will do to its agent's versions, in words. */
function versionPlan(
  step: PreviewStep,
  steps: readonly PreviewStep[],
  reused?: number,
  checked = false,
): string {
  const inputs = step.newState?.inputs ?? {};
  const old = step.oldState?.outputs ?? {};
  const oldVersion = num(old.version);
  // A state written by a release that sent no `live` goes live, as the provider reads it.
  const live = (inputs.live ?? inputDefault("AgentVersion", "live")) !== false;
  const replacing = oldVersion !== undefined ? ` (replacing live version ${oldVersion})` : "";
  if (step.op === "delete")
    return "The stack stops tracking this version; it stays published in the service's history.\n";
  const pinned = num(inputs.pinnedVersion);
  if (pinned !== undefined) {
    return `Puts published version **${pinned}** ${live ? "live" : "in place (not live)"}${replacing}; nothing is published.\n`;
  }
  if (step.op === "update" && !choosesVersion(step)) {
    const parts: string[] = [];
    if (typeof inputs.label === "string" && inputs.label !== old.label)
      parts.push(`relabels version ${oldVersion} to ${code(inputs.label)}`);
    if (inputs.notes !== old.notes && inputs.notes !== undefined)
      parts.push(`updates the notes of version ${oldVersion}`);
    if (live && old.isLive === false && old.rolledBack === undefined)
      parts.push(`puts version ${oldVersion} back live`);
    else if (live && old.isLive === false && reinstates(step))
      parts.push(`puts version ${oldVersion} back live on purpose (\`reinstate\`; it was taken off air)`);
    else if (live && old.isLive === false)
      parts.push(`leaves version ${oldVersion} off air (it was taken off air)`);
    return `In place: ${parts.join(", ") || "metadata only"}.\n`;
  }
  if (reused !== undefined && checked) {
    return (
      `Published version **${reused}** already holds exactly this configuration: it is put back ` +
      `${live ? "live" : "in place"}${replacing} and nothing is published${live ? " (a rollback)" : ""}.\n`
    );
  }
  if (reused !== undefined) {
    return (
      `A revert: this stack published version **${reused}** with this configuration, so it is put back ` +
      `${live ? "live" : "in place"}${replacing} and nothing is published${live ? " (a rollback)" : ""}. ` +
      "(`pulumi up` compares the whole configuration first; `--resolve` asks the service now.)\n"
    );
  }
  // The number the agent's draft will get, from what the state recorded about this version's own agent.
  const agentStep = agentStepOf(step, steps);
  const agentOld = agentStep?.oldState?.outputs ?? {};
  const latest = num(agentOld.latestVersion);
  const draft = num(agentOld.draftVersion);
  let next = "";
  if (latest !== undefined) {
    const draftOpen = draft === latest && draft !== oldVersion;
    next = ` **${draftOpen ? draft : latest + 1}**`;
  } else if (step.op === "create" && agentStep?.op === "create") {
    next = " **0**";
  }
  return (
    `Publishes the agent's draft as version${next}${live ? " and puts it live" : ""}${replacing}. ` +
    "If a published version already holds exactly this configuration (a revert), that version is put back " +
    `${live ? "live" : "in place"} instead and nothing is published.\n`
  );
}

function blocked(step: PreviewStep): string {
  const recorded = step.oldState?.outputs?.blockedReasons;
  const reasons = Array.isArray(recorded) ? recorded.filter((r): r is string => typeof r === "string") : [];
  return reasons.length ? `\n> **Blocked:** ${literal(reasons.join("; "))}\n` : "";
}

/** "Breaks outside the service": one line per consequence, its id first; empty when there is none. */
function breakingSection(breaks: readonly Breaking[], acknowledged: ReadonlySet<string>): string {
  if (breaks.length === 0) return "";
  const lines = breaks.map(
    (b) => `- ${code(b.id)}${acknowledged.has(b.id) ? " (acknowledged)" : ""}: ${b.what}`,
  );
  return (
    "#### Breaks outside the service\n\n" +
    "Valid changes that break someone outside this pull request; each is acknowledged by its id.\n\n" +
    `${lines.join("\n")}\n\n`
  );
}

/** Markdown for a pull-request comment from a `pulumi preview --json` document. */
export function renderReport(
  preview: PreviewJson,
  opts: {
    /** The report's heading. Default "Voice agents: preview". */
    title?: string;
    /** AgentVersion URN → the published version the service holds for it (`findReusedVersions`). */
    reused?: ReadonlyMap<string, number>;
    /** The ids of the breaks outside the service the pull request acknowledges (`--acknowledge`). */
    acknowledged?: ReadonlySet<string>;
  } = {},
): string {
  // Asked of the service (`--resolve`), else as the stack recorded it.
  const checked = opts.reused !== undefined;
  const reused = opts.reused ?? recordedReuse(preview);
  const breaks = breakingSection(findBreaking(preview, reused), opts.acknowledged ?? new Set());
  const all = preview.steps ?? [];
  const steps = all.filter((s) => (ACTIONS[s.op]?.[1] ?? "") !== "");
  const ours = steps.filter((s) => isOurs(s.newState?.type ?? s.oldState?.type));
  const title = literal(opts.title ?? "Voice agents: preview");
  // A failed verification (in a run's event stream) is shown under its resource, not again below.
  const failed = failedVerifications(preview);
  const diagnostics = (preview.diagnostics ?? []).filter(
    (d) =>
      (d.severity === "warning" || d.severity === "error") &&
      !(d.urn && failed.get(d.urn) === d.message.trim()),
  );
  const notes = diagnostics.length
    ? `\n#### Warnings and errors\n\n${diagnostics.map((d) => `- **${d.severity}**${d.urn ? ` ${code(nameOf(d.urn))}` : ""}: ${literal(d.message)}`).join("\n")}\n`
    : "";
  if (steps.length === 0)
    return `### ${title}\n\n${promotionSection(preview)}No changes: the service already matches this commit.\n${notes}`;

  const counts = new Map<string, number>();
  for (const s of steps) counts.set(ACTIONS[s.op]![1], (counts.get(ACTIONS[s.op]![1]) ?? 0) + 1);
  const summary = [...counts].map(([a, n]) => `${n} to ${a}`).join(", ");
  const sections = ours.map((s) => {
    const [sign, action] = ACTIONS[s.op]!;
    const type = typeOf(s);
    const why = replaceReasons(type, s.replaceReasons ?? []);
    const reasons = why.length ? ` (because of ${why.join(", ")})` : "";
    const plan =
      type === "AgentVersion"
        ? versionPlan(s, all, reused.get(s.urn), checked) + verificationPlan(s) + watchPlan(s)
        : "";
    return `#### ${sign} ${type} ${code(nameOf(s.urn))}: ${action}${reasons}\n\n${plan}${plan ? "\n" : ""}${fieldChanges(s)}${blocked(s)}${failedVerificationBlock(s, failed)}`;
  });
  const others = steps.filter((s) => !ours.includes(s));
  const otherList = others.length
    ? `\nOther resources: ${others.map((s) => `${ACTIONS[s.op]![1]} ${code(nameOf(s.urn))}`).join(", ")}.\n`
    : "";
  return `### ${title}\n\n${breaks}${promotionSection(preview)}${rolledBackSection(preview)}**${summary}**\n\n${sections.join("\n")}${otherList}${notes}`;
}
