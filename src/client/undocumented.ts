/**
 * EVERY assumption the client makes about endpoints the public reference does not show lives in
 * this file, and nowhere else. Each one follows the project's decision recorded in
 * `docs/service-decisions.md` (what the service's reference leaves open, and what this project
 * decided). When the service documents one of these endpoints, this is the one file to change
 * (with that page).
 *
 * Shapes come from the shared schemas in `src/spec` (which follow the same decisions); this file pins
 * which schema answers which route, the routes themselves, and the behaviours the client's retry
 * and recovery logic relies on.
 */
import { z } from "zod";
import { ActivationBody, ActivationRow, AgentDetail, PublishBody, VersionRow } from "../spec/agent";
import { AnalysisGroup, AnalysisGroupInput, AnalysisItem } from "../spec/analysis";
import {
  LanguageRow,
  ModelRow,
  NumberRow,
  TranscriberRow,
  TtsCapabilities,
  VoiceRow,
  WhatsAppNumberRow,
  WhatsAppTemplateRow,
} from "../spec/catalogue";
import { KnowledgeBase, KnowledgeBaseDocument, KnowledgeBaseInput } from "../spec/knowledgeBase";
import { RotateKeyResponse, Widget } from "../spec/widget";

const seg = (v: string | number): string => encodeURIComponent(String(v));

// ---------------------------------------------------------------------------------------------
// Versions, publish, activations (docs/service-decisions.md "Versions: publish, make live, roll back").
// ---------------------------------------------------------------------------------------------

/** Routes of the version endpoints the reference lists without shapes, and of publish/activate. */
export const versionRoutes = {
  /** `GET`: cursor envelope of {@link VersionRow}, newest first. */
  versions: (agentId: string) => `/v1/agents/${seg(agentId)}/versions`,
  /** `GET`: agent detail of version n. */
  version: (agentId: string, n: number) => `/v1/agents/${seg(agentId)}/versions/${seg(n)}`,
  /** `POST` {@link PublishBody} with optional `If-Match`: 200 agent detail, `is_published: true`. */
  publish: (agentId: string, n: number) => `/v1/agents/${seg(agentId)}/versions/${seg(n)}/publish`,
  /** `POST` {@link ActivationBody}: 201 row, or 200 with the latest row when already live. `GET`: envelope. */
  activations: (agentId: string) => `/v1/agents/${seg(agentId)}/activations`,
};

export { ActivationBody, ActivationRow, PublishBody, VersionRow };
/** Response of `GET .../versions/{n}` and of publish: the ordinary agent detail. */
export const VersionDetail = AgentDetail;

// ---------------------------------------------------------------------------------------------
// Compare-and-set refusals (docs/service-decisions.md "Compare-and-set refusals").
// ---------------------------------------------------------------------------------------------

/**
 * An `If-Match` that does not equal the target's `document_revision`: 409 with this reason and
 * `detail.current_revision`. A patch raises the revision by exactly one.
 */
export const REVISION_CONFLICT = "revision_conflict";
/** A patch without `?version=` while several drafts are open: 409 with `detail.candidates`. */
export const DRAFT_AMBIGUOUS = "draft_ambiguous";
/** How the `If-Match` header carries a `document_revision`: the bare integer. */
export const ifMatchHeader = (revision: number): string => String(revision);

// ---------------------------------------------------------------------------------------------
// Knowledge bases (docs/service-decisions.md "Knowledge bases").
// ---------------------------------------------------------------------------------------------

/** Routes: list (cursor envelope) and create on the collection; read, PUT replace, DELETE (204) on one. */
export const knowledgeBaseRoutes = {
  collection: () => "/v1/knowledge-bases",
  one: (id: string) => `/v1/knowledge-bases/${seg(id)}`,
};

/** A knowledge base as read back, and the create/replace body (shared schemas, per docs/service-decisions.md). */
export { KnowledgeBase, KnowledgeBaseDocument, KnowledgeBaseInput as KnowledgeBaseBodySchema };
/** Body of `POST` (create) and `PUT` (replace: name, description and the whole document set). */
export type KnowledgeBaseBody = z.input<typeof KnowledgeBaseInput>;

// ---------------------------------------------------------------------------------------------
// Custom analysis (docs/service-decisions.md "Custom analysis").
// ---------------------------------------------------------------------------------------------

/** Routes: `GET` the library (cursor envelope of groups); `POST` a group; `PUT`/`DELETE` one. */
export const analysisRoutes = {
  library: () => "/v1/custom-analysis",
  groups: () => "/v1/custom-analysis/groups",
  group: (id: string) => `/v1/custom-analysis/groups/${seg(id)}`,
};

/** An analysis group as read back (items in creation order), and the create/replace body. */
export { AnalysisGroup, AnalysisGroupInput as AnalysisGroupBodySchema, AnalysisItem };
/** Body of `POST` (create) and `PUT` (replace) of a group; an item with an `id` is kept and updated. */
export type AnalysisGroupBody = z.input<typeof AnalysisGroupInput>;

// There is no single-group read: `client.analysis.get` finds a group in the library listing.

// ---------------------------------------------------------------------------------------------
// Widget: rotate-key response and value sets (docs/service-decisions.md "Widget").
// ---------------------------------------------------------------------------------------------

/** `POST /v1/agents/{id}/widget/rotate-key` answers `{public_key, public_key_prefix, rotated_at}`. */
export const WidgetKey = RotateKeyResponse;

// ---------------------------------------------------------------------------------------------
// Catalogues and holdings: the reference shows bare arrays but not their rows
// (docs/service-decisions.md "Numbers, WhatsApp, catalogues, memory").
// ---------------------------------------------------------------------------------------------

export {
  LanguageRow,
  ModelRow,
  NumberRow,
  TranscriberRow,
  TtsCapabilities,
  VoiceRow,
  WhatsAppNumberRow,
  WhatsAppTemplateRow,
};

// ---------------------------------------------------------------------------------------------
// Lost-answer recovery: where a create's marker can be stored and found again.
// ---------------------------------------------------------------------------------------------

// The field of each created object that carries the create marker until the answer is seen:
// agents use the V0 `notes` (documented version metadata, `client.agents.create`); knowledge bases
// and analysis groups have no metadata field, so their `description` carries it (shapes per
// docs/service-decisions.md) and a `PUT` (an idempotent replace, per the same page) restores the
// caller's description right after (`client.knowledgeBases.create`, `client.analysis.create`).

// ---------------------------------------------------------------------------------------------
// Response enums the reference leaves open or does not show: parsed leniently, so one new value
// from the service never makes a read fail. Requests and the emulator stay strict (src/spec).
// ---------------------------------------------------------------------------------------------

/** The known values, as a hint; any other string is accepted too. */
function open<const T extends readonly [string, ...string[]]>(known: T) {
  return z.union([z.enum(known), z.string()]);
}

/** Widget: "`active` when live; a paused state also exists" (its exact value not shown). */
export const WidgetResponse = Widget.extend({ status: open(["active", "paused"]) });
/** Numbers: `carrier_status` and `lifecycle_status` values "not shown". */
export const NumberRowResponse = NumberRow.extend({
  carrier_status: open(["listed", "delisted"]),
  lifecycle_status: open(["active", "grace_period", "released"]),
});
/** Templates: only approved ones are listed; the status values are not shown. */
export const WhatsAppTemplateRowResponse = WhatsAppTemplateRow.extend({ status: open(["approved"]) });
/** Knowledge-base documents: statuses and sources per docs/service-decisions.md, not the reference. */
export const KnowledgeBaseResponse = KnowledgeBase.extend({
  documents: z.array(
    KnowledgeBaseDocument.extend({
      source: open(["text", "url"]),
      status: open(["processing", "ready", "failed"]),
    }),
  ),
});
/** Analysis items: types per docs/service-decisions.md, not the reference. */
export const AnalysisGroupResponse = AnalysisGroup.extend({
  items: z.array(AnalysisItem.extend({ type: open(["text", "boolean", "number", "enum"]) })),
});
/** Deploy-history rows: `action` beyond the values docs/service-decisions.md names is not shown. */
export const ActivationRowResponse = ActivationRow.extend({
  action: open(["activate", "rollback", "deactivate"]),
});
