/**
 * Loads `@pulumi/policy` without the whole `@pulumi/pulumi` SDK. `@pulumi/policy` requires the SDK's
 * index for one namespace, `asset` (to turn asset and archive properties into objects), and the
 * index loads everything, the closure serializer with TypeScript's parser among it: 0.5 to 0.7 s of
 * every `preview` and `up` run with the pack (docs/performance.md, "Policy pack"), spent before the
 * engine starts the program. Here that one require, from exactly `@pulumi/policy/deserialize.js`,
 * gets `asset` at once and any other name from the real index, loaded at its first use (never, in
 * this pack). Every other require is left alone, and the hook is removed once `@pulumi/policy` is
 * loaded. Import this module before anything that imports `@pulumi/policy`.
 */
import Module = require("node:module");

import * as path from "node:path";

type Load = (request: string, parent: NodeJS.Module | undefined, isMain: boolean) => unknown;
const loader = Module as unknown as { _load: Load };
const load = loader._load;
const deserialize = path.join(path.dirname(require.resolve("@pulumi/policy")), "deserialize.js");

loader._load = function (this: unknown, request, parent, isMain) {
  if (request !== "@pulumi/pulumi" || parent?.filename !== deserialize)
    return load.call(this, request, parent, isMain);
  const asset = load.call(this, "@pulumi/pulumi/asset", parent, false);
  let sdk: Record<PropertyKey, unknown> | undefined;
  return new Proxy(
    { asset },
    {
      get: (target, key) => {
        if (key === "asset") return target.asset;
        sdk ??= load.call(loader, "@pulumi/pulumi", parent, false) as Record<PropertyKey, unknown>;
        return sdk[key];
      },
    },
  );
};
try {
  require("@pulumi/policy");
} finally {
  loader._load = load;
}
