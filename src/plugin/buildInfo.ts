/**
 * What the plugin knows of its own build: its version and the schema it serves. The single
 * executable (`npm run plugin:pack`, bundled by esbuild) carries both inside, replaced at bundling
 * (esbuild's `define` of `__PVA_BUILD_VERSION__` and `__PVA_BUILD_SCHEMA__`): it reads no file
 * beside itself. Run from `src/` or `dist/` (not bundled), both are read from the package's files.
 */
import { readFileSync } from "node:fs";
import * as path from "node:path";

// Replaced by the bundler with string literals; undeclared (so `typeof` is "undefined") elsewhere.
declare const __PVA_BUILD_VERSION__: string | undefined;
declare const __PVA_BUILD_SCHEMA__: string | undefined;

/** The package root (where schema.json and package.json are), from `src/plugin` or `dist/plugin`. */
const ROOT = path.resolve(__dirname, "../..");

/** The version and schema embedded at bundling, or undefined when this code is not bundled. */
export const EMBEDDED: { version: string; schema: string } | undefined =
  typeof __PVA_BUILD_VERSION__ === "string" && typeof __PVA_BUILD_SCHEMA__ === "string"
    ? { version: __PVA_BUILD_VERSION__, schema: __PVA_BUILD_SCHEMA__ }
    : undefined;

/**
 * The build's version: the embedded one, else the build's record (scripts/version.js writes
 * `dist/version.json`), else package.json's.
 */
export function buildVersion(): string {
  if (EMBEDDED) return EMBEDDED.version;
  for (const file of [path.join(ROOT, "dist", "version.json"), path.join(ROOT, "package.json")]) {
    try {
      const { version } = JSON.parse(readFileSync(file, "utf8")) as { version?: unknown };
      if (typeof version === "string" && version) return version;
    } catch {
      // not there (a checkout not built yet): the next file answers
    }
  }
  throw new Error(`voice-agent plugin: no version in ${ROOT}/dist/version.json or ${ROOT}/package.json`);
}

/** schema.json as shipped: the embedded text, else the package's file. */
export function buildSchema(): string {
  return EMBEDDED ? EMBEDDED.schema : readFileSync(path.join(ROOT, "schema.json"), "utf8");
}
