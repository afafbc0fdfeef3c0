/**
 * The repository stands on its own: no file points at a path of the machine it was written on (the
 * service decisions it follows are told in docs/service-decisions.md, not in a file beside the
 * checkout), and every relative link of its Markdown pages leads to a file of the repository, and a
 * link's `#anchor` to a heading of that page.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, test } from "vitest";
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

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
// Fenced blocks open and close on lines of their own; an inline span may hold backticks (```` ``` ````).
const withoutBlocks = (md: string) => md.replace(/^(`{3,})[^\n]*\n[\s\S]*?^\1`*[ \t]*$/gm, "");
const withoutCode = (md: string) => withoutBlocks(md).replace(/(`+)[^\n]*?\1/g, "");

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
    const headings = (page: string) =>
      new Set(
        withoutBlocks(read(page))
          .split("\n")
          .filter((l) => /^#{1,6} /.test(l))
          .map((l) => anchorOf(l.replace(/^#+ /, ""))),
      );
    const broken: string[] = [];
    for (const page of pages) {
      for (const [, link] of withoutCode(read(page)).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (link === undefined || /^[a-z]+:/i.test(link)) continue; // https:, mailto:
        const [target = "", anchor] = link.split("#");
        const resolved = target === "" ? page : path.normalize(path.join(path.dirname(page), target));
        if (resolved.startsWith("..") || !existsSync(path.join(REPO_ROOT, resolved))) {
          broken.push(`${page}: ${link} (no such file in the repository)`);
        } else if (
          anchor !== undefined &&
          resolved.endsWith(".md") &&
          statSync(path.join(REPO_ROOT, resolved)).isFile() &&
          !headings(resolved).has(anchor)
        ) {
          broken.push(`${page}: ${link} (no such heading)`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});
