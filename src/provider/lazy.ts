/**
 * Modules loaded on first use. Each resource file holds both the program-side class and the
 * provider-side handler, so a plain `import` would make every Pulumi program load the client
 * (undici) and the spec (zod) although only the provider process uses them: about 0.14 s of a
 * program's start-up, which delays every resource registration (docs/performance.md).
 */
type ClientModule = typeof import("../client");
type SpecModule = typeof import("../spec");

const modules: { client?: ClientModule; spec?: SpecModule } = {};

/** The client module (undici): loaded by the provider process, and by a program only for lookups. */
export const clientModule = lazy(() => (modules.client ??= require("../client") as ClientModule));

/** The spec module (zod schemas and rules): loaded by the provider process only. */
export const specModule = lazy(() => (modules.spec ??= require("../spec") as SpecModule));

/**
 * For tests run from the TypeScript sources (`test/setup.ts`): Node's `require` cannot load `.ts`
 * files, and the test runner's own instances of the modules must be the ones used.
 */
export function provideModules(instances: { client: ClientModule; spec: SpecModule }): void {
  Object.assign(modules, instances);
}

/** A proxy that loads the module the first time one of its exports is read. */
function lazy<T extends object>(load: () => T): T {
  return new Proxy({} as T, { get: (_target, key) => load()[key as keyof T] });
}
