/**
 * scripts/version.js: the one version of a build, from git. Each case is a temporary git repository
 * (or a folder that is none, as the npm tarball is) holding a package.json.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const { version, SEMVER } = require("../../scripts/version.js") as {
  version: (root: string, env?: Record<string, string | undefined>) => string;
  SEMVER: RegExp;
};

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A folder holding a package.json of version `pkg`; a git repository with one commit if `git`. */
function checkout(pkg = "0.2.0", git = true): { dir: string; run: (...args: string[]) => string } {
  const dir = mkdtempSync(path.join(tmpdir(), "pva-version-"));
  dirs.push(dir);
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "x", version: pkg }));
  const run = (...args: string[]): string =>
    execFileSync("git", args, {
      cwd: dir,
      encoding: "utf8",
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: "t",
        GIT_AUTHOR_EMAIL: "t@example.com",
        GIT_COMMITTER_NAME: "t",
        GIT_COMMITTER_EMAIL: "t@example.com",
      },
    }).trim();
  if (git) {
    run("init", "-q", "-b", "main");
    run("add", "package.json");
    run("commit", "-q", "-m", "one");
  }
  return { dir, run };
}

const commit = (c: ReturnType<typeof checkout>, file: string): void => {
  writeFileSync(path.join(c.dir, file), file);
  c.run("add", file);
  c.run("commit", "-q", "-m", file);
};
const sha = (c: ReturnType<typeof checkout>): string => c.run("rev-parse", "--short=7", "HEAD");
const NO_OVERRIDE = {};

describe("scripts/version.js", () => {
  it("a commit tagged vX.Y.Z builds X.Y.Z", () => {
    const c = checkout();
    commit(c, "a");
    c.run("tag", "v1.4.2");
    expect(version(c.dir, NO_OVERRIDE)).toBe("1.4.2");
    // An annotated tag too, and the newest tag wins.
    commit(c, "b");
    c.run("tag", "-a", "-m", "release", "v1.5.0");
    expect(version(c.dir, NO_OVERRIDE)).toBe("1.5.0");
  });

  it("commits after a tag build the next patch's pre-release naming the commit", () => {
    const c = checkout();
    c.run("tag", "v1.4.2");
    commit(c, "a");
    commit(c, "b");
    const v = version(c.dir, NO_OVERRIDE);
    expect(v).toBe(`1.4.3-alpha.2.g${sha(c)}`);
    expect(v).toMatch(SEMVER);
    // Another commit at the same distance (another branch) builds another version: the commit is in
    // the pre-release, which semver (and Pulumi) compares, not in build metadata, which it ignores.
    c.run("checkout", "-q", "-b", "other", "HEAD~1");
    commit(c, "c");
    const other = version(c.dir, NO_OVERRIDE);
    expect(other).toBe(`1.4.3-alpha.2.g${sha(c)}`);
    expect(other).not.toBe(v);
    expect(other).not.toContain("+");
  });

  it("a tag that is not vX.Y.Z (a release candidate) is not the base", () => {
    const c = checkout();
    c.run("tag", "v1.0.0");
    commit(c, "a");
    c.run("tag", "v1.1.0-rc.1");
    expect(version(c.dir, NO_OVERRIDE)).toBe(`1.0.1-alpha.1.g${sha(c)}`);
  });

  it("before any tag: a pre-release of package.json's version (the release being prepared), with the number of commits", () => {
    const c = checkout("0.2.0");
    commit(c, "a");
    commit(c, "b");
    expect(version(c.dir, NO_OVERRIDE)).toBe(`0.2.0-alpha.3.g${sha(c)}`);
  });

  it("uncommitted changes (a tracked file changed, or a new file) add .dirty, also on a tagged commit", () => {
    const c = checkout();
    c.run("tag", "v2.0.0");
    writeFileSync(path.join(c.dir, "package.json"), JSON.stringify({ name: "x", version: "0.2.0", more: 1 }));
    expect(version(c.dir, NO_OVERRIDE)).toBe(`2.0.1-alpha.0.g${sha(c)}.dirty`);
    c.run("checkout", "--", "package.json");
    expect(version(c.dir, NO_OVERRIDE)).toBe("2.0.0");
    writeFileSync(path.join(c.dir, "new.ts"), "x");
    expect(version(c.dir, NO_OVERRIDE)).toBe(`2.0.1-alpha.0.g${sha(c)}.dirty`);
    // An ignored file is no change.
    writeFileSync(path.join(c.dir, ".gitignore"), "new.ts\n.gitignore\n");
    expect(version(c.dir, NO_OVERRIDE)).toBe("2.0.0");
  });

  it("outside git (the npm tarball): the build's dist/version.json, else package.json's", () => {
    const c = checkout("0.3.0", false);
    expect(version(c.dir, NO_OVERRIDE)).toBe("0.3.0");
    mkdirSync(path.join(c.dir, "dist"));
    writeFileSync(
      path.join(c.dir, "dist", "version.json"),
      JSON.stringify({ version: "0.3.1-alpha.4.gabcdef0" }),
    );
    expect(version(c.dir, NO_OVERRIDE)).toBe("0.3.1-alpha.4.gabcdef0");
  });

  it("PVA_VERSION overrides, and must be a semantic version", () => {
    const c = checkout();
    expect(version(c.dir, { PVA_VERSION: "3.1.4" })).toBe("3.1.4");
    expect(() => version(c.dir, { PVA_VERSION: "v3.1" })).toThrow(/not a semantic version/);
  });

  it("the CLI prints it and --write records it", () => {
    const c = checkout();
    c.run("tag", "v0.9.0");
    const out = path.join(c.dir, "out", "dist");
    // The script run on another checkout: copied in, so ROOT is that checkout.
    mkdirSync(path.join(c.dir, "scripts"));
    const script = path.join(c.dir, "scripts", "version.js");
    writeFileSync(script, readFileSync(require.resolve("../../scripts/version.js")));
    writeFileSync(path.join(c.dir, ".gitignore"), "scripts/\nout/\n.gitignore\n");
    const printed = execFileSync(process.execPath, [script, "--write", out], {
      encoding: "utf8",
      env: { ...process.env, PVA_VERSION: "" },
    });
    expect(printed).toBe("0.9.0\n");
    expect(JSON.parse(readFileSync(path.join(out, "version.json"), "utf8"))).toEqual({
      version: "0.9.0",
    });
  });
});
