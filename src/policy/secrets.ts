/**
 * `no-secrets-in-agent-text` (mandatory by default): no credential in any text an agent or its
 * widget carries. Whatever the agent holds as text can reach a caller (the model may repeat its
 * prompt), a widget visitor, the dashboard and every published version, for good: a key pasted
 * into a prompt is a leaked key.
 *
 * The texts: the system prompt, the greeting, the eleven platform lines (`prompt` and `text` of
 * each), the display names, variables' default values; the widget's default variables and its
 * texts; knowledge-base text documents and descriptions; analysis groups' and items' descriptions.
 * Detection is secretlint's recommended rule set (`@secretlint/secretlint-rule-preset-recommend`:
 * cloud keys, private keys, tokens of GitHub, Slack, OpenAI, Anthropic and others, credentials in
 * URLs and connection strings), not patterns of our own. A message shows the field and a masked
 * excerpt, never the secret. A text not known at preview is checked once it is known.
 */
import type { ResourceValidationPolicy } from "@pulumi/policy";
import { type ResourceTypeName, subject } from "./common";
import { type Field, fieldsAt, UNKNOWN } from "./values";

/** The platform lines an Agent speaks, each with a `prompt` and a `text`. */
export const PLATFORM_LINES = [
  "conversation.silenceReminder.message",
  "call.maxDurationMessage",
  "call.endOnSilenceMessage",
  "inbound.businessHoursClosedMessage",
  "inbound.fallbackMessage",
  "builtinTools.endCall.message",
  "builtinTools.holdCall.acknowledgementMessage",
  "builtinTools.holdCall.followUpMessage",
  "builtinTools.holdCall.timeoutMessage",
  "builtinTools.transferCall.busyMessage",
  "builtinTools.transferCall.introMessage",
] as const;

/** The text fields of each resource type, as {@link fieldsAt} patterns. */
export const TEXT_FIELDS: Record<ResourceTypeName, readonly string[]> = {
  Agent: [
    "name",
    "systemPrompt",
    "greeting.message",
    ...PLATFORM_LINES.flatMap((line) => [`${line}.prompt`, `${line}.text`]),
    "variables[].defaultValue",
  ],
  Widget: [
    "name",
    "defaultVariables.{}",
    "theme.title",
    "theme.subtitle",
    "theme.welcomeMessage",
    "theme.launcherLabel",
  ],
  KnowledgeBase: ["name", "description", "documents[].text"],
  AnalysisGroup: ["name", "description", "items[].description"],
  AgentVersion: [],
};

/** A credential found in a text field. */
export interface SecretFinding {
  /** The field, as the program spells it. */
  path: string;
  /** What secretlint took it for, e.g. `GitHub Token`. */
  kind: string;
  /** The secretlint rule that found it, e.g. `github`. */
  rule: string;
  /** The text around it, every credential in it replaced by `****`. */
  excerpt: string;
}

interface SecretlintMessage {
  ruleId: string;
  message: string;
  range: readonly [number, number];
}

type Lint = (content: string) => Promise<SecretlintMessage[]>;

let linter: Promise<Lint> | undefined;

/**
 * secretlint with the recommended preset, loaded once (both are ES modules: a dynamic `import()`
 * loads them from this CommonJS package without any warning on every supported Node.js). The pack
 * starts loading it as it starts (`pack.ts`), while the engine runs the program.
 */
export function secretlint(): Promise<Lint> {
  linter ??= (async () => {
    const [{ lintSource }, { creator }] = await Promise.all([
      import("@secretlint/core"),
      import("@secretlint/secretlint-rule-preset-recommend"),
    ]);
    const config = { rules: [{ id: "@secretlint/secretlint-rule-preset-recommend", rule: creator }] };
    return async (content: string) => {
      const result = await lintSource({
        source: { content, filePath: "agent-text.txt", ext: ".txt", contentType: "text" },
        options: { config, maskSecrets: true, noPhysicFilePath: true },
      });
      return result.messages;
    };
  })();
  return linter;
}

/** Context shown each side of a credential in an excerpt. */
const CONTEXT = 24;

/**
 * The credentials in `fields` (strings; others are skipped). All texts are linted as one source,
 * separated by blank lines, and each finding mapped back to its field.
 */
export async function findSecrets(fields: readonly Field[]): Promise<SecretFinding[]> {
  const texts = fields.filter((f): f is { path: string; value: string } => typeof f.value === "string");
  if (texts.length === 0) return [];
  const separator = "\n\n\n";
  const starts: number[] = [];
  let content = "";
  for (const { value } of texts) {
    if (content !== "") content += separator;
    starts.push(content.length);
    content += value;
  }
  let lint: Lint;
  try {
    lint = await secretlint();
  } catch (err) {
    throw new Error("no-secrets-in-agent-text: secretlint's recommended rules could not be loaded", {
      cause: err,
    });
  }
  const messages = await lint(content);
  const perField = new Map<number, { ranges: [number, number][]; messages: SecretlintMessage[] }>();
  for (const message of messages) {
    const [from, to] = message.range;
    let index = starts.length - 1;
    while (index > 0 && (starts[index] as number) > from) index--;
    const start = starts[index] as number;
    const entry = perField.get(index) ?? { ranges: [], messages: [] };
    entry.ranges.push([from - start, to - start]);
    entry.messages.push(message);
    perField.set(index, entry);
  }
  const findings: SecretFinding[] = [];
  for (const [index, { ranges, messages: found }] of [...perField].sort((a, b) => a[0] - b[0])) {
    const { path, value } = texts[index] as { path: string; value: string };
    const first = found[0] as SecretlintMessage;
    findings.push({
      path,
      kind: kindOf(first.message),
      rule: first.ruleId.replace(/^@secretlint\/secretlint-rule-/, ""),
      excerpt: maskedExcerpt(value, ranges),
    });
  }
  return findings;
}

/** `GitHub Token` from secretlint's masked message `found GitHub Token(****): ****`. */
function kindOf(message: string): string {
  const kind = /^found (?:an? )?([^(:]+)/.exec(message)?.[1]?.trim();
  return kind && !kind.includes("*") ? kind : "credential";
}

/** The text around the first range, every range replaced by `****`, on one line. */
export function maskedExcerpt(text: string, ranges: readonly (readonly [number, number])[]): string {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const first = sorted[0];
  if (!first) return "";
  let masked = "";
  let cursor = 0;
  let firstAt = 0;
  for (const [from, to] of sorted) {
    if (from < cursor) {
      cursor = Math.max(cursor, to);
      continue;
    }
    masked += text.slice(cursor, from);
    if (from === first[0]) firstAt = masked.length;
    masked += "****";
    cursor = to;
  }
  masked += text.slice(cursor);
  const begin = Math.max(0, firstAt - CONTEXT);
  const end = Math.min(masked.length, firstAt + 4 + CONTEXT);
  const excerpt = `${begin > 0 ? "…" : ""}${masked.slice(begin, end)}${end < masked.length ? "…" : ""}`;
  return excerpt.replace(/\s+/g, " ");
}

export const noSecretsInAgentText: ResourceValidationPolicy = {
  name: "no-secrets-in-agent-text",
  description:
    "No credential (API key, token, private key, password in a URL) in a text an agent, its widget, " +
    "its knowledge bases or its analysis groups carry: callers and visitors can be told it, and every version keeps it.",
  enforcementLevel: "mandatory",
  validateResource: async (args, reportViolation) => {
    const resource = subject(args, ["Agent", "Widget", "KnowledgeBase", "AnalysisGroup"]);
    if (!resource) return;
    const fields = TEXT_FIELDS[resource.type]
      .flatMap((pattern) => fieldsAt(resource.props, pattern))
      .filter((f) => f.value !== UNKNOWN);
    for (const finding of await findSecrets(fields)) {
      reportViolation(
        `${resource.label}: ${finding.path} holds what looks like a ${finding.kind} (secretlint rule ` +
          `${finding.rule}): "${finding.excerpt}". Remove it from the text and revoke it; keep credentials ` +
          "in the stack's secret configuration or the tool's own settings, never in text the agent carries.",
      );
    }
  },
};
