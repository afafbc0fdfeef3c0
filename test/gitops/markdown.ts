/**
 * Reading the report's Markdown back as CommonMark does, for the parts the report uses: fenced code
 * blocks (backtick fences, outside any container) and inline code spans.
 */

/** The fenced code blocks of `md`: info string and content lines. An unclosed block runs to the end. */
export function fencedBlocks(md: string): { info: string; lines: string[] }[] {
  const blocks: { info: string; lines: string[] }[] = [];
  let open: { fence: number; info: string; lines: string[] } | undefined;
  for (const line of md.split("\n")) {
    if (open) {
      // A closing fence: up to 3 spaces of indentation, at least as many backticks, nothing else.
      const close = /^ {0,3}(`+)[ \t]*$/.exec(line);
      if (close && (close[1] as string).length >= open.fence) {
        blocks.push({ info: open.info, lines: open.lines });
        open = undefined;
      } else {
        open.lines.push(line);
      }
    } else {
      const start = /^ {0,3}(`{3,})([^`]*)$/.exec(line);
      if (start) open = { fence: (start[1] as string).length, info: (start[2] as string).trim(), lines: [] };
    }
  }
  if (open) blocks.push({ info: open.info, lines: open.lines });
  return blocks;
}

/** The contents of the inline code spans of one line (a backtick string closes only an equal one). */
export function codeSpans(line: string): string[] {
  const spans: string[] = [];
  const runs = [...line.matchAll(/`+/g)];
  for (let i = 0; i < runs.length; i++) {
    const open = runs[i] as RegExpMatchArray;
    const closing = runs.findIndex((r, j) => j > i && r[0].length === open[0].length);
    if (closing < 0) continue;
    const close = runs[closing] as RegExpMatchArray;
    let content = line.slice((open.index as number) + open[0].length, close.index);
    if (content.startsWith(" ") && content.endsWith(" ") && content.trim() !== "")
      content = content.slice(1, -1);
    spans.push(content);
    i = closing;
  }
  return spans;
}

/** The section of a report about the resource `name`: from its `####` heading to the next heading. */
export function section(md: string, name: string): string {
  const lines = md.split("\n");
  const start = lines.findIndex((l) => l.startsWith("#### ") && codeSpans(l)[0] === name);
  if (start < 0) throw new Error(`no section for ${name} in:\n${md}`);
  const end = lines.findIndex((l, i) => i > start && /^#{3,4} /.test(l));
  return lines.slice(start, end < 0 ? undefined : end).join("\n");
}
