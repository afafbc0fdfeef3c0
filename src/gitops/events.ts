/**
 * The engine's JSON event stream (`pulumi up --json`): one JSON event per line. voice-agent-diff reads it as it reads a preview: each resource's step (from its
 * `resourcePreEvent`) and the run's warnings and errors (its `diagnosticEvent`s), so the report of
 * a deploy shows what the deploy did and, under each resource, what failed (a verification).
 */
import { z } from "zod";
import { type PreviewJson, parsePreview } from "./preview";

const StepMetadata = z.object({
  op: z.string(),
  urn: z.string(),
  old: z.unknown().optional(),
  new: z.unknown().optional(),
  keys: z.array(z.string()).nullish(),
  diffs: z.array(z.string()).nullish(),
});

const EngineEvent = z.object({
  sequence: z.number(),
  resourcePreEvent: z.object({ metadata: StepMetadata }).optional(),
  diagnosticEvent: z
    .object({ urn: z.string().nullish(), message: z.string(), severity: z.string() })
    .optional(),
});

/** True when `text` is an engine event stream rather than one JSON document. */
export function isEventStream(text: string): boolean {
  const first = text.trimStart().split("\n", 1)[0] ?? "";
  try {
    const event: unknown = JSON.parse(first);
    return typeof event === "object" && event !== null && "sequence" in event;
  } catch {
    return false;
  }
}

/**
 * The event stream `text` as the document the report reads: its steps (replacement steps as the
 * engine reports them) and its warnings and errors, with their resources.
 *
 * @throws {Error} naming the line that is not an engine event.
 */
export function parseEventStream(text: string, source = "the event stream"): PreviewJson {
  const steps: ({ op: string; urn: string } & Record<string, unknown>)[] = [];
  const diagnostics: unknown[] = [];
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    let event: z.infer<typeof EngineEvent>;
    try {
      event = EngineEvent.parse(JSON.parse(line));
    } catch (err) {
      throw new Error(`${source}, line ${i + 1}: not an engine event of \`pulumi up --json\``, {
        cause: err,
      });
    }
    const step = event.resourcePreEvent?.metadata;
    if (step) {
      steps.push({
        op: step.op,
        urn: step.urn,
        oldState: step.old ?? null,
        newState: step.new ?? null,
        diffReasons: step.diffs ?? null,
        replaceReasons:
          step.op === "replace" || step.op === "create-replacement" ? (step.keys ?? null) : null,
      });
    }
    const d = event.diagnosticEvent;
    if (d && (d.severity === "error" || d.severity === "warning")) diagnostics.push(d);
  });
  // A replacement that failed at its create has no `replace` step: its create stands for it.
  const replaced = new Set(steps.filter((s) => s.op === "replace").map((s) => s.urn));
  for (const s of steps) if (s.op === "create-replacement" && !replaced.has(s.urn)) s.op = "replace";
  return parsePreview({ steps, diagnostics }, "pulumi up --json");
}
