/**
 * The provider object Pulumi serializes into each dynamic resource's state (`__provider`).
 *
 * It is deliberately tiny: each method loads this package's handlers with `require` at call time
 * and delegates. The serialized text therefore holds no library code (undici, zod and the client
 * are loaded by the provider process from node_modules) and no credentials (they are read at call
 * time, see `context.ts`). The handlers are located by a path relative to the project folder, where
 * the engine starts the dynamic provider, so the text is the same on every machine that checks out
 * the project in the same layout.
 */
import * as path from "node:path";
import type * as pulumi from "@pulumi/pulumi";

/** The kinds of resource this package implements. */
export type ResourceKind = "agent" | "agentVersion" | "widget" | "knowledgeBase" | "analysisGroup";

const providers = new Map<ResourceKind, pulumi.dynamic.ResourceProvider>();

/**
 * The serializable dynamic provider for `kind`: one object per kind, because Pulumi caches the
 * serialized text by object identity (serializing takes about 20 ms; once per kind, not per resource).
 */
export function dynamicProvider(kind: ResourceKind): pulumi.dynamic.ResourceProvider {
  let provider = providers.get(kind);
  if (!provider) {
    provider = makeProvider(kind);
    providers.set(kind, provider);
  }
  return provider;
}

function makeProvider(kind: ResourceKind): pulumi.dynamic.ResourceProvider {
  const handlersPath = path.relative(process.cwd(), require.resolve("./handlers"));
  const load = () => require(require("node:path").resolve(handlersPath));
  return {
    configure: (req) => load().configure(req),
    check: (olds, news) => load().handler(kind).check(olds, news),
    diff: (id, olds, news) => load().handler(kind).diff(id, olds, news),
    create: (inputs) => load().handler(kind).create(inputs),
    read: (id, props) => load().handler(kind).read(id, props),
    update: (id, olds, news) => load().handler(kind).update(id, olds, news),
    delete: (id, props) => load().handler(kind).delete(id, props),
  };
}
