/**
 * One name, one meaning across the package: the value Pulumi shows for what is known only after
 * apply (`UNKNOWN`), the provider kind of a resource type (`kindOf`) and the service's rule for a
 * widget origin (`originProblem`) are each declared in one module, which the others import, so a
 * reader (or an import) cannot pick up a look-alike of another type or with other rules.
 */
import { readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { expect, test } from "vitest";
import { REPO_ROOT } from "../support/pulumi";

const SRC = path.join(REPO_ROOT, "src");

/** Every TypeScript module of `src`, as its path from the repository root. */
const modules = (readdirSync(SRC, { recursive: true }) as string[])
  .filter((f) => f.endsWith(".ts"))
  .map((f) => path.join("src", f));

/** The modules that declare `name` (a const, a function or a class, exported or not). */
function declaring(name: string): string[] {
  const declaration = new RegExp(`^(export )?(const|let|function|class) ${name}\\b`, "m");
  return modules.filter((m) => declaration.test(readFileSync(path.join(REPO_ROOT, m), "utf8"))).sort();
}

test.each([
  ["UNKNOWN", "src/provider/unknowns.ts"],
  ["kindOf", "src/gitops/drift.ts"],
  ["originProblem", "src/spec/widget.ts"],
])("%s is declared once, in %s", (name, home) => {
  expect(declaring(name)).toEqual([home]);
});
