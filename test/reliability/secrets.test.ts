/**
 * Secrets: a stack with an agent, its live version, a widget (whose public key is a secret output),
 * a knowledge base and a catalogue lookup, run with Pulumi's most verbose logging. The API key (a
 * random one, so that any hit is a leak) appears nowhere: not in the exported state (with and
 * without --show-secrets), not in `-v=9 --logtostderr --logflow` output, not in the log files
 * Pulumi writes without --logtostderr, not in the client's debug lines, and not in any error (a
 * refused preview, a conflict, an unreachable service, a revoked key). The widget key is in the
 * state only encrypted: the plain export lacks it, --show-secrets shows it.
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { revokeKey } from "../support/control";
import { type Emulator, expectNoSecret, PulumiProject, startEmulator } from "./support";

const KEY = `va_secret_${randomUUID().replaceAll("-", "")}`;
let emu: Emulator;

beforeAll(async () => {
  emu = await startEmulator({ port: 0, workspaces: [{ name: "secrets", key: KEY }], rateLimitPerMinute: 0 });
});
afterAll(async () => {
  await emu?.close();
});

async function api(method: string, route: string, body?: unknown): Promise<any> {
  const res = await fetch(`${emu.url}${route}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

function program(prompt: string, extra = ""): string {
  return `
import * as va from "pulumi-voice-agent";
const voices = va.getVoicesOutput({ provider: "sarvam", language: "en-IN" });
const kb = new va.KnowledgeBase("faq", {
  name: "Secrets FAQ",
  documents: [{ name: "hours", text: "Nine to six." }],
});
const agent = new va.Agent("agent", {
  name: "Secrets agent",
  systemPrompt: ${JSON.stringify(prompt)},
  language: { default: "en-IN", additional: ["hi-IN"] },
  voice: { provider: "sarvam", voiceId: voices.apply((v) => v.find((x) => x.voiceId === "meera")!.voiceId) },
  knowledgeBaseIds: [kb.id],${extra}
});
new va.AgentVersion("agent-live", { agent });
const widget = new va.Widget("widget", {
  agentId: agent.agentId,
  allowedOrigins: ["https://shop.example.com"],
});
export const agentId = agent.agentId;
export const publicKey = widget.publicKey;
export const publicKeyPrefix = widget.publicKeyPrefix;
`;
}

/** Every file under `dir` (recursively), as text. */
function filesUnder(dir: string): [string, string][] {
  const out: [string, string][] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d)) {
      const full = path.join(d, e);
      const st = statSync(full);
      if (st.isDirectory()) walk(full);
      else if (st.isFile()) out.push([full, readFileSync(full, "utf8")]); // not the settings sockets
    }
  };
  walk(dir);
  return out;
}

describe("secrets", () => {
  test("the API key appears in no state, log or error; the widget key only encrypted in state", async () => {
    const p = await PulumiProject.create({
      program: program("## Agent Purpose\nHelp callers."),
      config: { "voice-agent:baseUrl": emu.url },
      secrets: { "voice-agent:apiKey": KEY },
    });
    // glog writes Pulumi's log files to $TMPDIR when --logtostderr is not given: keep them here.
    const logDir = path.join(p.dir, ".logs");
    mkdirSync(logDir);
    const verbose = ["-v=9", "--logflow"];
    const texts: string[] = [];
    const run = async (
      args: string[],
      opts: { allowFailure?: boolean; env?: Record<string, string> } = {},
    ) => {
      const r = await p.pulumi(args, {
        ...opts,
        env: { TMPDIR: logDir, VOICE_AGENT_DEBUG: "1", ...opts.env },
      });
      texts.push(r.stdout, r.stderr);
      return r;
    };
    try {
      // The whole life of the stack at -v=9, once to stderr and once to log files.
      const up = await run(["up", "--yes", "--skip-preview", ...verbose, "--logtostderr"]);
      expect(up.stderr.length).toBeGreaterThan(100_000); // verbose logging really was on
      expect(up.stderr).toMatch(/voice-agent method=POST path=\/v1\/agents status=201/); // and the client's debug lines
      await run(["preview", "--expect-no-changes", ...verbose]);
      await run(["refresh", "--yes", "--expect-no-changes", ...verbose, "--logtostderr"]);
      p.setProgram(program("## Agent Purpose\nHelp callers, politely."));
      await run(["up", "--yes", "--skip-preview", ...verbose]);

      // Errors: a refused preview, a conflict, an unreachable service, a revoked key.
      p.setProgram(
        program("## Agent Purpose\nHelp callers.", `\n  conversation: { responseEagerness: 0.6 as any },`),
      );
      const refused = await run(["preview", ...verbose, "--logtostderr"], { allowFailure: true });
      expect(refused.code).not.toBe(0);
      expect(refused.stdout).toMatch(/conversation\.responseEagerness/);

      const { agentId } = await p.outputs();
      await api("PATCH", `/v1/agents/${agentId}`, { system_prompt: "## Agent Purpose\nDashboard edit." });
      p.setProgram(program("## Agent Purpose\nHelp callers, briefly."));
      const conflict = await run(["up", "--yes", "--skip-preview", ...verbose, "--logtostderr"], {
        allowFailure: true,
      });
      expect(conflict.code).not.toBe(0);
      expect(conflict.stdout).toMatch(/changed outside Pulumi/);
      await run(["refresh", "--yes"]);

      // The widget key: encrypted in the plain export, in clear only with --show-secrets.
      const widgetKey = (await p.outputs()).publicKey as string;
      expect(typeof widgetKey).toBe("string");
      expect(widgetKey.length).toBeGreaterThan(16);
      const plain = await p.exportState(false);
      const shown = await p.exportState(true);
      expect(plain).not.toContain(widgetKey);
      expect(shown).toContain(widgetKey);
      const widget = JSON.parse(plain).deployment.resources.find((r: any) => r.type.endsWith(":Widget"));
      expect(widget.outputs.publicKey).toHaveProperty("ciphertext");
      const plainOutput = await p.pulumi(["stack", "output", "publicKey"]);
      expect(plainOutput.stdout).not.toContain(widgetKey);
      // The widget key is not the API key: it is a public key meant for web pages, kept out of
      // plain state. Pulumi itself logs provider outputs and secret values at -v=9, so it shows
      // there (docs/reliability.md); report where.
      const where = new Set<string>();
      for (const t of texts) {
        for (let i = t.indexOf(widgetKey); i >= 0; i = t.indexOf(widgetKey, i + 1)) {
          const before = t.slice(Math.max(0, i - 300), i);
          const rpc = /RPC\[(\w+)(?:\[0x[0-9a-f]+\])?\.?(\w+)?[^\]]*\]/.exec(
            before.slice(before.lastIndexOf("msg")),
          );
          where.add(rpc ? `${rpc[1]}.${rpc[2] ?? ""}` : "program RPC payload");
        }
      }
      const withKey = texts.filter((t) => t.includes(widgetKey)).length;
      console.log(
        `widget key (secret output) in -v=9 output of ${withKey} of ${texts.length} commands: ${[...where].join(", ")}`,
      );

      // Errors after the key is revoked, and with the service unreachable.
      await revokeKey(emu, KEY);
      const revoked = await run(["refresh", "--yes", ...verbose, "--logtostderr"], { allowFailure: true });
      expect(revoked.code).not.toBe(0);
      expect(revoked.stdout + revoked.stderr).toMatch(/401|Invalid API key|UNAUTHORIZED/);
      // A base URL the client refuses (plain http to a remote host): a configuration error.
      await p.pulumi(["config", "set", "voice-agent:baseUrl", "http://voice.example.com"]);
      const misconfigured = await run(["refresh", "--yes", ...verbose, "--logtostderr"], {
        allowFailure: true,
      });
      expect(misconfigured.code).not.toBe(0);
      expect(misconfigured.stdout + misconfigured.stderr).toMatch(/https/);

      // Scan everything: state exports, every command's output, Pulumi's log files, $PULUMI_HOME.
      const logs = filesUnder(logDir);
      const logBytes = logs.reduce((n, [, t]) => n + t.length, 0);
      console.log(`Pulumi log files written: ${logs.length} (${(logBytes / 1e6).toFixed(1)} MB)`);
      expect(logs.length).toBeGreaterThan(0);
      const scanned = await expectNoSecret(p, [KEY], [...texts, ...logs.map(([, t]) => t)]);
      console.log(
        `API key absent from ${scanned.places} places, ${(scanned.bytes / 1e6).toFixed(1)} MB ` +
          `(state exports, ${texts.length} command outputs at -v=9, log files, $PULUMI_HOME)`,
      );
    } finally {
      p.cleanup();
    }
  }, 240_000);
});
