/**
 * The program side stays light: a program that imports the package loads the resource classes and
 * their inputs only, never the provider's modules (zod and the spec's schemas, undici and the HTTP
 * client). Each of those costs every `pulumi preview` and `up` its load time (docs/performance.md).
 */
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { expect, test } from "vitest";

const ROOT = path.resolve(__dirname, "..");

test("importing the package loads no zod, no undici, no spec schemas and no HTTP client", () => {
  const out = execFileSync(
    process.execPath,
    [
      "-r",
      "ts-node/register/transpile-only",
      "-e",
      `require("@pulumi/pulumi");
const before = new Set(Object.keys(require.cache));
require("./src/index.ts");
console.log(JSON.stringify(Object.keys(require.cache).filter((k) => !before.has(k))));`,
    ],
    { cwd: ROOT, encoding: "utf8" },
  );
  const loaded = (JSON.parse(out) as string[]).map((f) => path.relative(ROOT, f));
  expect(loaded).toContain("src/resources/agent/index.ts");
  const heavy = loaded.filter((f) =>
    /node_modules\/(zod|undici)\/|^src\/spec\/|^src\/client\/(?!recovery\.ts$)|^src\/resources\/[^/]+\/(provider|projection|rules)\.ts$/.test(
      f,
    ),
  );
  expect(heavy).toEqual([]);
}, 60_000);
