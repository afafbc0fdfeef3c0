import { readFileSync } from "node:fs";
import { defineConfig } from "vitest/config";

const projects: { all: string[]; e2e: string[] } = JSON.parse(
  readFileSync(new URL("./test/support/projects.json", import.meta.url), "utf8"),
);

// Two projects. `e2e`: every test file that launches the Pulumi CLI (needs the toolchain that
// scripts/setup.sh builds; minutes). `unit`: all the others (`npm run test:unit`, under a minute).
// `npm test` runs both. The globs are in test/support/projects.json; test/projects.test.ts checks
// that every file which launches `pulumi` is in `e2e`, and only those.
export default defineConfig({
  test: {
    // End-to-end tests drive the real Pulumi CLI: give them room. Three files at a time on our 2-core
    // machines: a file often waits (on a CLI's start, a retry's back-off, the emulator), and a third
    // keeps both cores busy (npm test 405 s with two, 382 s with three; docs/performance.md).
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: "forks",
    maxWorkers: 3,
    reporters: ["default"],
    projects: [
      { extends: true, test: { name: "unit", include: projects.all, exclude: projects.e2e } },
      { extends: true, test: { name: "e2e", include: projects.e2e } },
    ],
  },
});
