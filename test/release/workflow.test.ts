/**
 * .github/workflows/release.yml: a `v*` tag runs `npm run release:dry-run` (on Node 24, with Go and
 * the Python build tools), checks the tag is the build's version, and uploads what dist/release
 * holds: a GitHub release with the plugin's archives, SHA256SUMS, the npm tarball, the schema and
 * the Python SDK; the Go SDK's tag `sdk/v<version>`; the npm package, with a token secret. That the
 * upload names every file the dry run writes is checked against a real dry run in
 * test/release/release.e2e.test.ts.
 */
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, test } from "vitest";
import { parse } from "yaml";
import { REPO_ROOT } from "../support/pulumi";

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
  env?: Record<string, string>;
  "working-directory"?: string;
}
const workflow = parse(readFileSync(path.join(REPO_ROOT, ".github/workflows/release.yml"), "utf8")) as {
  on: { push: { tags: string[] } };
  permissions: Record<string, string>;
  jobs: Record<string, { steps: Step[] }>;
};
const steps = Object.values(workflow.jobs).flatMap((j) => j.steps);
const index = (pred: (s: Step) => boolean, what: string): number => {
  const i = steps.findIndex(pred);
  expect(i, `no step ${what}`).toBeGreaterThanOrEqual(0);
  return i;
};

describe("the release workflow", () => {
  test("runs on a v* tag, may write the release and the tag", () => {
    expect(workflow.on.push.tags.every((t) => t.startsWith("v"))).toBe(true);
    expect(workflow.on.push.tags.length).toBeGreaterThan(0);
    expect(workflow.permissions.contents).toBe("write");
  });

  test("sets up Node 24, Go from sdk/go.mod, the full history; checks the tag is the version; runs the dry run", () => {
    const checkout = steps[index((s) => s.uses?.startsWith("actions/checkout@") === true, "checkout")];
    expect(checkout?.with?.["fetch-depth"]).toBe(0);
    const node = steps[index((s) => s.uses?.startsWith("actions/setup-node@") === true, "setup-node")];
    expect(String(node?.with?.["node-version"])).toBe("24");
    const go = steps[index((s) => s.uses?.startsWith("actions/setup-go@") === true, "setup-go")];
    expect(go?.with?.["go-version-file"]).toBe("sdk/go.mod");
    const ci = index((s) => s.run?.trim() === "npm ci", "npm ci");
    const tagCheck = index(
      (s) => /node scripts\/version\.js/.test(s.run ?? "") && /GITHUB_REF_NAME/.test(s.run ?? ""),
      "checking the tag",
    );
    const dryRun = index((s) => s.run?.trim() === "npm run release:dry-run", "npm run release:dry-run");
    expect(ci).toBeLessThan(tagCheck);
    expect(tagCheck).toBeLessThan(dryRun);
    const sums = index((s) => /sha256sum --check SHA256SUMS/.test(s.run ?? ""), "checking SHA256SUMS");
    expect(steps[sums]?.["working-directory"]).toBe("dist/release");
    expect(dryRun).toBeLessThan(sums);
  });

  test("after the dry run: the GitHub release with dist/release's files, the Go SDK's tag, the npm package", () => {
    const dryRun = index((s) => s.run?.trim() === "npm run release:dry-run", "the dry run");
    const release = index((s) => /gh release create/.test(s.run ?? ""), "gh release create");
    const run = steps[release]?.run ?? "";
    expect(run).toMatch(/cd dist\/release/);
    for (const file of [
      'pulumi-resource-voice-agent-v"$VERSION"-*.tar.gz',
      "SHA256SUMS",
      '"pulumi-voice-agent-$VERSION.tgz"',
      '"pulumi-voice-agent-schema-v$VERSION.json"',
      "pulumi_voice_agent-*",
    ]) {
      expect(run).toContain(file);
    }
    expect(steps[release]?.env?.GH_TOKEN).toMatch(/github\.token|secrets\.GITHUB_TOKEN/);
    const goTag = index(
      (s) => /git push origin "sdk\/v\$VERSION"/.test(s.run ?? ""),
      "pushing sdk/v<version>",
    );
    const publish = index(
      (s) => /npm publish "dist\/release\/pulumi-voice-agent-\$VERSION\.tgz"/.test(s.run ?? ""),
      "npm publish",
    );
    expect(steps[publish]?.env?.NODE_AUTH_TOKEN).toBe("${{ secrets.NPM_TOKEN }}");
    expect(dryRun).toBeLessThan(release);
    expect(release).toBeLessThan(goTag);
    expect(goTag).toBeLessThan(publish);
  });
});
