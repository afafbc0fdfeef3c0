/**
 * Pulumi's stock language hosts from ../shared/pulumi-stock (scripts/stock-host.sh puts them beside
 * this project's Pulumi CLI). A user's fresh clone has no ../shared: a test that needs a host then
 * says it did not run (and is skipped), as scripts/test.sh's stock lane does; in CI (CI=true), which
 * always has ../shared, its absence fails the test file.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import * as path from "node:path";
import { REPO_ROOT } from "./pulumi";

/** The folder holding our `pulumi` and the stock hosts named, or why there is none. */
export function stockHostBin(hosts: string[]): { bin: string } | { missing: string } {
  const made = spawnSync("bash", ["scripts/stock-host.sh"], { cwd: REPO_ROOT, encoding: "utf8" });
  if (made.status === 3) return { missing: made.stderr.trim() };
  if (made.status !== 0) throw new Error(`scripts/stock-host.sh exited ${made.status}: ${made.stderr}`);
  const bin = made.stdout.trim();
  const absent = hosts.filter((h) => !existsSync(path.join(bin, h)));
  if (absent.length > 0) return { missing: `../shared/pulumi-stock has no ${absent.join(", ")}` };
  return { bin };
}

/**
 * The stock hosts' folder for a test file, or `undefined` after printing that `what` did not run
 * (outside CI). In CI their absence throws, failing the file.
 */
export function stockHostsOrSkip(hosts: string[], what: string): string | undefined {
  const found = stockHostBin(hosts);
  if ("bin" in found) return found.bin;
  if (process.env.CI === "true") throw new Error(`${what}: ${found.missing}, and CI must run it`);
  console.log(`${what}: did not run: ${found.missing}`);
  return undefined;
}
