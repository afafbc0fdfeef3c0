/** Custom-analysis groups and their items. */
import { z } from "zod";
import { Id, type Issue, Timestamp } from "./common";

/** Name of the group every workspace has (editable, not deletable). */
export const DEFAULT_ANALYSIS_GROUP_NAME = "Default Analysis";

/** Item types. */
export const ANALYSIS_ITEM_TYPES = ["text", "boolean", "number", "enum"] as const;

/** One analysis of a group. */
export const AnalysisItem = z.object({
  id: Id,
  name: z.string(),
  description: z.string().nullable(),
  type: z.enum(ANALYSIS_ITEM_TYPES),
  enum_values: z.array(z.string()).nullable(),
  enabled: z.boolean(),
  created_at: Timestamp,
});
export type AnalysisItem = z.infer<typeof AnalysisItem>;

/** A custom-analysis group; items ordered by creation time. */
export const AnalysisGroup = z.object({
  id: Id,
  name: z.string(),
  description: z.string().nullable(),
  enabled: z.boolean(),
  items: z.array(AnalysisItem),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type AnalysisGroup = z.infer<typeof AnalysisGroup>;

/** An item in a request: with an `id` it updates that item (PUT), without one it creates an item. */
export const AnalysisItemInput = z.strictObject({
  id: z.string().optional(),
  name: z.string().min(1).max(255),
  description: z.string().nullable().optional(),
  type: z.enum(ANALYSIS_ITEM_TYPES),
  enum_values: z.array(z.string().min(1)).nullable().optional(),
  enabled: z.boolean().optional(),
});
export type AnalysisItemInput = z.infer<typeof AnalysisItemInput>;

/** `POST /v1/custom-analysis/groups` and `PUT /v1/custom-analysis/groups/{id}` body. */
export const AnalysisGroupInput = z.strictObject({
  name: z.string().min(1).max(255),
  description: z.string().nullable().optional(),
  enabled: z.boolean().optional(),
  items: z.array(AnalysisItemInput).optional(),
});
export type AnalysisGroupInput = z.infer<typeof AnalysisGroupInput>;

/**
 * Group rules beyond the schema (400 `document_invalid`): item names unique (they key the call's
 * `custom_analysis`), `enum` items list their values, other types carry none, ids not repeated.
 */
export function checkAnalysisGroupRules(input: AnalysisGroupInput): Issue[] {
  const issues: Issue[] = [];
  const add = (field: string, message: string) =>
    issues.push({ field, code: "document_invalid", message: `${field}: ${message}` });
  const names = new Set<string>();
  const ids = new Set<string>();
  (input.items ?? []).forEach((it, i) => {
    const f = `items[${i}]`;
    if (names.has(it.name)) add(`${f}.name`, `an analysis named '${it.name}' is listed twice`);
    names.add(it.name);
    if (it.id !== undefined) {
      if (ids.has(it.id)) add(`${f}.id`, `item '${it.id}' is listed twice`);
      ids.add(it.id);
    }
    const values = it.enum_values ?? null;
    if (it.type === "enum" && (!values || values.length === 0))
      add(`${f}.enum_values`, "an enum analysis lists its values");
    if (it.type !== "enum" && values && values.length > 0)
      add(`${f}.enum_values`, `only an enum analysis has values (this one is '${it.type}')`);
  });
  return issues;
}
