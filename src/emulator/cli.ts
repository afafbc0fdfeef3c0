#!/usr/bin/env node
/**
 * voice-agent-emulator's entry point: checks the Node.js version before anything else loads, then
 * runs the command (`run.ts`), so an older Node.js gets a sentence instead of a stack trace. Keep
 * this file free of imports.
 */

/** The oldest Node.js the command runs on (as for voice-agent-diff: the package needs 22.19). */
const MINIMUM = [22, 19] as const;

const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
if (major < MINIMUM[0] || (major === MINIMUM[0] && minor < MINIMUM[1])) {
  process.stderr.write(
    `voice-agent-emulator: needs Node.js >= ${MINIMUM.join(".")}; this is Node.js ${process.versions.node}. ` +
      "Install a newer Node.js and run it again.\n",
  );
  process.exitCode = 1;
} else {
  (require("./run") as typeof import("./run")).main(process.argv.slice(2));
}
