/**
 * The Go and Python SDKs committed in sdk/ are what `npm run plugin:sdk` (scripts/plugin/sdk.sh:
 * `pulumi package gen-sdk` with Pulumi's Go and Python hosts) generates from schema.json now: a
 * change of the resources' inputs reaches schema.json (test/plugin/schema.test.ts), then the SDKs,
 * or fails here. The Python SDK compiles (`python3 -m compileall`), as does the Python program
 * docs/plugin.md shows.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { blocksOfPage, REPO_ROOT } from "../support/pulumi";
import { stockHostsOrSkip } from "../support/stock";

const SDK = path.join(REPO_ROOT, "sdk");
const work = mkdtempSync(path.join(tmpdir(), "pva-sdk-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Every file under `dir`, by its path relative to `dir`. */
function files(dir: string, at = ""): Map<string, string> {
  const out = new Map<string, string>();
  for (const name of readdirSync(path.join(dir, at)).sort()) {
    const rel = path.join(at, name);
    if (statSync(path.join(dir, rel)).isDirectory()) for (const [k, v] of files(dir, rel)) out.set(k, v);
    else out.set(rel, readFileSync(path.join(dir, rel), "utf8"));
  }
  return out;
}

/** The files that differ between two trees: added, removed or changed. */
function differences(committed: string, generated: string): string[] {
  const a = files(committed);
  const b = files(generated);
  const names = [...new Set([...a.keys(), ...b.keys()])].sort();
  return names.flatMap((n) =>
    !a.has(n)
      ? [`${n}: not committed`]
      : !b.has(n)
        ? [`${n}: no longer generated`]
        : a.get(n) !== b.get(n)
          ? [`${n}: differs`]
          : [],
  );
}

const hosts = stockHostsOrSkip(
  ["pulumi-language-go", "pulumi-language-python"],
  "the SDKs' currency check (test/plugin/sdk.e2e.test.ts)",
);

const generated = path.join(work, "generated");

describe("the generated SDKs", () => {
  beforeAll(() => {
    if (hosts) execFileSync("bash", ["scripts/plugin/sdk.sh", generated], { cwd: REPO_ROOT, stdio: "pipe" });
  }, 120_000);

  test.skipIf(!hosts).each(["go", "python"])(
    "sdk/%s is what `npm run plugin:sdk` generates from schema.json (run it after `npm run plugin:schema`)",
    (language) => {
      expect(differences(path.join(SDK, language), path.join(generated, language))).toEqual([]);
    },
  );

  const python = spawnSync("python3", ["--version"]).status === 0;
  if (!python) console.log("the Python SDK's compile check: did not run: python3 not found");

  test.skipIf(!python)(
    "the Python SDK and docs/plugin.md's Python program compile (python3 -m compileall)",
    () => {
      const program = blocksOfPage("docs/plugin.md", "python");
      expect(program.length).toBeGreaterThan(0);
      const dir = path.join(work, "docs-python");
      mkdirSync(dir, { recursive: true });
      for (const [i, text] of program.entries()) writeFileSync(path.join(dir, `block${i}.py`), text);
      const run = spawnSync("python3", ["-m", "compileall", "-q", path.join(SDK, "python"), dir], {
        encoding: "utf8",
        // The bytecode goes to the temporary folder, not beside the committed sources.
        env: { ...process.env, PYTHONPYCACHEPREFIX: path.join(work, "pycache") },
      });
      expect(`${run.stdout}${run.stderr}`).toBe("");
      expect(run.status).toBe(0);
    },
  );
});
