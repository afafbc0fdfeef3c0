/**
 * The provider object of each kind of resource: methods that delegate to the resource's handler in
 * this process. Each resource folder's `kind.ts` exports one (`src/resources/registry.ts`), and a
 * state's `__provider` text requires that module (`src/resources/providerText.ts`). The object holds
 * no library code (undici, zod and the client are loaded by the provider process from node_modules)
 * and no credentials (they are read at call time, see `context.ts`).
 */
import type * as pulumi from "@pulumi/pulumi";
import type { HandlerFactory } from "./resource";

/**
 * The provider object of `kind`, whose handler `load` returns (called at the first operation).
 *
 * @param kind the resource's kind, which names its handler in this process
 * @param load the resource's provider side, loaded on first use
 */
export function makeProvider(kind: string, load: () => HandlerFactory): pulumi.dynamic.ResourceProvider {
  // The handlers load at the first call, not with this object: loading them starts the provider
  // process's machinery (the engine watch of lifetime.ts), which a process that only requires the
  // object (a program, Pulumi's serializer comparing texts) must not get.
  const handlers = (): typeof import("./handlers") => require("./handlers");
  const h = () => handlers().handler(kind, load);
  return {
    configure: (req) => handlers().configure(req),
    check: (olds, news) => h().check(olds, news),
    diff: (id, olds, news) => h().diff(id, olds, news),
    create: (inputs) => h().create(inputs),
    read: (id, props) => h().read(id, props),
    update: (id, olds, news) => h().update(id, olds, news),
    delete: (id, props) => h().delete(id, props),
  };
}
