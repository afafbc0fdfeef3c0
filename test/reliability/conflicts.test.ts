/**
 * Conflicts: dashboard edits (plain PATCHes through the API, as the dashboard makes them) land
 * while `pulumi up` changes every agent's prompt. Whatever the interleaving, no edit is overwritten:
 * afterwards the service still holds each edit on the agent's working draft. An edit that came
 * before Pulumi's patch of that agent makes the up fail with the conflict message naming the
 * agent; one that came between Pulumi's patch and its publish stops the publish with a message
 * naming the agent; one after the publish lands on a new draft. A refresh then brings the edits
 * into the stack as drift, and the next up (the program is the source of truth) converges.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  agentsProgram,
  api,
  apiRaw,
  DEFAULT_API_KEY,
  type Emulator,
  expectCleanFailure,
  expectNoSecret,
  listAgents,
  newProject,
  requestLog,
  setFaults,
  spawnPulumi,
  startEmulator,
} from "./support";

const AGENTS = 12;
const PREFIX = "Conflict";

let emu: Emulator;

beforeAll(async () => {
  emu = await startEmulator({ port: 0, rateLimitPerMinute: 0 });
});
afterAll(async () => {
  await emu?.close();
});

interface Edit {
  agent: number;
  id: string;
  text: string;
  requestId: string;
  /** When it was fired: before Pulumi's patch, after it, or after the publish of that agent. */
  trigger: "start" | "after-patch" | "after-publish";
}

describe("conflicts", () => {
  test("dashboard edits during an up are never overwritten; conflicts name the agent", async () => {
    const p = await newProject(emu, agentsProgram(AGENTS, PREFIX), { ratePerMinute: 3000 });
    const outputs: string[] = [];
    try {
      await p.up();
      const ids = (await p.outputs()).agentIds as string[];
      const name = (i: number) => `${PREFIX} ${i}`;

      // Slow answers widen the windows between Pulumi's patch, publish and activation.
      await setFaults(emu, { latency_ms: 150 });
      const start = (await requestLog(emu)).length;
      p.setProgram(agentsProgram(AGENTS, PREFIX, { prompt: "Help callers with their returns." }));
      // --continue-on-error: the other agents go on after the first conflict, so every window is exercised.
      const run = spawnPulumi(p, ["up", "--yes", "--skip-preview", "--continue-on-error"]);

      const edits: Edit[] = [];
      const edit = async (i: number, trigger: Edit["trigger"]) => {
        const text = `## Agent Purpose\nEdited in the dashboard (${trigger}, agent ${i}).`;
        const res = await apiRaw(emu, "PATCH", `/v1/agents/${ids[i]}`, { system_prompt: text });
        expect(res.status).toBe(200);
        edits.push({ agent: i, id: ids[i] as string, text, requestId: res.requestId as string, trigger });
      };
      // Agents 0-2 are edited as soon as the up talks to the service; 3-6 right after Pulumi's
      // patch of each lands; 7-9 right after its publish; 10-11 are left alone.
      const afterPatch = new Set([3, 4, 5, 6]);
      const afterPublish = new Set([7, 8, 9]);
      const fired = new Set<number>();
      let finished = false;
      run.done.then(() => {
        finished = true;
      });
      while (!finished) {
        const log = (await requestLog(emu)).slice(start);
        if (log.length > 0) {
          for (const i of [0, 1, 2]) {
            if (!fired.has(i)) {
              fired.add(i);
              await edit(i, "start");
            }
          }
        }
        for (const r of log) {
          const i = ids.findIndex((id) => r.path.startsWith(`/v1/agents/${id}`));
          if (i < 0 || fired.has(i) || r.status !== 200) continue;
          if (afterPatch.has(i) && r.method === "PATCH" && !r.path.includes("?")) {
            fired.add(i);
            await edit(i, "after-patch");
          } else if (afterPublish.has(i) && r.method === "POST" && r.path.endsWith("/publish")) {
            fired.add(i);
            await edit(i, "after-publish");
          }
        }
        await sleep(20);
      }
      const res = await run.done;
      outputs.push(res.stdout + res.stderr);
      const text = res.stdout + res.stderr;
      if (process.env.SHOW_OUTPUT) console.log(text);
      console.log(`up exit ${res.code}; ${edits.length} dashboard edits fired`);

      // Where each edit fell relative to Pulumi's own writes to that agent (the log is in commit order).
      const log = (await requestLog(emu)).slice(start);
      const ours = new Set(edits.map((e) => e.requestId));
      for (const e of edits) {
        const idx = log.findIndex((r) => r.request_id === e.requestId);
        const pulumiWrites = log.filter(
          (r) => !ours.has(r.request_id) && r.path.startsWith(`/v1/agents/${e.id}`) && r.method !== "GET",
        );
        const patch = pulumiWrites.find((r) => r.method === "PATCH" && !r.path.includes("?"));
        const publish = pulumiWrites.find((r) => r.path.endsWith("/publish"));
        const patchIdx = patch ? log.indexOf(patch) : -1;
        const publishIdx = publish ? log.indexOf(publish) : -1;
        const where =
          patchIdx < 0 || idx < patchIdx
            ? "before Pulumi's patch"
            : publishIdx < 0 || idx < publishIdx
              ? "between Pulumi's patch and publish"
              : "after Pulumi's publish";
        console.log(
          `agent ${e.agent} (${e.trigger}): edit ${where}; Pulumi patch ${patch?.status ?? "-"}, publish ${publish?.status ?? "-"}`,
        );

        // Never overwritten: the working draft still holds the edit, and it never went live.
        const latest = await api(emu, "GET", `/v1/agents/${e.id}`);
        expect(latest.system_prompt).toBe(e.text);
        expect(latest.is_published).toBe(false);
        const live = await api(emu, "GET", `/v1/agents/${e.id}?version=live`);
        expect(live.system_prompt).not.toContain("Edited in the dashboard");

        if (where === "before Pulumi's patch") {
          // Pulumi read the edited draft and wrote nothing, or its patch (the edit landed between
          // its read and its patch) was refused; the up says which agent and what to do.
          expect(patch === undefined ? "no patch" : patch.status).toBeOneOf(["no patch", 409]);
          expect(text).toContain(`Agent "${name(e.agent)}" (${e.id}) was changed outside Pulumi`);
        }
        if (where === "between Pulumi's patch and publish") {
          expect(publish?.status).toBe(409);
          expect(text).toMatch(new RegExp(`Version \\d+ of agent ${e.id} was edited outside Pulumi`));
        }
      }
      // The edits made before Pulumi's patch always exist (agents 0-2), so the up failed, cleanly.
      expect(res.code).not.toBe(0);
      const errors = await expectCleanFailure(p, res);
      console.log(`the up failed cleanly:\n  ${errors.join("\n  ")}`);

      // Refresh takes the edits in as drift; the next up writes the program's prompt back.
      await setFaults(emu, {});
      await p.refresh();
      const drift = await p.preview();
      expect(drift.stdout).toMatch(/Edited in the dashboard/);
      outputs.push((await p.up()).stdout);
      await p.preview({ expectNoChanges: true });
      await p.refresh({ expectNoChanges: true });
      const agents = (await listAgents(emu)).filter((a) => a.name.startsWith(`${PREFIX} `));
      expect(agents.length).toBe(AGENTS);
      for (const id of ids) {
        const live = await api(emu, "GET", `/v1/agents/${id}?version=live`);
        expect(live.system_prompt).toContain("returns");
      }
      await expectNoSecret(p, [DEFAULT_API_KEY], outputs);
    } finally {
      await setFaults(emu, {});
      p.cleanup();
    }
  }, 240_000);

  // A label (or notes) change patches the published version with `?version=n`, which raises that
  // version's document_revision while the Agent's state holds the revision it wrote. No field the
  // stack manages changed, so the next configuration change is written at the current revision.
  test("a label change followed by a prompt change is not a conflict", async () => {
    const program = (prompt: string, label: string) => agentsProgram(1, "Relabelled", { prompt, label });
    const p = await newProject(emu, program("Help callers with their orders.", "r1"), {
      ratePerMinute: 3000,
    });
    try {
      await p.up();
      p.setProgram(program("Help callers with their orders.", "r2"));
      await p.up();
      p.setProgram(program("Help callers with their returns.", "r2"));
      const res = await p.up({ allowFailure: true });
      expect(res.stdout + res.stderr).not.toMatch(/changed outside Pulumi/);
      expect(res.code).toBe(0);
    } finally {
      p.cleanup();
    }
  }, 120_000);
});
