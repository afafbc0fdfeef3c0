/**
 * Entry point of the provider process: the serialized provider (`shim.ts`) requires this module and
 * calls `configure` once, then `handler(kind)` for every operation. Each resource's handler is made
 * once per process, bound to the process's provider context, when first used.
 */
import type * as pulumi from "@pulumi/pulumi";
import { configure, providerContext } from "./context";
import { isExpectedFailure } from "./failures";
import { exitWithEngine } from "./lifetime";
import { RESOURCES, type ResourceKind } from "./registry";
import type { ResourceHandler } from "./resource";

export { configure };

exitWithEngine();

const loaded = new Map<ResourceKind, Promise<ResourceHandler>>();

function load(kind: ResourceKind): Promise<ResourceHandler> {
  let h = loaded.get(kind);
  if (!h) {
    h = RESOURCES[kind]().then((factory) => factory(providerContext));
    loaded.set(kind, h);
  }
  return h;
}

/**
 * Failures as the engine prints them best: every reason already starts with the field's path in
 * the program's spelling, so the property is left empty. (With a property the engine appends the
 * input's value: `{<nil>}` for a nested path, the whole text for a 65,536-character prompt.)
 */
function forTheEngine(result: pulumi.dynamic.CheckResult): pulumi.dynamic.CheckResult {
  if (!result.failures?.length) return result;
  return { ...result, failures: result.failures.map((f) => ({ property: "", reason: f.reason })) };
}

/**
 * Lines Pulumi's dynamic-provider script is about to write for expected failures, to drop: for an
 * error thrown by check, diff, read or delete it writes `${e}: ${e.stack}` on stderr (which the
 * engine shows on the Stack: a stack trace through this package and Pulumi's script), then hands
 * `e.message` to the engine, which prints it on the resource. An expected failure (the service
 * unreachable, the key or a value refused, a change made outside Pulumi: `isExpectedFailure`) is
 * said by its message: the user reads it once, on the resource, without our stack. Any other error
 * keeps its line, stack trace and all. The error itself is untouched (its stack and `cause` kept).
 */
const unprinted = new Map<string, number>();
let consoleFiltered = false;

/** One line fewer to drop; true when `line` was one. */
function release(line: string): boolean {
  const pending = unprinted.get(line);
  if (pending === undefined) return false;
  if (pending > 1) unprinted.set(line, pending - 1);
  else unprinted.delete(line);
  return true;
}

function rethrowQuietly(err: unknown): never {
  if (isExpectedFailure(err)) {
    if (!consoleFiltered) {
      consoleFiltered = true;
      const write = console.error;
      console.error = (...args: unknown[]) => {
        if (args.length === 1 && typeof args[0] === "string" && release(args[0])) return;
        write.apply(console, args);
      };
    }
    // The script writes the line as the rejection reaches it, before the next turn of the loop.
    const line = `${String(err)}: ${(err as Error).stack}`;
    unprinted.set(line, (unprinted.get(line) ?? 0) + 1);
    setImmediate(() => release(line));
  }
  throw err;
}

/**
 * The handler of `kind` in this process. Synchronous, with methods that wait for the resource's
 * module: provider objects serialized into existing states call it this way.
 */
export function handler(kind: ResourceKind): ResourceHandler {
  return {
    check: (olds, news) =>
      load(kind)
        .then((h) => h.check(olds, news))
        .then(forTheEngine)
        .catch(rethrowQuietly),
    diff: (id, olds, news) =>
      load(kind)
        .then((h) => h.diff(id, olds, news))
        .catch(rethrowQuietly),
    // Create and update errors reach the engine as their message alone: nothing written on stderr.
    create: (inputs) => load(kind).then((h) => h.create(inputs)),
    read: (id, props) =>
      load(kind)
        .then((h) => h.read(id, props))
        .catch(rethrowQuietly),
    update: (id, olds, news) => load(kind).then((h) => h.update(id, olds, news)),
    delete: (id, props) =>
      load(kind)
        .then((h) => h.delete(id, props))
        .catch(rethrowQuietly),
  };
}
