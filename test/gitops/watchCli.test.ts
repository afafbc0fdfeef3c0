/**
 * `voice-agent-diff --watch` as a command (the built CLI, against the emulator): one pass with
 * `--dry-run` and `--json`, exit code 6 without changing anything; `--every` runs a pass again and
 * again, reading the refresh file anew each time, until SIGTERM, and exits with the code of what it
 * did; the API key never printed.
 */
import { execFile, spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, expect, test } from "vitest";
import { closeDispatchers, VoiceAgentClient } from "../../src/client";
import { DEFAULT_API_KEY, type RunningEmulator, startEmulator } from "../../src/emulator";
import { TYPE_PREFIX } from "../../src/resources/typeNames";
import { clearRequestLog, requestLog, setCallOutcomes, trafficCall } from "../support/control";
import { REPO_ROOT, tempDir } from "../support/pulumi";

const CLI = path.join(REPO_ROOT, "dist/gitops/cli.js");
const WATCH = { rates: [{ analysis: "Default Analysis/User Sentiment", value: "negative", atMost: 0.2 }] };

let emu: RunningEmulator;
let client: VoiceAgentClient;
let dir: string;
beforeAll(async () => {
  emu = await startEmulator({ port: 0, callSeconds: 0.05 });
  client = new VoiceAgentClient({ baseUrl: emu.url, apiKey: DEFAULT_API_KEY });
  dir = tempDir("watch-cli-");
});
afterAll(async () => {
  await closeDispatchers();
  await emu?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** An agent with versions 0 and 1, version 1 live, and `negative` of `n` inbound calls unhappy. */
async function watchedAgent(name: string, n: number, negative: number) {
  const a = await client.agents.create({ name, system_prompt: "## Agent Purpose\nv0" });
  await client.versions.publish(a.id, 0);
  await client.versions.activate(a.id, 0);
  await client.agents.patch(a.id, { system_prompt: "## Agent Purpose\nv1" });
  await client.versions.publish(a.id, 1);
  await client.versions.activate(a.id, 1);
  for (let i = 0; i < n; i++) {
    const sentiment = i < negative ? "negative" : "positive";
    await setCallOutcomes(emu, [
      { match: { agent_id: a.id }, analysis: { "Default Analysis": { "User Sentiment": sentiment } } },
    ]);
    await trafficCall(emu, { agent_id: a.id, direction: "inbound" } as never);
  }
  await setCallOutcomes(emu, []);
  await sleep(500);
  return a.id;
}

/** A refresh JSON file of a stack with the watched AgentVersion of each agent. */
function refreshFile(name: string, agentIds: string[], stack = "prod"): string {
  const steps = [
    { op: "refresh", urn: `urn:pulumi:${stack}::cli::pulumi:pulumi:Stack::cli-${stack}` },
    ...agentIds.map((agentId, i) => {
      const inputs = { agentId, live: true, watch: WATCH, draftVersion: 1, documentRevision: 1 };
      const state = {
        type: `${TYPE_PREFIX}AgentVersion`,
        id: `${agentId}/0`,
        inputs,
        outputs: { ...inputs, version: 1, isLive: true },
      };
      return {
        op: "refresh",
        urn: `urn:pulumi:${stack}::cli::${TYPE_PREFIX}AgentVersion::live-${i}`,
        oldState: state,
        newState: state,
      };
    }),
  ];
  const file = path.join(dir, name);
  writeFileSync(file, JSON.stringify({ steps }));
  return file;
}

const env = () => ({ ...process.env, VOICE_AGENT_BASE_URL: emu.url, VOICE_AGENT_API_KEY: DEFAULT_API_KEY });

test("a folder of refresh files: one pass over every stack, one listing of each kind, a section per stack", async () => {
  const bad = await watchedAgent("CLI stack B", 30, 20);
  const quiet = await watchedAgent("CLI stack A", 5, 0);
  const folder = path.join(dir, "stacks");
  mkdirSync(folder);
  refreshFile(path.join("stacks", "a.json"), [quiet], "prod-a");
  refreshFile(path.join("stacks", "b.json"), [bad], "prod-b");
  const json = path.join(dir, "stacks-watch.json");
  await clearRequestLog(emu);
  const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [CLI, "--watch", "--dry-run", "--json", json, folder],
      { env: env() },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code) : 0, stdout, stderr }),
    );
  });
  expect(r.stderr).toBe("");
  expect(r.code).toBe(6);
  expect(r.stdout).toContain("### Voice agents: watch of stack `prod-a`");
  expect(r.stdout).toContain("### Voice agents: watch of stack `prod-b`");
  expect(r.stdout.indexOf("prod-a")).toBeLessThan(r.stdout.indexOf("prod-b"));
  expect(JSON.parse(readFileSync(json, "utf8"))).toMatchObject({
    dryRun: true,
    stacks: [
      { stack: "prod-a", results: [{ agentId: quiet, outcome: "inconclusive" }] },
      { stack: "prod-b", results: [{ agentId: bad, outcome: "would_roll_back" }] },
    ],
  });
  const log = (await requestLog(emu)).filter((e) => e.method === "GET");
  expect(log.filter((e) => /^\/v1\/agents(\?|$)/.test(e.path))).toHaveLength(1);
  expect(log.filter((e) => /^\/v1\/calls(\?|$)/.test(e.path))).toHaveLength(1);
});

test("one pass with --dry-run and --json: exit 6, what it would do, nothing changed", async () => {
  const agentId = await watchedAgent("CLI dry run", 30, 20);
  const file = refreshFile("dry.json", [agentId]);
  const json = path.join(dir, "dry-watch.json");
  await clearRequestLog(emu);
  const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [CLI, "--watch", "--dry-run", "--json", json, file],
      { env: env() },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code) : 0, stdout, stderr }),
    );
  });
  expect(r.code).toBe(6);
  expect(r.stderr).toBe("");
  expect(r.stdout).toContain("#### ↩ AgentVersion `live-0`: would roll back (dry run)");
  expect(r.stdout + r.stderr).not.toContain(DEFAULT_API_KEY);
  expect(JSON.parse(readFileSync(json, "utf8"))).toMatchObject({
    dryRun: true,
    results: [{ outcome: "would_roll_back", agentId, version: 1, previous: 0 }],
  });
  const log = await requestLog(emu);
  expect(log.filter((e) => e.method !== "GET")).toEqual([]);
  // The service (and the emulator's log) can tell the watch's requests from a deploy's.
  expect(log.length).toBeGreaterThan(0);
  expect(new Set(log.map((e) => e.user_agent))).toEqual(new Set(["pulumi-voice-agent (voice-agent-diff)"]));
  expect((await client.agents.get(agentId)).live_version).toBe(1);
});

test("--every: a pass again and again, the file read anew, until SIGTERM; exit 6 once one rolled back", async () => {
  const healthy = await watchedAgent("CLI healthy", 50, 0); // 50 calls, none negative: healthy by the confidence sequence
  const bad = await watchedAgent("CLI bad", 30, 20);
  const file = refreshFile("every.json", [healthy]);
  const child = spawn(process.execPath, [CLI, "--watch", "--every", "0.2", file], { env: env() });
  let stdout = "";
  child.stdout.on("data", (d) => {
    stdout += d;
  });
  const passes = () => stdout.split("### Voice agents: watch").length - 1;
  for (let i = 0; i < 100 && passes() < 2; i++) await sleep(50);
  expect(passes()).toBeGreaterThanOrEqual(2);
  expect(stdout).toContain("#### ✓ AgentVersion `live-0`: healthy");
  // A deploy job rewrites the file: the next pass watches the bad version too, and rolls it back.
  refreshFile("every.json", [healthy, bad]);
  for (let i = 0; i < 100 && !stdout.includes("rolled back"); i++) await sleep(50);
  expect(stdout).toContain("#### ↩ AgentVersion `live-1`: rolled back");
  const code = await new Promise<number | null>((resolve) => {
    child.on("exit", (c) => resolve(c));
    child.kill("SIGTERM");
  });
  expect(code).toBe(6);
  expect((await client.agents.get(bad)).live_version).toBe(0);
  expect((await client.agents.get(healthy)).live_version).toBe(1);
});

test("--every: while a version nears a fail, a look each quarter of the period (the calls only); the passes keep their period", async () => {
  const near = await watchedAgent("CLI near", 30, 12); // 40 % against 20 %: inconclusive, past half way
  const file = refreshFile("near.json", [near]);
  await clearRequestLog(emu);
  const started = Date.now();
  const child = spawn(process.execPath, [CLI, "--watch", "--every", "2", file], { env: env() });
  let stdout = "";
  child.stdout.on("data", (d) => {
    stdout += d;
  });
  const reports = () => stdout.split("### Voice agents: watch").length - 1;
  for (let i = 0; i < 200 && reports() < 6; i++) await sleep(50);
  const took = Date.now() - started;
  const code = await new Promise<number | null>((resolve) => {
    child.on("exit", (c) => resolve(c));
    child.kill("SIGTERM");
  });
  expect(code).toBe(0);
  expect(reports()).toBeGreaterThanOrEqual(6);
  // A pass every 2 s reads the agents listing; the looks between (every 0.5 s) only the calls.
  const log = (await requestLog(emu)).filter((e) => e.method === "GET");
  const agentPages = log.filter((e) => /^\/v1\/agents(\?|$)/.test(e.path)).length;
  const callPages = log.filter((e) => /^\/v1\/calls(\?|$)/.test(e.path)).length;
  expect(took).toBeLessThan(6000);
  expect(agentPages).toBeLessThanOrEqual(Math.ceil(took / 2000) + 1);
  expect(callPages).toBeGreaterThanOrEqual(6);
  expect(stdout).toContain("#### · AgentVersion `live-0`: inconclusive");
  expect((await client.agents.get(near)).live_version).toBe(1);
});

test("--every: a refresh file caught empty or half-written skips that pass (said on stderr) and keeps an earlier exit 6", async () => {
  const bad = await watchedAgent("CLI rewritten", 30, 20);
  const file = refreshFile("rewritten.json", [bad]);
  const whole = readFileSync(file, "utf8");
  const child = spawn(process.execPath, [CLI, "--watch", "--every", "0.2", file], { env: env() });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    stdout += d;
  });
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
  for (let i = 0; i < 100 && !stdout.includes("rolled back"); i++) await sleep(50);
  expect(stdout).toContain("#### ↩ AgentVersion `live-0`: rolled back");
  // `pulumi refresh ... > refresh.json` empties the file first, then writes it in pieces.
  writeFileSync(file, "");
  for (let i = 0; i < 100 && !stderr.includes("is empty"); i++) await sleep(50);
  writeFileSync(file, whole.slice(0, Math.floor(whole.length / 2)));
  for (let i = 0; i < 100 && !stderr.includes("not whole JSON"); i++) await sleep(50);
  expect(stderr).toContain(
    `voice-agent-diff: pass skipped: ${file} is empty (being rewritten?); read again in 0.2 s`,
  );
  expect(stderr).toContain(`voice-agent-diff: pass skipped: ${file} is not whole JSON`);
  // Whole again: the passes go on (the version is not live any more).
  const before = stdout.split("### Voice agents: watch").length;
  writeFileSync(file, whole);
  for (let i = 0; i < 100 && stdout.split("### Voice agents: watch").length === before; i++) await sleep(50);
  expect(stdout.split("### Voice agents: watch").length).toBeGreaterThan(before);
  expect(stdout).toContain("#### · AgentVersion `live-0`: not live");
  child.kill("SIGTERM");
  expect(await exited).toBe(6);
  expect((await client.agents.get(bad)).live_version).toBe(0);
});
