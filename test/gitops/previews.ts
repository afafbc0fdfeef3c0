/**
 * The recorded `pulumi preview --json` documents the report's tests read (test/fixtures/previews),
 * and their recording by the e2e tests that make them (RECORD_PREVIEWS=1).
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { type PreviewJson, type PreviewStep, parsePreview } from "../../src/gitops/report";
import { type PulumiProject, REPO_ROOT } from "../support/pulumi";

const FIXTURES = path.join(REPO_ROOT, "test/fixtures/previews");

/** The names of the recorded previews. */
export function fixtureNames(): string[] {
  return readdirSync(FIXTURES).map((f) => f.replace(/\.json$/, ""));
}

/** The recorded preview `name` (a fresh copy: tests may edit it). */
export function fixture(name: string): PreviewJson {
  return parsePreview(JSON.parse(readFileSync(path.join(FIXTURES, `${name}.json`), "utf8")));
}

/** The step of the resource named `name`: one that changes it, else its unchanged (`same`) step. */
export function stepOf(preview: PreviewJson, name: string): PreviewStep {
  const steps = preview.steps!.filter((s) => s.urn.endsWith(`::${name}`));
  return (steps.find((s) => s.op !== "same") ?? steps[0])!;
}

/**
 * `pulumi preview --json` of the project (with `args`), written to the fixtures as `name` when
 * RECORD_PREVIEWS is set, with the emulator's address `url` made constant.
 */
export async function preview(
  p: PulumiProject,
  name: string,
  url: string,
  args: string[] = [],
): Promise<PreviewJson> {
  const { stdout } = await p.pulumi(["preview", "--json", ...args]);
  if (process.env.RECORD_PREVIEWS) {
    mkdirSync(FIXTURES, { recursive: true });
    writeFileSync(path.join(FIXTURES, `${name}.json`), stdout.replaceAll(url, "http://127.0.0.1:8787"));
  }
  return parsePreview(JSON.parse(stdout));
}
