/** Knowledge bases and their documents. */
import { z } from "zod";
import { Id, type Issue, Timestamp } from "./common";

/** A document of a knowledge base: `processing`, then `ready` or `failed` (with `error`). */
export const KnowledgeBaseDocument = z.object({
  id: Id,
  name: z.string(),
  source: z.enum(["text", "url"]),
  url: z.string().nullable(),
  status: z.enum(["processing", "ready", "failed"]),
  error: z.string().nullable(),
  created_at: Timestamp,
});
export type KnowledgeBaseDocument = z.infer<typeof KnowledgeBaseDocument>;

/** A knowledge base record. */
export const KnowledgeBase = z.object({
  id: Id,
  name: z.string(),
  description: z.string().nullable(),
  kb_type: z.literal("non_deterministic"),
  documents: z.array(KnowledgeBaseDocument),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type KnowledgeBase = z.infer<typeof KnowledgeBase>;

const isHttpUrl = (s: string): boolean => {
  try {
    const u = new URL(s);
    return u.protocol === "http:" || u.protocol === "https:";
  } catch {
    return false;
  }
};

/** A document in a request: `{name, text}` or `{name, url}` (exactly one of the two). */
export const KnowledgeBaseDocumentInput = z
  .strictObject({
    name: z.string().min(1).max(255),
    text: z.string().min(1).optional(),
    url: z.string().refine(isHttpUrl, "Input should be a valid http or https URL").optional(),
  })
  .superRefine((d, ctx) => {
    if ((d.text === undefined) === (d.url === undefined)) {
      ctx.addIssue({ code: "custom", path: ["text"], message: "A document has exactly one of text or url" });
    }
  });
export type KnowledgeBaseDocumentInput = z.infer<typeof KnowledgeBaseDocumentInput>;

/** `POST /v1/knowledge-bases` and `PUT /v1/knowledge-bases/{id}` body. */
export const KnowledgeBaseInput = z.strictObject({
  name: z.string().min(1).max(255),
  description: z.string().nullable().optional(),
  documents: z.array(KnowledgeBaseDocumentInput).optional(),
});
export type KnowledgeBaseInput = z.infer<typeof KnowledgeBaseInput>;

/** Knowledge-base rules beyond the schema: document names unique (they are the match key on PUT). */
export function checkKnowledgeBaseRules(input: KnowledgeBaseInput): Issue[] {
  const issues: Issue[] = [];
  const seen = new Set<string>();
  (input.documents ?? []).forEach((d, i) => {
    if (seen.has(d.name)) {
      const field = `documents[${i}].name`;
      issues.push({
        field,
        code: "document_invalid",
        message: `${field}: a document named '${d.name}' is listed twice`,
      });
    }
    seen.add(d.name);
  });
  return issues;
}

const UNREACHABLE_SUFFIXES = [".invalid", ".test", ".localhost", ".local", ".internal"];

function isPrivateAddress(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "");
  if (h === "::1" || h === "0.0.0.0" || h === "localhost") return true;
  const m = /^(\d+)\.(\d+)\.\d+\.\d+$/.exec(h);
  if (!m) return false;
  const a = Number(m[1]);
  const b = Number(m[2]);
  return (
    a === 127 ||
    a === 10 ||
    a === 0 ||
    (a === 192 && b === 168) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 169 && b === 254)
  );
}

/**
 * The emulator's rule for a url document that fails to process (the service cannot reach it): a
 * host in a reserved never-resolving or local-only domain (`invalid`, `*.invalid`, `*.test`,
 * `*.localhost`, `*.local`, `*.internal`), `localhost`, or a loopback, private or link-local IP
 * address. Returns the error text, or null when the url is reachable.
 */
export function unreachableUrlError(url: string): string | null {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return `could not fetch ${url}: not a URL`;
  }
  if (host === "invalid" || UNREACHABLE_SUFFIXES.some((s) => host.endsWith(s)) || isPrivateAddress(host)) {
    return `could not fetch ${url}: host ${host} is unreachable`;
  }
  return null;
}
