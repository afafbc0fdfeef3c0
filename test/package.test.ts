/**
 * The package as npm users expect it: what `npm pack` puts in it (a LICENSE, the changelog, no
 * source map without its source), the manifest (the SDK a peer dependency, the toolchain's exact pin
 * where scripts/env.sh reads it, a `prepack` that builds), the shipped policy pack a folder of its own,
 * and `pulumi-voice-agent/policy` exporting the policies by name with their parameters.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { describe, expect, test } from "vitest";
import { brokenLinks } from "./support/links";
import { packTarball, REPO_ROOT } from "./support/pulumi";

const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));

describe("npm pack", () => {
  // The files of the tarball of the dist/ scripts/setup.sh built (the prepack build would replace it).
  const listed: { path: string }[] = JSON.parse(
    execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
      cwd: REPO_ROOT,
      encoding: "utf8",
    }),
  )[0].files;
  const files = new Set(listed.map((f) => f.path));

  test("lists the LICENSE (Apache-2.0's text), the changelog, the README and the policy pack's manifest", () => {
    for (const f of [
      "LICENSE",
      "CHANGELOG.md",
      "README.md",
      "package.json",
      "policy/package.json",
      "policy/index.js",
    ])
      expect(files.has(f), f).toBe(true);
    const license = readFileSync(path.join(REPO_ROOT, "LICENSE"), "utf8");
    expect(license).toMatch(/^\s*Apache License\s+Version 2\.0, January 2004/);
    expect(license).toContain("END OF TERMS AND CONDITIONS");
    expect(pkg.license).toBe("Apache-2.0");
    expect(readFileSync(path.join(REPO_ROOT, "CHANGELOG.md"), "utf8")).toContain(`## ${pkg.version}`);
  });

  test("no source map whose sources are not packed, and no test or source file", () => {
    const orphans: string[] = [];
    for (const f of files) {
      if (!f.endsWith(".map")) continue;
      const map = JSON.parse(readFileSync(path.join(REPO_ROOT, f), "utf8")) as { sources: string[] };
      for (const source of map.sources) {
        const packed = path.posix.normalize(path.posix.join(path.posix.dirname(f), source));
        if (!files.has(packed)) orphans.push(`${f} → ${packed}`);
      }
    }
    expect(orphans).toEqual([]);
    expect([...files].filter((f) => /^(src|test|bench)\//.test(f))).toEqual([]);
  });
});

describe("the installed package's pages", () => {
  test("every relative link of its README, docs, examples and template leads to a file it ships", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "pva-pack-"));
    try {
      const tarball = packTarball(dir);
      execFileSync("tar", ["xzf", tarball], { cwd: dir });
      const root = path.join(dir, "package");
      const pages = execFileSync("find", [".", "-name", "*.md", "-not", "-path", "*/node_modules/*"], {
        cwd: root,
        encoding: "utf8",
      })
        .split("\n")
        .filter((f) => f !== "")
        .map((f) => path.normalize(f));
      expect(pages).toEqual(expect.arrayContaining(["README.md", "docs/tutorial.md", "docs/gitops.md"]));
      expect(brokenLinks(root, pages)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the manifest", () => {
  test("@pulumi/pulumi is a peer dependency; its exact pin, the toolchain's, a dev dependency env.sh reads", () => {
    expect(pkg.dependencies["@pulumi/pulumi"]).toBeUndefined();
    expect(pkg.peerDependencies["@pulumi/pulumi"]).toBe(`^${pkg.devDependencies["@pulumi/pulumi"]}`);
    expect(pkg.devDependencies["@pulumi/pulumi"]).toMatch(/^\d+\.\d+\.\d+$/);
    const read = execFileSync("bash", ["-c", 'source scripts/env.sh && printf %s "$PVA_PULUMI_VERSION"'], {
      cwd: REPO_ROOT,
      encoding: "utf8",
    });
    expect(read).toBe(pkg.devDependencies["@pulumi/pulumi"]);
  });

  test("prepack builds from a clean dist/; repository, homepage and keywords are set", () => {
    expect(pkg.scripts.prepack).toBe("npm run clean && npm run build");
    // The build also keeps the provider paths of states written before the registry moved, and
    // records the build's one version (scripts/version.js) in dist/version.json.
    expect(pkg.scripts.build).toBe(
      "tsc -p tsconfig.build.json && node scripts/legacy-kinds.js dist && node scripts/version.js --write dist",
    );
    expect(pkg.scripts.clean).toContain("rmSync('dist'");
    expect(pkg.repository.url).toMatch(/^git\+https:\/\//);
    expect(pkg.homepage).toMatch(/^https:\/\//);
    expect(pkg.keywords).toContain("pulumi");
  });

  test("the policy pack folder depends on this very version and requires nothing outside itself", () => {
    const pack = JSON.parse(readFileSync(path.join(REPO_ROOT, "policy/package.json"), "utf8"));
    expect(pack.version).toBe(pkg.version);
    expect(pack.dependencies["pulumi-voice-agent"]).toBe(pkg.version);
    expect(pack.dependencies["@pulumi/pulumi"]).toBe(pkg.peerDependencies["@pulumi/pulumi"]);
    const index = readFileSync(path.join(REPO_ROOT, "policy/index.js"), "utf8");
    expect([...index.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1])).toEqual([
      "pulumi-voice-agent/policy/pack",
    ]);
  });
});

describe("pulumi-voice-agent/policy", () => {
  test("exports every policy by name, and the parameters each takes are its configSchema's", async () => {
    const mod = await import("pulumi-voice-agent/policy");
    const names = mod.policies.map((p) => p.name);
    expect(Object.keys(mod.policyByName).sort()).toEqual([...names].sort());
    for (const p of mod.policies) expect(mod.policyByName[p.name as keyof typeof mod.policyByName]).toBe(p);
    expect(mod.callDurationLimit.name).toBe("call-duration-limit");
    // The configuration types, written out for each policy: the compiler holds them to PolicyParameters.
    const params: {
      [N in keyof typeof mod.policyByName]: (keyof import("../src/policy").PolicyParameters[N])[];
    } = {
      "no-secrets-in-agent-text": [],
      "widget-origins": ["productionStacks"],
      "production-goes-live-by-version": ["productionStacks"],
      "production-fallbacks": ["productionStacks"],
      "recording-disclosure": ["pattern"],
      "call-duration-limit": ["maxMinutes"],
      "production-promoted": ["productionStacks"],
    };
    for (const [name, keys] of Object.entries(params))
      expect(
        Object.keys(mod.policyByName[name as keyof typeof params].configSchema?.properties ?? {}),
        name,
      ).toEqual(keys);
    // A team's --policy-pack-config, typed with ours: every policy takes its enforcement level in
    // object form, the one with no parameters too (tsc checks this file).
    const config: import("../src/policy").PolicyPackConfig = {
      "no-secrets-in-agent-text": { enforcementLevel: "mandatory" },
      "call-duration-limit": { enforcementLevel: "advisory", maxMinutes: 20 },
    };
    expect(Object.keys(config)).toHaveLength(2);
  });
});
