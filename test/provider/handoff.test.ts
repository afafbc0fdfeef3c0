/**
 * The settings handoff from the program process to the provider process (src/provider/handoff.ts):
 * served on a private local socket keyed by the engine's address, the stack and the namespace.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { fetchSettings, handoffAddress, serveSettings } from "../../src/provider/handoff";

const ENGINE = "127.0.0.1:40123";
const VALUES = { "voice-agent:baseUrl": "http://127.0.0.1:9", "voice-agent:apiKey": "va_test_handoff" };
let tmp: string;
const saved = { TMPDIR: process.env.TMPDIR, PULUMI_NODEJS_ENGINE: process.env.PULUMI_NODEJS_ENGINE };

beforeEach(() => {
  tmp = mkdtempSync(path.join(tmpdir(), "handoff-test-"));
  process.env.TMPDIR = tmp;
  process.env.PULUMI_NODEJS_ENGINE = ENGINE;
});
afterEach(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  rmSync(tmp, { recursive: true, force: true });
});

describe.skipIf(process.platform === "win32")("settings handoff", () => {
  test("the provider of the same deployment, stack and namespace reads what the program serves", async () => {
    serveSettings("org/proj/dev", "voice-agent", VALUES);
    expect(await fetchSettings(ENGINE, "org/proj/dev", "voice-agent")).toEqual(VALUES);
    // Twice: every provider process of the deployment may ask.
    expect(await fetchSettings(ENGINE, "org/proj/dev", "voice-agent")).toEqual(VALUES);
    // Another deployment (engine), stack or namespace finds nothing and falls back.
    expect(await fetchSettings("127.0.0.1:40124", "org/proj/dev", "voice-agent")).toBeUndefined();
    expect(await fetchSettings(ENGINE, "org/proj/prod", "voice-agent")).toBeUndefined();
    expect(await fetchSettings(ENGINE, "org/proj/dev", "voice-agent-eu")).toBeUndefined();
    expect(await fetchSettings("not an address", "org/proj/dev", "voice-agent")).toBeUndefined();
  });

  test("the socket sits in a directory only this user can enter", async () => {
    serveSettings("org/proj/dev", "voice-agent", VALUES);
    const address = handoffAddress(ENGINE, "org/proj/dev", "voice-agent");
    expect(address.startsWith(tmp)).toBe(true);
    expect(statSync(path.dirname(address)).mode & 0o777).toBe(0o700);
    expect(statSync(address).isSocket()).toBe(true);
  });

  test("a directory others can enter is refused: nothing is served, the provider falls back", async () => {
    const dir = path.join(tmp, `pulumi-voice-agent-${process.getuid?.() ?? "user"}`);
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    serveSettings("org/proj/dev", "voice-agent", VALUES);
    expect(() => handoffAddress(ENGINE, "org/proj/dev", "voice-agent")).toThrow(/not a private directory/);
    expect(await fetchSettings(ENGINE, "org/proj/dev", "voice-agent")).toBeUndefined();
  });

  test("sockets left by killed programs are removed after a day", async () => {
    serveSettings("org/proj/old", "voice-agent", VALUES);
    const old = handoffAddress(ENGINE, "org/proj/old", "voice-agent");
    const dayAgo = new Date(Date.now() - 25 * 3600_000);
    utimesSync(old, dayAgo, dayAgo); // as a program killed yesterday left it
    process.env.PULUMI_NODEJS_ENGINE = "127.0.0.1:40999";
    serveSettings("org/proj/dev", "voice-agent", VALUES);
    expect(existsSync(old)).toBe(false);
    expect(existsSync(handoffAddress("127.0.0.1:40999", "org/proj/dev", "voice-agent"))).toBe(true);
  });

  test("outside a deployment (no engine address) nothing is served", async () => {
    delete process.env.PULUMI_NODEJS_ENGINE;
    serveSettings("org/proj/dev", "voice-agent", VALUES);
    expect(await fetchSettings(ENGINE, "org/proj/dev", "voice-agent")).toBeUndefined();
  });
});

describe("on Windows", () => {
  test("the handoff is off: a named pipe would let any local user read the key", async () => {
    const platform = Object.getOwnPropertyDescriptor(process, "platform");
    Object.defineProperty(process, "platform", { value: "win32" });
    try {
      serveSettings("org/proj/win", "voice-agent", VALUES);
      expect(await fetchSettings(ENGINE, "org/proj/win", "voice-agent")).toBeUndefined();
    } finally {
      if (platform) Object.defineProperty(process, "platform", platform);
    }
    // Back on this platform, nothing was served for that stack.
    expect(await fetchSettings(ENGINE, "org/proj/win", "voice-agent")).toBeUndefined();
  });
});
