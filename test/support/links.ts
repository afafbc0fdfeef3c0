/**
 * The relative links of Markdown pages: each must lead to a file under the root it is read in (the
 * repository, or the installed package), and its `#anchor` to a heading of that page.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import * as path from "node:path";

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

/** The broken relative links of `pages` (paths relative to `root`), each as `page: link (why)`. */
export function brokenLinks(root: string, pages: readonly string[]): string[] {
  const read = (f: string) => readFileSync(path.join(root, f), "utf8");
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
      if (resolved.startsWith("..") || !existsSync(path.join(root, resolved))) {
        broken.push(`${page}: ${link} (no such file)`);
      } else if (
        anchor !== undefined &&
        resolved.endsWith(".md") &&
        statSync(path.join(root, resolved)).isFile() &&
        !headings(resolved).has(anchor)
      ) {
        broken.push(`${page}: ${link} (no such heading)`);
      }
    }
  }
  return broken;
}
