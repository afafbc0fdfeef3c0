/** Path matching with method fallback (405) and path-parameter checks by route family. */
import { type Issue, isUuid } from "../spec";
import { apiError, invalidRequest, methodNotAllowed, notFoundPath } from "./http";

/** A compiled route. */
export interface Compiled<T> {
  method: string;
  segments: string[];
  value: T;
}

/** Result of a match. */
export interface Match<T> {
  value: T;
  params: Record<string, string>;
}

/** A small router: exact segments and `:name` parameters. */
export class Router<T> {
  private readonly routes: Compiled<T>[] = [];

  add(method: string, path: string, value: T): void {
    this.routes.push({ method, segments: path.split("/").filter(Boolean), value });
  }

  /** The route for `method path`, or the plain-string 404 / 405. */
  match(method: string, path: string): Match<T> {
    const parts = path.split("/").filter(Boolean);
    const allowed: string[] = [];
    for (const r of this.routes) {
      if (r.segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < parts.length; i++) {
        const seg = r.segments[i] as string;
        const part = parts[i] as string;
        if (seg.startsWith(":")) {
          try {
            params[seg.slice(1)] = decodeURIComponent(part);
          } catch {
            params[seg.slice(1)] = part;
          }
        } else if (seg !== part) {
          ok = false;
          break;
        }
      }
      if (!ok) continue;
      if (r.method === method || (method === "HEAD" && r.method === "GET")) return { value: r.value, params };
      allowed.push(r.method);
    }
    if (allowed.length) throw methodNotAllowed(allowed);
    throw notFoundPath();
  }
}

/**
 * Checks path parameters the way the service does by route family: a malformed agent id, version
 * number or analysis group id is a 422 naming `path.<param>`; a malformed knowledge-base id is a 400
 * `invalid_request`; a malformed call id is a 404 `call_not_found`. Returns 422 issues to merge
 * with the query's; throws the others.
 */
export function pathParamIssues(params: Record<string, string>): Issue[] {
  const issues: Issue[] = [];
  for (const [name, value] of Object.entries(params)) {
    const field = `path.${name}`;
    switch (name) {
      case "agent_id":
      case "group_id":
        if (!isUuid(value))
          issues.push({
            field,
            code: "uuid_parsing",
            message: `${field}: Input should be a valid UUID, got '${value}'`,
          });
        break;
      case "version":
        if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
          issues.push({
            field,
            code: "int_parsing",
            message: `${field}: Input should be a valid integer, unable to parse '${value}' as an integer`,
          });
        }
        break;
      case "kb_id":
        if (!isUuid(value)) throw invalidRequest(`kb_id: '${value}' is not a knowledge base id`, "kb_id");
        break;
      case "call_id":
        if (!isUuid(value))
          throw apiError(404, "call_not_found", `call_id: no call '${value}'`, { param: "call_id" });
        break;
    }
  }
  return issues;
}
