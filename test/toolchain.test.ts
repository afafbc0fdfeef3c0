/**
 * The toolchain setup.sh builds: the real Pulumi CLI at exactly the SDK's version, our Node.js
 * language host, and the dynamic-provider plugin, all offline.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, test } from "vitest";
import { REPO_ROOT, toolchainBin } from "./support/pulumi";

describe("toolchain", () => {
  test("`pulumi version` prints the version of the installed @pulumi/pulumi", () => {
    const sdk = JSON.parse(
      readFileSync(path.join(REPO_ROOT, "node_modules/@pulumi/pulumi/package.json"), "utf8"),
    );
    const cli = execFileSync(path.join(toolchainBin(), "pulumi"), ["version"], { encoding: "utf8" }).trim();
    expect(cli).toBe(`v${sdk.version}`);
  });

  test("the language host and the dynamic-provider plugin sit beside the CLI", () => {
    for (const bin of ["pulumi-language-nodejs", "pulumi-resource-pulumi-nodejs"]) {
      expect(existsSync(path.join(toolchainBin(), bin))).toBe(true);
    }
  });

  test("the Go toolchain module pins the same Pulumi version as package.json", () => {
    const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));
    const gomod = readFileSync(path.join(REPO_ROOT, "toolchain/go.mod"), "utf8");
    const version = pkg.dependencies["@pulumi/pulumi"];
    expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(gomod).toContain(`github.com/pulumi/pulumi/pkg/v3 v${version}`);
    expect(gomod).toContain(`github.com/pulumi/pulumi/sdk/v3 v${version}`);
  });
});
