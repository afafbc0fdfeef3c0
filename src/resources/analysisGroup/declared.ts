/**
 * The analyses ("Group/Name") the program declares in this deployment, as the AnalysisGroups'
 * `check` saw them (provider process, shared by every resource of the deployment), with what each
 * can hold (its type, an enum's values) when known. A `watch` rate naming one of them is not refused
 * at preview though the workspace holds no such analysis yet: the group is created (or gains the
 * item) in this very deployment; its value is checked against the declared item. When a group's
 * name or items are unknown at preview, nothing can be told: every name counts as possibly
 * declared, with no known shape.
 */
import { isPlainObject } from "../../provider/normalize";
import { containsUnknown } from "../../provider/unknowns";
import { ANALYSIS_ITEM_TYPES } from "../../spec/analysis";

/** What an analysis can hold: its type and, for an enum, its values. */
export interface AnalysisShape {
  type: (typeof ANALYSIS_ITEM_TYPES)[number];
  enumValues: readonly string[] | null;
}

/** Declared analyses: their shape, or null when its type or values are unknown at preview. */
const declared = new Map<string, AnalysisShape | null>();
let undecidable = false;

/** The shape of a declared item, or null when a part of it is unknown at preview or not valid. */
function shapeOf(item: Record<string, unknown>): AnalysisShape | null {
  if (containsUnknown(item.type) || containsUnknown(item.enumValues)) return null;
  const type = ANALYSIS_ITEM_TYPES.find((t) => t === item.type);
  if (type === undefined) return null;
  const values = Array.isArray(item.enumValues) ? item.enumValues.filter((v) => typeof v === "string") : null;
  return { type, enumValues: values };
}

/** Records what an AnalysisGroup's checked inputs declare (`adoptDefault` names Default Analysis). */
export function declareAnalyses(inputs: Record<string, unknown>): void {
  const name = inputs.adoptDefault === true && inputs.name === undefined ? "Default Analysis" : inputs.name;
  if (containsUnknown(inputs.name) || containsUnknown(inputs.items) || containsUnknown(inputs.enabled)) {
    undecidable = true;
    return;
  }
  if (typeof name !== "string" || !Array.isArray(inputs.items)) return;
  if (inputs.enabled === false) return;
  for (const item of inputs.items)
    if (isPlainObject(item) && typeof item.name === "string" && item.enabled !== false)
      declared.set(`${name}/${item.name}`, shapeOf(item));
}

/** Whether `analysis` ("Group/Name") may be declared by the program in this deployment. */
export function mayBeDeclared(analysis: string): boolean {
  return undecidable || declared.has(analysis);
}

/**
 * What a declared `analysis` can hold: its shape; `null` when it may be declared but what it holds
 * is not known at preview; `undefined` when the program does not declare it.
 */
export function declaredShape(analysis: string): AnalysisShape | null | undefined {
  const shape = declared.get(analysis);
  if (shape !== undefined) return shape;
  return undecidable ? null : undefined;
}
