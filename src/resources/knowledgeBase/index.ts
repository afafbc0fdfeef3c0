/**
 * KnowledgeBase: a set of documents an agent can consult, kept equal to what the program declares.
 *
 * - `check` validates at preview: name bounds, each document exactly one of `text` or `url` (an
 *   http(s) URL), document names unique (they are how the service matches documents on a replace).
 * - `create` creates the knowledge base (or adopts one by `adoptId`, writing only when it differs
 *   from the declaration), `update` replaces it (`PUT`: name, description and the
 *   whole document set; a document whose content did not change is not processed again). Both then
 *   wait until every document is `ready`, at most `readyTimeoutSeconds`. A `failed` document fails
 *   the operation with the document's name and error; so does the timeout. The knowledge base is
 *   kept in the state all the same (an initialization failure), so the next `up` tries again
 *   instead of creating a second one.
 * - `diff` compares name, description (when set) and the documents as a set keyed by name. The
 *   service never reads a text document's text back: a text document counts as unchanged while a
 *   text document of that name exists; a changed text in the program is a change.
 * - `read` (refresh) shows documents added, removed or changed from text to url elsewhere as drift.
 * - `delete` removes it. While an agent's draft or live version uses it, the service refuses: the
 *   error names the agents. Reference `kb.id` in the agent's `knowledgeBaseIds`, and a program that
 *   detaches and deletes in one `up` updates the agent (and publishes its version) first.
 *
 * This file is the program side; the provider side is `provider.ts`.
 */
import type * as pulumi from "@pulumi/pulumi";
import { recordAttachable } from "../attachmentNames";
import { createMarker } from "../createMarker";
import { ServiceResource } from "../serviceResource";
import { DEFAULT_KB_READY_TIMEOUT_SECONDS, type KnowledgeBaseDocumentStatus } from "./documents";

export { DEFAULT_KB_READY_TIMEOUT_SECONDS, type KnowledgeBaseDocumentStatus };

/** A document given as text. */
export interface KnowledgeBaseTextDocumentArgs {
  /** Unique within the knowledge base, 1 to 255 characters; documents are matched by name. */
  name: pulumi.Input<string>;
  /** The content (at least one character). */
  text: pulumi.Input<string>;
}

/** A document fetched from a URL by the service. */
export interface KnowledgeBaseUrlDocumentArgs {
  /** Unique within the knowledge base, 1 to 255 characters; documents are matched by name. */
  name: pulumi.Input<string>;
  /** An http or https URL the service fetches. An unreachable URL makes the document `failed`. */
  url: pulumi.Input<string>;
}

/**
 * A text document the service already holds, declared by name alone: the service never reads a
 * text back, so a program adopting a knowledge base (`adoptId`; `voice-agent-export` writes these)
 * or importing one (`pulumi import`, with the provider plugin) cannot state it. It counts as unchanged while the service holds a text document of that name.
 * Any change to the knowledge base sends the whole document set, so a change fails, writing
 * nothing, until the document's `text` is given instead.
 */
export interface KnowledgeBaseHeldTextDocumentArgs {
  /** The name of a text document the adopted (or imported) knowledge base holds. */
  name: pulumi.Input<string>;
  /**
   * Always `true`: the document is a text the knowledge base already holds, declared by name alone
   * (the service never reads a text back).
   */
  heldText: pulumi.Input<true>;
}

/**
 * A document: its `name` and exactly one of `text`, `url` or (in an adopted or imported knowledge
 * base) `heldText`. In the provider plugin's schema (YAML, Go, Python) one object type,
 * `KnowledgeBaseDocument`, with the three optional.
 */
export type KnowledgeBaseDocumentArgs =
  | KnowledgeBaseTextDocumentArgs
  | KnowledgeBaseUrlDocumentArgs
  | KnowledgeBaseHeldTextDocumentArgs;

/** Inputs of a {@link KnowledgeBase}. */
export interface KnowledgeBaseArgs {
  /** Display name, 1 to 255 characters. */
  name: pulumi.Input<string>;
  /** Free text. Default: unset (not managed); `null` clears it. */
  description?: pulumi.Input<string | null>;
  /** The whole document set, in any order. Default: no documents. */
  documents?: pulumi.Input<pulumi.Input<KnowledgeBaseDocumentArgs>[]>;
  /**
   * How long create and update wait for every document to be `ready`. Default 300 seconds.
   * Changing it alone changes nothing in the service.
   */
  readyTimeoutSeconds?: pulumi.Input<number>;
  /**
   * Id of an existing knowledge base to take over instead of creating one, from a TypeScript
   * program (its resources are dynamic: `pulumi import` cannot adopt them; with the provider plugin,
   * from YAML, Go or Python, `pulumi import voice-agent:index:KnowledgeBase NAME ID` does). Create
   * writes the declaration onto it only where it differs: declare its documents (`documents`
   * defaults to none). Changing it later has no effect.
   */
  adoptId?: pulumi.Input<string>;
}

/** A knowledge base. Attach it to agents with `knowledgeBaseIds: [kb.id]`. */
export class KnowledgeBase extends ServiceResource {
  /** The knowledge base's id (also the resource's `id`). */
  declare readonly knowledgeBaseId: pulumi.Output<string>;
  /** Always `non_deterministic`. */
  declare readonly kbType: pulumi.Output<string>;
  /** Per document, by name: id, source and processing status as last read. */
  declare readonly documentStatuses: pulumi.Output<KnowledgeBaseDocumentStatus[]>;
  declare readonly name: pulumi.Output<string>;
  declare readonly description: pulumi.Output<string | null | undefined>;

  constructor(name: string, args: KnowledgeBaseArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      "knowledgeBase",
      "KnowledgeBase",
      name,
      {
        ...args,
        createMarker: createMarker("voice-agent:KnowledgeBase", name, opts),
        knowledgeBaseId: undefined,
        kbType: undefined,
        documentStatuses: undefined,
      },
      opts,
    );
    recordAttachable(this.id, this.name);
  }
}
