/**
 * KnowledgeBase: a set of documents an agent can consult, kept equal to what the program declares.
 *
 * - `check` validates at preview: name bounds, each document exactly one of `text` or `url` (an
 *   http(s) URL), document names unique (they are how the service matches documents on a replace).
 * - `create` creates the knowledge base, `update` replaces it (`PUT`: name, description and the
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
 */
import { setTimeout as sleep } from "node:timers/promises";
import * as pulumi from "@pulumi/pulumi";
import type { ApiError, KnowledgeBase as KnowledgeBaseRecord, VoiceAgentClient } from "../client";
import { client } from "../provider/context";
import { unlessGone } from "../provider/gone";
import type { ResourceHandler } from "../provider/handlers";
import { specModule } from "../provider/lazy";
import { changedKeys, containsUnknown, UNKNOWN } from "../provider/normalize";
import { withProvider } from "../provider/providerResource";
import { dynamicProvider } from "../provider/shim";
import { failure, knownPart } from "../provider/validate";

type In<T> = pulumi.Input<T>;

/** A document given as text. */
export interface KnowledgeBaseTextDocumentArgs {
  /** Unique within the knowledge base, 1 to 255 characters; documents are matched by name. */
  name: In<string>;
  /** The content (at least one character). */
  text: In<string>;
}

/** A document fetched from a URL by the service. */
export interface KnowledgeBaseUrlDocumentArgs {
  /** Unique within the knowledge base, 1 to 255 characters; documents are matched by name. */
  name: In<string>;
  /** An http or https URL the service fetches. An unreachable URL makes the document `failed`. */
  url: In<string>;
}

/** A document: exactly one of `text` or `url`. */
export type KnowledgeBaseDocumentArgs = KnowledgeBaseTextDocumentArgs | KnowledgeBaseUrlDocumentArgs;

/** Inputs of a {@link KnowledgeBase}. */
export interface KnowledgeBaseArgs {
  /** Display name, 1 to 255 characters. */
  name: In<string>;
  /** Free text. Default: unset (not managed); `null` clears it. */
  description?: In<string | null>;
  /** The whole document set, in any order. Default: no documents. */
  documents?: In<In<KnowledgeBaseDocumentArgs>[]>;
  /**
   * How long create and update wait for every document to be `ready`. Default 300 seconds.
   * Changing it alone changes nothing in the service.
   */
  readyTimeoutSeconds?: In<number>;
}

/** Default of `readyTimeoutSeconds`. */
export const DEFAULT_KB_READY_TIMEOUT_SECONDS = 300;

/** One document as last read: its id and processing status. */
export interface KnowledgeBaseDocumentStatus {
  name: string;
  id: string;
  source: "text" | "url";
  status: "processing" | "ready" | "failed";
  error: string | null;
}

/** A knowledge base. Attach it to agents with `knowledgeBaseIds: [kb.id]`. */
export class KnowledgeBase extends pulumi.dynamic.Resource {
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
      dynamicProvider("knowledgeBase"),
      name,
      { ...args, knowledgeBaseId: undefined, kbType: undefined, documentStatuses: undefined },
      withProvider(opts),
      "voice-agent",
      "KnowledgeBase",
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Provider side: runs in the dynamic-provider process.

type Config = Record<string, any>;
type Doc = { name: string; text?: string; url?: string };

/** Stands for the text of a text document the program does not declare (the service never shows it). */
const UNREAD_TEXT = "(text held by the service, not readable)";

const byName = (a: { name?: unknown }, b: { name?: unknown }) => String(a.name).localeCompare(String(b.name));

/** The managed configuration in `inputs`: name, description when set, documents sorted by name. */
function declaredConfig(inputs: Record<string, any>): Config {
  const out: Config = { name: inputs.name };
  if (inputs.description !== undefined) out.description = inputs.description;
  const docs = inputs.documents ?? [];
  out.documents =
    Array.isArray(docs) && !containsUnknown(docs)
      ? docs
          .map((d: any) =>
            d.url !== undefined ? { name: d.name, url: d.url } : { name: d.name, text: d.text },
          )
          .sort(byName)
      : docs;
  return out;
}

/** What the service holds, in input spelling, restricted to what `declared` manages. */
function observedConfig(kb: KnowledgeBaseRecord, declared: Config): Config {
  const texts = new Map<string, string>();
  for (const d of Array.isArray(declared.documents) ? declared.documents : []) {
    if (d && d.text !== undefined) texts.set(d.name, d.text);
  }
  const out: Config = { name: kb.name };
  if (declared.description !== undefined) out.description = kb.description;
  out.documents = kb.documents
    .map(
      (d): Doc =>
        d.source === "url"
          ? { name: d.name, url: d.url ?? "" }
          : { name: d.name, text: texts.get(d.name) ?? UNREAD_TEXT },
    )
    .sort(byName);
  return out;
}

function outputs(inputs: Record<string, any>, kb: KnowledgeBaseRecord): Record<string, unknown> {
  return {
    ...inputs,
    ...observedConfig(kb, declaredConfig(inputs)),
    knowledgeBaseId: kb.id,
    kbType: kb.kb_type,
    documentStatuses: statuses(kb),
  };
}

function statuses(kb: KnowledgeBaseRecord): KnowledgeBaseDocumentStatus[] {
  return kb.documents
    .map((d) => ({ name: d.name, id: d.id, source: d.source, status: d.status, error: d.error }))
    .sort(byName);
}

/** The create/replace body; an unset description keeps the service's (`current`). */
function body(inputs: Record<string, any>, current?: KnowledgeBaseRecord) {
  const declared = declaredConfig(inputs);
  return {
    name: declared.name as string,
    description: inputs.description !== undefined ? inputs.description : (current?.description ?? null),
    documents: declared.documents as Doc[],
  };
}

/**
 * An error Pulumi records as an initialization failure: the knowledge base exists (`id`), its
 * state is kept, and the next `up` updates it again.
 */
function initFailure(message: string, id: string, properties: Record<string, unknown>): Error {
  return Object.assign(new Error(message), { id, properties, reasons: [message] });
}

/** Waits until every document is `ready`; a `failed` document or the timeout ends it with a clear error. */
async function waitReady(
  c: VoiceAgentClient,
  kb: KnowledgeBaseRecord,
  inputs: Record<string, any>,
): Promise<KnowledgeBaseRecord> {
  const timeoutSeconds = Number(inputs.readyTimeoutSeconds ?? DEFAULT_KB_READY_TIMEOUT_SECONDS);
  const deadline = Date.now() + timeoutSeconds * 1000;
  let current = kb;
  let pause = 100;
  for (;;) {
    const failed = current.documents.filter((d) => d.status === "failed");
    if (failed.length > 0) {
      const list = failed.map((d) => `"${d.name}": ${d.error ?? "failed"}`).join("; ");
      throw initFailure(
        `Knowledge base "${current.name}" (${current.id}): document${failed.length > 1 ? "s" : ""} failed to process: ${list}. ` +
          "Fix or remove the document and run `pulumi up` again.",
        current.id,
        outputs(inputs, current),
      );
    }
    const processing = current.documents.filter((d) => d.status === "processing");
    if (processing.length === 0) return current;
    if (Date.now() >= deadline) {
      throw initFailure(
        `Knowledge base "${current.name}" (${current.id}): after ${timeoutSeconds} s, still processing ` +
          `${processing.map((d) => `"${d.name}"`).join(", ")}. Run \`pulumi up\` again to keep waiting, ` +
          "or raise readyTimeoutSeconds.",
        current.id,
        outputs(inputs, current),
      );
    }
    await sleep(Math.min(pause, Math.max(0, deadline - Date.now())));
    pause = Math.min(pause * 2, 2000);
    current = await c.getKnowledgeBase(current.id);
  }
}

/**
 * A declared document with stand-ins for the values unknown during preview, so the rules check
 * what is known without reporting what is not (each stand-in is valid and unique).
 */
function knownDocument(d: unknown, i: number): unknown {
  if (d === UNKNOWN) return { name: `(known after apply ${i})`, text: "(known after apply)" };
  if (!d || typeof d !== "object") return d;
  const doc = { ...(d as Record<string, unknown>) };
  if (doc.name === UNKNOWN) doc.name = `(known after apply ${i})`;
  if (doc.text === UNKNOWN) doc.text = "(known after apply)";
  if (doc.url === UNKNOWN) doc.url = "https://known.after.apply";
  return doc;
}

export const knowledgeBaseHandler: ResourceHandler = {
  async check(_olds, news) {
    const failures: pulumi.dynamic.CheckFailure[] = [];
    const wire: Record<string, any> = knownPart({
      name: news.name === UNKNOWN ? "(known after apply)" : news.name,
      description: news.description,
      documents: Array.isArray(news.documents) ? news.documents.map(knownDocument) : news.documents,
    }) as Record<string, any>;
    const { checkKnowledgeBaseRules, KnowledgeBaseInput, parseWith } = specModule;
    const parsed = parseWith(KnowledgeBaseInput, wire);
    if (!parsed.ok) failures.push(...parsed.issues.map(failure));
    else failures.push(...checkKnowledgeBaseRules(parsed.data).map(failure));
    const t = news.readyTimeoutSeconds;
    if (t !== undefined && t !== UNKNOWN && (typeof t !== "number" || !Number.isFinite(t) || t <= 0)) {
      failures.push({
        property: "readyTimeoutSeconds",
        reason: "readyTimeoutSeconds: must be a number of seconds > 0",
      });
    }
    return { inputs: news, failures };
  },

  async diff(_id, olds, news) {
    const declared = declaredConfig(news);
    const observed: Config = {};
    for (const key of Object.keys(declared)) observed[key] = olds[key] ?? null;
    if (olds.documents === undefined) observed.documents = [];
    return { changes: changedKeys(observed, declared).length > 0 };
  },

  async create(inputs) {
    const c = await client();
    const created = await c.createKnowledgeBase(body(inputs));
    const ready = await waitReady(c, created, inputs);
    return { id: ready.id, outs: outputs(inputs, ready) };
  },

  async read(id, props) {
    const c = await client();
    const kb = await unlessGone(c.getKnowledgeBase(id));
    if (!kb) return { id: undefined, props: {} };
    const outs = outputs(props, kb);
    const inputs: Record<string, unknown> = {};
    for (const key of ["name", "description", "documents", "readyTimeoutSeconds"]) {
      if (props[key] !== undefined) inputs[key] = outs[key];
    }
    return { id, props: outs, inputs };
  },

  async update(id, _olds, news) {
    const c = await client();
    const current = await c.getKnowledgeBase(id);
    const written = await c.replaceKnowledgeBase(id, body(news, current));
    const ready = await waitReady(c, written, news);
    return { outs: outputs(news, ready) };
  },

  async delete(id, props) {
    const c = await client();
    try {
      await c.deleteKnowledgeBase(id);
    } catch (err) {
      const e = err as ApiError;
      if (e.status === 404) return;
      if (e.code === "knowledge_base_in_use") {
        throw new Error(
          `Knowledge base "${props.name}" (${id}) cannot be deleted while agents use it: ${e.detailMessage}. ` +
            "Remove its id from those agents' knowledgeBaseIds first (and put a version without it live); " +
            "when the agent references `kb.id` in the same program, one `pulumi up` does both in order. " +
            `(request ${e.requestId ?? "unknown"})`,
        );
      }
      throw err;
    }
  },
};
