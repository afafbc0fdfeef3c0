#!/usr/bin/env node
/**
 * voice-agent-diff: turns `pulumi preview --json` into Markdown for a pull-request comment.
 *
 *   pulumi preview --json > preview.json && voice-agent-diff preview.json > comment.md
 *   pulumi preview --json | voice-agent-diff --title "prod" > comment.md
 */
import { readFileSync } from "node:fs";
import { renderReport } from "./report";

function main(argv: string[]): void {
  let title: string | undefined;
  let file: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--title") title = argv[++i];
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
  process.stdout.write(renderReport(preview as Parameters<typeof renderReport>[0], title ? { title } : {}));
}

try {
  main(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
}
