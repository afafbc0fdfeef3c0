#!/usr/bin/env node
/**
 * The `voice-agent-export` command's entry: checks the Node.js version before anything else loads
 * (the HTTP client needs Node.js 22.19 or newer and fails on older ones with a stack trace), then
 * runs the command (./main). Keep this file free of imports.
 */

/** The oldest Node.js the command runs on (undici, the HTTP client, requires 22.19.0). */
const MINIMUM = [22, 19] as const;

const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
if (major < MINIMUM[0] || (major === MINIMUM[0] && minor < MINIMUM[1])) {
  process.stderr.write(
    `voice-agent-export: needs Node.js >= ${MINIMUM.join(".")}; this is Node.js ${process.versions.node}. ` +
      "Install a newer Node.js (e.g. `nvm install 22`) and run it again.\n",
  );
  process.exitCode = 1;
} else {
  const { main } = require("./main") as typeof import("./main");
  void main(process.argv.slice(2));
}
