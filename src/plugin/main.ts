#!/usr/bin/env node
/**
 * The provider plugin's process: `pulumi-resource-voice-agent <engine-address>`. Serves the
 * resources on a free port of 127.0.0.1 and prints it, which is how the engine finds the plugin;
 * exits when the engine that started it is gone.
 */
import { exitWithEngine } from "../provider/lifetime";
import { engineLog, serve, VoiceAgentProvider } from "./server";

async function main(): Promise<void> {
  // The plugin's process is always a provider's: the engine started it (the archive's single
  // executable: no launcher shell between them).
  exitWithEngine(process.argv, true);
  const engine = engineAddress(process.argv.slice(2));
  const { port } = await serve(
    new VoiceAgentProvider(undefined, undefined, engine ? engineLog(engine) : undefined),
  );
  process.stdout.write(`${port}\n`);
}

/** The engine's address among the plugin's arguments: the first that is no logging or tracing flag. */
function engineAddress(args: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--tracing") i++;
    else if (arg !== "--logtostderr" && !arg.startsWith("-v=")) return arg;
  }
  return undefined;
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
