/**
 * The base of the five resources: a dynamic resource (`pulumi-nodejs:dynamic/voice-agent:<Type>`,
 * as `pulumi.dynamic.Resource` registers it) whose provider is this package's provider for `kind`,
 * registered without two costs of Pulumi's runtime that every preview and `up` paid per resource:
 *
 * - The closure serializer, which `pulumi.dynamic.Resource` runs to turn the provider object into
 *   the `__provider` text: about 0.5 s per program run (TypeScript's parser and every Node.js
 *   built-in loaded). The text is known in advance (`providerText`).
 * - Stack traces: `@pulumi/pulumi` records `new Error().stack` for each of the four promises it
 *   makes per registered property (`runtime/debuggable.js`, read only to describe a leaked promise
 *   when a program exits with work pending). In a TypeScript program, ts-node's source-map support
 *   formats every such trace, frame by frame: about 1 ms per property, the largest cost of a no-op
 *   `up` or a preview in the program process (docs/performance.md, "Profiled"). The registration is
 *   synchronous, so lowering `Error.stackTraceLimit` for its duration (as Pulumi itself raises it to
 *   record a resource's source position, which it still does here: it sets its own limit for
 *   that) removes the cost for these resources and nothing else. What is lost: the stack of a
 *   leaked property promise, whose message still names the resource and the property. The promises
 *   Pulumi makes afterwards for these resources keep their frames but are not formatted
 *   (`promiseTraces.ts`), unless `PULUMI_DEBUG_PROMISE_LEAKS` asks for them.
 *
 * And the stack Pulumi records for each resource (its source position and trace, written into the
 * state) starts at the program's line and ends where the program's module was run
 * (`registrationTrace.ts`): the program's frames, none of this package's or of the runtime's.
 */
import * as pulumi from "@pulumi/pulumi";
import { withProvider } from "../provider/providerResource";
import { skipPromiseTraces } from "./promiseTraces";
import { providerText } from "./providerText";
import { traceRegistration } from "./registrationTrace";
import type { ResourceKind } from "./registry";
import { type ResourceType, TYPE_PREFIX } from "./typeNames";

export abstract class ServiceResource extends pulumi.CustomResource {
  protected constructor(
    kind: ResourceKind,
    type: ResourceType,
    name: string,
    props: pulumi.Inputs,
    opts: pulumi.CustomResourceOptions | undefined,
  ) {
    // Pulumi's promises made after the registration (serializing the inputs, resolving the outputs)
    // record no formatted trace either (`promiseTraces.ts`).
    skipPromiseTraces();
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    const restoreFormatter = traceRegistration();
    try {
      super(`${TYPE_PREFIX}${type}`, name, { ...props, __provider: providerText(kind) }, withProvider(opts));
    } catch (err) {
      // Thrown while traces were off: give the error the trace of this call, the user's line included.
      Error.stackTraceLimit = limit;
      restoreFormatter();
      if (err instanceof Error) Error.captureStackTrace(err, ServiceResource);
      throw err;
    } finally {
      Error.stackTraceLimit = limit;
      restoreFormatter();
    }
  }
}
