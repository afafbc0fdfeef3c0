/**
 * The emulator in a user's own tests, as docs/emulator.md ("In your own tests") shows it: a fresh
 * project installs the packed package and vitest; the page's files (a vitest config, a
 * `globalSetup` starting the emulator with a seed file, a vitest test using the typed control
 * client, and a plain `node --test` file) are written there as they stand, type-checked, and run.
 */
import { execFile } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { stripVTControlCharacters } from "node:util";
import { afterAll, beforeAll, expect, test } from "vitest";
import { filesOfPage, installTarball, packTarball, REPO_ROOT, tempDir } from "../support/pulumi";

let work: string;
beforeAll(() => {
  work = tempDir("user-tests-");
  const tarball = packTarball(work);
  const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));
  installTarball(work, path.join(work, tarball), { others: [`vitest@${pkg.devDependencies.vitest}`] });
}, 300_000);
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The environment of a user's shell: none of this test run's vitest variables. */
function userEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !k.startsWith("VITEST") && k !== "NODE_OPTIONS" && k !== "TEST",
    ),
  );
}

function run(file: string, args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd: work, env: userEnv(), timeout: 120_000 }, (err, stdout, stderr) =>
      resolve({
        code: err ? (typeof err.code === "number" ? err.code : 1) : 0,
        output: stripVTControlCharacters(`${stdout}\n${stderr}`),
      }),
    );
  });
}

test("the page's vitest globalSetup and plain node test run in a fresh project", async () => {
  const files = filesOfPage("docs/emulator.md");
  for (const name of [
    "vitest.config.mts",
    "emulator.setup.ts",
    "seed.json",
    "support.test.ts",
    "plain.test.mjs",
  ]) {
    const text = files.get(name);
    expect(text, `docs/emulator.md shows ${name}`).toBeDefined();
    writeFileSync(path.join(work, name), text as string);
  }
  // As a user's TypeScript project would check them.
  writeFileSync(
    path.join(work, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        module: "nodenext",
        moduleResolution: "nodenext",
        target: "es2023",
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: ["node"],
      },
      include: ["*.ts", "*.mts"],
    }),
  );
  const tsc = await run(path.join(work, "node_modules/.bin/tsc"), ["-p", "."]);
  expect(tsc.output.trim()).toBe("");
  expect(tsc.code).toBe(0);

  const vitest = await run(path.join(work, "node_modules/.bin/vitest"), ["run"]);
  expect(vitest.output).toMatch(/Tests\s+\S*1 passed/);
  expect(vitest.code, vitest.output).toBe(0);

  const node = await run(process.execPath, ["--test", "--test-reporter=tap", "plain.test.mjs"]);
  expect(node.output).toMatch(/# pass 1\n# fail 0/);
  expect(node.code, node.output).toBe(0);
}, 300_000);
