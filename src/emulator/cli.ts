#!/usr/bin/env node
/**
 * voice-agent-emulator's entry point. It only checks the Node.js version, then loads the command
 * (`run.ts`), so an older Node.js gets a sentence instead of a stack trace.
 */
const major = Number(process.versions.node.split(".")[0]);
if (major < 22) {
  process.stderr.write(
    `voice-agent-emulator needs Node.js 22 or newer; this is Node.js ${process.version}.\n`,
  );
  process.exitCode = 1;
} else {
  (require("./run") as typeof import("./run")).main(process.argv.slice(2));
}
