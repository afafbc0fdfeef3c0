/** Error bodies of the service (see "Errors" in the reference). */
import { z } from "zod";

/** One entry of a 422 `errors[]`: `field` is a path from the request root, `type` a stable code. */
export const ValidationErrorItem = z.object({
  field: z.string(),
  message: z.string(),
  type: z.string(),
});
export type ValidationErrorItem = z.infer<typeof ValidationErrorItem>;

/** The object form of `detail`. */
export const ErrorDetail = z.object({
  code: z.string(),
  message: z.string(),
  param: z.string().optional(),
  errors: z.array(ValidationErrorItem).optional(),
  candidates: z.array(z.number()).optional(),
  current_revision: z.number().optional(),
});
export type ErrorDetail = z.infer<typeof ErrorDetail>;

/**
 * Every non-429 error body: `detail` is an object (reason in `detail.code`) or a plain string
 * (unknown path, wrong method, 401), and `code` is the top-level class (or the reason itself on a
 * malformed-parameter 400).
 */
export const ErrorBody = z.object({
  detail: z.union([ErrorDetail, z.string()]),
  code: z.string().optional(),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

/** The flat 429 body. */
export const RateLimitedBody = z.object({ code: z.literal("rate_limited") });
export type RateLimitedBody = z.infer<typeof RateLimitedBody>;

/** Top-level class code of an HTTP status. */
export function classCodeForStatus(status: number): string {
  switch (status) {
    case 400:
      return "BAD_REQUEST";
    case 401:
      return "UNAUTHORIZED";
    case 403:
      return "FORBIDDEN";
    case 404:
      return "NOT_FOUND";
    case 405:
      return "METHOD_NOT_ALLOWED";
    case 409:
      return "CONFLICT";
    case 422:
      return "VALIDATION_ERROR";
    case 429:
      return "rate_limited";
    default:
      return status >= 500 ? "SERVICE_UNAVAILABLE" : "BAD_REQUEST";
  }
}

/**
 * The reason of an error body, as the reference says to read it: `detail.code` when `detail` is
 * an object, otherwise the top-level `code`.
 */
export function reasonOf(body: unknown): string | undefined {
  const parsed = ErrorBody.safeParse(body);
  if (parsed.success) {
    const d = parsed.data.detail;
    return typeof d === "string" ? parsed.data.code : d.code;
  }
  const flat = RateLimitedBody.safeParse(body);
  return flat.success ? flat.data.code : undefined;
}
