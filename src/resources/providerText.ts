/**
 * The `__provider` text of each resource's state: a `require` of the resource folder's `kind.ts`
 * (its provider object, see `registry.ts`), written here without Pulumi's closure serializer.
 */
import * as path from "node:path";
import type { ResourceKind } from "./registry";

/**
 * The text a resource of `kind` stores as its `__provider`: what Pulumi's closure serializer writes
 * for a module's exports, written here without running the serializer. The serializer costs every
 * program run about half a second (it loads TypeScript's parser and every Node.js built-in module,
 * `node:sqlite` included, whose load prints an ExperimentalWarning) for a text we know in advance:
 *
 * - Installed (this file is in `node_modules`): a `require("pulumi-voice-agent/provider/<kind>")`
 *   (package.json maps `./provider/*` to the folders' `kind.js`), byte for byte the text the
 *   serializer writes, so states written by earlier versions do not change.
 * - Elsewhere (this repository's programs, a linked checkout): a `require` of `./<kind>/kind` by a
 *   path relative to the project folder (the program's and the provider process's working folder),
 *   so the text is the same on every machine that checks out the project in the same layout.
 */
export function providerText(kind: ResourceKind): string {
  const file = require.resolve(`./${kind}/kind`);
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
