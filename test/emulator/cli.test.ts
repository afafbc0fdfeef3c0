/** The emulator's command line: strict parsing, the loopback guard, --help, the rate-limit window. */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isLoopback, parseArgs, USAGE } from "../../src/emulator/command";
import { request, sleep } from "./helpers";

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGTERM");
});

/** Runs the command line from the sources; resolves with its exit code and output once it exits. */
function run(args: string[]): {
  child: ChildProcess;
  done: Promise<{ code: number | null; out: string; err: string }>;
} {
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
  let out = "";
  let err = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const done = new Promise<{ code: number | null; out: string; err: string }>((resolve) =>
    child.on("exit", (code) => resolve({ code, out, err })),
  );
  return { child, done };
}

/** The URL of the first stdout line, `voice-agent emulator listening on URL`. */
function listening(child: ChildProcess): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /^voice-agent emulator listening on (\S+)\n/.exec(out);
      if (m) resolve(m[1] as string);
    });
    child.on("exit", (code) => reject(new Error(`exited ${code} before listening`)));
  });
}

describe("parsing", () => {
  it("refuses unknown options, stray arguments and missing values", () => {
    expect(() => parseArgs(["--colour", "red"])).toThrow(/Unknown option '--colour'/);
    expect(() => parseArgs(["8787"])).toThrow(/Unexpected argument '8787'/);
    expect(() => parseArgs(["--port"])).toThrow(/--port/);
    expect(() => parseArgs(["--port", "70000"])).toThrow(/--port must be 0 to 65535/);
    expect(() => parseArgs(["--workspace", "nokey"])).toThrow(/NAME:KEY/);
    expect(() => parseArgs(["--rate-limit", "-1"])).toThrow(/--rate-limit/);
    for (const bad of ["0", "-2", "soon", "1e3"])
      expect(() => parseArgs(["--rate-window-seconds", bad])).toThrow(/--rate-window-seconds/);
  });

  it("reads every option, repeated workspaces and --flag=value forms", () => {
    expect(
      parseArgs([
        "--host=::1",
        "--port",
        "0",
        "--db",
        "/tmp/e.db",
        "--workspace",
        "a:ka",
        "--workspace=b:kb",
        "--rate-limit",
        "10",
        "--rate-window-seconds",
        "2.5",
        "--call-seconds",
        "0.25",
      ]),
    ).toEqual({
      host: "::1",
      port: 0,
      db: "/tmp/e.db",
      workspaces: [
        { name: "a", key: "ka" },
        { name: "b", key: "kb" },
      ],
      rateLimitPerMinute: 10,
      rateWindowMs: 2_500,
      callSeconds: 0.25,
    });
    expect(parseArgs([])).toEqual({
      host: "127.0.0.1",
      port: 8787,
      workspaces: [],
      rateLimitPerMinute: 300,
      rateWindowMs: 60_000,
      callSeconds: 1,
    });
    expect(parseArgs(["-h"])).toBe("help");
    for (const bad of ["0", "abc", "3601", "", "1e3"])
      expect(() => parseArgs([`--call-seconds=${bad}`]), bad).toThrow(
        /--call-seconds must be a number of seconds/,
      );
  });

  it("binds only loopback addresses unless --allow-remote", () => {
    for (const host of ["127.0.0.1", "127.8.9.10", "::1", "[::1]", "::ffff:127.0.0.1", "localhost"]) {
      expect(isLoopback(host), host).toBe(true);
      expect(parseArgs(["--host", host])).toMatchObject({ host });
    }
    for (const host of ["0.0.0.0", "::", "192.168.1.5", "10.0.0.1", "::ffff:10.0.0.1", "example.com"]) {
      expect(isLoopback(host), host).toBe(false);
      expect(() => parseArgs(["--host", host])).toThrow(
        /not a loopback address.*no authentication.*--allow-remote/,
      );
      expect(parseArgs(["--host", host, "--allow-remote"])).toMatchObject({ host });
    }
  });
});

describe("the command", () => {
  it("--help lists every option, the loopback rule and the default window, and exits 0", async () => {
    const { code, out } = await run(["--help"]).done;
    expect(code).toBe(0);
    expect(out).toBe(USAGE);
    for (const option of [
      "--host",
      "--allow-remote",
      "--port",
      "--db",
      "--workspace",
      "--rate-limit",
      "--rate-window-seconds",
      "--call-seconds",
      "--help",
    ])
      expect(out).toContain(option);
    expect(out).toMatch(/no authentication/);
    expect(out).toMatch(/default 60/);
  });

  it("exits 2 on an unknown option, naming it", async () => {
    const { code, out, err } = await run(["--port", "0", "--verbose"]).done;
    expect(code).toBe(2);
    expect(out).toBe("");
    expect(err).toMatch(/Unknown option '--verbose'/);
  });

  it("exits 2 on a non-loopback --host without --allow-remote, saying why", async () => {
    const { code, out, err } = await run(["--host", "0.0.0.0", "--port", "0"]).done;
    expect(code).toBe(2);
    expect(out).toBe("");
    expect(err).toMatch(/--host 0\.0\.0\.0 is not a loopback address/);
    expect(err).toMatch(/control API \(\/_emulator\/\) has no authentication/);
    expect(err).toMatch(/--allow-remote/);
  });

  it("with --allow-remote binds every interface; --rate-window-seconds shortens the window", async () => {
    const { child } = run([
      "--host",
      "0.0.0.0",
      "--allow-remote",
      "--port",
      "0",
      "--rate-limit",
      "1",
      "--rate-window-seconds",
      "1",
    ]);
    const url = await listening(child);
    expect(url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
    // Reached here through loopback only.
    const local = url.replace("0.0.0.0", "127.0.0.1");
    const get = () =>
      request(`${local}/v1/models`, "GET", undefined, { Authorization: "Bearer va_test_local" });
    expect((await get()).status).toBe(200);
    const refused = await get();
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    // Retry-After counts from the refusal to when the oldest counted request leaves the window.
    await sleep(Number(refused.headers.get("retry-after")) * 1_000);
    expect((await get()).status).toBe(200);
    child.kill("SIGTERM");
  });

  it("--call-seconds sets how long a placed call takes", async () => {
    const { child } = run(["--port", "0", "--rate-limit", "0", "--call-seconds", "0.3"]);
    const url = await listening(child);
    const auth = { Authorization: "Bearer va_test_local" };
    const agent = await request(`${url}/v1/agents`, "POST", { name: "Clocked" }, auth);
    expect(agent.status).toBe(201);
    const id = agent.body.id as string;
    expect((await request(`${url}/v1/agents/${id}/versions/0/publish`, "POST", undefined, auth)).status).toBe(
      200,
    );
    const placedAt = Date.now();
    const placed = await request(
      `${url}/v1/calls`,
      "POST",
      { agent_id: id, to_number: "+918065550199", version: 0 },
      { ...auth, "Idempotency-Key": "cli-clock-1" },
    );
    expect(placed.status).toBe(202);
    const read = () => request(`${url}/v1/calls/${placed.body.id}`, "GET", undefined, auth);
    let done: any;
    while (Date.now() - placedAt < 5_000) {
      done = (await read()).body;
      if (done.custom_analysis !== null) break;
      await sleep(20);
    }
    expect(done.status).toBe("completed");
    // The stages sit at fixed fractions of the call's life: it ends at 0.6 of 0.3 s (the default
    // 1 s would end it at 600 ms).
    expect(Date.parse(done.ended_at) - Date.parse(done.created_at)).toBe(180);
    expect(Date.parse(done.connected_at) - Date.parse(done.created_at)).toBe(60);
    child.kill("SIGTERM");
  });
});
