/**
 * The repository stands on its own: no file points at a path of the machine it was written on (the
 * service decisions it follows are told in docs/service-decisions.md, not in a file beside the
 * checkout), and every relative link of its Markdown pages leads to a file of the repository, and a
 * link's `#anchor` to a heading of that page.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, test } from "vitest";
import { brokenLinks } from "./support/links";
import { REPO_ROOT } from "./support/pulumi";

/** Tracked files and new ones not ignored, relative to the repository. */
const files = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], {
  cwd: REPO_ROOT,
  encoding: "utf8",
})
  .split("\n")
  .filter((f) => f !== "" && existsSync(path.join(REPO_ROOT, f)));
const read = (f: string) => readFileSync(path.join(REPO_ROOT, f), "utf8");
const TEXT = /\.(ts|mts|js|cjs|mjs|json|md|ya?ml|sh|go|mod)$/;

describe("the repository stands on its own", () => {
  test("no file names a path of the machine or a folder beside the checkout", () => {
    const outside = /(?<![\w.:-])\/work\/|shared\/spec/;
    const found = files
      .filter((f) => TEXT.test(f) && f !== "test/docs.test.ts")
      .flatMap((f) =>
        read(f)
          .split("\n")
          .flatMap((line, i) => (outside.test(line) ? [`${f}:${i + 1}: ${line.trim()}`] : [])),
      );
    expect(found).toEqual([]);
  });

  test("every relative link of the Markdown pages leads to a file of the repository, and its anchor to a heading", () => {
    const pages = files.filter((f) => f.endsWith(".md"));
    expect(pages).toContain("docs/service-decisions.md");
    expect(brokenLinks(REPO_ROOT, pages)).toEqual([]);
  });
});
