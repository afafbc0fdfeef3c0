/**
 * Verified go-live through the real engine against the emulator (calls of 0.2 s): an AgentVersion
 * with `verify` places its test calls pinned to the new version, and the version goes live only if
 * they meet their expectations. One stack goes through: a passing verification; a failure on a
 * status (the earlier version stays live; a retried `up` places no second call; `attempt` re-runs);
 * a failure on an analysis value; a timeout, then the same calls awaited again; an `up` killed
 * after the service placed its calls and before their answers came, then recovered (still one call
 * per check); a verified rollback (pinned); a change of `verify` alone on a live version (no call,
 * no diff after); a bad `verify` refused at preview.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { DEFAULT_API_KEY, startEmulator } from "../../src/emulator";
import { parseEventStream } from "../../src/gitops/events";
import { renderReport } from "../../src/gitops/report";
import { preview as recordedPreview } from "../gitops/previews";
import { recoverAfterKill, spawnPulumi } from "../reliability/support";
import { clearRequestLog, controlCall, requestLog, setFaults } from "../support/control";
import { PulumiProject, REPO_ROOT } from "../support/pulumi";

type Emulator = Awaited<ReturnType<typeof startEmulator>>;
let emu: Emulator;

const CALLER_A = "+14155550101";
const CALLER_B = "+14155550102";

async function api(path: string): Promise<any> {
  const res = await fetch(`${emu.url}${path}`, { headers: { authorization: `Bearer ${DEFAULT_API_KEY}` } });
  const text = await res.text();
  if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

/** What callers do: the emulator's call-outcome rules (empty: every call completes, neutral). */
async function outcomes(rules: unknown[]): Promise<void> {
  const a = await controlCall(emu, "PUT", "/_emulator/call-outcomes", { rules });
  if (a.status !== 200) throw new Error(`call-outcomes: ${a.status} ${JSON.stringify(a.body)}`);
}

/** The calls the API placed for `agentId`, newest first. */
async function callsOf(agentId: string): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  do {
    const page: any = await api(`/v1/calls?origin=api&limit=100${cursor ? `&cursor=${cursor}` : ""}`);
    out.push(...page.data.filter((c: any) => c.agent_id === agentId));
    cursor = page.next_cursor;
  } while (cursor);
  return out;
}

interface Options {
  prompt: string;
  verify?: string;
  pinned?: number;
}

const VERIFY = (extra = "") => `{
    calls: [
      { toNumber: "${CALLER_A}", expect: { analysis: { "Default Analysis": { "User Sentiment": ["positive", "neutral"] } } } },
      { toNumber: "${CALLER_B}", variables: { order_id: "42" }, metadata: { suite: "smoke" }, expect: { status: "completed" } },
    ],${extra}
  }`;

function program(o: Options): string {
  return `
import * as va from "pulumi-voice-agent";
const agent = new va.Agent("support", { name: "Verified agent", systemPrompt: ${JSON.stringify(o.prompt)} });
const version = new va.AgentVersion("support-live", {
  agent,${o.pinned !== undefined ? `\n  version: ${o.pinned},` : ""}
  verify: ${o.verify ?? VERIFY()},
});
export const agentId = agent.agentId;
export const liveVersion = version.version;
export const origin = version.origin;
export const activation = version.activation;
export const verification = version.verification;
`;
}

/**
 * Keeps the event stream of a run (`pulumi up --json`) for the report's tests (test/fixtures/runs) when RECORD_PREVIEWS is
 * set: the engine's events without its debug lines, the emulator's address made constant.
 */
function recordRun(events: string, name: string, url: string): void {
  if (!process.env.RECORD_PREVIEWS) return;
  const dir = path.join(REPO_ROOT, "test/fixtures/runs");
  mkdirSync(dir, { recursive: true });
  const kept = events.split("\n").filter((line) => line.trim() !== "" && !/"severity":"debug"/.test(line));
  writeFileSync(
    path.join(dir, `${name}.jsonl`),
    `${kept.join("\n").replaceAll(url, "http://127.0.0.1:8787")}\n`,
  );
}

const prompt = (n: number) => `## Agent Purpose\nHelp customers with orders (revision ${n}).`;

beforeAll(async () => {
  emu = await startEmulator({ port: 0, callSeconds: 0.2 });
});
afterAll(async () => {
  await emu?.close();
});

describe("AgentVersion verify through the real engine", () => {
  let p: PulumiProject;
  let agentId: string;
  const live = async () => (await api(`/v1/agents/${agentId}`)).live_version as number | null;
  const failure = async (o: Options, args: string[] = []) => {
    p.setProgram(program(o));
    const r = await p.up({ allowFailure: true, args });
    expect(r.code).not.toBe(0);
    return args.includes("--json") ? r.stdout : r.stdout + r.stderr;
  };

  beforeAll(async () => {
    p = await PulumiProject.create({
      program: program({ prompt: prompt(0) }),
      config: { "voice-agent:baseUrl": emu.url },
      secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
    });
  });
  afterAll(async () => {
    await p?.pulumi(["destroy", "--yes"], { allowFailure: true });
    p?.cleanup();
  });

  test("a passing verification puts the version live after its calls", async () => {
    await clearRequestLog(emu);
    await p.up();
    const out = await p.outputs();
    agentId = out.agentId as string;
    expect(out.liveVersion).toBe(0);
    expect(await live()).toBe(0);
    const calls = await callsOf(agentId);
    expect(calls.map((c) => [c.to_number, c.agent_version, c.origin, c.status]).sort()).toEqual([
      [CALLER_A, 0, "api", "completed"],
      [CALLER_B, 0, "api", "completed"],
    ]);
    expect(calls.find((c) => c.to_number === CALLER_B)).toMatchObject({
      variables: { order_id: "42" },
      metadata: { suite: "smoke" },
    });
    expect(out.verification).toEqual({
      version: 0,
      attempt: 0,
      passed: true,
      calls: [
        {
          id: calls.find((c) => c.to_number === CALLER_A).id,
          toNumber: CALLER_A,
          status: "completed",
          analysis: { "Default Analysis": { "User Sentiment": "neutral" } },
          passed: true,
        },
        {
          id: calls.find((c) => c.to_number === CALLER_B).id,
          toNumber: CALLER_B,
          status: "completed",
          passed: true,
        },
      ],
    });
    // The calls come first, the live pointer last: every call was read finished before the activation.
    const log = (await requestLog(emu)).map((e) => `${e.method} ${e.path.split("?")[0]}`);
    const activation = log.lastIndexOf(`POST /v1/agents/${agentId}/activations`);
    expect(activation).toBeGreaterThan(0);
    for (const c of calls) expect(log.lastIndexOf(`GET /v1/calls/${c.id}`)).toBeLessThan(activation);
    expect(log.filter((l) => l === "POST /v1/calls")).toHaveLength(2);

    await p.preview({ expectNoChanges: true });
    await p.refresh({ expectNoChanges: true });
    // Nothing to put live: no call.
    await clearRequestLog(emu);
    await p.up();
    expect((await requestLog(emu)).filter((e) => e.path.startsWith("/v1/calls"))).toEqual([]);
  });

  test("a failure on a status keeps the earlier version live; a retried up places no second call; attempt re-runs", async () => {
    await outcomes([{ match: { to_number: CALLER_A }, status: "no_answer" }]);
    // The preview says what the up will place; the up's event stream carries the failure to the report.
    p.setProgram(program({ prompt: prompt(1) }));
    const planned = renderReport(await recordedPreview(p, "verify-prompt-change", emu.url));
    expect(planned).toContain(
      `places **2 test calls** pinned to it, to \`${CALLER_A}\` and \`${CALLER_B}\`; it goes live only if every expectation holds`,
    );
    const events = await failure({ prompt: prompt(1) }, ["--json"]);
    const run = parseEventStream(events);
    const text = (run.diagnostics ?? []).map((d) => d.message).join("\n");
    const report = renderReport(run);
    const section = report.slice(report.indexOf("AgentVersion `support-live`"));
    expect(section).toContain("**Verification failed**: the version did not go live.");
    expect(section).toContain('status: expected "completed", got "no_answer"');
    recordRun(events, "verify-failed-up", emu.url);
    const failed = (await callsOf(agentId)).find((c) => c.agent_version === 1 && c.to_number === CALLER_A);
    expect(failed.status).toBe("no_answer");
    expect(text).toContain(`Verification of version 1 of agent ${agentId} failed: 1 of 2 test calls`);
    expect(text).toContain(`test call 0 to ${CALLER_A}: ${failed.id} ${failed.dashboard_url}`);
    expect(text).toContain('status: expected "completed", got "no_answer"');
    expect(text).toContain("version 0 stays live");
    expect(await live()).toBe(0);
    expect((await p.outputs()).liveVersion).toBe(0);
    const published = await api(`/v1/agents/${agentId}/versions/1`);
    expect(published).toMatchObject({ is_published: true, is_live: false });

    // The same up again judges the same calls: none is placed again.
    await clearRequestLog(emu);
    expect(await failure({ prompt: prompt(1) })).toContain(`${failed.id} ${failed.dashboard_url}`);
    expect((await requestLog(emu)).filter((e) => e.method === "POST" && e.path === "/v1/calls")).toHaveLength(
      2,
    );
    expect((await callsOf(agentId)).filter((c) => c.agent_version === 1)).toHaveLength(2);
    expect(await live()).toBe(0);

    // The callee answers again; a raised attempt places the calls anew and the version goes live.
    await outcomes([]);
    p.setProgram(program({ prompt: prompt(1), verify: VERIFY("\n    attempt: 1,") }));
    await p.upAndSettle();
    expect((await callsOf(agentId)).filter((c) => c.agent_version === 1)).toHaveLength(4);
    expect(await live()).toBe(1);
    expect(((await p.outputs()).verification as any).attempt).toBe(1);
  });

  test("a failure on an analysis value names the analysis, what was expected and what the call gave", async () => {
    await outcomes([
      { match: { to_number: CALLER_A }, analysis: { "Default Analysis": { "User Sentiment": "negative" } } },
    ]);
    const text = await failure({ prompt: prompt(2) });
    const failed = (await callsOf(agentId)).find((c) => c.agent_version === 2 && c.to_number === CALLER_A);
    expect(text).toContain(`Verification of version 2 of agent ${agentId} failed: 1 of 2 test calls`);
    expect(text).toContain(`${failed.id} ${failed.dashboard_url}`);
    expect(text).toContain(
      'analysis "Default Analysis" / "User Sentiment": expected one of "positive", "neutral", got "negative"',
    );
    expect(text).toContain("version 1 stays live");
    expect(await live()).toBe(1);
  });

  test("a timeout names the calls that had not finished; the next up waits for the same calls", async () => {
    await outcomes([]);
    const text = await failure({
      prompt: prompt(2),
      verify: VERIFY("\n    attempt: 1,\n    timeoutSeconds: 0.05,"),
    });
    expect(text).toContain(`Verification of version 2 of agent ${agentId} timed out after 0.05 s`);
    const placed = (await callsOf(agentId)).filter((c) => c.agent_version === 2).slice(0, 2);
    for (const c of placed) expect(text).toContain(c.id);
    expect(await live()).toBe(1);
    p.setProgram(program({ prompt: prompt(2), verify: VERIFY("\n    attempt: 1,") }));
    await p.upAndSettle();
    expect((await callsOf(agentId)).filter((c) => c.agent_version === 2)).toHaveLength(4);
    expect(await live()).toBe(2);
  });

  test("an up killed while its calls run, then recovered, places one call per check", async () => {
    p.setProgram(program({ prompt: prompt(3) }));
    await clearRequestLog(emu);
    // A deterministic kill point: the service places the calls and their answers never come, so the
    // up is killed with the calls placed and their ids unknown to it.
    const hold = { method: "POST", path: "/v1/calls" } as const;
    await setFaults(emu, { hold_after_commit: [hold, hold] });
    const run = spawnPulumi(p, ["up", "--yes", "--skip-preview"]);
    const t0 = performance.now();
    const held = async () =>
      (await requestLog(emu)).filter((e) => e.path === "/v1/calls" && e.dropped === "held").length;
    while ((await held()) < 2) {
      if (performance.now() - t0 > 120_000) throw new Error(`no calls placed:\n${run.output()}`);
      await sleep(50);
    }
    run.killGroup();
    await run.done;
    await setFaults(emu, {});
    expect((await callsOf(agentId)).filter((c) => c.agent_version === 3)).toHaveLength(2);
    expect(await live()).toBe(2);
    await recoverAfterKill(p);
    // The recovered up placed the same two checks again: answered with the calls already placed.
    expect((await callsOf(agentId)).filter((c) => c.agent_version === 3)).toHaveLength(2);
    expect(await live()).toBe(3);
    await p.preview({ expectNoChanges: true });
    await p.refresh({ expectNoChanges: true });
  });

  test("a verified rollback: a pinned version goes live after its own calls", async () => {
    p.setProgram(program({ prompt: prompt(3), pinned: 0 }));
    await p.upAndSettle();
    const out = await p.outputs();
    expect(out).toMatchObject({ liveVersion: 0, origin: "pinned", activation: "rollback" });
    const rollbackCalls = (await callsOf(agentId)).slice(0, 2);
    expect(rollbackCalls.map((c) => c.agent_version)).toEqual([0, 0]);
    expect((out.verification as any).calls.map((c: any) => c.id).sort()).toEqual(
      rollbackCalls.map((c) => c.id).sort(),
    );
    expect(await live()).toBe(0);
  });

  test("changing verify alone on a live version places no call and leaves no diff", async () => {
    await clearRequestLog(emu);
    p.setProgram(
      program({
        prompt: prompt(3),
        pinned: 0,
        verify: `{ calls: [{ toNumber: "${CALLER_B}", metadata: { suite: "nightly" } }], timeoutSeconds: 120 }`,
      }),
    );
    await p.upAndSettle();
    expect((await requestLog(emu)).filter((e) => e.path.startsWith("/v1/calls"))).toEqual([]);
    expect(await live()).toBe(0);
  });
  test("a bad verify fails the preview, each problem named by its field, and writes nothing", async () => {
    await clearRequestLog(emu);
    p.setProgram(
      program({
        prompt: prompt(4),
        verify: `{ calls: [{ toNumber: "0800 123 456", expect: { analysis: { G: { x: { pattern: "(" } } }, statuses: [] } }], timeoutSeconds: 0 }`,
      }),
    );
    const r = await p.preview({ allowFailure: true });
    expect(r.code).not.toBe(0);
    const text = r.stdout + r.stderr;
    expect(text).toMatch(/verify\.calls\[0\]\.toNumber: must be an E\.164 number/);
    expect(text).toMatch(
      /verify\.calls\[0\]\.expect\.analysis\.G\.x\.pattern: not a valid regular expression/,
    );
    expect(text).toMatch(/verify\.calls\[0\]\.expect\.statuses: not an input \(did you mean status\?\)/);
    expect(text).toMatch(/verify\.timeoutSeconds: Input should be greater than 0/);
    expect((await requestLog(emu)).filter((e) => e.method !== "GET")).toEqual([]);
  });
});
