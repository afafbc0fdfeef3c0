#!/usr/bin/env node
/**
 * The one version of a build, from git: the package, the plugin, the schema and every SDK carry it.
 *
 * - A commit tagged `vX.Y.Z` (and no uncommitted change) builds `X.Y.Z`.
 * - Any other commit builds a pre-release that names it and sorts above the last release and below
 *   the next: `X.Y.(Z+1)-alpha.<commits since the tag>.g<sha>` after the newest tag `vX.Y.Z`; before
 *   any tag, `<package.json's version>-alpha.<commits>.g<sha>` (package.json names the release being
 *   prepared, the CHANGELOG's "unreleased" one). Uncommitted changes (tracked or new, not ignored)
 *   add `.dirty`.
 * - The commit is named in the pre-release, not in build metadata (`+g<sha>`): semver, and so
 *   Pulumi, ignores build metadata when it compares versions (two builds differing only there
 *   would be the same plugin version, and `pulumi plugin install` keeps the one it has), and a Go
 *   module version cannot carry it (a Go program names the SDK at this version).
 * - `PVA_VERSION` overrides it (a semver, e.g. from a release's tag).
 * - Outside a git checkout (the npm tarball) the build's `dist/version.json` answers, else
 *   package.json's version.
 *
 * `node scripts/version.js` prints it; `node scripts/version.js --write DIR` records it in
 * `DIR/version.json` too (the build does, into dist/); `require("./scripts/version.js").version(root?)`
 * returns it.
 */
"use strict";
const { execFileSync } = require("node:child_process");
const { existsSync, mkdirSync, readFileSync, writeFileSync } = require("node:fs");
const path = require("node:path");

const ROOT = path.resolve(__dirname, "..");
const TAG = /^v(\d+)\.(\d+)\.(\d+)$/;
/** Semantic Versioning 2.0.0's grammar (semver.org's regular expression). */
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

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
function version(root = ROOT, env = process.env) {
  const override = env.PVA_VERSION;
  if (override) {
    if (!SEMVER.test(override))
      throw new Error(`PVA_VERSION=${override} is not a semantic version (X.Y.Z[-pre])`);
    return override;
  }
  // The checkout's own repository only (not one the package was installed inside).
  if (!existsSync(path.join(root, ".git"))) return builtVersion(root);
  const sha = git(root, ["rev-parse", "--short=7", "HEAD"]);
  if (sha === undefined) return builtVersion(root);
  const dirty = git(root, ["status", "--porcelain"]) ? ".dirty" : "";
  const described = git(root, [
    "describe",
    "--tags",
    "--long",
    "--match",
    "v[0-9]*.[0-9]*.[0-9]*",
    "--exclude",
    "v*-*",
    "HEAD",
  ]);
  const match = described && /^(v\d+\.\d+\.\d+)-(\d+)-g[0-9a-f]+$/.exec(described);
  if (match && TAG.test(match[1])) {
    const [major, minor, patch] = TAG.exec(match[1]).slice(1).map(Number);
    const since = Number(match[2]);
    if (since === 0 && !dirty) return `${major}.${minor}.${patch}`;
    return `${major}.${minor}.${patch + 1}-alpha.${since}.g${sha}${dirty}`;
  }
  // Before the first tag, package.json names the release being prepared: its pre-releases sort below it.
  const pkg = /^(\d+)\.(\d+)\.(\d+)$/.exec(packageVersion(root));
  if (!pkg) throw new Error(`package.json's version ${packageVersion(root)} is not X.Y.Z`);
  const count = Number(git(root, ["rev-list", "--count", "HEAD"]) ?? "0");
  return `${pkg.slice(1).join(".")}-alpha.${count}.g${sha}${dirty}`;
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

/** Records `v` in `dir/version.json`. */
function writeVersion(dir, v) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "version.json"), `${JSON.stringify({ version: v })}\n`);
}

module.exports = { version, writeVersion, SEMVER };

if (require.main === module) {
  try {
    const v = version();
    if (process.argv[2] === "--write") writeVersion(process.argv[3] ?? "dist", v);
    process.stdout.write(`${v}\n`);
  } catch (err) {
    process.stderr.write(`version: ${err.message}\n`);
    process.exit(1);
  }
}
