/** Markdown quoting for text from the program: code spans and fences that nothing inside can close. */

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
