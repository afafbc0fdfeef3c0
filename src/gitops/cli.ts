#!/usr/bin/env node
/**
 * voice-agent-diff: turns `pulumi preview --json` into Markdown for a pull-request comment.
 *
 *   pulumi preview --json > preview.json && voice-agent-diff preview.json > comment.md
 *   pulumi preview --json | voice-agent-diff --title "prod" > comment.md
 *
 * With --resolve it also asks the service (VOICE_AGENT_BASE_URL, VOICE_AGENT_API_KEY) which
 * published version a revert will bring back.
 */
import { readFileSync } from "node:fs";
import { closeDispatchers, configFromPulumi, VoiceAgentClient } from "../client";
import { findReusedVersions, renderReport } from "./report";

async function main(argv: string[]): Promise<void> {
  let title: string | undefined;
  let file: string | undefined;
  let resolve = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--title") title = argv[++i];
    else if (arg === "--resolve") resolve = true;
    else if (arg === "-h" || arg === "--help") {
      process.stdout.write(
        "usage: voice-agent-diff [--title TEXT] [preview.json]   (reads stdin without a file)\n",
      );
      return;
    } else file = arg;
  }
  const text = readFileSync(file ?? 0, "utf8");
  let preview: unknown;
  try {
    preview = JSON.parse(text);
  } catch {
    throw new Error(`voice-agent-diff: ${file ?? "stdin"} is not the JSON of \`pulumi preview --json\``);
  }
  const doc = preview as Parameters<typeof renderReport>[0];
  const reused = resolve
    ? await findReusedVersions(doc, new VoiceAgentClient(configFromPulumi(undefined)))
    : undefined;
  process.stdout.write(renderReport(doc, { ...(title ? { title } : {}), ...(reused ? { reused } : {}) }));
}

main(process.argv.slice(2))
  .catch((err) => {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exitCode = 1;
  })
  .finally(() => closeDispatchers());
