#!/usr/bin/env node
/**
 * voice-agent-diff's entry point. It only checks the Node.js version, then loads the command
 * (`run.ts`): on an older Node.js (20 is the default of many CI images) the command's
 * dependencies would fail to load with a stack trace instead of saying what is needed.
 */
const major = Number(process.versions.node.split(".")[0]);
if (major < 22) {
  process.stderr.write(
    `voice-agent-diff needs Node.js 22 or newer; this is Node.js ${process.version}. ` +
      "In GitHub Actions, add actions/setup-node with node-version: 24 before this step.\n",
  );
  process.exitCode = 1;
} else {
  (require("./run") as typeof import("./run")).main(process.argv.slice(2));
}
