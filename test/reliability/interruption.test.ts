/**
 * Interruption: a `pulumi up` killed with SIGKILL (the whole process group: CLI, language host,
 * program and dynamic-provider processes) in the middle of creating agents and publishing their
 * versions, and again in the middle of an update. After the documented recovery (cancel the lock,
 * settle pending creates from the service, refresh: docs/reliability.md) `pulumi up` converges and
 * nothing is duplicated or lost: exactly one agent per declared agent, each live on the declared
 * configuration, and `preview --expect-no-changes` / `refresh --expect-no-changes` pass.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  agentsProgram,
  api,
  DEFAULT_API_KEY,
  type Emulator,
  expectNoSecret,
  listAgents,
  newProject,
  type PulumiProject,
  processesInGroup,
  recoverInterruptedStack,
  requestLog,
  setFaults,
  since,
  spawnPulumi,
  startEmulator,
} from "./support";

const AGENTS = 20;
const PREFIX = "Interrupted";
/** Slow answers stretch the up so that the kill lands mid-way. */
const LATENCY_MS = 200;

let emu: Emulator;

beforeAll(async () => {
  emu = await startEmulator({ port: 0, rateLimitPerMinute: 0 });
});
afterAll(async () => {
  await emu?.close();
});

/** Starts `pulumi up`, waits until `ready(log)` holds, kills the process group, and checks it is gone. */
async function killMidway(
  p: PulumiProject,
  ready: (log: Awaited<ReturnType<typeof requestLog>>) => boolean,
): Promise<string> {
  const run = spawnPulumi(p, ["up", "--yes", "--skip-preview"]);
  let exited = false;
  run.done.then(() => {
    exited = true;
  });
  const t0 = performance.now();
  for (;;) {
    await sleep(100);
    if (ready(await requestLog(emu))) break;
    if (exited || performance.now() - t0 > 120_000) {
      const log = (await requestLog(emu)).slice(-40).map((r) => `${r.method} ${r.path} ${r.status}`);
      throw new Error(
        `the up ${exited ? "ended" : "was still running"} before the kill point:\n${run.output().slice(-6000)}\n` +
          `last requests:\n${log.join("\n")}`,
      );
    }
  }
  run.killGroup();
  const res = await run.done;
  expect(res.signal).toBe("SIGKILL");
  // Nothing of the run survives (the dynamic provider included).
  await sleep(200);
  expect(processesInGroup(run.pid)).toEqual([]);
  // Requests the provider had sent still complete in the service: let them land before looking.
  await sleep(LATENCY_MS * 5);
  console.log(`killed after ${since(t0)} s`);
  return res.stdout + res.stderr;
}

/** Exactly one agent per declared name, the stack's ids are those, each live with `text` in its prompt. */
async function expectExactlyOnce(p: PulumiProject, text: string): Promise<void> {
  const agents = (await listAgents(emu)).filter((a) => a.name.startsWith(`${PREFIX} `));
  expect(agents.map((a) => a.name).sort()).toEqual(
    Array.from({ length: AGENTS }, (_, i) => `${PREFIX} ${i}`).sort(),
  );
  const out = await p.outputs();
  expect(new Set(out.agentIds)).toEqual(new Set(agents.map((a) => a.id)));
  for (const a of agents) {
    const live = await api(emu, "GET", `/v1/agents/${a.id}?version=live`);
    expect(live.system_prompt).toContain(text);
    expect(live.system_prompt).toContain(`(agent ${a.name.slice(PREFIX.length + 1)})`);
  }
}

describe("interruption", () => {
  test("SIGKILL mid-create and mid-update: recovery, refresh and up converge with nothing duplicated or lost", async () => {
    const p = await newProject(emu, agentsProgram(AGENTS, PREFIX), { ratePerMinute: 3000 });
    const outputs: string[] = [];
    try {
      await setFaults(emu, { latency_ms: LATENCY_MS });

      // 1. Kill while agents are still being created and the first versions go live.
      outputs.push(
        await killMidway(
          p,
          (log) =>
            log.filter((r) => r.method === "POST" && r.path === "/v1/agents" && r.status === 201).length >= 3,
        ),
      );
      const log = await requestLog(emu);
      const created = log.filter((r) => r.method === "POST" && r.path === "/v1/agents" && r.status === 201);
      console.log(`at the kill: ${created.length} of ${AGENTS} agents created in the service`);
      expect(created.length).toBeLessThan(AGENTS + 1);

      const t1 = performance.now();
      const rec = await recoverInterruptedStack(p, emu);
      console.log(
        `recovery (${since(t1)} s): ${rec.pending.length} pending operations; adopted ${rec.adopted.length} ` +
          `agent creates that had committed; dropped ${rec.dropped.length} pending creates`,
      );
      expect(rec.pending.length).toBeGreaterThan(0);
      const state = JSON.parse(await p.exportState(false));
      expect(state.deployment.pending_operations ?? []).toEqual([]);

      const t2 = performance.now();
      outputs.push((await p.up()).stdout);
      await p.preview({ expectNoChanges: true });
      await p.refresh({ expectNoChanges: true });
      console.log(`up + no-change preview and refresh after recovery: ${since(t2)} s`);
      await expectExactlyOnce(p, "orders");

      // 2. Kill in the middle of an update, once the agents' patches are recorded and versions are
      // being published: every prompt changes (patch, publish, go live).
      await setFaults(emu, { latency_ms: LATENCY_MS });
      const before = (await requestLog(emu)).length;
      p.setProgram(agentsProgram(AGENTS, PREFIX, { prompt: "Help callers with their returns." }));
      outputs.push(
        await killMidway(p, (l) =>
          l.slice(before).some((r) => r.method === "POST" && r.path.endsWith("/publish") && r.status === 200),
        ),
      );
      const rec2 = await recoverInterruptedStack(p, emu);
      console.log(
        `update kill: ${rec2.pending.length} pending operations (${[...new Set(rec2.pending.map((x) => x.split(" ")[0]))].join(", ")})`,
      );
      outputs.push((await p.up()).stdout);
      await p.preview({ expectNoChanges: true });
      await p.refresh({ expectNoChanges: true });
      await setFaults(emu, {});
      await expectExactlyOnce(p, "returns");
      // Versions: V0 from the first round, then one published version with the new prompt (a
      // version published before the kill is reused, never published twice).
      for (const id of (await p.outputs()).agentIds as string[]) {
        const rows = await api(emu, "GET", `/v1/agents/${id}/versions?limit=100`);
        const published = rows.data.filter((v: any) => v.is_published);
        expect(published.length).toBe(2);
      }
      await expectNoSecret(p, [DEFAULT_API_KEY], outputs);
    } finally {
      await setFaults(emu, {});
      p.cleanup();
    }
  }, 300_000);

  // A kill after an Agent's configuration patch committed in the service but before Pulumi recorded
  // it: `refresh` brings the new configuration into the Agent's state, and its `contentHash`
  // follows what the service holds, so the next `up` publishes it. The window is reproduced
  // deterministically (the patch a killed provider had sent is applied through the API).
  test("a patch committed but unrecorded before a kill is published by the next up", async () => {
    const p = await newProject(emu, agentsProgram(1, "Unrecorded"), { ratePerMinute: 3000 });
    try {
      await p.up();
      const [id] = (await p.outputs()).agentIds as string[];
      // The killed up's patch, committed in the service but never recorded in the state.
      await api(emu, "PATCH", `/v1/agents/${id}`, {
        system_prompt: "## Agent Purpose\nHelp callers with their returns. (agent 0)",
      });
      p.setProgram(agentsProgram(1, "Unrecorded", { prompt: "Help callers with their returns." }));
      await p.refresh();
      await p.up();
      const live = await api(emu, "GET", `/v1/agents/${id}?version=live`);
      expect(live.system_prompt).toContain("returns");
    } finally {
      p.cleanup();
    }
  }, 120_000);
});
