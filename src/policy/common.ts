/**
 * What the policies share: the resource types they read, a policy's parameters with their
 * defaults filled in, and how a violation names the resource it is about.
 */
import type {
  ResourceValidation,
  ResourceValidationArgs,
  ResourceValidationPolicy,
  StackValidationPolicy,
} from "@pulumi/policy";
import { RESOURCE_TYPES, type ResourceType, resourceTypeOf, TYPE_PREFIX } from "../resources/typeNames";
import { DEFAULT_PRODUCTION_STACKS, isProduction, productionStacksSchema, stackOfUrn } from "./stacks";
import { inputs, type Plain } from "./values";

/** The Pulumi type of one of this package's resources, by its name (`Agent` → `…voice-agent:Agent`). */
export const TYPES = Object.fromEntries(RESOURCE_TYPES.map((t) => [t, `${TYPE_PREFIX}${t}`])) as {
  readonly [T in ResourceTypeName]: `${typeof TYPE_PREFIX}${T}`;
};

export type ResourceTypeName = ResourceType;

/** `Agent` for the Agent's Pulumi type; `undefined` for a type not of this package. */
export const typeName = resourceTypeOf;

/** How a violation names a resource: `Agent "support"`. */
export function describe(type: ResourceTypeName, name: string): string {
  return `${type} "${name}"`;
}

/** The parameters of a policy, the ones the configuration file leaves out at their defaults. */
export function parameters<T extends object>(args: { getConfig<C extends object>(): C }, defaults: T): T {
  const given = args.getConfig<Partial<T>>();
  const out = { ...defaults };
  for (const key of Object.keys(defaults) as (keyof T)[]) {
    if (given[key] !== undefined) out[key] = given[key] as T[keyof T];
  }
  return out;
}

/**
 * `policy`, refusing a parameter its `configSchema` does not declare (a misspelt `maxMinute`), naming
 * it and the parameters there are. The engine checks the configuration file's values against each
 * policy's schema, but `@pulumi/policy` hands the engine only the schema's `properties` and
 * `required` (never `additionalProperties`), so the engine accepts any other name and the policy
 * would silently run with its default. The configuration reaches the pack only when the engine
 * starts it, so the check runs as each validation starts (for every resource, whatever its type);
 * its error fails the preview.
 */
export function refusingUnknownParameters<P extends ResourceValidationPolicy | StackValidationPolicy>(
  policy: P,
): P {
  const declared = Object.keys(policy.configSchema?.properties ?? {});
  const check = (args: { getConfig<C extends object>(): C }) => {
    const unknown = Object.keys(args.getConfig<Record<string, unknown>>()).filter(
      (k) => !declared.includes(k),
    );
    if (unknown.length === 0) return;
    const names = unknown.map((k) => JSON.stringify(k)).join(", ");
    const takes = declared.length ? `its parameters: ${declared.join(", ")}` : "it takes none";
    throw new Error(
      `${policy.name}: unknown parameter${unknown.length === 1 ? "" : "s"} ${names} in the policy pack configuration (${takes})`,
    );
  };
  if ("validateStack" in policy) {
    const validate = policy.validateStack;
    return {
      ...policy,
      validateStack: (args, report) => {
        check(args);
        return validate(args, report);
      },
    };
  }
  const wrap =
    (validate: ResourceValidation): ResourceValidation =>
    (args, report) => {
      check(args);
      return validate(args, report);
    };
  const v = policy.validateResource;
  if (v === undefined) return policy;
  return { ...policy, validateResource: Array.isArray(v) ? v.map(wrap) : wrap(v) };
}

/** The `productionStacks` parameter, for a policy's `configSchema`. */
export const productionStacksParameter = { productionStacks: productionStacksSchema };

/**
 * Whether the stack a resource belongs to is production under the policy's `productionStacks`
 * parameter (the default list when the configuration file leaves it out).
 */
export function inProduction(args: { getConfig<C extends object>(): C }, urn: string): boolean {
  const { productionStacks } = parameters(args, { productionStacks: [...DEFAULT_PRODUCTION_STACKS] });
  return isProduction(stackOfUrn(urn), productionStacks);
}

/** A resource of this package under validation: its type name, its name and its plain inputs. */
export interface Subject {
  type: ResourceTypeName;
  name: string;
  urn: string;
  props: { [key: string]: Plain };
  /** `Agent "support"`. */
  label: string;
}

/** The resource under validation, when it is one of `types`. */
export function subject(
  args: ResourceValidationArgs,
  types: readonly ResourceTypeName[],
): Subject | undefined {
  const type = typeName(args.type);
  if (type === undefined || !types.includes(type)) return undefined;
  return {
    type,
    name: args.name,
    urn: args.urn,
    props: inputs(args.props),
    label: describe(type, args.name),
  };
}
