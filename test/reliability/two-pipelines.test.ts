/**
 * Two pipelines, one key (issues #28, #40): two stacks of different teams, using the same API key,
 * run `pulumi up` at the same moment, then change every agent at the same moment. Neither sees the
 * other's requests; each paces itself by what the service's answers say of the key
 * (`X-RateLimit-Remaining` and `-Reset`). Both must exit 0 with no 429 in their output, at most 1 %
 * of all requests may be answered 429, and together they finish within 1.1 times the rate bound of
 * their combined requests.
 *
 * Smaller than the issue's 2 × 150 agents at 300 a minute: 2 × 30 agents at 100 a minute (both the
 * emulator's limit and the stacks' configured pace), so that each phase's combined requests (about
 * 205 to create, 225 to change: an agent's change patches, publishes and activates; the first
 * agents a stack changes are read first, the others found in a page of the agent list)
 * need three windows of the limit: a bound of two minutes, reached in about 4.5 minutes for
 * the file. At 2 × 11 agents and 40 a minute (91 and 110 requests) one race for the last slot of a
 * window was already 1.1 %: the size keeps 1 % a share, not a single request. The full-size figures are in docs/performance.md ("Two pipelines, one key").
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { UPDATES_PER_PAGE } from "../../src/resources/agent/summaries";
import { clearRateLimit } from "../support/control";
import {
  agentsProgram,
  clearRequestLog,
  type Emulator,
  newProject,
  type PulumiProject,
  type RunResult,
  requestLog,
  startEmulator,
} from "./support";

/** `PVA_TWO_PIPELINES=<agents>:<limit>` runs another size (the issue's: `150:300`, about 8 minutes). */
const [AGENTS, LIMIT] = (process.env.PVA_TWO_PIPELINES ?? "30:100").split(":").map(Number) as [
  number,
  number,
];
/** With the default size each phase's combined requests need three windows: a bound of two minutes. */
const DEFAULT_SIZE = process.env.PVA_TWO_PIPELINES === undefined;

let emu: Emulator;
let teams: PulumiProject[] = [];

beforeAll(async () => {
  emu = await startEmulator({ port: 0, rateLimitPerMinute: LIMIT });
  teams = await Promise.all(
    ["team-a", "team-b"].map((name) =>
      newProject(emu, agentsProgram(AGENTS, name), { ratePerMinute: LIMIT, name }),
    ),
  );
}, 300_000);

afterAll(async () => {
  for (const p of teams) p.cleanup();
  await emu?.close();
});

/**
 * Runs `step` on both stacks at the same moment, from a fresh rate window; returns the wall time
 * until both are done, the requests the emulator admitted and refused, and the rate bound: with a
 * fresh moving window the first LIMIT requests go at once, so the last of n cannot go before
 * floor((n - 1) / LIMIT) minutes.
 */
async function together(step: (p: PulumiProject) => Promise<RunResult>) {
  await clearRateLimit(emu);
  await clearRequestLog(emu);
  const t0 = performance.now();
  const results = await Promise.all(teams.map(step));
  const seconds = (performance.now() - t0) / 1000;
  const log = (await requestLog(emu)).filter((r) => r.path.startsWith("/v1"));
  const refused = log.filter((r) => r.status === 429).length;
  const admitted = log.length - refused;
  const bound = Math.floor((admitted - 1) / LIMIT) * 60;
  console.log(
    `two pipelines: ${admitted} requests admitted, ${refused} answered 429; ${seconds.toFixed(1)} s ` +
      `against a bound of ${bound} s (ratio ${(seconds / bound).toFixed(2)})`,
  );
  return { results, seconds, admitted, refused, bound, log };
}

function expectClean(results: RunResult[]): void {
  for (const r of results) {
    expect(r.code, `${r.stdout}\n${r.stderr}`.slice(-4000)).toBe(0);
    expect(`${r.stdout}\n${r.stderr}`).not.toMatch(/\b429\b|rate_limited|rate limit|too many requests/i);
  }
}

describe("two pipelines, one key", () => {
  test("both up at once, then both change every agent at once: exit 0, at most 1 % answered 429, within 1.1× the bound", async () => {
    const created = await together((p) => p.up({ allowFailure: true }));
    expectClean(created.results);
    // Each stack alone would take the whole window; the service's headers tell each of the other.
    // At most 1 % (one at this size: ~100 requests, where a window of 40 leaves a hold of one).
    expect(created.refused).toBeLessThanOrEqual(Math.max(1, 0.01 * (created.admitted + created.refused)));
    // Three windows at the default size (another size's bound is what its requests make it).
    expect(created.bound).toBe(DEFAULT_SIZE ? 120 : Math.floor((created.admitted - 1) / LIMIT) * 60);
    expect(created.seconds).toBeLessThanOrEqual(1.1 * created.bound);

    for (const [i, p] of teams.entries()) {
      p.setProgram(
        agentsProgram(AGENTS, ["team-a", "team-b"][i] as string, { prompt: "Help with returns." }),
      );
    }
    const changed = await together((p) => p.up({ allowFailure: true }));
    expectClean(changed.results);
    expect(changed.refused).toBeLessThanOrEqual(Math.max(1, 0.01 * (changed.admitted + changed.refused)));
    expect(changed.bound).toBe(DEFAULT_SIZE ? 120 : Math.floor((changed.admitted - 1) / LIMIT) * 60);
    expect(changed.seconds).toBeLessThanOrEqual(1.1 * changed.bound);
    // Each stack reads its first few agents; the agent list (a page of 100) tells it of the others.
    const reads = changed.log.filter((r) => r.method === "GET" && /^\/v1\/agents\/[^/?]+(\?|$)/.test(r.path));
    const listings = changed.log.filter((r) => r.method === "GET" && /^\/v1\/agents(\?|$)/.test(r.path));
    expect(reads.length).toBeLessThanOrEqual(2 * (UPDATES_PER_PAGE - 1));
    expect(listings.length).toBeGreaterThanOrEqual(2);
    expect(listings.length).toBeLessThanOrEqual(2 * Math.ceil(AGENTS / UPDATES_PER_PAGE));
    // Every agent of both stacks has its new prompt live.
    for (const p of teams) await p.preview({ expectNoChanges: true });
    const live = (await requestLog(emu)).filter(
      (r) => r.method === "POST" && r.path.endsWith("/activations"),
    );
    expect(live.filter((r) => r.status < 300)).toHaveLength(2 * AGENTS);
  }, 1_200_000);
});
