// Preloaded (`node --require`) by our language host into the program and a policy pack's process,
// and by the dynamic-provider plugin into the provider process. @pulumi/pulumi loads on every start modules that most runs never
// call, for functions and classes it binds at load time:
//
// - runtime/index.js: the closure serializer and the code-path walker (TypeScript's parser, npm's
//   arborist), about 0.55 s, for `serializeFunction`, `serializeFunctionAsync`, `computeCodePaths`:
//   a provider process never calls them, a program only when it serializes a function.
// - cmd/run/tracing.js (the program only): OpenTelemetry's SDK, exporter and gRPC instrumentation,
//   about 0.2 s, used only when tracing is on (`pulumi --tracing`).
//
// Each of those requires, from exactly that module, returns stand-ins instead: for every name the
// module takes, a function that loads the real module at its first call (or `new`) and forwards it,
// with the same arguments and results.
//
// And one step of the program runner and of the policy-pack runner: cmd/run/index.js (and
// cmd/run-policy-pack/index.js) turns V8's debugger on (an inspector session,
// `Debugger.enable`, in runtime/closure/v8Hooks.js) before every program, so that the closure
// serializer can later name the file of a function it cannot serialize. Turning it on hashes every
// script loaded so far and, from then on, every script compiled (about 0.1 s of each program run).
// Here the runner's wait for it is a no-op, and the session starts when the serializer first asks
// for it; as V8 reports every loaded script when the debugger is turned on, which v8Hooks.js would
// miss (it listens only once `Debugger.enable` has answered), its session keeps those reports and
// hands them to its listener: the serializer maps the same scripts to the same files. Nothing else
// is touched.
"use strict";
const Module = require("node:module");
const path = require("node:path");
const { EventEmitter } = require("node:events");

const SDK = path.join("node_modules", "@pulumi", "pulumi");
const LAZY = new Map([
  [path.join(SDK, "runtime", "index.js"), new Set(["./closure/serializeClosure", "./closure/codePaths"])],
  [
    path.join(SDK, "cmd", "run", "tracing.js"),
    new Set([
      "@opentelemetry/resources",
      "@opentelemetry/sdk-trace-base",
      "@opentelemetry/exporter-zipkin",
      "@opentelemetry/instrumentation-grpc",
      "@opentelemetry/sdk-trace-node",
      "@opentelemetry/instrumentation",
    ]),
  ],
]);
const load = Module._load;
const RUNNER = path.join(SDK, "cmd", "run", "index.js");
const POLICY_RUNNER = path.join(SDK, "cmd", "run-policy-pack", "index.js");
const HOOKS = path.join(SDK, "runtime", "closure", "v8Hooks.js");

/** node:inspector, with a Session that keeps the scripts V8 reports before anyone listens. */
function inspectorKeepingScripts() {
  const inspector = load.call(Module, "node:inspector", null, false);
  class Session extends inspector.Session {
    #early = [];
    constructor() {
      super();
      EventEmitter.prototype.addListener.call(this, "Debugger.scriptParsed", (event) => this.#early?.push(event));
    }
    addListener(event, listener) {
      super.addListener(event, listener);
      if (event === "Debugger.scriptParsed" && this.#early) {
        const early = this.#early;
        this.#early = undefined;
        for (const report of early) listener(report);
      }
      return this;
    }
  }
  return { ...inspector, Session };
}

function lazy(request, parent) {
  for (const [file, requests] of LAZY) {
    if (requests.has(request) && parent?.filename?.endsWith(file)) return true;
  }
  return false;
}

/** Requires answered with something else: [the requiring module, the request, the answer]. */
const REPLACED = [
  // The runner's wait for the debugger session: nothing to wait for (the session starts on first use).
  [RUNNER, "../../runtime/closure/v8Hooks", () => ({ isInitializedAsync: async () => {} })],
  [POLICY_RUNNER, "../../runtime/closure/v8Hooks", () => ({ isInitializedAsync: async () => {} })],
  // v8Hooks.js's inspector: a Session that hands over the scripts reported when it is turned on.
  [HOOKS, "inspector", inspectorKeepingScripts],
];

Module._load = function (request, parent, isMain) {
  for (const [file, replaced, answer] of REPLACED) {
    if (request === replaced && parent?.filename?.endsWith(file)) return answer();
  }
  if (!lazy(request, parent)) return load.apply(this, arguments);
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
        // What the module takes is a function or a class: a stand-in that loads the real one when
        // called or constructed.
        return function (...args) {
          const target = actual()[key];
          return new.target ? Reflect.construct(target, args) : target.apply(this, args);
        };
      },
    },
  );
};

// The dynamic-provider process and a policy pack's: Node writes its module compile cache
// (NODE_COMPILE_CACHE, which the plugin script and our language host set) at a normal exit, but the
// engine ends the provider with SIGINT (SIGKILL after 5 s), and our host ends a policy pack the same
// way when the engine is done with it, so it would never be written and every start would compile
// @pulumi/pulumi, gRPC, zod and the provider (or TypeScript and @pulumi/policy) anew. On SIGINT:
// write it, then end by the same signal, as without this handler. (The runner is named by its
// folder or its index.js.)
const ENDED_BY_SIGINT = /[\\/]cmd[\\/](dynamic-provider|run-policy-pack)([\\/]index\.js)?$/;
if (ENDED_BY_SIGINT.test(process.argv[1] ?? "") && Module.getCompileCacheDir?.()) {
  process.once("SIGINT", () => {
    try {
      Module.flushCompileCache();
    } finally {
      process.kill(process.pid, "SIGINT");
    }
  });
}
