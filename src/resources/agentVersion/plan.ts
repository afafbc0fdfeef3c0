/**
 * The AgentVersion's one line in `pulumi preview`: which version its deploy publishes or brings
 * back, and the version that stays off air. The provider's `check` finds the plan (`provider.ts`,
 * `planAtPreview`) and hands it in the checked inputs under {@link PLAN_KEY}, which the engine never
 * displays; the words are made here, once, for both faces: the TypeScript class logs them from its
 * outputs at preview (`index.ts`), the provider plugin from the planned outputs (`src/plugin/`).
 * Loads nothing.
 */
import { type RolledBack, rolledBackWords } from "./rollback";

/** The checked input that carries the plan (a `__` name: never shown in a diff, never in an output). */
export const PLAN_KEY = "__plan";

/** What the deploy will do to the agent's versions, as `check` found it at preview. */
export type Plan =
  /** Publishes the draft; `version` null when its number cannot be known before `up` (`why`). */
  | { kind: "publish"; version: number | null; why?: string; live: boolean }
  /** A published version already holds the configuration (a revert): it comes back, nothing is published. */
  | { kind: "reuse"; version: number; live: boolean; revert?: boolean }
  /** The program pins a published version. */
  | { kind: "pin"; version: number; live: boolean };

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** `v` as a plan, or undefined (absent, unknown, or not one). */
export function asPlan(v: unknown): Plan | undefined {
  if (!isRecord(v) || typeof v.live !== "boolean") return undefined;
  const n = v.version;
  if (v.kind === "publish" && (n === null || typeof n === "number"))
    return {
      kind: "publish",
      version: n,
      live: v.live,
      ...(typeof v.why === "string" ? { why: v.why } : {}),
    };
  if (v.kind === "reuse" && typeof n === "number")
    return { kind: "reuse", version: n, live: v.live, ...(v.revert === true ? { revert: true } : {}) };
  if (v.kind === "pin" && typeof n === "number") return { kind: "pin", version: n, live: v.live };
  return undefined;
}

/** The plan in one line: "publishes version 3 and puts it live", "a revert: brings back version 1, nothing published". */
export function planWords(plan: Plan): string {
  const live = plan.live ? " and puts it live" : " (not put live)";
  switch (plan.kind) {
    case "publish":
      return plan.version === null
        ? `publishes the agent's draft as a new version${live}; its number is known at \`up\`: ${plan.why ?? "the agent is not created yet"}`
        : `publishes version ${plan.version}${live}`;
    case "reuse":
      return `${plan.revert ? "a revert: " : ""}${plan.live ? "brings back" : "finds"} version ${plan.version}, which holds this configuration; nothing published`;
    case "pin":
      return `puts pinned version ${plan.version} ${plan.live ? "live" : "in place (not live)"}, nothing published`;
  }
}

/** The line for a version taken off air that stays off air in this deploy. */
export function offAirWords(version: number, rolledBack: RolledBack): string {
  return (
    `version ${version} stays off air: ${rolledBackWords(rolledBack)}. No deploy puts it back live: fix forward ` +
    "(a new configuration publishes and goes live), revert, or raise `reinstate` to put it back on purpose"
  );
}

/** A line of the preview: its severity and text. */
export interface PreviewNote {
  severity: "info" | "warning";
  message: string;
}

/**
 * The AgentVersion's line in the preview of a step, from its planned outputs (the checked inputs):
 * the version that stays off air (a warning), else the plan (information, which Pulumi prints bare:
 * it names the resource, `name`), else none.
 */
export function previewNote(props: Record<string, unknown>, name: string): PreviewNote | undefined {
  const rolledBack = props.rolledBack;
  // Said by the preview of the deploy that records it, not again once recorded.
  if (
    isRecord(rolledBack) &&
    rolledBack.recorded !== true &&
    typeof props.version === "number" &&
    typeof rolledBack.action === "string"
  )
    return { severity: "warning", message: offAirWords(props.version, rolledBack as unknown as RolledBack) };
  const plan = asPlan(props[PLAN_KEY]);
  return plan ? { severity: "info", message: `AgentVersion ${name}: ${planWords(plan)}` } : undefined;
}
