/**
 * The KnowledgeBase's provider side: runs in the dynamic-provider process. See `index.ts` for
 * what each step does; the comparison is the shared field-table algorithm (`provider/managed.ts`).
 */
import { z } from "zod";
import type { KnowledgeBase as KnowledgeBaseRecord, VoiceAgentClient } from "../../client";
import { ApiError } from "../../client/errors";
import { CANCELLED, pauseUnlessCancelled } from "../../provider/cancel";
import { bodyFailures } from "../../provider/failures";
import { unlessGone } from "../../provider/gone";
import {
  assertUnchanged,
  changedFields,
  type FieldTable,
  observe,
  pickManaged,
  refreshedInputs,
  unknownInputs,
} from "../../provider/managed";
import { deepEqual, isPlainObject, type Json, type JsonObject } from "../../provider/normalize";
import type { HandlerFactory, Props } from "../../provider/resource";
import { orUnknown, parseProps } from "../../provider/state";
import { UNKNOWN, unknownPaths } from "../../provider/unknowns";
import { checkKnowledgeBaseRules, KnowledgeBaseInput } from "../../spec";
import { forgettingNames } from "../agent/names";
import { DEFAULT_KB_READY_TIMEOUT_SECONDS, type KnowledgeBaseDocumentStatus } from "./documents";

/** Stands for the text of a text document the program does not declare (the service never shows it). */
const UNREAD_TEXT = "(text held by the service, not readable)";

/**
 * A document in one spelling: `{name, url}` or `{name, text}`. A document declared by name alone
 * (`heldText`) stands for the text the service holds, which is never read back.
 */
const documentShape = (d: Json): Json =>
  isPlainObject(d)
    ? d.url !== undefined
      ? { name: d.name ?? null, url: d.url }
      : d.heldText === true && d.text === undefined
        ? { name: d.name ?? null, text: UNREAD_TEXT }
        : { name: d.name ?? null, text: d.text ?? null }
    : d;

/** The knowledge base's managed fields: documents are a set keyed by name. */
const KB_FIELDS: FieldTable = {
  managed: ["name", "description", "documents"],
  paths: { documents: { keyedBy: "name" }, "documents[]": { canonical: documentShape } },
};
const OWN_INPUTS = ["readyTimeoutSeconds", "createMarker", "adoptId"] as const;

const KbInputs = z.looseObject({
  name: z.string(),
  description: z.string().nullable().optional(),
  readyTimeoutSeconds: z.number().positive().optional(),
  createMarker: z.string().optional(),
  adoptId: z.string().optional(),
});
const KbState = KbInputs.extend({ knowledgeBaseId: z.string(), kbType: z.string() });

/** The inputs a preview's `diff` sees: a value not known yet may stand anywhere. */
const KbPreviewInputs = KbInputs.extend({ readyTimeoutSeconds: orUnknown(z.number().positive()).optional() });

const inputs = (props: Props) => parseProps(KbInputs, props, "KnowledgeBase inputs");
const previewInputs = (props: Props) => parseProps(KbPreviewInputs, props, "KnowledgeBase inputs");
const state = (props: Props) => parseProps(KbState, props, "KnowledgeBase state");
/**
 * What `read` and `delete` accept: the state, or only the inputs (a resource adopted into the
 * state by `pulumi import` or a recovery has no outputs yet).
 * Made once: zod compiles a schema at its first parse (a schema made per call is compiled per
 * call).
 */
const StoredKbState = KbState.partial();
const stored = (props: Props) => parseProps(StoredKbState, props, "KnowledgeBase state");

/** The managed configuration the program declares: documents default to none. */
function declaredConfig(props: Props): JsonObject {
  return pickManaged(KB_FIELDS, { ...props, documents: props.documents ?? [] });
}

/**
 * What the service holds, in input spelling. The service never shows a text document's text: a
 * text document of a name `declared` gives a text for counts as holding that text.
 */
function serviceConfig(kb: KnowledgeBaseRecord, declared: JsonObject): JsonObject {
  const texts = new Map<Json, Json>();
  for (const d of Array.isArray(declared.documents) ? declared.documents : []) {
    if (isPlainObject(d) && d.text !== undefined) texts.set(d.name ?? null, d.text);
  }
  return pickManaged(KB_FIELDS, {
    name: kb.name,
    description: kb.description,
    documents: kb.documents.map((d) =>
      d.source === "url"
        ? { name: d.name, url: d.url ?? "" }
        : { name: d.name, text: texts.get(d.name) ?? UNREAD_TEXT },
    ),
  });
}

function statuses(kb: KnowledgeBaseRecord): KnowledgeBaseDocumentStatus[] {
  return kb.documents
    .map((d) => ({ name: d.name, id: d.id, source: d.source, status: d.status, error: d.error }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * A document as read, in the program's spelling: a text document whose text the program does not
 * give is declared by name alone (`heldText`), never by the stand-in for its text (a refresh's
 * inputs, and the code `pulumi import` writes, would otherwise send that stand-in as its text).
 */
const asDeclared = (d: Json): Json =>
  isPlainObject(d) && d.text === UNREAD_TEXT && d.url === undefined
    ? { name: d.name ?? null, heldText: true }
    : d;

function outputs(props: Props, kb: KnowledgeBaseRecord): Props {
  const declared = declaredConfig(props);
  const observed = observe(KB_FIELDS, serviceConfig(kb, declared), declared);
  if (Array.isArray(observed.documents)) observed.documents = observed.documents.map(asDeclared);
  return {
    ...props,
    ...observed,
    knowledgeBaseId: kb.id,
    kbType: kb.kb_type,
    documentStatuses: statuses(kb),
  };
}

/** The names of the documents `props` declares by name alone (`heldText`). */
function heldDocuments(props: Props): string[] {
  return (Array.isArray(props.documents) ? props.documents : [])
    .filter((d) => isPlainObject(d) && d.heldText === true && d.text === undefined)
    .map((d) => String((d as Record<string, unknown>).name));
}

/**
 * The create/replace body; an unset description keeps the service's (`current`). A body always
 * carries every document's content, so a document declared by name alone (`heldText`) stops it.
 */
function body(props: Props, current?: KnowledgeBaseRecord): KnowledgeBaseInput {
  const declared = declaredConfig(props);
  const held = heldDocuments(props);
  if (held.length > 0) {
    const names = held.map((n) => `"${n}"`).join(", ");
    throw new Error(
      `Knowledge base "${String(declared.name)}"${current ? ` (${current.id})` : ""}: this change sends the whole ` +
        `document set, but ${held.length > 1 ? "documents" : "document"} ${names} ${held.length > 1 ? "are" : "is"} declared ` +
        "with heldText (the service never reads a text back). Nothing was written. Give each one's text " +
        "(`{ name, text }`) in the program, then run `pulumi up` again.",
    );
  }
  const parsed = KnowledgeBaseInput.safeParse({
    name: declared.name,
    description: declared.description !== undefined ? declared.description : (current?.description ?? null),
    documents: declared.documents,
  });
  if (!parsed.success) throw new Error("KnowledgeBase: invalid body", { cause: parsed.error });
  return parsed.data;
}

/**
 * An error Pulumi records as an initialization failure: the knowledge base exists (`id`), its
 * state is kept, and the next `up` updates it again.
 */
function initFailure(message: string, id: string, properties: Props): Error {
  return Object.assign(new Error(message), { id, properties, reasons: [message] });
}

/**
 * Waits until every document is `ready`; a `failed` document, the timeout or the engine's cancel
 * (`signal`) ends it with a clear error.
 */
async function waitReady(
  c: VoiceAgentClient,
  kb: KnowledgeBaseRecord,
  props: Props,
  signal: AbortSignal | undefined,
): Promise<KnowledgeBaseRecord> {
  const timeoutSeconds = inputs(props).readyTimeoutSeconds ?? DEFAULT_KB_READY_TIMEOUT_SECONDS;
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
        outputs(props, current),
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
        outputs(props, current),
      );
    }
    await pauseUnlessCancelled(Math.min(pause, Math.max(0, deadline - Date.now())), signal);
    if (signal?.aborted) {
      // As the deadline: the next `up` adopts this knowledge base (its marker) and waits again.
      throw initFailure(
        `Knowledge base "${current.name}" (${current.id}): ${CANCELLED}, while still processing ` +
          `${processing.map((d) => `"${d.name}"`).join(", ")}. Run \`pulumi up\` again to keep waiting.`,
        current.id,
        outputs(props, current),
      );
    }
    pause = Math.min(pause * 2, 2000);
    current = await c.knowledgeBases.get(current.id);
  }
}

/**
 * A declared document with valid stand-ins for the values unknown at preview, so the rules check
 * what is known; whatever they say about a stand-in is left out (`bodyFailures`). A document
 * declared by name alone (`heldText`) is checked as a text document.
 */
function withStandIns(d: unknown, i: number): unknown {
  if (d === UNKNOWN) return { name: `(known after apply ${i})`, text: "(known after apply)" };
  if (!isPlainObject(d)) return d;
  const { heldText, ...rest } = d;
  // `heldText` is checked on its own (see `check`); the document is checked as a text document.
  const doc: Record<string, Json> =
    heldText !== undefined && rest.text === undefined && rest.url === undefined
      ? { ...rest, text: UNREAD_TEXT }
      : heldText !== undefined
        ? rest
        : { ...d };
  if (doc.name === UNKNOWN) doc.name = `(known after apply ${i})`;
  if (doc.text === UNKNOWN) doc.text = "(known after apply)";
  if (doc.url === UNKNOWN) doc.url = "https://known.after.apply";
  return doc;
}

export const knowledgeBaseProvider: HandlerFactory = (ctx) =>
  forgettingNames({
    async check(olds, news) {
      const failures = unknownInputs(KB_FIELDS, news, OWN_INPUTS, "KnowledgeBase");
      const written = { name: news.name, description: news.description, documents: news.documents };
      const unknowns = unknownPaths(written);
      const wire = {
        name: news.name === UNKNOWN ? "(known after apply)" : news.name,
        ...(news.description !== undefined && news.description !== UNKNOWN
          ? { description: news.description }
          : {}),
        ...(Array.isArray(news.documents)
          ? { documents: news.documents.map(withStandIns) }
          : news.documents !== undefined && news.documents !== UNKNOWN
            ? { documents: news.documents }
            : {}),
      };
      failures.push(...bodyFailures(KnowledgeBaseInput, checkKnowledgeBaseRules, wire, unknowns));
      if (Array.isArray(news.documents)) {
        news.documents.forEach((d, i) => {
          if (!isPlainObject(d) || d.heldText === undefined || d.heldText === UNKNOWN) return;
          const property = `documents[${i}].heldText`;
          if (d.heldText !== true) {
            failures.push({
              property,
              reason: `${property}: must be true (a text document the service holds)`,
            });
          } else if (d.text !== undefined || d.url !== undefined) {
            failures.push({
              property,
              reason: `${property}: a document is declared by its text, its url, or by name alone with heldText: one of the three`,
            });
          } else if (news.adoptId === undefined && olds.name === undefined) {
            // A knowledge base the stack holds (`pulumi import`, or one created earlier) may hold it.
            failures.push({
              property,
              reason:
                `${property}: only a knowledge base that exists (adopted with adoptId, or imported) holds a ` +
                "text already; give the document's text instead",
            });
          }
        });
      }
      if (news.adoptId !== undefined && news.adoptId !== UNKNOWN && typeof news.adoptId !== "string") {
        failures.push({ property: "adoptId", reason: "adoptId: must be a string (a knowledge base id)" });
      }
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
      state(olds);
      previewInputs(news);
      const changed = changedFields(
        KB_FIELDS,
        { ...olds, documents: olds.documents ?? [] },
        {
          ...news,
          documents: news.documents ?? [],
        },
      );
      return { changes: changed.length > 0, diffs: changed };
    },

    async create(props) {
      const c = await ctx.client();
      const { adoptId, createMarker: marker } = inputs(props);
      if (adoptId) {
        // Take over an existing knowledge base: write only when it differs from the declaration.
        const current = await unlessGone(c.knowledgeBases.get(adoptId));
        if (!current) throw new Error(`adoptId: there is no knowledge base ${adoptId} in this workspace`);
        const declared = declaredConfig(props);
        const same = deepEqual(observe(KB_FIELDS, serviceConfig(current, declared), declared), declared);
        if (same) return { id: current.id, outs: outputs(props, current) };
        // Documents this create did not write are the service's business: only a write is waited for.
        const ready = await waitReady(
          c,
          await c.knowledgeBases.replace(current.id, body(props, current)),
          props,
          ctx.signal,
        );
        return { id: ready.id, outs: outputs(props, ready) };
      }
      // The resource's own marker: a create Pulumi runs again after an interrupted `up` adopts the
      // knowledge base the killed attempt made. Without a declared description the marker stays in
      // it, so that holds whenever the kill came; with one, until the description is put back.
      const { description, ...rest } = body(props);
      const createBody = declaredConfig(props).description === undefined ? rest : { ...rest, description };
      let created = await c.knowledgeBases.create(createBody, {
        keepMarker: true,
        ...(marker !== undefined ? { marker, adoptExisting: true } : {}),
      });
      // One an earlier attempt made holds what that attempt declared: bring it to this declaration.
      const declared = declaredConfig(props);
      if (!deepEqual(observe(KB_FIELDS, serviceConfig(created, declared), declared), declared)) {
        created = await c.knowledgeBases.replace(created.id, body(props, created));
      }
      const ready = await waitReady(c, created, props, ctx.signal);
      return { id: ready.id, outs: outputs(props, ready) };
    },

    async read(id, props) {
      const c = await ctx.client();
      stored(props);
      const kb = await unlessGone(c.knowledgeBases.get(id));
      if (!kb) return { id: undefined, props: {} };
      const outs = outputs(props, kb);
      return { id, props: outs, inputs: refreshedInputs(KB_FIELDS, props, outs, OWN_INPUTS) };
    },

    async update(id, olds, news) {
      const c = await ctx.client();
      const before = state(olds);
      const current = await c.knowledgeBases.get(id);
      // The service keeps no revision of a knowledge base: compare what the stack last saw before writing.
      const seen = declaredConfig(olds);
      assertUnchanged(
        KB_FIELDS,
        `Knowledge base "${before.name}" (${id})`,
        olds,
        serviceConfig(current, seen),
      );
      const written = await c.knowledgeBases.replace(id, body(news, current));
      const ready = await waitReady(c, written, news, ctx.signal);
      return { outs: outputs(news, ready) };
    },

    async delete(id, props) {
      const c = await ctx.client();
      const recorded = stored(props);
      try {
        await c.knowledgeBases.delete(id);
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) return;
        if (err instanceof ApiError && err.code === "knowledge_base_in_use") {
          throw new Error(
            `Knowledge base "${recorded.name}" (${id}) cannot be deleted while agents use it: ${err.detailMessage}. ` +
              "Remove its id from those agents' knowledgeBaseIds first (and put a version without it live); " +
              "when the agent references `kb.id` in the same program, one `pulumi up` does both in order. " +
              `(request ${err.requestId ?? "unknown"})`,
            { cause: err },
          );
        }
        throw err;
      }
    },
  });
