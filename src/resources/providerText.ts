/**
 * The `__provider` text of each resource's state: a `require` of the resource folder's `kind.ts`
 * (its provider object, see `registry.ts`), written here without Pulumi's closure serializer.
 */
import * as path from "node:path";
import type { ResourceKind } from "./registry";

/**
 * The text a resource of `kind` stores as its `__provider`, which Pulumi's dynamic-provider process
 * loads (`require-from-string`, then `handler()`): one `require` of the kind's provider object,
 * written here instead of running Pulumi's closure serializer. The serializer costs every program run
 * about half a second (it loads TypeScript's parser and every Node.js built-in module, `node:sqlite`
 * included, whose load prints an ExperimentalWarning) for a text we know in advance. The state holds
 * the text twice per resource and the engine rewrites the whole state after every step, so it is as
 * short as it can be (about 70 bytes, where the serializer's form, which states written by earlier
 * releases hold, is about 290: both load the same object, and no diff reads the text, so such a
 * state previews no change):
 *
 * - Installed (this file is in `node_modules`): `require("pulumi-voice-agent/provider/<kind>")`
 *   (package.json maps `./provider/*` to the folders' `kind.js`).
 * - Elsewhere (this repository's programs, a linked checkout): a `require` of `./<kind>/kind` by a
 *   path relative to the project folder (the program's and the provider process's working folder),
 *   so the text is the same on every machine that checks out the project in the same layout.
 */
export function providerText(kind: ResourceKind): string {
  const known = texts.get(kind);
  if (known !== undefined) return known;
  const file = require.resolve(`./${kind}/kind`);
  const target = file.split(path.sep).includes("node_modules")
    ? JSON.stringify(`pulumi-voice-agent/provider/${kind}`)
    : `require("node:path").resolve(${JSON.stringify(path.relative(process.cwd(), file))})`;
  const text = `exports.handler = () => require(${target});\n`;
  texts.set(kind, text);
  return text;
}

/** Each kind's text, made once per process (a program registers hundreds of resources). */
const texts = new Map<ResourceKind, string>();
