/**
 * EVERY assumption the client makes about endpoints the public reference does not show lives in
 * this file, and nowhere else. Each one follows the project's decision in
 * `/work/shared/spec/gaps.md` ("Decisions for what the API spec leaves open"). When the service
 * documents one of these endpoints, this is the one file to change.
 *
 * Shapes come from the shared schemas in `src/spec` (which follow gaps.md as well); this file pins
 * which schema answers which route, the routes themselves, and the behaviours the client's retry
 * and recovery logic relies on.
 */
import type { z } from "zod";
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
import { RotateKeyResponse } from "../spec/widget";

const seg = (v: string | number): string => encodeURIComponent(String(v));

// ---------------------------------------------------------------------------------------------
// Versions, publish, activations (gaps.md "Versions: publish, make live, roll back").
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

/**
 * Publishing an already published version answers 200 unchanged, so a publish may be repeated.
 * Activating the version that is already live answers 200 with the latest row and records nothing,
 * so an activation may be repeated too.
 */
export const PUBLISH_IS_IDEMPOTENT = true;
export const ACTIVATION_IS_IDEMPOTENT = true;

// ---------------------------------------------------------------------------------------------
// Compare-and-set refusals (gaps.md "Compare-and-set refusals").
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
// Knowledge bases (gaps.md "Knowledge bases").
// ---------------------------------------------------------------------------------------------

/** Routes: list (cursor envelope) and create on the collection; read, PUT replace, DELETE (204) on one. */
export const knowledgeBaseRoutes = {
  collection: () => "/v1/knowledge-bases",
  one: (id: string) => `/v1/knowledge-bases/${seg(id)}`,
};

/** A knowledge base as read back, and the create/replace body (shared schemas, per gaps.md). */
export { KnowledgeBase, KnowledgeBaseDocument, KnowledgeBaseInput as KnowledgeBaseBodySchema };
/** Body of `POST` (create) and `PUT` (replace: name, description and the whole document set). */
export type KnowledgeBaseBody = z.input<typeof KnowledgeBaseInput>;

// ---------------------------------------------------------------------------------------------
// Custom analysis (gaps.md "Custom analysis").
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

/**
 * There is no single-group read: a group is found in the library listing. Deleting the Default
 * Analysis group is 409 `group_protected`.
 */
export const NO_SINGLE_GROUP_READ = true;

// ---------------------------------------------------------------------------------------------
// Widget: rotate-key response and value sets (gaps.md "Widget").
// ---------------------------------------------------------------------------------------------

/** `POST /v1/agents/{id}/widget/rotate-key` answers `{public_key, public_key_prefix, rotated_at}`. */
export const WidgetKey = RotateKeyResponse;

// ---------------------------------------------------------------------------------------------
// Catalogues and holdings: the reference shows bare arrays but not their rows
// (gaps.md "Numbers, WhatsApp, catalogues, memory").
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

/**
 * The field of each created object that carries the create marker until the answer is seen:
 * agents use the V0 `notes` (documented version metadata); knowledge bases and analysis groups
 * have no metadata field, so their `description` carries it (shapes per gaps.md) and a `PUT`
 * (idempotent replace, per gaps.md) restores the caller's description right after.
 */
export const MARKER_FIELD = {
  agent: "notes",
  knowledgeBase: "description",
  analysisGroup: "description",
} as const;
