/**
 * The stack a resource's registration records, as the program's author wrote it: their own frames,
 * and no frame of this package's or of the runtime that loaded the program.
 *
 * `@pulumi/pulumi` records, per resource, a source position and a stack trace (`Resource.callsites`:
 * `new Error().stack` with no frame limit, formatted by the program's `Error.prepareStackTrace`,
 * which maps each frame through its source map). The engine writes both into the state. It takes the
 * source position as the fifth frame below its own two helpers, which is the program's line for a
 * class that extends `CustomResource` directly. These classes extend it through `ServiceResource`,
 * so the position it found was this package's class (`dist/resources/agent/index.js`), never the
 * program's line. And the trace ran on below the program to the module loader and the runtime that
 * started it (ts-node, Pulumi's `run`): about 16 frames per resource, 35 values of the state, that
 * every checkpoint of every deploy step writes again for every resource (docs/performance.md).
 *
 * While a resource of this package registers, {@link traceRegistration} hands the formatter the
 * frames of Pulumi's own capture as: Pulumi's four frames, one frame of this package (the one Pulumi
 * skips as the resource's class), then the program's frames down to the module loader (where the
 * program's module was run, `node:internal/modules/...`), exclusive. Any other trace is formatted
 * whole, as before.
 */

/** The frames of a trace (V8's `CallSite`, the part used here). */
export interface Site {
  getFileName(): string | null | undefined;
  getFunctionName(): string | null;
}

/** Pulumi's frames at the top of its capture: `callsites`, `stackTrace`, `Resource`, `CustomResource`. */
const PULUMI_FRAMES = 4;

const isPulumiResourceFile = (file: string | null | undefined): boolean =>
  typeof file === "string" && /[\\/]@pulumi[\\/]pulumi[\\/]resource\.[jt]s$/.test(file);

/** Whether `sites` is Pulumi's capture of a resource's stack (`Resource.callsites`). */
function isRegistrationCapture(sites: readonly Site[]): boolean {
  const [callsites, stackTrace] = sites;
  return (
    callsites?.getFunctionName() === "callsites" &&
    stackTrace?.getFunctionName() === "stackTrace" &&
    sites.slice(0, PULUMI_FRAMES).every((s) => isPulumiResourceFile(s.getFileName()))
  );
}

/** Node's module loader: the program's module ran from here; below are the loader and the runtime. */
const isModuleLoader = (file: string | null | undefined): boolean =>
  typeof file === "string" && file.startsWith("node:internal/modules/");

/**
 * The frames to format for a registration's capture: Pulumi's four, the outermost frame of this
 * package (which Pulumi skips as the resource's class), and the program's frames down to the module
 * loader. `sites` unchanged when it is not such a capture, or not from one of this package's classes.
 */
export function registrationSites<T extends Site>(
  sites: readonly T[],
  isOurs: (file: string) => boolean,
): T[] {
  if (!isRegistrationCapture(sites)) return [...sites];
  let first = PULUMI_FRAMES;
  while (first < sites.length && isOurs(String(sites[first]?.getFileName() ?? ""))) first++;
  const outermost = sites[first - 1];
  if (first === PULUMI_FRAMES || outermost === undefined) return [...sites];
  let end = first;
  while (end < sites.length && !isModuleLoader(sites[end]?.getFileName())) end++;
  return [...sites.slice(0, PULUMI_FRAMES), outermost, ...sites.slice(first, end)];
}

/** This package's files: those under the folder that holds `resources/` (`dist/`, or `src/` in tests). */
const PACKAGE_DIR = __dirname.slice(0, __dirname.length - "resources".length);
const isOurs = (file: string): boolean =>
  file.startsWith(PACKAGE_DIR) || file.startsWith(`file://${PACKAGE_DIR}`);

/**
 * Hands Pulumi's capture, from now until the returned function is called (a resource's registration,
 * synchronous), the frames {@link registrationSites} keeps; the returned function restores the
 * formatter the program had.
 */
export function traceRegistration(): () => void {
  const previous = Error.prepareStackTrace;
  Error.prepareStackTrace = (err, sites) => {
    const kept = registrationSites(sites, isOurs);
    return previous ? previous(err, kept) : `${err}${kept.map((s) => `\n    at ${s}`).join("")}`;
  };
  return () => {
    Error.prepareStackTrace = previous;
  };
}
