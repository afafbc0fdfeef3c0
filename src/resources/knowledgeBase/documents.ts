/**
 * What the program side (`index.ts`) and the provider side (`provider.ts`) of a knowledge base share
 * about its documents; it loads nothing, so the provider side never loads the program side.
 */

/** Default of `readyTimeoutSeconds`. */
export const DEFAULT_KB_READY_TIMEOUT_SECONDS = 300;

/** One document as last read: its id and processing status. */
export interface KnowledgeBaseDocumentStatus {
  name: string;
  id: string;
  /** `text` or `url` (another value the service may add is kept as read). */
  source: "text" | "url" | (string & {});
  /** `processing`, `ready` or `failed` (another value the service may add is kept as read). */
  status: "processing" | "ready" | "failed" | (string & {});
  error: string | null;
}
