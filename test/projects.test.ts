/**
 * The split of the test files between the vitest projects (test/support/projects.json): every file
 * that launches the Pulumi CLI (or installs the packed package into a fresh project) is in `e2e`,
 * and every other file in `unit`, so that
 * `npm run test:unit` needs no toolchain and stays fast; the stock lane's files (`stock`) are e2e
 * files that exist; and the order file (`durations.json`) names only files that exist.
 */
import { globSync, readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import durations from "./support/durations.json";
import projects from "./support/projects.json";
import { REPO_ROOT } from "./support/pulumi";

const files = (globs: string[]) => new Set(globs.flatMap((g) => globSync(g, { cwd: REPO_ROOT })));

/**
 * What makes a file launch `pulumi`: the harness that runs the CLI, or a direct spawn of it; or
 * install the packed package into a fresh project (`installTarball`: minutes of npm, as the e2e
 * tests of what users run do); or generate the SDKs (`scripts/plugin/sdk.sh`: `pulumi package gen-sdk`).
 */
const LAUNCHES_PULUMI =
  /\b(PulumiProject|newProject|spawnPulumi|toolchainBin|pulumiEnvironment|installedPackageDir|installTarball)\b|scripts\/plugin\/sdk\.sh|\b(spawn|spawnSync|execFile|execFileSync)\(\s*["'`]pulumi["'`]/;

describe("vitest projects", () => {
  const all = files(projects.all);
  const e2e = files(projects.e2e);

  test("the globs find the test files", () => {
    expect(all.size).toBeGreaterThan(20);
    expect(e2e.size).toBeGreaterThan(0);
    for (const f of e2e) expect(all.has(f), f).toBe(true);
  });

  test("the stock lane lists e2e files that exist, and durations name existing files", () => {
    const listed = [...projects.stock, ...projects.both];
    for (const f of listed) expect(e2e.has(f), `${f} in the stock lane: not an e2e file`).toBe(true);
    expect(new Set(listed).size, "a file listed twice in stock and both").toBe(listed.length);
    const stale = Object.keys(durations).filter((key) => !all.has(key.slice(key.indexOf(":") + 1)));
    expect(stale, "test/support/durations.json names files that are gone").toEqual([]);
  });

  test("a file is in e2e exactly when it launches the Pulumi CLI", () => {
    const misplaced: string[] = [];
    // This file names the markers without using them.
    for (const f of [...all].filter((f) => f !== "test/projects.test.ts").sort()) {
      const launches = LAUNCHES_PULUMI.test(readFileSync(`${REPO_ROOT}/${f}`, "utf8"));
      if (launches !== e2e.has(f))
        misplaced.push(`${f}: ${launches ? "launches pulumi, not in e2e" : "in e2e"}`);
    }
    expect(misplaced).toEqual([]);
  });
});
