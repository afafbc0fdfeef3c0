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

/** A path inside a property map: the property, then keys or list positions. */
export type Path = readonly (string | number)[];

/**
 * `v` with secrets unwrapped and output values reduced to their value (or the unknown marker); the
 * path (below `at`) of each secret found is added to `found`.
 */
function plain(v: unknown, found: Path[], at: Path = []): unknown {
  if (Array.isArray(v)) return v.map((x, i) => plain(x, found, [...at, i]));
  if (!isObject(v)) return v;
  if (v[SIG] === SECRET_SIG) {
    found.push(at);
    return plain(v.value, [], at);
  }
  if (v[SIG] === OUTPUT_SIG) {
    if (v.secret === true) {
      found.push(at);
      return "value" in v ? plain(v.value, [], at) : UNKNOWN;
    }
    return "value" in v ? plain(v.value, found, at) : UNKNOWN;
  }
  if (v[SIG] === RESOURCE_SIG) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x, found, [...at, k])]));
}

/**
 * The handlers' form of `props`; the top-level keys that held a secret anywhere inside; and where
 * each secret was (`paths`, each starting with its key), to mark them again on the inputs handed back.
 */
export function unwrap(props: Props | undefined): { values: Props; secrets: Set<string>; paths: Path[] } {
  const values: Props = {};
  const secrets = new Set<string>();
  const paths: Path[] = [];
  for (const [k, v] of Object.entries(props ?? {})) {
    const found: Path[] = [];
    values[k] = plain(v, found);
    if (found.length > 0) secrets.add(k);
    paths.push(...found.map((p) => [k, ...p]));
  }
  return { values, secrets, paths };
}

/** `v` without undefined properties at any depth (a protobuf Struct has no undefined). */
function defined(v: unknown): unknown {
  if (Array.isArray(v)) return v.map((x) => (x === undefined ? null : defined(x)));
  if (!isObject(v)) return v;
  return Object.fromEntries(
    Object.entries(v).flatMap(([k, x]) => (x === undefined ? [] : [[k, defined(x)]])),
  );
}

const secret = (value: unknown): unknown =>
  value === null || (isObject(value) && value[SIG] === SECRET_SIG) ? value : { [SIG]: SECRET_SIG, value };

/** `v` with the value at `path` marked secret; undefined when `path` leads nowhere in `v`. */
function secretAt(v: unknown, path: Path): unknown {
  const [head, ...rest] = path;
  if (head === undefined) return secret(v);
  if (isObject(v) && v[SIG] === SECRET_SIG) return v;
  if (typeof head === "number" && Array.isArray(v) && head < v.length) {
    const inner = secretAt(v[head], rest);
    return inner === undefined ? undefined : v.map((x, i) => (i === head ? inner : x));
  }
  if (typeof head === "string" && isObject(v) && v[head] !== undefined) {
    const inner = secretAt(v[head], rest);
    return inner === undefined ? undefined : { ...v, [head]: inner };
  }
  return undefined;
}

/**
 * `props` for the wire (undefined values dropped, at any depth): the keys in `secrets` marked secret
 * whole, and the value at each of `paths` (key first) marked secret where it is; a path that leads
 * nowhere inside its key (the value changed shape) marks the whole key.
 */
export function wrap(props: Props, secrets: ReadonlySet<string>, paths: readonly Path[] = []): Props {
  const out: Props = {};
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined) continue;
    const value = defined(v);
    out[k] = secrets.has(k) ? secret(value) : value;
  }
  for (const [k, ...rest] of paths) {
    if (typeof k !== "string" || out[k] === undefined || out[k] === null) continue;
    out[k] = secretAt(out[k], rest) ?? secret(out[k]);
  }
  return out;
}

/** Whether `props` holds a value (not null) at `path` (key first). */
export function holds(props: Props, path: Path): boolean {
  let v: unknown = props;
  for (const step of path) {
    if (typeof step === "number" ? !Array.isArray(v) : !isObject(v)) return false;
    v = (v as Record<string | number, unknown>)[step];
  }
  return v !== undefined && v !== null;
}
