/**
 * Interruption: `pulumi up` killed with SIGKILL in the middle of a deploy, then the documented
 * recovery (docs/reliability.md), Pulumi commands only: `pulumi cancel`, `pulumi refresh
 * --clear-pending-creates`, `pulumi up`. After it the service holds exactly the declared objects
 * (nothing duplicated, nothing lost), every configuration is published once, the declared version
 * is live, `preview --expect-no-changes` and `refresh --expect-no-changes` pass, and no process of
 * the killed run is left (under Pulumi's stock language host, in the stock lane (vitest.config.mts),
 * none but that host, which is Pulumi's: docs/reliability.md).
 *
 * 1. Deterministic kill points: the emulator's `hold_after_commit` fault commits writes and never
 *    answers them, and the test kills the CLI then, in the window where the service holds the
 *    writes and Pulumi never heard of them: the creates of a knowledge base (with documents), of an
 *    analysis group and of an agent, in flight together; an agent's patch, a version's publish and
 *    an activation, in flight together; the widget's write.
 * 2. A seeded random loop: a 10-agent deploy killed after a random number of writes, round after
 *    round (`VOICE_AGENT_KILL_ROUNDS`, default 4).
 */
import * as path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { pulumiHost, toolchainBin } from "../support/pulumi";
import {
  agentsProgram,
  api,
  commandLine,
  DEFAULT_API_KEY,
  type Emulator,
  executable,
  expectNoSecret,
  listAgents,
  newProject,
  type PulumiProject,
  processTree,
  recoverAfterKill,
  requestLog,
  type SpawnedRun,
  setFaults,
  since,
  spawnPulumi,
  startEmulator,
  stillAlive,
} from "./support";

let emu: Emulator;

beforeAll(async () => {
  emu = await startEmulator({ port: 0, rateLimitPerMinute: 0 });
});
afterAll(async () => {
  await emu?.close();
});

/**
 * Starts `pulumi up`, collects every process of the run while it goes, waits until `ready()`, then
 * kills the CLI alone (`cli`) or its whole process group; checks every process of the run is gone
 * within 3 s. Returns the run's output, or undefined when the up ended before the kill point, or
 * (with `mayFinishFirst`, for a kill point that may be the deploy's last write) ended successfully
 * before the kill landed: an up ends within a fraction of a second of its last write.
 */
async function killWhen(
  p: PulumiProject,
  ready: () => Promise<boolean>,
  how: "cli" | "group",
  mayFinishFirst = false,
): Promise<string | undefined> {
  const run: SpawnedRun = spawnPulumi(p, ["up", "--yes", "--skip-preview"]);
  let exited = false;
  run.done.then(() => {
    exited = true;
  });
  /** Every process of the run, by id, with its last command line read (a new one's may be its parent's until it execs). */
  const seen = new Map<number, string>();
  const collect = () => {
    for (const pid of processTree(run.pid)) seen.set(pid, commandLine(pid) || (seen.get(pid) ?? ""));
  };
  const t0 = performance.now();
  for (;;) {
    collect();
    if (await ready()) break;
    if (exited) return undefined;
    if (performance.now() - t0 > 120_000)
      throw new Error(`no kill point after 120 s:\n${run.output().slice(-4000)}`);
    await sleep(50);
  }
  collect();
  // The kill point is a write in flight: the dynamic provider that sent it is among the processes.
  expect([...seen.values()].filter((c) => c.includes("cmd/dynamic-provider")).length).toBeGreaterThan(0);
  // Pulumi's stock language host outlives its killed engine: Pulumi's own process, not this
  // package's (docs/reliability.md). Under it, it is left out of the check and killed afterwards,
  // as a CI job's cleanup does. Every other process, the dynamic provider included, ends by itself.
  const stockHost = path.join(toolchainBin(), "pulumi-language-nodejs");
  const pulumiHosts =
    pulumiHost() === "stock" ? [...seen.keys()].filter((pid) => executable(pid) === stockHost) : [];
  if (how === "cli") run.killCli();
  else run.killGroup();
  const res = await run.done;
  if (mayFinishFirst && res.signal === null && res.code === 0) return undefined;
  expect(res.signal).toBe("SIGKILL");
  // The language host, the program and the dynamic provider notice the engine is gone and exit.
  const ours = [...seen.keys()].filter((pid) => !pulumiHosts.includes(pid));
  let left = stillAlive(ours);
  for (let i = 0; i < 30 && left.length > 0; i++) {
    await sleep(100);
    left = stillAlive(ours);
  }
  const hostsLeft = stillAlive(pulumiHosts);
  for (const pid of pulumiHosts) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone already
    }
  }
  expect(left, `processes of the killed run still alive (of ${seen.size} seen)`).toEqual([]);
  expect(seen.size).toBeGreaterThanOrEqual(3); // CLI, language host, program (and providers)
  if (hostsLeft.length > 0)
    console.log(`Pulumi's stock language host left after the kill (${how}): ${hostsLeft.join(", ")}`);
  return res.stdout + res.stderr;
}

/** Whether the emulator holds the answers to `count` committed writes since log entry `from` (`hold_after_commit` fired). */
async function heldSince(from: number, count: number): Promise<boolean> {
  return (await requestLog(emu)).slice(from).filter((r) => r.dropped === "held").length >= count;
}

/** Recovery, then: nothing pending, no warning, no change left to preview or refresh. */
async function recoverAndSettle(p: PulumiProject): Promise<{ pending: string[]; outputs: string[] }> {
  const rec = await recoverAfterKill(p);
  // The up after the refresh has no pending operation to warn about.
  expect(rec.outputs[2]).not.toMatch(/warning:/);
  await p.preview({ expectNoChanges: true });
  await p.refresh({ expectNoChanges: true });
  return rec;
}

/** Every version of an agent (all pages). */
async function versions(id: string): Promise<{ version: number; is_published: boolean }[]> {
  return (await api(emu, "GET", `/v1/agents/${id}/versions?limit=100`)).data;
}

/** The published versions of an agent carry distinct configurations: none was published twice. */
async function expectPublishedOnce(id: string): Promise<number> {
  const published = (await versions(id)).filter((v) => v.is_published);
  const configs: string[] = [];
  for (const v of published) {
    const {
      version: _v,
      version_id: _vi,
      is_published: _p,
      is_live: _l,
      live_version: _lv,
      latest_version: _lt,
      label: _lb,
      notes: _n,
      blocked_reasons: _b,
      created_at: _c,
      updated_at: _u,
      dashboard_url: _d,
      ...config
    } = await api(emu, "GET", `/v1/agents/${id}?version=${v.version}`);
    configs.push(JSON.stringify(config));
  }
  expect(new Set(configs).size, `agent ${id}: a configuration published twice`).toBe(configs.length);
  return published.length;
}

describe("interruption", () => {
  const P = "Killed";
  interface Stage {
    agents: number;
    groups: number;
    prompt: string;
    title: string;
  }
  /** A knowledge base (with a description and documents), analysis groups, agents with their live versions, a widget. */
  const program = (s: Stage) => `
import * as va from "pulumi-voice-agent";
const kb = new va.KnowledgeBase("faq", {
  name: "${P} FAQ",
  description: "Opening hours.",
  documents: [{ name: "hours", text: "Open 9 to 6." }],
});
const groups: va.AnalysisGroup[] = [];
for (let g = 0; g < ${s.groups}; g++) {
  groups.push(new va.AnalysisGroup(\`quality-\${g}\`, {
    name: \`${P} quality \${g}\`,
    items: [{ name: "Resolved", type: "boolean", description: "Was it resolved?" }],
  }));
}
const agents: va.Agent[] = [];
for (let i = 0; i < ${s.agents}; i++) {
  const agent = new va.Agent(\`agent-\${i}\`, {
    name: \`${P} \${i}\`,
    systemPrompt: \`## Agent Purpose\\nHelp callers with their ${s.prompt}. (agent \${i})\`,
    ...(i === 0 ? { knowledgeBaseIds: [kb.id], analysisGroupIds: groups.map((g) => g.id) } : {}),
  });
  new va.AgentVersion(\`agent-\${i}-live\`, { agent });
  agents.push(agent);
}
new va.Widget("widget", { agentId: agents[0].agentId, theme: { title: "${s.title}" }, rotateKeyOnCreate: false });
export const agentIds = agents.map((a) => a.agentId);
export const kbId = kb.id;
export const groupIds = groups.map((g) => g.id);
`;

  /** The service holds exactly the stage's objects, the stack's ids are those, each live as declared. */
  async function expectExactly(p: PulumiProject, s: Stage): Promise<void> {
    const out = p.stateOutputs();
    const agents = (await listAgents(emu)).filter((a) => a.name.startsWith(`${P} `));
    expect(agents.map((a) => a.name).sort()).toEqual(
      Array.from({ length: s.agents }, (_, i) => `${P} ${i}`).sort(),
    );
    expect(new Set(out.agentIds)).toEqual(new Set(agents.map((a) => a.id)));
    const kbs = (await api(emu, "GET", "/v1/knowledge-bases?limit=100")).data.filter(
      (k: { name: string }) => k.name === `${P} FAQ`,
    );
    expect(kbs.map((k: { id: string }) => k.id)).toEqual([out.kbId]);
    const kb = await api(emu, "GET", `/v1/knowledge-bases/${out.kbId}`);
    expect(kb.description).toBe("Opening hours.");
    expect(kb.documents.map((d: { name: string }) => d.name)).toEqual(["hours"]);
    const groups = (await api(emu, "GET", "/v1/custom-analysis?limit=100")).data.filter(
      (g: { name: string }) => g.name.startsWith(`${P} quality`),
    );
    expect(groups.map((g: { id: string }) => g.id).sort()).toEqual([...out.groupIds].sort());
    for (const id of out.groupIds as string[]) {
      const g = await api(emu, "GET", `/v1/custom-analysis/groups/${id}`);
      expect(g.items.map((it: { name: string }) => it.name)).toEqual(["Resolved"]);
    }
    for (const a of agents) {
      const live = await api(emu, "GET", `/v1/agents/${a.id}?version=live`);
      expect(live.system_prompt).toContain(
        `Help callers with their ${s.prompt}. (agent ${a.name.slice(P.length + 1)})`,
      );
      await expectPublishedOnce(a.id);
    }
    const agent0 = agents.find((a) => a.name === `${P} 0`);
    expect((await api(emu, "GET", `/v1/agents/${agent0?.id}/widget`)).theme.title).toBe(s.title);
  }

  test("SIGKILL with seven kinds of write committed and unanswered: cancel, refresh, up converge with nothing duplicated or lost", async () => {
    let stage: Stage = { agents: 2, groups: 1, prompt: "orders", title: "Hi" };
    const p = await newProject(emu, program(stage), { ratePerMinute: 6000 });
    const outputs: string[] = [];
    type Hold = { method: "POST" | "PUT" | "PATCH"; path: string };
    const kills: [string, Partial<Stage>, "cli" | "group", Hold[]][] = [
      // The first deploy: the knowledge base, an analysis group and agent 1 (the agent that waits
      // for nothing) are created at once; the whole process group is killed with the three creates
      // committed and unanswered (agent 0 waits for both ids, so it never starts).
      [
        "creates of a knowledge base, an analysis group and an agent",
        {},
        "group",
        [
          { method: "POST", path: "/v1/knowledge-bases" },
          { method: "POST", path: "/v1/custom-analysis/groups" },
          { method: "POST", path: "/v1/agents" },
        ],
      ],
      // An update: two agents get a new prompt, a third agent and a second group are new. Each agent
      // stops at the first of these writes no other agent has reached before it: one agent's patch,
      // another's publish and a third's activation are committed and unanswered when the CLI is killed.
      [
        "an agent's patch, a publish and an activation",
        { agents: 3, groups: 2, prompt: "returns" },
        "cli",
        [
          { method: "PATCH", path: "/v1/agents/[^/]+" },
          { method: "POST", path: "/v1/agents/[^/]+/versions/\\d+/publish" },
          { method: "POST", path: "/v1/agents/[^/]+/activations" },
        ],
      ],
      [
        "the widget's write",
        { title: "Hello" },
        "cli",
        [{ method: "PATCH", path: "/v1/agents/[^/]+/widget" }],
      ],
    ];
    try {
      for (const [what, change, how, holds] of kills) {
        const t0 = performance.now();
        stage = { ...stage, ...change };
        p.setProgram(program(stage));
        await setFaults(emu, { hold_after_commit: holds });
        const from = (await requestLog(emu)).length;
        const killed = await killWhen(p, () => heldSince(from, holds.length), how);
        expect(killed, `the up ended before the ${what}`).toBeDefined();
        outputs.push(killed ?? "");
        await setFaults(emu, {});
        const rec = await recoverAndSettle(p);
        outputs.push(...rec.outputs);
        await expectExactly(p, stage);
        console.log(
          `${what}: killed, ${rec.pending.length} pending (${rec.pending.join(", ")}), recovered in ${since(t0)} s`,
        );
      }
      await expectNoSecret(p, [DEFAULT_API_KEY], outputs);
    } finally {
      await setFaults(emu, {});
      p.cleanup();
    }
  }, 600_000);

  test("a seeded random loop of kills of a 10-agent deploy converges every round", async () => {
    const rounds = Number(process.env.VOICE_AGENT_KILL_ROUNDS ?? 4);
    let seed = 20261123;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const prompts = [
      "orders",
      "returns",
      "refunds",
      "exchanges",
      "deliveries",
      "payments",
      "warranties",
      "repairs",
    ];
    const p = await newProject(
      emu,
      agentsProgram(10, "Loop", { prompt: `Help callers with their ${prompts[0]}.` }),
      {
        ratePerMinute: 6000,
      },
    );
    const t0 = performance.now();
    let killedMidway = 0;
    try {
      for (let round = 0; round < rounds; round++) {
        const prompt = `Help callers with their ${prompts[round % prompts.length]} (round ${round}).`;
        p.setProgram(agentsProgram(10, "Loop", { prompt }));
        const before = (await requestLog(emu)).length;
        // A create round writes ~30 times (create, publish, activate), an update round ~30 (patch, publish, activate).
        const after = 1 + Math.floor(random() * 28);
        const how = random() < 0.5 ? "cli" : "group";
        const killed = await killWhen(
          p,
          async () => (await requestLog(emu)).slice(before).filter((r) => r.method !== "GET").length >= after,
          how,
          true,
        );
        if (killed !== undefined) {
          killedMidway++;
          await sleep(300); // requests the killed provider had sent land in the service
          await recoverAndSettle(p);
        } else {
          await p.preview({ expectNoChanges: true });
        }
        const agents = (await listAgents(emu)).filter((a) => a.name.startsWith("Loop "));
        expect(agents.map((a) => a.name).sort()).toEqual(
          Array.from({ length: 10 }, (_, i) => `Loop ${i}`).sort(),
        );
        expect(new Set(p.stateOutputs().agentIds)).toEqual(new Set(agents.map((a) => a.id)));
        for (const a of agents) {
          const live = await api(emu, "GET", `/v1/agents/${a.id}?version=live`);
          expect(live.system_prompt).toContain(prompt);
          expect(await expectPublishedOnce(a.id)).toBe(round + 1);
        }
        console.log(
          `round ${round}: kill (${how}) after ${after} writes: ${killed === undefined ? "the up had ended" : "recovered"}`,
        );
      }
      console.log(`${rounds} rounds, ${killedMidway} killed mid-deploy, ${since(t0)} s`);
      expect(killedMidway).toBeGreaterThan(0);
    } finally {
      p.cleanup();
    }
  }, 900_000);

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
