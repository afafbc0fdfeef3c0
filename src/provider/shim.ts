/**
 * The provider of each dynamic resource's state (`__provider`): a text that `require`s this
 * package's provider object for the resource's kind, whose methods delegate to the handlers. It
 * holds no library code (undici, zod and the client are loaded by the provider process from
 * node_modules) and no credentials (they are read at call time, see `context.ts`).
 */
import * as path from "node:path";
import type * as pulumi from "@pulumi/pulumi";

import type { ResourceKind } from "./registry";

export type { ResourceKind };

/**
 * The text a resource of `kind` stores as its `__provider`: what Pulumi's closure serializer writes
 * for a module's exports, written here without running the serializer. The serializer costs every
 * program run about half a second (it loads TypeScript's parser and every Node.js built-in module,
 * `node:sqlite` included, whose load prints an ExperimentalWarning) for a text we know in advance:
 *
 * - Installed (this file is in `node_modules`): a `require("pulumi-voice-agent/provider/<kind>")`,
 *   byte for byte the text the serializer writes, so states written by earlier versions do not change.
 * - Elsewhere (this repository's programs, a linked checkout): a `require` of `./kinds/<kind>` by a
 *   path relative to the project folder (the program's and the provider process's working folder),
 *   so the text is the same on every machine that checks out the project in the same layout.
 */
export function providerText(kind: ResourceKind): string {
  const file = require.resolve(`./kinds/${kind}`);
  const target = file.split(path.sep).includes("node_modules")
    ? JSON.stringify(`pulumi-voice-agent/provider/${kind}`)
    : `require("node:path").resolve(${JSON.stringify(path.relative(process.cwd(), file))})`;
  return [
    "exports.handler = __f0;",
    `const provider = require(${target});`,
    "",
    "function __f0() {",
    "  return (function() {",
    "    with({ this: undefined, arguments: undefined }) {",
    "",
    "return () => provider;",
    "",
    "    }",
    "  }).apply(undefined, undefined).apply(this, arguments);",
    "}",
    "",
  ].join("\n");
}

/**
 * The provider object of `kind` (the exports of `./kinds/<kind>`, which the dynamic-provider process
 * loads through {@link providerText}): methods that delegate to the resource's handler.
 */
export function makeProvider(kind: ResourceKind): pulumi.dynamic.ResourceProvider {
  // The handlers load at the first call, not with this object: loading them starts the provider
  // process's machinery (the engine watch of lifetime.ts), which a process that only requires the
  // object (a program, Pulumi's serializer comparing texts) must not get.
  const load = (): typeof import("./handlers") => require("./handlers");
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
