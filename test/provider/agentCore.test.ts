/**
 * The Agent on the typed core: values unknown at preview at every nesting level, misspelt inputs,
 * phone numbers, and a service that cannot be asked. Each test here failed before the redesign.
 */
import { createServer } from "node:net";
import { beforeEach, describe, expect, test } from "vitest";
import { VoiceAgentClient } from "../../src/client";
import type { RunningEmulator } from "../../src/emulator";
import { contextFor } from "../../src/provider/context";
import { isExpectedFailure } from "../../src/provider/failures";
import { UNKNOWN } from "../../src/provider/unknowns";
import { agentProvider } from "../../src/resources/agent/provider";
import { checkAndCreate, emulatorForFile, testContext } from "./support";

const agent = agentProvider(testContext);
let emu: RunningEmulator;

emulatorForFile({}, (e) => {
  emu = e;
});
beforeEach(async () => {
  await fetch(`${emu.url}/_emulator/reset`, { method: "POST" });
});

const base = { name: "Core test agent", systemPrompt: "## Agent Purpose\nHelp." };
const transfer = (numbers: unknown[]) => ({
  systemPrompt: "## Agent Purpose\nHelp. Use <transfer_call> for humans.",
  builtinTools: { transferCall: { enabled: true, numbers } },
});
const failuresOf = async (inputs: Record<string, unknown>) =>
  ((await agent.check({}, { ...base, ...inputs })).failures ?? []).map((f) => f.reason);

describe("values unknown at preview", () => {
  test.each([
    ["a voice id inside the voice", { voice: { provider: "elevenlabs", voiceId: UNKNOWN } }],
    [
      "the language the voice is checked against",
      { language: { default: UNKNOWN }, voice: { provider: "sarvam", voiceId: "meera" } },
    ],
    ["a variable's key", { variables: [{ key: UNKNOWN, defaultValue: "x" }] }],
    ["a whole variable", { variables: [UNKNOWN] }],
    [
      "a transfer number",
      transfer([{ number: UNKNOWN, timezone: "Asia/Kolkata", startHour: 9, endHour: 18 }]),
    ],
    ["a transfer window hour", transfer([{ number: "+919800000001", startHour: UNKNOWN, endHour: 18 }])],
    ["a model inside its fallback", { model: { model: "gpt-4o-mini", fallback: { model: UNKNOWN } } }],
    ["a knowledge base id", { knowledgeBaseIds: [UNKNOWN] }],
    ["the whole knowledge base list", { knowledgeBaseIds: UNKNOWN }],
    ["a memory field's type", { memory: { enabled: true, fields: [{ key: "city", type: UNKNOWN }] } }],
    ["the name", { name: UNKNOWN }],
    ["a message text", { call: { maxDurationMessage: { mode: "custom", text: UNKNOWN } } }],
  ])("%s is never reported missing nor checked as a default", async (_what, inputs) => {
    expect(await failuresOf(inputs)).toEqual([]);
  });

  test("a known problem next to an unknown value is still reported, at the user's index", async () => {
    const reasons = await failuresOf(
      transfer([
        { number: UNKNOWN, timezone: "Asia/Kolkata", startHour: 9, endHour: 18 },
        { number: "+919800000002", timezone: "Mars/Olympus", startHour: 9, endHour: 18 },
      ]),
    );
    // The rules of the group holding the unknown are skipped, but the schema still runs.
    const schema = await failuresOf({ variables: [{ key: UNKNOWN }, { key: "ok", defaultValue: 5 }] });
    expect(schema.join("\n")).toContain("variables[1].defaultValue");
    expect(reasons.join("\n")).not.toContain("numbers[0]");
  });

  test("a type error beside an unknown value in the same object is reported", async () => {
    const reasons = await failuresOf({ voice: { provider: "elevenlabs", voiceId: UNKNOWN, speed: "fast" } });
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toContain("voice.speed");
  });
});

describe("inputs the Agent does not have", () => {
  test("a misspelt top-level input is refused at preview, naming it and the likely one", async () => {
    const reasons = await failuresOf({ systemPromt: "## Agent Purpose\nHelp." });
    expect(reasons).toEqual([
      expect.stringContaining("systemPromt: not an input of Agent (did you mean systemPrompt?)"),
    ]);
  });

  test("a misspelt nested key is refused, named in the program's spelling, with the likely one", async () => {
    const reasons = await failuresOf({ voice: { provider: "sarvam", voiceID: "meera" } });
    expect(reasons).toContain("voice.voiceID: not an input (did you mean voiceId?) (extra_forbidden)");
    expect(await failuresOf({ conversation: { silenceRemindr: { enabled: true } } })).toEqual([
      "conversation.silenceRemindr: not an input (did you mean silenceReminder?) (extra_forbidden)",
    ]);
  });

  test("a key far from every known one is refused without a guess", async () => {
    expect(await failuresOf({ conversation: { colour: "blue" } })).toEqual([
      "conversation.colour: not an input (extra_forbidden)",
    ]);
  });
});

describe("values of the wrong type", () => {
  test("name the field, what was expected and what was given (`pulumi config set --path` writes strings)", async () => {
    expect(await failuresOf({ voice: { provider: "sarvam", voiceId: "meera", speed: "1.2" } })).toEqual([
      'voice.speed: expected a number, got the string "1.2" (float_type)',
    ]);
    expect(await failuresOf({ name: 42 })).toEqual([
      "name: expected a string, got the number 42 (string_type)",
    ]);
  });
});

describe("phone numbers", () => {
  test("digits without a country code are refused, never given an invented one", async () => {
    const reasons = await failuresOf(
      transfer([{ number: "9800000001", timezone: "Asia/Kolkata", startHour: 9, endHour: 18 }]),
    );
    expect(reasons.join("\n")).toContain("builtinTools.transferCall.numbers[0].number");
    const inbound = await failuresOf({ numbers: { inboundPhone: "9800000001" } });
    expect(inbound.join("\n")).toContain("numbers.inboundPhone");
  });

  test("a number written with the international prefix and spaces causes no diff after create", async () => {
    await fetch(`${emu.url}/_emulator/workspaces/default/numbers`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ number: "+919800000001" }),
    });
    const inputs = { ...base, numbers: { inboundPhone: "0091 98000 00001" } };
    const { id, inputs: checked, outs } = await checkAndCreate(agent, inputs);
    expect((await agent.diff(id, outs, checked)).changes).toBe(false);
  });
});

describe("a service that cannot be asked fails the preview at once", () => {
  const changed = { ...base, voice: { provider: "sarvam", voiceId: "meera" } };

  test("a wrong key fails the check, naming the setting, without the key", async () => {
    const c = new VoiceAgentClient({ baseUrl: emu.url, apiKey: "va_wrong_key_123" });
    const err = await agentProvider(contextFor(c))
      .check({}, changed)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(String((err as Error).message)).toContain("voice-agent:apiKey");
    expect(String((err as Error).message)).not.toContain("va_wrong_key_123");
    expect((err as Error).cause).toBeDefined();
    // Said by its message: Pulumi's script does not print our stack trace for it (handlers.ts).
    expect(isExpectedFailure(err)).toBe(true);
  });

  test("an unreachable service fails within seconds, naming the address and the cause first", async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, "127.0.0.1", () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const c = new VoiceAgentClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: "va_test_local" });
    const started = Date.now();
    const err = await agentProvider(contextFor(c))
      .check({}, changed)
      .catch((e: unknown) => e);
    // A port nobody listens on: refused, said at once (a few seconds of retries for a service
    // still starting), naming the address, cause first.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(String((err as Error).message)).toMatch(
      new RegExp(
        `^connection refused at http://127\\.0\\.0\\.1:${port}: is the service or the emulator running\\?.*not checked`,
      ),
    );
    expect(isExpectedFailure(err)).toBe(true);
    expect((err as Error).cause).toBeInstanceOf(Error);
  }, 30_000);

  test("a bug is not an expected failure, even wrapped in a message of ours: its stack trace is printed", () => {
    const bug = new TypeError("catalogue.models is not a function");
    expect(isExpectedFailure(bug)).toBe(false);
    expect(isExpectedFailure(new Error("could not be checked: oops", { cause: bug }))).toBe(false);
    expect(isExpectedFailure("a string")).toBe(false);
  });
});

test("a refusal of an over-long prompt does not echo the whole prompt", async () => {
  const reasons = await failuresOf({ systemPrompt: "x".repeat(65_537) });
  expect(reasons).toHaveLength(1);
  expect((reasons[0] ?? "").length).toBeLessThan(1_000);
});

test("a misspelt key inside a variable is refused, not dropped", async () => {
  const reasons = await failuresOf({ variables: [{ key: "order_id", defualtValue: "none" }] });
  expect(reasons.join("\n")).toContain("variables[0].defualtValue");
});
