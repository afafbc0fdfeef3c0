/**
 * Markdown quoting for text from the program, the engine or the service: code spans and fences
 * that nothing inside can close, and plain text that stays plain.
 */

/** A run of backticks longer than every run in `text`, and at least `min` long (CommonMark). */
export function backticks(text: string, min: number): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  return "`".repeat(Math.max(min, longest + 1));
}

/** `text` as an inline code span that no backtick in it can close early. */
export function code(text: string): string {
  const fence = backticks(text, 1);
  // A space each side keeps a leading or trailing backtick (or space) of the content; CommonMark strips it.
  const pad = /^[` ]|[` ]$/.test(text) && text.trim() !== "" ? " " : "";
  return `${fence}${pad}${text}${pad}${fence}`;
}

/**
 * `text` (from the engine, the service or the user) as literal Markdown text on one line: every
 * character that could start markup, HTML, an entity or a table cell is backslash-escaped, and line
 * breaks become spaces, so a message can neither format nor break the report around it.
 */
export function literal(text: string): string {
  return escapeMarkup(oneLine(text));
}

/**
 * One of our sentences on one line, as Markdown: its code spans (written by us: `` `rollback` ``,
 * `` `pulumi refresh` ``) stay code spans; every other character that could start markup is
 * escaped as by {@link literal}, so text quoted into it (a service's message) stays plain.
 */
export function prose(text: string): string {
  const line = oneLine(text);
  let out = "";
  let at = 0;
  // A code span: a run of backticks, closed by a run of the same length (CommonMark).
  for (const m of line.matchAll(/(?<!`)(`+)(?!`)(.*?[^`])\1(?!`)/g)) {
    out += `${escapeMarkup(line.slice(at, m.index))}${m[0]}`;
    at = m.index + m[0].length;
  }
  return out + escapeMarkup(line.slice(at));
}

const oneLine = (text: string) => text.trim().replace(/\s*\n\s*/g, " ");
const escapeMarkup = (text: string) => text.replace(/[\\`*_[\]<>&|~#]/g, "\\$&");
