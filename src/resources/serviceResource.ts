/**
 * The base of the five resources: a dynamic resource of this package's provider for `kind`, under
 * the `voice-agent` module, registered without the per-property stack traces of Pulumi's runtime.
 *
 * Why: `@pulumi/pulumi` records `new Error().stack` for each of the four promises it makes per
 * registered property (`runtime/debuggable.js`, read only to describe a leaked promise when a
 * program exits with work pending). In a TypeScript program, ts-node's source-map support formats
 * every such trace, frame by frame: about 1 ms per property, the largest cost of a no-op `up` or a
 * preview in the program process (docs/performance.md, "Profiled"). The registration is
 * synchronous, so lowering `Error.stackTraceLimit` for its duration (as Pulumi itself raises it to
 * record a resource's source position, which it still does here: it sets its own limit for that)
 * removes the cost for these resources and nothing else. What is lost: the stack of a leaked
 * property promise, whose message still names the resource and the property.
 */
import * as pulumi from "@pulumi/pulumi";
import { withProvider } from "../provider/providerResource";
import { dynamicProvider, type ResourceKind } from "../provider/shim";

/** The type names of the five resources, `voice-agent:<Type>`. */
type ResourceType = "Agent" | "AgentVersion" | "Widget" | "KnowledgeBase" | "AnalysisGroup";

export abstract class ServiceResource extends pulumi.dynamic.Resource {
  protected constructor(
    kind: ResourceKind,
    type: ResourceType,
    name: string,
    props: pulumi.Inputs,
    opts: pulumi.CustomResourceOptions | undefined,
  ) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super(dynamicProvider(kind), name, props, withProvider(opts), "voice-agent", type);
    } catch (err) {
      // Thrown while traces were off: give the error the trace of this call, the user's line included.
      Error.stackTraceLimit = limit;
      if (err instanceof Error) Error.captureStackTrace(err, ServiceResource);
      throw err;
    } finally {
      Error.stackTraceLimit = limit;
    }
  }
}
