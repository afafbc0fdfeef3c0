#!/usr/bin/env node
/**
 * The one version of a build, from git: the package, the plugin, the schema and every SDK carry it.
 *
 * - A commit tagged `vX.Y.Z` builds `X.Y.Z`.
 * - Any other commit builds a pre-release that names it and sorts below the next release:
 *   `X.Y.(Z+1)-alpha.<commits since the tag>+g<sha>` after the newest tag `vX.Y.Z`, or, before any
 *   tag, `<package.json's version>-alpha.<commits>+g<sha>`. Uncommitted changes add `.dirty` to the
 *   build metadata. Two commits never share a version, so a newer build never hides behind an
 *   installed one (`pulumi plugin install` keeps a version it already has).
 * - Outside a git checkout (the npm tarball) the build's `dist/version.json` answers, else
 *   package.json's version.
 *
 * `node scripts/version.js` prints it; `node scripts/version.js --write DIR` records it in
 * `DIR/version.json` (the build does, into dist/); `require("./scripts/version.js").version(root?)`
 * returns it.
 */
"use strict";
const { execFileSync } = require("node:child_process");
const { existsSync, readFileSync } = require("node:fs");
const path = require("node:path");

const ROOT = path.resolve(__dirname, "..");
const TAG = /^v(\d+)\.(\d+)\.(\d+)$/;

/** `git` in `root`, its output trimmed; undefined when git or the repository is not there. */
function git(root, args) {
  try {
    return execFileSync("git", args, {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    return undefined;
  }
}

/** The version of the checkout at `root` (the repository's own by default). */
function version(root = ROOT) {
  const override = process.env.PVA_VERSION;
  if (override) return override;
  const sha = git(root, ["rev-parse", "--short=7", "HEAD"]);
  if (sha === undefined || !existsSync(path.join(root, ".git"))) return builtVersion(root);
  const dirty = git(root, ["status", "--porcelain", "--untracked-files=no"]) ? ".dirty" : "";
  const described = git(root, ["describe", "--tags", "--long", "--match", "v[0-9]*.[0-9]*.[0-9]*", "HEAD"]);
  const match = described && /^(v\d+\.\d+\.\d+)-(\d+)-g[0-9a-f]+$/.exec(described);
  if (match && TAG.test(match[1])) {
    const [, major, minor, patch] = TAG.exec(match[1]).map(Number);
    const since = Number(match[2]);
    if (since === 0 && !dirty) return `${major}.${minor}.${patch}`;
    return `${major}.${minor}.${patch + 1}-alpha.${since}+g${sha}${dirty}`;
  }
  const count = git(root, ["rev-list", "--count", "HEAD"]) ?? "0";
  return `${packageVersion(root)}-alpha.${count}+g${sha}${dirty}`;
}

/** A build's recorded version (dist/version.json), else package.json's. */
function builtVersion(root) {
  const file = path.join(root, "dist", "version.json");
  if (existsSync(file)) {
    const recorded = JSON.parse(readFileSync(file, "utf8")).version;
    if (typeof recorded === "string" && recorded) return recorded;
  }
  return packageVersion(root);
}

function packageVersion(root) {
  return JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")).version;
}

module.exports = { version };

if (require.main === module) {
  const v = version();
  if (process.argv[2] === "--write") {
    const { writeFileSync } = require("node:fs");
    writeFileSync(
      path.join(process.argv[3] ?? "dist", "version.json"),
      `${JSON.stringify({ version: v })}\n`,
    );
  }
  process.stdout.write(`${v}\n`);
}
