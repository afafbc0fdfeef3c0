/**
 * Reliability under faults: `pulumi up` of 30 agents, each with a version going live, while the
 * emulator answers 5xx, delays every answer, drops connections before handling, and commits writes
 * whose answer is then lost. The up may be repeated only after a clean failure (Pulumi reports an
 * error on one of our resources, nothing crashed, no pending operation is left). At the end: exactly
 * 30 agents in the service (no duplicate from a lost create), each live on a published version, and
 * `preview --expect-no-changes` plus `refresh --expect-no-changes`, still under faults.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  agentsProgram,
  api,
  clearRequestLog,
  DEFAULT_API_KEY,
  type Emulator,
  expectCleanFailure,
  expectNoSecret,
  listAgents,
  newProject,
  requestLog,
  setFaults,
  since,
  startEmulator,
} from "./support";

const AGENTS = 30;
const PREFIX = "Faulty";
const FAULTS = {
  error_rate: 0.15,
  reset_rate: 0.1,
  drop_after_commit_rate: 0.15,
  latency_ms: 25,
  seed: 8,
};
const MAX_UPS = 4;

let emu: Emulator;

beforeAll(async () => {
  // No server rate limit here (the rate-limit bound is measured by bench/ratelimit.ts); the client
  // paces at 3000/min so the test stays short on two cores.
  emu = await startEmulator({ port: 0, rateLimitPerMinute: 0 });
});
afterAll(async () => {
  await emu?.close();
});

describe("faults", () => {
  test("30 agents with live versions converge under 5xx, latency, resets and lost commits, without duplicates", async () => {
    const p = await newProject(emu, agentsProgram(AGENTS, PREFIX), { ratePerMinute: 3000 });
    const outputs: string[] = [];
    try {
      await clearRequestLog(emu);
      await setFaults(emu, FAULTS);
      const t0 = performance.now();
      let ups = 0;
      let converged = false;
      while (!converged && ups < MAX_UPS) {
        ups++;
        const res = await p.up({ allowFailure: true });
        outputs.push(res.stdout + res.stderr);
        if (res.code === 0) {
          converged = true;
        } else {
          const errors = await expectCleanFailure(p, res);
          console.log(
            `up #${ups} failed cleanly after ${since(t0)} s:\n  ${errors.slice(0, 6).join("\n  ")}`,
          );
        }
      }
      console.log(`converged after ${ups} up(s), ${since(t0)} s`);
      expect(converged).toBe(true);

      const log = await requestLog(emu);
      const api1 = log.filter((r) => r.path.startsWith("/v1"));
      const faults = {
        requests: api1.length,
        "503": api1.filter((r) => r.status === 503).length,
        reset: api1.filter((r) => r.dropped === "reset").length,
        lostAfterCommit: api1.filter((r) => r.dropped === "after_commit").length,
        lostCreates: api1.filter(
          (r) => r.dropped === "after_commit" && r.method === "POST" && r.path === "/v1/agents",
        ).length,
      };
      console.log(`faults injected during the up(s): ${JSON.stringify(faults)}`);
      expect(faults["503"] + faults.reset + faults.lostAfterCommit).toBeGreaterThan(10);

      // Still under faults: nothing left to change, and a refresh finds nothing either.
      const t1 = performance.now();
      const preview = await p.preview({ expectNoChanges: true });
      const refresh = await p.refresh({ expectNoChanges: true });
      outputs.push(preview.stdout + preview.stderr, refresh.stdout + refresh.stderr);
      console.log(`preview + refresh --expect-no-changes under faults: ${since(t1)} s`);

      // The service, read without faults: exactly the 30 agents, each live on a published version.
      await setFaults(emu, {});
      const agents = (await listAgents(emu)).filter((a) => a.name.startsWith(`${PREFIX} `));
      const names = agents.map((a) => a.name).sort();
      expect(names).toEqual(Array.from({ length: AGENTS }, (_, i) => `${PREFIX} ${i}`).sort());
      const out = await p.outputs();
      expect(new Set(out.agentIds).size).toBe(AGENTS);
      expect(new Set(agents.map((a) => a.id))).toEqual(new Set(out.agentIds));
      for (const a of agents) {
        const live = await api(emu, "GET", `/v1/agents/${a.id}?version=live`);
        expect(live.is_published).toBe(true);
        expect(live.system_prompt).toContain(`(agent ${a.name.slice(PREFIX.length + 1)})`);
        // No create marker left behind in the live version's notes.
        expect(live.notes ?? "").not.toContain("pulumi-voice-agent:create:");
      }
      const state = JSON.parse(await p.exportState(false));
      const versions = state.deployment.resources.filter((r: any) =>
        r.type.endsWith("voice-agent:AgentVersion"),
      );
      expect(versions.length).toBe(AGENTS);

      // Second round, still under faults: every prompt changes, so each agent is patched (If-Match)
      // and a new version is published and put live. Lost patch and publish answers must not
      // publish twice or fail the up.
      await setFaults(emu, { ...FAULTS, seed: FAULTS.seed + 1 });
      p.setProgram(agentsProgram(AGENTS, PREFIX, { prompt: "Help callers with their returns." }));
      const t2 = performance.now();
      let ups2 = 0;
      for (;;) {
        ups2++;
        const res = await p.up({ allowFailure: true });
        outputs.push(res.stdout + res.stderr);
        if (res.code === 0) break;
        const errors = await expectCleanFailure(p, res);
        console.log(`update up #${ups2} failed cleanly:\n  ${errors.slice(0, 6).join("\n  ")}`);
        expect(ups2).toBeLessThan(MAX_UPS);
      }
      console.log(`update of ${AGENTS} agents converged after ${ups2} up(s), ${since(t2)} s`);
      await p.preview({ expectNoChanges: true });
      await setFaults(emu, {});
      for (const a of agents) {
        const live = await api(emu, "GET", `/v1/agents/${a.id}?version=live`);
        expect(live.system_prompt).toContain("returns");
        const rows = await api(emu, "GET", `/v1/agents/${a.id}/versions?limit=100`);
        const published = rows.data.filter((v: any) => v.is_published).map((v: any) => v.version);
        expect(published.sort()).toEqual([0, 1]);
        expect(live.version).toBe(1);
      }
      expect((await listAgents(emu)).filter((a) => a.name.startsWith(`${PREFIX} `)).length).toBe(AGENTS);

      await expectNoSecret(p, [DEFAULT_API_KEY], outputs);
    } finally {
      await setFaults(emu, {});
      p.cleanup();
    }
  }, 240_000);
});
