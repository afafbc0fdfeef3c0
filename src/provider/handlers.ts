/**
 * Entry point of the provider process: the provider objects (`shim.ts`) require this module and
 * call `configure` once, then `handler(kind, load)` for every operation. Each resource's handler is
 * made once per process, bound to the process's provider context, when first used. It knows no
 * resource: each provider object hands it its own (`src/resources/registry.ts`).
 */
import type * as pulumi from "@pulumi/pulumi";
import { configure, providerContext } from "./context";
import { isExpectedFailure } from "./failures";
import { exitWithEngine } from "./lifetime";
import type { HandlerFactory, ResourceHandler } from "./resource";

export { configure };

exitWithEngine();

const loaded = new Map<string, Promise<ResourceHandler>>();

function loadHandler(kind: string, factory: () => HandlerFactory): Promise<ResourceHandler> {
  let h = loaded.get(kind);
  if (!h) {
    h = Promise.resolve().then(() => factory()(providerContext));
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
 * The handler of `kind` in this process, made by `factory` (the resource's provider side) at its
 * first use. Synchronous, with methods that wait for the resource's module.
 */
export function handler(kind: string, factory: () => HandlerFactory): ResourceHandler {
  const load = () => loadHandler(kind, factory);
  return {
    check: (olds, news) =>
      load()
        .then((h) => h.check(olds, news))
        .then(forTheEngine)
        .catch(rethrowQuietly),
    diff: (id, olds, news) =>
      load()
        .then((h) => h.diff(id, olds, news))
        .catch(rethrowQuietly),
    // Create and update errors reach the engine as their message alone: nothing written on stderr.
    create: (inputs) => load().then((h) => h.create(inputs)),
    read: (id, props) =>
      load()
        .then((h) => h.read(id, props))
        .catch(rethrowQuietly),
    update: (id, olds, news) => load().then((h) => h.update(id, olds, news)),
    delete: (id, props) =>
      load()
        .then((h) => h.delete(id, props))
        .catch(rethrowQuietly),
  };
}
