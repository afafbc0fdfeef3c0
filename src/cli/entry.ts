/**
 * The start of every command of the package (`voice-agent-emulator`, `voice-agent-diff`, `voice-agent-export`): checks the
 * Node.js version before anything else loads (the HTTP client needs Node.js 22.19 or newer and
 * fails on older ones with a stack trace), then loads the command and runs it. Keep this module
 * free of imports.
 */

/** The oldest Node.js the commands run on (undici, the HTTP client, requires 22.19.0). */
const MINIMUM = [22, 19] as const;

/** Runs `load().main(argv)` on a recent enough Node.js; otherwise says which one is needed, exit code 1. */
export function startCommand(name: string, load: () => { main(argv: string[]): Promise<void> }): void {
  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
  if (major < MINIMUM[0] || (major === MINIMUM[0] && minor < MINIMUM[1])) {
    process.stderr.write(
      `${name}: needs Node.js >= ${MINIMUM.join(".")}; this is Node.js ${process.versions.node}. ` +
        "Install a newer Node.js (e.g. `nvm install 22`) and run it again.\n",
    );
    process.exitCode = 1;
    return;
  }
  void load().main(process.argv.slice(2));
}
