import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

const projects: { all: string[]; e2e: string[]; stock: string[]; both: string[] } = JSON.parse(
  readFileSync(new URL("./test/support/projects.json", import.meta.url), "utf8"),
);

/**
 * The order vitest starts test files in: the longest first, across the three projects (the longest
 * processing time rule), so that no file of several minutes starts last and runs alone while the
 * other workers idle. Durations are seconds from the last fresh-clone run
 * (`test/support/durations.json`, keyed `project:file`); a file not listed counts as a minute in
 * `e2e` and `stock` and a second in `unit`. A file that failed last time still runs first.
 */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const durations: Record<string, number> = JSON.parse(
      readFileSync(join(this.ctx.config.root, "test/support/durations.json"), "utf8"),
    );
    const seconds = (spec: TestSpecification): number => {
      const name = spec.project.name;
      const file = relative(spec.project.config.root, spec.moduleId);
      return durations[`${name}:${file}`] ?? (name === "unit" ? 1 : 60);
    };
    const failed = (spec: TestSpecification): boolean =>
      this.ctx.cache.getTestSpecificationResult(spec)?.failed === true;
    return [...files].sort((a, b) => Number(failed(b)) - Number(failed(a)) || seconds(b) - seconds(a));
  }
}

// Three projects, one run. `unit`: every file that does not launch the Pulumi CLI (no toolchain;
// `npm run test:unit`, about a minute). `e2e`: the files that launch it, under this project's
// Node.js language host. `stock`: what users run (the examples, the template, the packed tarball in
// fresh projects, the tutorial, YAML, the export, the policy pack), under Pulumi's own stock host
// (scripts/stock-host.sh). Each file runs in one lane, but for `both` (the first hour and the
// tutorial: what a new user meets, checked under either host). Where the stock host is absent (a
// user's clone: scripts/test.sh sets PVA_STOCK_LANE=off) the stock lane's files run in `e2e`
// instead. The globs and lists are in test/support/projects.json; test/projects.test.ts checks them.
const stockLane = process.env.PVA_STOCK_LANE !== "off";

export default defineConfig({
  test: {
    // End-to-end tests drive the real Pulumi CLI: give them room. Three files at a time on our 2-core
    // machines: a file often waits (on a CLI's start, a retry's back-off, the emulator), and a third
    // keeps both cores busy (docs/performance.md). The longest files start first.
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: "forks",
    maxWorkers: 3,
    reporters: ["default"],
    sequence: { sequencer: LongestFirst },
    projects: [
      { extends: true, test: { name: "unit", include: projects.all, exclude: projects.e2e } },
      {
        extends: true,
        test: { name: "e2e", include: projects.e2e, exclude: stockLane ? projects.stock : [] },
      },
      ...(stockLane
        ? [
            {
              extends: true as const,
              test: {
                name: "stock",
                include: [...projects.stock, ...projects.both],
                env: { PVA_PULUMI_HOST: "stock" },
              },
            },
          ]
        : []),
    ],
  },
});
