/**
 * How the inputs a program gives reach the engine and the provider, where that is more than "as
 * given": which values Pulumi keeps secret whatever the program gave, the default, and the name the
 * engine knows the input by. The one definition, read by the TypeScript classes, the provider
 * plugin (`src/plugin/`), the schema generator (`scripts/plugin/schema.ts`) and the pull-request
 * report (`src/gitops/report.ts`). Loads nothing at run time.
 */
import { AGENT_CONFIG_FIELDS } from "./agent/fields";

/** What the engine and the provider make of one input. */
export interface InputSpec {
  /** The input the engine and the provider know it by, when not its own name. */
  readonly input?: string;
  /** What the provider receives when the program gives nothing. */
  readonly default?: string | number | boolean;
  /**
   * Secret whatever the program gave: `true` the whole value, else the paths inside it (`apiKey` of
   * `promote`) kept secret in the state, the preview and the report.
   */
  readonly secret?: true | readonly string[];
}

/** The provider's settings (stack config `voice-agent:*`, or an explicit provider's inputs). */
export const PROVIDER_INPUTS = {
  baseUrl: {},
  /** Secret however it is set (`pulumi config set` without `--secret` included), as credentials are. */
  apiKey: { secret: true },
} as const satisfies Readonly<Record<string, InputSpec>>;

/**
 * The AgentVersion's inputs that are more than "as given" (each a key of `AgentVersionArgs`: checked
 * where the class is, `agentVersion/index.ts`, so that this file imports no resource).
 */
export const AGENT_VERSION_INPUTS = {
  /** Expanded into `agentId` and what the version copies from its Agent. */
  agent: { input: "agentId" },
  live: { default: true },
  version: { input: "pinnedVersion" },
  /** Staging's key. */
  promote: { secret: ["apiKey"] },
} as const satisfies Readonly<Record<string, InputSpec>>;

/** Per resource type name (`AgentVersion`), its inputs that are more than "as given". */
export const RESOURCE_INPUTS: Readonly<Record<string, Readonly<Record<string, InputSpec>>>> = {
  AgentVersion: AGENT_VERSION_INPUTS,
};

/** Outputs Pulumi keeps secret whatever the inputs, per resource type name. */
export const SECRET_OUTPUTS: Readonly<Record<string, readonly string[]>> = { Widget: ["publicKey"] };

/** A path inside a property map: the property, then keys or list positions. */
export type SecretPath = readonly (string | number)[];

/** The paths the resource `type` keeps secret in its inputs (each starting with the input's engine name). */
export function secretInputPaths(type: string): SecretPath[] {
  return Object.entries(RESOURCE_INPUTS[type] ?? {}).flatMap(([arg, spec]) => {
    const at = spec.input ?? arg;
    if (spec.secret === true) return [[at]];
    return (spec.secret ?? []).map((p) => [at, ...p.split(".")]);
  });
}

/** The engine's name of each renamed input of `type`, by the program's argument. */
export function renamedInputs(type: string): Readonly<Record<string, string>> {
  return Object.fromEntries(
    Object.entries(RESOURCE_INPUTS[type] ?? {}).flatMap(([arg, spec]) =>
      spec.input !== undefined ? [[arg, spec.input]] : [],
    ),
  );
}

/**
 * The inputs the provider receives for `args` (the program's arguments of `type`): renamed, each
 * default where the program gave nothing, and each secret value passed through `secret` (the class:
 * `pulumi.secret`; the plugin marks them on the wire instead). Arguments without a spec pass as given.
 */
export function engineInputs(
  type: string,
  args: Readonly<Record<string, unknown>>,
  secret: (value: unknown) => unknown = (v) => v,
): Record<string, unknown> {
  const specs = RESOURCE_INPUTS[type] ?? {};
  const out: Record<string, unknown> = {};
  for (const [arg, value] of Object.entries(args)) if (!(arg in specs)) out[arg] = value;
  for (const [arg, spec] of Object.entries(specs)) {
    const value = args[arg] ?? spec.default;
    if (value === undefined) continue;
    out[spec.input ?? arg] = markedSecret(value, spec.secret, secret);
  }
  return out;
}

/** `value` with `secret` applied to it whole (`true`) or at each of `paths` that holds a value. */
function markedSecret(
  value: unknown,
  paths: InputSpec["secret"],
  secret: (value: unknown) => unknown,
): unknown {
  if (paths === undefined) return value;
  if (paths === true) return secret(value);
  let out = value;
  for (const p of paths) out = at(out, p.split("."), secret);
  return out;
}

function at(value: unknown, path: readonly string[], fn: (v: unknown) => unknown): unknown {
  const [head, ...rest] = path;
  if (head === undefined) return fn(value);
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const record = value as Record<string, unknown>;
  if (record[head] === undefined) return value;
  return { ...record, [head]: at(record[head], rest, fn) };
}

/**
 * The inputs an AgentVersion copies from its Agent's values (not hashes of them) as paths, by the
 * Agent's property they copy: the declared configuration, field by field, for a promotion
 * (`promoteConfig`), and its analysis groups for a watch (`attachedGroupIds`). A copy of a secret
 * stays secret.
 */
export function copiedFromAgent(agentSecrets: Iterable<string>): SecretPath[] {
  const fields = new Set<string>(AGENT_CONFIG_FIELDS);
  return [...agentSecrets].flatMap((k): SecretPath[] => [
    ...(fields.has(k) ? [["promoteConfig", k]] : []),
    ...(k === "analysisGroupIds" ? [["attachedGroupIds"]] : []),
  ]);
}

/** `inputs` (the program's arguments of `type`, as a report shows them) with every secret value replaced by `mask`. */
export function maskedSecrets(
  type: string,
  inputs: Readonly<Record<string, unknown>>,
  mask: unknown,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...inputs };
  for (const [arg, spec] of Object.entries(RESOURCE_INPUTS[type] ?? {})) {
    if (spec.secret === undefined || out[arg] === undefined) continue;
    out[arg] = markedSecret(out[arg], spec.secret, (v) => (v === null || v === undefined ? v : mask));
  }
  return out;
}

/**
 * The inputs of `type` (the provider's names) that hold a value Pulumi keeps secret whatever was
 * given (`promote` holding staging's key): their outputs are secret whole.
 */
export function heldSecretInputs(type: string, inputs: Readonly<Record<string, unknown>>): string[] {
  const held = (path: SecretPath): boolean => {
    let v: unknown = inputs;
    for (const step of path) {
      if (typeof v !== "object" || v === null) return false;
      v = (v as Record<string | number, unknown>)[step];
    }
    return v !== undefined && v !== null;
  };
  return [
    ...new Set(
      secretInputPaths(type)
        .filter(held)
        .map(([head]) => String(head)),
    ),
  ];
}

/** What the provider receives for the argument `arg` of `type` when the program gives nothing. */
export function inputDefault(type: string, arg: string): string | number | boolean | undefined {
  return RESOURCE_INPUTS[type]?.[arg]?.default;
}
