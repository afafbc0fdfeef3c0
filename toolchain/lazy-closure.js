// Preloaded (`node --require`) by our language host into the program and by the dynamic-provider
// plugin into the provider process. `@pulumi/pulumi/runtime/index.js` loads its closure serializer
// and code-path walker eagerly, for the three functions it re-exports (`serializeFunction`,
// `serializeFunctionAsync`, `computeCodePaths`): about 0.6 s on every start (TypeScript's parser,
// npm's arborist), though a provider process never calls them and a program only does when it
// serializes a function. This makes those two requires lazy: the re-exported functions load the
// real modules on their first call, with the same arguments and results.
"use strict";
const Module = require("node:module");
const path = require("node:path");

const LAZY = new Set(["./closure/serializeClosure", "./closure/codePaths"]);
const RUNTIME_INDEX = path.join("@pulumi", "pulumi", "runtime", "index.js");
const load = Module._load;

Module._load = function (request, parent, isMain) {
  if (!LAZY.has(request) || !parent?.filename?.endsWith(RUNTIME_INDEX)) {
    return load.apply(this, arguments);
  }
  let real;
  const actual = () => {
    real ??= load.call(Module, request, parent, false);
    return real;
  };
  return new Proxy(
    {},
    {
      get(_target, key) {
        if (real) return real[key];
        // What runtime/index.js copies is a function: a stand-in that loads the module when called.
        return function (...args) {
          return actual()[key].apply(this, args);
        };
      },
    },
  );
};
