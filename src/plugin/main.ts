#!/usr/bin/env node
/**
 * The provider plugin's process: `pulumi-resource-voice-agent <engine-address>`. Serves the
 * resources on a free port of 127.0.0.1 and prints it, which is how the engine finds the plugin;
 * exits when the engine that started it is gone.
 */
import { exitWithEngine } from "../provider/lifetime";
import { serve, VoiceAgentProvider } from "./server";

async function main(): Promise<void> {
  exitWithEngine();
  const { port } = await serve(new VoiceAgentProvider());
  process.stdout.write(`${port}\n`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
