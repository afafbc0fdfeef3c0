/**
 * The analyses ("Group/Name") the program declares in this deployment, as the AnalysisGroups'
 * `check` saw them (provider process, shared by every resource of the deployment). A `watch` rate
 * naming one of them is not refused at preview though the workspace holds no such analysis yet: the
 * group is created (or gains the item) in this very deployment. When a group's name or items are
 * unknown at preview, nothing can be told: every name counts as possibly declared.
 */
import { isPlainObject } from "../../provider/normalize";
import { containsUnknown } from "../../provider/unknowns";

const declared = new Set<string>();
let undecidable = false;

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
      declared.add(`${name}/${item.name}`);
}

/** Whether `analysis` ("Group/Name") may be declared by the program in this deployment. */
export function mayBeDeclared(analysis: string): boolean {
  return undecidable || declared.has(analysis);
}
