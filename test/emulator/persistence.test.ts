/** State across restarts with a database file, and the real command line. */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startEmulator } from "../../src/emulator";
import { addCustomTool, addNumber, resetEmulator, retireModel, revokeKey } from "../support/control";
import { bind, request, sleep } from "./helpers";

const dir = mkdtempSync(join(tmpdir(), "va-emu-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("persistence", () => {
  it("restores agents, versions, activations, widgets, knowledge bases, groups, holdings and revoked keys", async () => {
    const db = join(dir, "state.db");
    const workspaces = [
      { name: "main", key: "va_main" },
      { name: "spare", key: "va_spare" },
    ];
    const emu1 = await startEmulator({ db, workspaces, rateLimitPerMinute: 0, kbProcessingMs: 10 });
    const api1 = bind(emu1, "va_main");
    await addCustomTool(emu1, "main", "crm_lookup");
    await addNumber(emu1, "main", "+14155550123");
    await retireModel(emu1, "gemini-1.5-flash");
    await revokeKey(emu1, "va_spare");
    const kb = (await api1.post("/v1/knowledge-bases", { name: "K", documents: [{ name: "d", text: "t" }] }))
      .body;
    const group = (
      await api1.post("/v1/custom-analysis/groups", { name: "G", items: [{ name: "i", type: "text" }] })
    ).body;
    const a = await api1.createAgent({
      system_prompt: "Use <crm_lookup>.",
      knowledge_base_ids: [kb.id],
      numbers: { inbound_phone: "+14155550123" },
    });
    await api1.post(`/v1/agents/${a.id}/versions/0/publish`, { label: "first" });
    await api1.post(`/v1/agents/${a.id}/activations`, { version: 0 });
    await api1.patch(`/v1/agents/${a.id}`, { analysis_group_ids: [group.id] });
    const widget = (
      await api1.patch(`/v1/agents/${a.id}/widget`, { name: "W", allowed_origins: ["https://a.example"] })
    ).body;
    const before = {
      agent: (await api1.get(`/v1/agents/${a.id}`)).body,
      versions: (await api1.get(`/v1/agents/${a.id}/versions`)).body,
      activations: (await api1.get(`/v1/agents/${a.id}/activations`)).body,
      kbs: (await api1.get("/v1/knowledge-bases")).body,
      groups: (await api1.get("/v1/custom-analysis")).body,
      numbers: (await api1.get("/v1/numbers")).body,
      models: (await api1.get("/v1/models")).body,
    };
    await emu1.close();

    const emu2 = await startEmulator({ db, workspaces, rateLimitPerMinute: 0 });
    try {
      const api2 = bind(emu2, "va_main");
      expect((await api2.get(`/v1/agents/${a.id}`)).body).toEqual(before.agent);
      expect((await api2.get(`/v1/agents/${a.id}/versions`)).body).toEqual(before.versions);
      expect((await api2.get(`/v1/agents/${a.id}/activations`)).body).toEqual(before.activations);
      expect((await api2.get("/v1/knowledge-bases")).body).toEqual(before.kbs);
      expect((await api2.get("/v1/custom-analysis")).body).toEqual(before.groups);
      expect((await api2.get("/v1/numbers")).body).toEqual(before.numbers);
      expect((await api2.get("/v1/models")).body).toEqual(before.models);
      expect((await api2.get(`/v1/agents/${a.id}/widget`)).body).toEqual(widget);
      expect((await api2.withKey("va_spare").get("/v1/agents")).status).toBe(401);
      // Custom tools survived: the prompt reference is still valid on a new write.
      expect((await api2.patch(`/v1/agents/${a.id}`, { name: "Renamed" })).status).toBe(200);
      // Reset goes back to the seed, on disk too.
      await resetEmulator(emu2);
      expect((await api2.get("/v1/agents")).body.data).toEqual([]);
    } finally {
      await emu2.close();
    }
    const emu3 = await startEmulator({ db, workspaces, rateLimitPerMinute: 0 });
    try {
      const api3 = bind(emu3, "va_main");
      expect((await api3.get("/v1/agents")).body.data).toEqual([]);
      expect((await api3.withKey("va_spare").get("/v1/agents")).status).toBe(200);
      expect((await api3.get("/v1/models")).body.find((m: any) => m.id === "gemini-1.5-flash").retired).toBe(
        false,
      );
    } finally {
      await emu3.close();
    }
  });

  it("without a database the state is in memory only", async () => {
    const emu1 = await startEmulator({ rateLimitPerMinute: 0 });
    await bind(emu1).createAgent();
    await emu1.close();
    const emu2 = await startEmulator({ rateLimitPerMinute: 0 });
    try {
      expect((await bind(emu2).get("/v1/agents")).body.data).toEqual([]);
    } finally {
      await emu2.close();
    }
  });
});

describe("command line", () => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const c of children) if (c.exitCode === null) c.kill("SIGTERM");
  });

  const launch = (args: string[]) => {
    const child = spawn(
      process.execPath,
      [
        require.resolve("ts-node/dist/bin.js"),
        "--transpile-only",
        join(__dirname, "../../src/emulator/cli.ts"),
        ...args,
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    children.push(child);
    return child;
  };

  const firstLine = (child: ChildProcess) =>
    new Promise<string>((resolve, reject) => {
      let out = "";
      let err = "";
      child.stdout?.on("data", (d: Buffer) => {
        out += d.toString();
        const nl = out.indexOf("\n");
        if (nl >= 0) resolve(out.slice(0, nl));
      });
      child.stderr?.on("data", (d: Buffer) => {
        err += d.toString();
      });
      child.on("exit", (code) => reject(new Error(`exited ${code}: ${err}`)));
    });

  it("prints `voice-agent emulator listening on http://HOST:PORT` first, with the real port, and serves workspaces", async () => {
    const db = join(dir, "cli.db");
    const child = launch([
      "--port",
      "0",
      "--workspace",
      "one:k_one",
      "--workspace",
      "two:k_two",
      "--rate-limit",
      "1000",
      "--db",
      db,
    ]);
    const line = await firstLine(child);
    const m = /^voice-agent emulator listening on (http:\/\/127\.0\.0\.1:(\d+))$/.exec(line);
    expect(m, line).not.toBeNull();
    const url = m?.[1] as string;
    expect(Number(m?.[2])).toBeGreaterThan(0);
    const ok = await request(`${url}/v1/agents`, "GET", undefined, { Authorization: "Bearer k_two" });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-ratelimit-limit")).toBe("1000");
    const bad = await request(`${url}/v1/agents`, "GET", undefined, {
      Authorization: "Bearer va_test_local",
    });
    expect(bad.status).toBe(401);
    const exited = new Promise((r) => child.on("exit", r));
    child.kill("SIGTERM");
    await exited;
  });

  it("refuses bad arguments with exit code 2", async () => {
    const child = launch(["--port", "banana"]);
    const code = await new Promise<number | null>((r) => child.on("exit", r));
    expect(code).toBe(2);
  });

  it("defaults to the workspace `default` with key va_test_local", async () => {
    const child = launch(["--port", "0"]);
    const line = await firstLine(child);
    const url = line.replace("voice-agent emulator listening on ", "");
    const r = await request(`${url}/v1/agents`, "GET", undefined, { Authorization: "Bearer va_test_local" });
    expect(r.status).toBe(200);
    child.kill("SIGTERM");
    await sleep(50);
  });
});
