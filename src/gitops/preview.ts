/**
 * The `pulumi preview --json` document as voice-agent-diff reads it: its shape (checked with zod),
 * and what every part of the command asks of its steps: a resource's name and type (a value known
 * only after apply shows as the provider's `UNKNOWN`, the same sentinel), and which Agent an AgentVersion or a Widget belongs to.
 */

import { z } from "zod";
import { UNKNOWN } from "../provider/unknowns";
import { flatLayout } from "../resources/agentVersion/layout";
import { resourceTypeOf, TYPE_PREFIX } from "../resources/typeNames";

const Props = z.record(z.string(), z.unknown());

/** A resource's state in a step of `pulumi preview --json`: the parts the report reads. */
const StepState = z.object({
  type: z.string(),
  id: z.string().optional(),
  inputs: Props.optional(),
  outputs: Props.optional(),
  /** Per input, the URNs of the resources its value came from. */
  propertyDependencies: z.record(z.string(), z.array(z.string()).nullable()).nullish(),
  /** The outputs the resource always holds as secrets (the Widget's `publicKey`). */
  additionalSecretOutputs: z.array(z.string()).nullish(),
});

const PreviewStep = z.object({
  op: z.string(),
  urn: z.string(),
  oldState: StepState.nullish(),
  newState: StepState.nullish(),
  diffReasons: z.array(z.string()).nullish(),
  replaceReasons: z.array(z.string()).nullish(),
});

/** The parts of a `pulumi preview --json` document the report reads (anything else is ignored). */
export const PreviewJson = z.object({
  steps: z.array(PreviewStep).nullish(),
  diagnostics: z
    .array(z.object({ urn: z.string().nullish(), message: z.string(), severity: z.string() }))
    .nullish(),
  changeSummary: z.record(z.string(), z.number()).nullish(),
});

/** A `pulumi preview --json` document, as far as the report reads it. */
export type PreviewJson = z.infer<typeof PreviewJson>;
/** One step (one resource's planned operation) of a {@link PreviewJson}. */
export type PreviewStep = z.infer<typeof PreviewStep>;

/**
 * Checks that `value` (parsed JSON) has the shape of `pulumi preview --json` output (or of
 * `command`'s, which prints the same document: `pulumi refresh --preview-only --json`).
 *
 * @throws {Error} naming the first part that does not fit, the zod error as `cause`.
 */
export function parsePreview(value: unknown, command = "pulumi preview --json"): PreviewJson {
  const parsed = PreviewJson.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? ` at ${issue.path.join(".")}` : "";
    throw new Error(`not a \`${command}\` document${where}: ${issue?.message ?? "invalid"}`, {
      cause: parsed.error,
    });
  }
  for (const step of parsed.data.steps ?? []) {
    for (const state of [step.oldState, step.newState]) {
      if (state?.inputs) state.inputs = bookkeepingOnTop(state.inputs);
      if (state?.outputs) state.outputs = bookkeepingOnTop(state.outputs);
    }
  }
  return parsed.data;
}

/**
 * A state's properties with the bookkeeping the engine does not display (under `__` names: the
 * AgentVersion's `__draft` and `__outcome`, the Agent's checked `__contentHash`) at the top level,
 * where the report reads it, whichever layout the state was written in.
 */
function bookkeepingOnTop(props: Record<string, unknown>): Record<string, unknown> {
  const flat = flatLayout(props);
  const { __contentHash: hash, ...rest } = flat;
  return typeof hash === "string" && rest.contentHash === undefined ? { ...rest, contentHash: hash } : rest;
}

/**
 * Refuses a document made with `--show-secrets`: its secrets would go into the report (a pull-request
 * comment, a job summary). Masking them is not possible: the document does not say which values are
 * secrets once shown (a prompt the program made a secret reads as plain text), so it is refused. Known
 * by an output every state records as secret (`additionalSecretOutputs`) shown with its value.
 *
 * @throws {Error} naming the resource and output that show it, never the value.
 */
export function assertSecretsHidden(doc: PreviewJson, what: string): void {
  for (const step of doc.steps ?? []) {
    for (const state of [step.oldState, step.newState]) {
      for (const name of state?.additionalSecretOutputs ?? []) {
        const value = state?.outputs?.[name];
        if (value === undefined || value === null || value === "[secret]" || value === UNKNOWN) continue;
        throw new Error(
          `${what} was made with --show-secrets (the ${name} of ${typeOf(step)} \`${nameOf(step.urn)}\` is shown): ` +
            "its secrets would go into the report. Run the command again without --show-secrets.",
        );
      }
    }
  }
}

export { TYPE_PREFIX };

/** The resource's name in the program: the last segment of its URN. */
export function nameOf(urn: string): string {
  return urn.slice(urn.lastIndexOf("::") + 2);
}

/**
 * The step's resource type without the package prefix (`Agent`, `Widget`, ...): a dynamic
 * resource's and the provider plugin's alike (`typeNames.ts`); another type whole.
 */
export function typeOf(step: PreviewStep): string {
  const type = step.newState?.type ?? step.oldState?.type ?? "";
  return resourceTypeOf(type) ?? type;
}

/** Whether `type` is one of this package's resources, dynamic or served by the plugin. */
export function isOurs(type: string | undefined): boolean {
  return type !== undefined && resourceTypeOf(type) !== undefined;
}

/** This package's resource type a URN names (`Agent`, ...), or `undefined` for another's. */
export function typeOfUrn(urn: string): string | undefined {
  const type = urn.split("::")[2]?.split("$").pop();
  return type === undefined ? undefined : resourceTypeOf(type);
}

export function num(v: unknown): number | undefined {
  return typeof v === "number" ? v : undefined;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * The step of the Agent an AgentVersion or a Widget step belongs to: the resource its `agentId`
 * input comes from (`propertyDependencies`, known even when the agent is still to be created), else
 * the Agent whose id the input holds. Undefined when neither is in the preview.
 */
export function agentStepOf(step: PreviewStep, steps: readonly PreviewStep[]): PreviewStep | undefined {
  const state = step.newState ?? step.oldState;
  const agents = steps.filter((s) => typeOf(s) === "Agent");
  // A replaced agent has several steps: the one that carries its new state.
  const pick = (found: PreviewStep[]) =>
    found.find((s) => s.newState?.inputs && !s.op.startsWith("delete")) ?? found[0];
  // A dynamic AgentVersion depends on its agent through `agentId`, the plugin's through `agent`.
  const deps = state?.propertyDependencies;
  const from = [...(deps?.agentId ?? []), ...(deps?.agent ?? [])];
  const byUrn = agents.filter((s) => from.includes(s.urn));
  if (byUrn.length > 0) return pick(byUrn);
  const id = state?.inputs?.agentId;
  if (typeof id !== "string" || id === UNKNOWN) return undefined;
  const byId = agents.filter((s) => s.oldState?.id === id || s.oldState?.outputs?.agentId === id);
  return byId.length > 0 ? pick(byId) : undefined;
}

/**
 * Whether an AgentVersion step chooses its version anew: created or replaced, or updated in place
 * with a new configuration hash or pin (a label, notes or `live` change keeps the version).
 */
export function choosesVersion(step: PreviewStep): boolean {
  if (["create", "replace"].includes(step.op)) return true;
  if (step.op !== "update") return false;
  const before = step.oldState?.inputs ?? {};
  const after = step.newState?.inputs ?? {};
  if ((before.pinnedVersion ?? null) !== (after.pinnedVersion ?? null)) return true;
  return after.pinnedVersion === undefined && before.contentHash !== after.contentHash;
}
