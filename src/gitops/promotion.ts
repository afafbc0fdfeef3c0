/**
 * The pull-request report's "Promotion" lines: per AgentVersion with `promote` that publishes in
 * this preview, what staging's live version has shown (how long live, its calls and analysis shares
 * against the thresholds), "not yet proven" when it falls short (the preview passes, `up` refuses),
 * or why production is refused (a difference: the preview's error on it).
 */
import { type Proof, proofLines } from "../resources/agentVersion/proof";
import { code, literal } from "./markdown";
import { isRecord, nameOf, type PreviewJson, typeOf, typeOfUrn } from "./preview";

/** The proof the provider's check recorded in a step's inputs (`promoteProof`), when it is one. */
function proofOf(inputs: Record<string, unknown> | undefined): Proof | undefined {
  const p = inputs?.promoteProof;
  if (!isRecord(p) || typeof p.fromAgentId !== "string" || typeof p.fromVersion !== "number")
    return undefined;
  if (typeof p.calls !== "number" || !Array.isArray(p.rates) || !Array.isArray(p.origins)) return undefined;
  // A proof without its judgement (another release's) is not read as proven.
  if (!Array.isArray(p.findings) || typeof p.verdict !== "string") return undefined;
  return p as unknown as Proof;
}

/** How long, in words. */
function duration(minutes: number): string {
  if (minutes < 1) return `${Math.round(minutes * 60)} s`;
  if (minutes < 120) return `${Math.floor(minutes)} min`;
  return `${Math.floor(minutes / 60)} h ${Math.floor(minutes % 60)} min`;
}

/** One line per promoted AgentVersion; empty when the preview promotes nothing. */
export function promotionLines(preview: PreviewJson): string[] {
  const lines: string[] = [];
  for (const step of preview.steps ?? []) {
    if (typeOf(step) !== "AgentVersion" || step.op.startsWith("delete")) continue;
    const proof = proofOf(step.newState?.inputs);
    if (!proof) continue;
    const { met, missing } = proofLines(proof);
    const live =
      proof.minutesLive === null
        ? ""
        : `, live for ${duration(proof.minutesLive)} (since ${proof.liveSince})`;
    const checks = [...met.map((m) => `${m}: met`), ...missing.map((m) => `${m}: **not met**`)];
    const what =
      `staging agent ${code(proof.fromAgentId)} version **${proof.fromVersion}**${live}; ` +
      `${proof.calls} call${proof.calls === 1 ? "" : "s"} counted; same configuration (${code(proof.configDigest)})` +
      `${checks.length ? `; ${checks.join("; ")}` : ""}`;
    lines.push(
      missing.length > 0 || proof.verdict !== "pass"
        ? `- ${code(nameOf(step.urn))}: **not yet proven**: ${what}; \`up\` will refuse until it is.`
        : `- ${code(nameOf(step.urn))}: ${what}.`,
    );
  }
  for (const d of preview.diagnostics ?? []) {
    if (d.severity !== "error" || !d.urn || typeOfUrn(d.urn) !== "AgentVersion") continue;
    if (!/\bpromote(\.\w+)?:/.test(d.message)) continue;
    // The engine's text, from the provider's message on: Markdown-escaped, on one line.
    const text = literal(d.message.replace(/^.*?(promote(\.\w+)?:)/s, "$1"));
    lines.push(`- ${code(nameOf(d.urn))}: **refused**: ${text}`);
  }
  return lines;
}

/** The report's "Promotion" section; empty when the preview promotes nothing. */
export function promotionSection(preview: PreviewJson): string {
  const lines = promotionLines(preview);
  if (lines.length === 0) return "";
  return `#### Promotion\n\nWhat staging's live version has shown, against the thresholds of \`promote\`.\n\n${lines.join("\n")}\n\n`;
}
