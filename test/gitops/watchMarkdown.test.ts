/**
 * The watch's report reads right where it is shown (a job summary, an issue): rendered by a
 * Markdown parser, its code spans are code and the service's words are plain text, with no stray
 * backslash or backtick left for the reader.
 */
import { beforeAll, describe, expect, test } from "vitest";
import { renderWatch, type WatchResult } from "../../src/gitops/watch";

/** What a reader sees: the rendered HTML's text, tags dropped, entities decoded. */
const seen = (html: string) =>
  html
    .replace(/<[^>]+>/g, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&");

const result = (over: Partial<WatchResult>): WatchResult => ({
  urn: "urn:pulumi:dev::voice-agents::pulumi-voice-agent:index:AgentVersion::support-live",
  name: "support-live",
  agentId: "ag_1",
  version: 1,
  outcome: "rolled_back",
  liveSince: "2026-11-26T10:00:00.000Z",
  previous: 0,
  confidence: 0.95,
  minCalls: 20,
  rates: [],
  action: "",
  ...over,
});

describe("the watch report rendered as Markdown", () => {
  const md = renderWatch({
    stack: "dev",
    at: "2026-11-26T11:00:00.000Z",
    dryRun: false,
    results: [
      result({
        action:
          "put version 0 back live at 2026-11-26T11:00:01.000Z (`rollback`); why is in version 0's notes",
      }),
      result({
        name: "other-live",
        outcome: "failing",
        action: "stays live: nothing to roll back to",
        problem: "a bound is exceeded, but version 3 is blocked and cannot go live: <b>policy</b> *x* | y_z",
      }),
      result({
        name: "third-live",
        outcome: "not_live",
        action: "not judged: not live any more; the next `pulumi refresh` records it",
      }),
    ],
  });
  let html = "";
  let text = "";
  beforeAll(async () => {
    // marked is an ES module: imported, not required.
    const { marked } = await import("marked");
    html = marked.parse(md, { async: false });
    text = seen(html);
  });

  test("our code spans render as code", () => {
    expect(html).toContain("<code>rollback</code>");
    expect(html).toContain("<code>pulumi refresh</code>");
    expect(text).toContain(
      "put version 0 back live at 2026-11-26T11:00:01.000Z (rollback); why is in version 0's notes",
    );
    expect(text).toContain("the next pulumi refresh records it");
  });

  test("the service's words stay plain text: no markup, no escape left visible", () => {
    expect(text).toContain("version 3 is blocked and cannot go live: <b>policy</b> *x* | y_z");
    expect(html).not.toContain("<b>policy</b>");
    expect(text).not.toMatch(/\\/);
    expect(text.replace(/<b>policy<\/b> \*x\* \| y_z/, "")).not.toMatch(/[`*]/);
  });
});
