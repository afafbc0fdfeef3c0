/**
 * The pull-request report: `pulumi preview --json` in, Markdown out. Per resource of this package
 * the action, the changed fields as a table, a unified line diff for long text (the system prompt,
 * every platform line), what will be published and what will go live; then warnings and errors.
 */
import { createPatch } from "diff";
import type { VoiceAgentClient } from "../client";
import { deepEqual } from "../provider/normalize";
import { declaredConfig, observedConfig } from "../resources/agent/projection";
import { reuseCandidates } from "../resources/agentVersion/reuse";

/** The parts of a `pulumi preview --json` document the report reads. */
export interface PreviewJson {
  steps?: PreviewStep[];
  diagnostics?: { urn?: string; message: string; severity: string }[];
  changeSummary?: Record<string, number>;
}

export interface PreviewStep {
  op: string;
  urn: string;
  oldState?: {
    type: string;
    id?: string;
    inputs?: Record<string, unknown>;
    outputs?: Record<string, unknown>;
  };
  newState?: { type: string; inputs?: Record<string, unknown>; dependencies?: string[] };
  diffReasons?: string[];
  replaceReasons?: string[];
}

const TYPE_PREFIX = "pulumi-nodejs:dynamic/voice-agent:";
/** Inputs that are plumbing, not configuration. */
const HIDDEN = new Set([
  "__provider",
  "contentHash",
  "draftVersion",
  "documentRevision",
  "knownVersions",
  "knownVersion",
  "knownUpTo",
]);
const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

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

function nameOf(urn: string): string {
  return urn.slice(urn.lastIndexOf("::") + 2);
}

function typeOf(step: PreviewStep): string {
  return (step.newState?.type ?? step.oldState?.type ?? "").replace(TYPE_PREFIX, "");
}

/** Leaf values of a nested value, keyed by their path (`a.b[0].c`). */
function flatten(value: unknown, path = "", out: Map<string, unknown> = new Map()): Map<string, unknown> {
  if (Array.isArray(value) && value.some((v) => typeof v === "object" && v !== null)) {
    value.forEach((v, i) => {
      flatten(v, `${path}[${i}]`, out);
    });
  } else if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const entries = Object.entries(value).filter(([k]) => !(path === "" && HIDDEN.has(k)));
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
  const text = JSON.stringify(v);
  return `\`${text.replace(/\|/g, "\\|").replace(/`/g, "'")}\``;
}

function lineDiff(path: string, before: string, after: string): string {
  const patch = createPatch(
    path,
    before.endsWith("\n") ? before : `${before}\n`,
    after.endsWith("\n") ? after : `${after}\n`,
    "",
    "",
    {
      context: 3,
    },
  );
  const body = patch.split("\n").slice(4).join("\n").trimEnd();
  const fence = fenceFor(body);
  return `<details open><summary><code>${path}</code></summary>\n\n${fence}diff\n${body}\n${fence}\n</details>\n`;
}

/** A code fence longer than any run of backticks in `text`, so the text cannot close it (CommonMark). */
export function fenceFor(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  return "`".repeat(Math.max(3, longest + 1));
}

/** The changed fields of one step, as a table and line diffs. */
function fieldChanges(step: PreviewStep): string {
  const before = flatten(step.op === "create" ? {} : (step.oldState?.inputs ?? {}));
  const after = flatten(step.op === "delete" ? {} : (step.newState?.inputs ?? {}));
  const paths = [...new Set([...before.keys(), ...after.keys()])].sort();
  const rows: string[] = [];
  const diffs: string[] = [];
  for (const path of paths) {
    const a = before.get(path);
    const b = after.get(path);
    if (JSON.stringify(a) === JSON.stringify(b)) continue;
    rows.push(`| \`${path}\` | ${step.op === "create" ? "" : show(a)} | ${show(b)} |`);
    if ((isLongText(a) || isLongText(b)) && b !== UNKNOWN)
      diffs.push(lineDiff(path, String(a ?? ""), String(b ?? "")));
  }
  if (rows.length === 0) return "";
  const head = step.op === "create" ? "| Field | | Value |" : "| Field | Now | After this change |";
  return `${head}\n|---|---|---|\n${rows.join("\n")}\n\n${diffs.join("\n")}`;
}

/**
 * The Agent step of an AgentVersion step: the Agent it depends on (its `agent` input makes the
 * dependency), else the Agent whose id it names. Never another agent of the same stack.
 */
function agentStepOf(step: PreviewStep, steps: PreviewStep[]): PreviewStep | undefined {
  const agents = steps.filter((s) => typeOf(s) === "Agent" && s.op !== "delete");
  const deps = new Set(step.newState?.dependencies ?? []);
  const byDependency = agents.find((s) => deps.has(s.urn));
  if (byDependency) return byDependency;
  const agentId = step.newState?.inputs?.agentId ?? step.oldState?.outputs?.agentId;
  if (typeof agentId !== "string" || agentId === UNKNOWN) return undefined;
  return agents.find((s) => s.oldState?.outputs?.agentId === agentId || s.oldState?.id === agentId);
}

/**
 * What the stack recorded about an AgentVersion step's agent: the Agent's `knownVersions` (the
 * versions this stack saw published, by content hash), plus the version the AgentVersion published
 * last, which the Agent's update records; the hash the Agent will have; and whether the state has
 * such a record at all (states written before `knownVersions` do not).
 */
function recordOf(step: PreviewStep, steps: PreviewStep[]) {
  const inputs = step.newState?.inputs ?? {};
  if (typeOf(step) !== "AgentVersion" || !["create", "replace"].includes(step.op)) return undefined;
  if (inputs.pinnedVersion !== undefined || typeof inputs.agentId !== "string" || inputs.agentId === UNKNOWN)
    return undefined;
  const agentStep = agentStepOf(step, steps);
  if (!agentStep?.newState?.inputs) return undefined;
  const old = agentStep.oldState?.outputs ?? {};
  const known: Record<string, number> = {
    ...((old.knownVersions as Record<string, number> | undefined) ?? {}),
  };
  const published = step.oldState?.outputs?.version;
  if (typeof published === "number" && published === old.draftVersion && typeof old.contentHash === "string")
    known[old.contentHash] = published;
  const hash = agentStep.newState.inputs.contentHash;
  return {
    agentId: inputs.agentId as string,
    agentInputs: agentStep.newState.inputs,
    recorded: typeof hash === "string" ? known[hash] : undefined,
    // Versions above this one were published outside the stack's sight; -1 when nothing is recorded.
    knownUpTo: old.knownVersions ? Math.max(-1, ...Object.values(known)) : -1,
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
 * For each AgentVersion that will be created or replaced, the published version that already holds
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

/** What an AgentVersion step will do to the agent's versions, in words. */
function versionPlan(step: PreviewStep, steps: PreviewStep[], reused?: number, checked = false): string {
  const inputs = step.newState?.inputs ?? {};
  const old = step.oldState?.outputs ?? {};
  const agentStep = agentStepOf(step, steps);
  const agentOld = agentStep?.oldState?.outputs ?? {};
  const live = inputs.live !== false;
  const replacing = old.version !== undefined ? ` (replacing live version ${old.version})` : "";
  if (step.op === "delete")
    return "The stack stops tracking this version; it stays published in the service's history.\n";
  if (inputs.pinnedVersion !== undefined && inputs.pinnedVersion !== UNKNOWN) {
    return `Puts published version **${inputs.pinnedVersion}** ${live ? "live" : "in place (not live)"}${replacing}; nothing is published.\n`;
  }
  if (step.op === "update") {
    const parts: string[] = [];
    if (inputs.label !== old.label && inputs.label !== undefined)
      parts.push(`relabels version ${old.version} to \`${inputs.label}\``);
    if (inputs.notes !== old.notes && inputs.notes !== undefined)
      parts.push(`updates the notes of version ${old.version}`);
    if (live && old.isLive === false) parts.push(`puts version ${old.version} back live`);
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
  let next = "";
  if (agentOld.latestVersion !== undefined) {
    const draftOpen =
      agentOld.draftVersion === agentOld.latestVersion && agentOld.draftVersion !== old.version;
    next = ` **${draftOpen ? agentOld.draftVersion : Number(agentOld.latestVersion) + 1}**`;
  } else if (step.op === "create" && agentStep?.op === "create") {
    next = " **0**";
  }
  return (
    `Publishes the agent's draft as version${next}${live ? " and puts it live" : ""}${replacing}. ` +
    "If a published version already holds exactly this configuration (a revert), that version is put back " +
    `${live ? "live" : "in place"} instead and nothing is published.\n`
  );
}

/** A replace reason as the user knows it: internal inputs named by what they stand for. */
function reasonName(input: string): string {
  if (input === "contentHash") return "the agent's configuration";
  if (input === "pinnedVersion") return "`version`";
  return `\`${input}\``;
}

function blocked(step: PreviewStep): string {
  const reasons = (step.oldState?.outputs?.blockedReasons as string[] | undefined) ?? [];
  return reasons.length ? `\n> **Blocked:** ${reasons.join("; ")}\n` : "";
}

/** Markdown for a pull-request comment from a `pulumi preview --json` document. */
export function renderReport(
  preview: PreviewJson,
  opts: { title?: string; reused?: ReadonlyMap<string, number> } = {},
): string {
  // Asked of the service (`--resolve`), else as the stack recorded it.
  const checked = opts.reused !== undefined;
  const reused = opts.reused ?? recordedReuse(preview);
  const steps = (preview.steps ?? []).filter((s) => (ACTIONS[s.op]?.[1] ?? "") !== "");
  const ours = steps.filter((s) => (s.newState?.type ?? s.oldState?.type ?? "").startsWith(TYPE_PREFIX));
  const title = opts.title ?? "Voice agents: preview";
  const diagnostics = (preview.diagnostics ?? []).filter(
    (d) => d.severity === "warning" || d.severity === "error",
  );
  const notes = diagnostics.length
    ? `\n#### Warnings and errors\n\n${diagnostics.map((d) => `- **${d.severity}**${d.urn ? ` \`${nameOf(d.urn)}\`` : ""}: ${d.message.trim().replace(/\n+/g, " ")}`).join("\n")}\n`
    : "";
  if (steps.length === 0)
    return `### ${title}\n\nNo changes: the service already matches this commit.\n${notes}`;

  const counts = new Map<string, number>();
  for (const s of steps) counts.set(ACTIONS[s.op]![1], (counts.get(ACTIONS[s.op]![1]) ?? 0) + 1);
  const summary = [...counts].map(([a, n]) => `${n} to ${a}`).join(", ");
  const sections = ours.map((s) => {
    const [sign, action] = ACTIONS[s.op]!;
    const type = typeOf(s);
    const reasons = s.replaceReasons?.length
      ? ` (because of ${s.replaceReasons.map(reasonName).join(", ")})`
      : "";
    const plan = type === "AgentVersion" ? versionPlan(s, steps, reused.get(s.urn), checked) : "";
    return `#### ${sign} ${type} \`${nameOf(s.urn)}\`: ${action}${reasons}\n\n${plan}${plan ? "\n" : ""}${fieldChanges(s)}${blocked(s)}`;
  });
  const others = steps.filter((s) => !ours.includes(s));
  const otherList = others.length
    ? `\nOther resources: ${others.map((s) => `${ACTIONS[s.op]![1]} \`${nameOf(s.urn)}\``).join(", ")}.\n`
    : "";
  return `### ${title}\n\n**${summary}**\n\n${sections.join("\n")}${otherList}${notes}`;
}
