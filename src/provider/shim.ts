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

import type { ResourceKind } from "./registry";

export type { ResourceKind };

/**
 * The serializable dynamic provider for `kind`: the exports of the module `./kinds/<kind>`, one
 * object per kind. Pulumi serializes a module's exports that it finds in `node_modules` as a
 * `require("pulumi-voice-agent/provider/<kind>")` of about 200 bytes (it caches the text by object
 * identity, so it does so once per kind, not per resource). Outside `node_modules` (this
 * repository's own programs, a linked checkout) it serializes the object by value, about 2.4 KB.
 * Each resource's state holds the text twice, and the engine rewrites the whole state after every
 * step, so the size shows in the time of every `up` (docs/performance.md).
 */
export function dynamicProvider(kind: ResourceKind): pulumi.dynamic.ResourceProvider {
  loadSqliteQuietly();
  return require(`./kinds/${kind}`);
}

/** The provider object for `kind`: methods that load the handlers at call time and delegate. */
export function makeProvider(kind: ResourceKind): pulumi.dynamic.ResourceProvider {
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

let sqliteLoaded = false;

/**
 * Pulumi's closure serializer loads every Node.js built-in module when it serializes a dynamic
 * provider (`computeBuiltInModules`), `node:sqlite` included, whose first load prints
 * "ExperimentalWarning: SQLite is an experimental feature" into every preview of the user's
 * program. Loaded once here first, before any serialization, with exactly that one warning left
 * out (every other warning still goes through), it never prints.
 */
function loadSqliteQuietly(): void {
  if (sqliteLoaded) return;
  sqliteLoaded = true;
  const emit = process.emitWarning;
  process.emitWarning = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]): void {
    const message = typeof warning === "string" ? warning : warning.message;
    const first = rest[0];
    const type = typeof first === "string" ? first : (first as { type?: string } | undefined)?.type;
    const name = typeof warning === "string" ? type : warning.name;
    if ((type === "ExperimentalWarning" || name === "ExperimentalWarning") && /SQLite/.test(message)) return;
    (emit as (...args: unknown[]) => void).call(this, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    require("node:sqlite");
  } catch {
    // An older Node.js without the module: nothing to keep quiet.
  } finally {
    process.emitWarning = emit;
  }
}
