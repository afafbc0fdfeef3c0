/**
 * `no-secrets-in-agent-text` (mandatory by default): no credential in any text an agent or its
 * widget carries. Whatever the agent holds as text can reach a caller (the model may repeat its
 * prompt), a widget visitor, the dashboard and every published version, for good: a key pasted
 * into a prompt is a leaked key.
 *
 * The texts: every string the resource's inputs hold (the system prompt, the greeting, the
 * platform lines, variables, memory's instructions and labels, the widget's theme and default
 * variables, knowledge-base documents and their urls, analysis items, ...), but for the short list
 * of inputs that are no text ({@link NOT_TEXT}: ids, phone numbers, the provider's own inputs).
 * Detection is secretlint's recommended rule set (`@secretlint/secretlint-rule-preset-recommend`:
 * cloud keys, private keys, tokens of GitHub, Slack, OpenAI, Anthropic and others, credentials in
 * URLs and connection strings), not patterns of our own. A message shows the field and where in it
 * the credential starts (line, column), never any of its text: the field may be a Pulumi secret,
 * which a policy cannot tell. A text not known at preview is checked once it is known.
 */
import type { ResourceValidationPolicy } from "@pulumi/policy";
import { refusingUnknownParameters, subject } from "./common";
import { type Field, joinKey, type Plain } from "./values";

/**
 * The inputs (by key, at any depth) that are no text an agent carries: ids of other resources,
 * phone numbers, and what the resource classes add for the provider (`__provider`, the content
 * hash, the create marker, the widget's rotation trigger, which the service never sees).
 */
const NOT_TEXT: ReadonlySet<string> = new Set([
  "__provider",
  "__draft",
  "__plan",
  "__contentHash",
  "contentHash",
  "createMarker",
  "rotateKeyTrigger",
  "adoptId",
  "agentId",
  "knowledgeBaseIds",
  "analysisGroupIds",
  "number",
  "inboundPhone",
  "inboundWhatsapp",
]);

/**
 * Every string in `props` outside {@link NOT_TEXT}, with its path as the program spells it; values
 * not known yet are left out (checked once known).
 */
export function textFields(props: Plain, path = ""): Field[] {
  if (typeof props === "string") return [{ path, value: props }];
  if (Array.isArray(props)) return props.flatMap((v, i) => textFields(v, `${path}[${i}]`));
  if (typeof props !== "object" || props === null) return [];
  return Object.entries(props)
    .filter(([key]) => !NOT_TEXT.has(key))
    .flatMap(([key, v]) => textFields(v, joinKey(path, key)));
}

/** A credential found in a text field. */
export interface SecretFinding {
  /** The field, as the program spells it. */
  path: string;
  /** What secretlint took it for, e.g. `GitHub Token`. */
  kind: string;
  /** The secretlint rule that found it, e.g. `github`. */
  rule: string;
  /**
   * Where it starts in the field: `line 2, column 9`. No text around it is shown: the field may be
   * a Pulumi secret (a policy cannot tell), and its neighbours may be secret too.
   */
  at: string;
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
      kind: credentialKind(first.message),
      rule: first.ruleId.replace(/^@secretlint\/secretlint-rule-/, ""),
      at: position(value, Math.min(...ranges.map((r) => r[0]))),
    });
  }
  return findings;
}

/** `GitHub Token` from secretlint's masked message `found GitHub Token(****): ****`. */
function credentialKind(message: string): string {
  const kind = /^found (?:an? )?([^(:]+)/.exec(message)?.[1]?.trim();
  return kind && !kind.includes("*") ? kind : "credential";
}

/** `line L, column C` (both from 1) of `offset` in `text`. */
export function position(text: string, offset: number): string {
  const before = text.slice(0, offset).split("\n");
  return `line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}`;
}

export const noSecretsInAgentText: ResourceValidationPolicy = refusingUnknownParameters({
  name: "no-secrets-in-agent-text",
  description:
    "No credential (API key, token, private key, password in a URL) in a text an agent, its widget, " +
    "its knowledge bases or its analysis groups carry: callers and visitors can be told it, and every version keeps it.",
  enforcementLevel: "mandatory",
  validateResource: async (args, reportViolation) => {
    const resource = subject(args, ["Agent", "Widget", "KnowledgeBase", "AnalysisGroup"]);
    if (!resource) return;
    for (const finding of await findSecrets(textFields(resource.props))) {
      reportViolation(
        `${resource.label}: ${finding.path} holds what looks like a ${finding.kind} (secretlint rule ` +
          `${finding.rule}) at ${finding.at}. Remove it from the text and revoke it; keep credentials ` +
          "in the stack's secret configuration or the tool's own settings, never in text the agent carries.",
      );
    }
  },
});
