/**
 * Property values as Pulumi's gRPC protocol carries them, and as the resources' handlers take them.
 *
 * On the wire a value may be a secret (`{ <sig>: <secret sig>, value }`), a resource reference
 * (`{ <sig>: <ref sig>, urn, id }`), an output value, or the unknown marker. The handlers take plain
 * JSON with the unknown marker in place (as the dynamic face hands them): secrets are unwrapped on
 * the way in, and the top-level properties that held one are remembered, so that what the handler
 * returns for them goes back marked secret.
 */
import { UNKNOWN } from "../provider/unknowns";

/** Pulumi's special-value signatures (sdk/go/common/resource/properties.go). */
export const SIG = "4dabf18193072939515e22adb298388d";
export const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";
export const RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e";
export const OUTPUT_SIG = "d0e6a833031e9bbcd3f4e8bde6ca49a4";

export type Props = Record<string, unknown>;

/** A resource reference as the engine sends it (the provider accepts resources). */
export interface ResourceRef {
  urn: string;
  id?: string;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A resource reference's URN and id, or undefined when `v` is not one. */
export function resourceRef(v: unknown): ResourceRef | undefined {
  if (!isObject(v) || v[SIG] !== RESOURCE_SIG || typeof v.urn !== "string") return undefined;
  return { urn: v.urn, ...(typeof v.id === "string" && v.id !== "" ? { id: v.id } : {}) };
}

/** `v` with secrets unwrapped and output values reduced to their value (or the unknown marker). */
function plain(v: unknown, found: { secret: boolean }): unknown {
  if (Array.isArray(v)) return v.map((x) => plain(x, found));
  if (!isObject(v)) return v;
  if (v[SIG] === SECRET_SIG) {
    found.secret = true;
    return plain(v.value, found);
  }
  if (v[SIG] === OUTPUT_SIG) {
    if (v.secret === true) found.secret = true;
    return "value" in v ? plain(v.value, found) : UNKNOWN;
  }
  if (v[SIG] === RESOURCE_SIG) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x, found)]));
}

/** The handlers' form of `props`, and the top-level keys that held a secret anywhere inside. */
export function unwrap(props: Props | undefined): { values: Props; secrets: Set<string> } {
  const values: Props = {};
  const secrets = new Set<string>();
  for (const [k, v] of Object.entries(props ?? {})) {
    const found = { secret: false };
    values[k] = plain(v, found);
    if (found.secret) secrets.add(k);
  }
  return { values, secrets };
}

/** `v` without undefined properties at any depth (a protobuf Struct has no undefined). */
function defined(v: unknown): unknown {
  if (Array.isArray(v)) return v.map((x) => (x === undefined ? null : defined(x)));
  if (!isObject(v)) return v;
  return Object.fromEntries(
    Object.entries(v).flatMap(([k, x]) => (x === undefined ? [] : [[k, defined(x)]])),
  );
}

/** `props` for the wire: the keys in `secrets` marked secret (undefined values dropped, at any depth). */
export function wrap(props: Props, secrets: ReadonlySet<string>): Props {
  const out: Props = {};
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined) continue;
    const value = defined(v);
    out[k] = secrets.has(k) && value !== null ? { [SIG]: SECRET_SIG, value } : value;
  }
  return out;
}
