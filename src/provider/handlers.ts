/**
 * Entry point of the provider process: the serialized provider (`shim.ts`) requires this module and
 * calls `configure` once, then `handler(kind)` for every operation. Each resource's handler is made
 * once per process, bound to the process's provider context, when first used.
 */
import type * as pulumi from "@pulumi/pulumi";
import { configure, providerContext } from "./context";
import { exitWithEngine } from "./lifetime";
import { RESOURCES, type ResourceKind } from "./registry";
import type { ResourceHandler } from "./resource";

export { configure };

exitWithEngine();

const loaded = new Map<ResourceKind, Promise<ResourceHandler>>();

function load(kind: ResourceKind): Promise<ResourceHandler> {
  let h = loaded.get(kind);
  if (!h) {
    h = RESOURCES[kind]().then((factory) => factory(providerContext));
    loaded.set(kind, h);
  }
  return h;
}

/**
 * Failures as the engine prints them best: every reason already starts with the field's path in
 * the program's spelling, so the property is left empty. (With a property the engine appends the
 * input's value: `{<nil>}` for a nested path, the whole text for a 65,536-character prompt.)
 */
function forTheEngine(result: pulumi.dynamic.CheckResult): pulumi.dynamic.CheckResult {
  if (!result.failures?.length) return result;
  return { ...result, failures: result.failures.map((f) => ({ property: "", reason: f.reason })) };
}

/**
 * The handler of `kind` in this process. Synchronous, with methods that wait for the resource's
 * module: provider objects serialized into existing states call it this way.
 */
export function handler(kind: ResourceKind): ResourceHandler {
  return {
    check: (olds, news) =>
      load(kind)
        .then((h) => h.check(olds, news))
        .then(forTheEngine),
    diff: (id, olds, news) => load(kind).then((h) => h.diff(id, olds, news)),
    create: (inputs) => load(kind).then((h) => h.create(inputs)),
    read: (id, props) => load(kind).then((h) => h.read(id, props)),
    update: (id, olds, news) => load(kind).then((h) => h.update(id, olds, news)),
    delete: (id, props) => load(kind).then((h) => h.delete(id, props)),
  };
}
