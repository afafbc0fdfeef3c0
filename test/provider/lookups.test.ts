/**
 * Catalogue lookups against the emulator, reading their settings as a program does: the stack
 * configuration (`voice-agent:baseUrl`, secret `voice-agent:apiKey`, or another namespace), with the
 * `VOICE_AGENT_*` environment as the fallback. Promise and Output forms, camelCase results, filters.
 */
import * as pulumi from "@pulumi/pulumi";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { DEFAULT_API_KEY, type RunningEmulator, startEmulator } from "../../src/emulator";
import {
  getLanguages,
  getLanguagesOutput,
  getModels,
  getModelsOutput,
  getNumbers,
  getTranscribers,
  getTtsCapabilities,
  getVoices,
  getVoicesOutput,
  getWhatsAppNumbers,
  getWhatsAppTemplates,
  getWhatsAppTemplatesOutput,
} from "../../src/resources/lookups";
import { withdrawVoice } from "../support/control";

let emu: RunningEmulator;

function useConfig(values: Record<string, string>): void {
  pulumi.runtime.setAllConfig(
    values,
    Object.keys(values).filter((k) => k.endsWith(":apiKey")),
  );
}

/** The value of an Output (outside a deployment, applies run). */
function resolved<T>(o: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => o.apply((v) => resolve(v)));
}

beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
});
afterEach(() => {
  useConfig({});
  delete process.env.VOICE_AGENT_BASE_URL;
  delete process.env.VOICE_AGENT_API_KEY;
});
afterAll(async () => {
  await emu?.close();
});

describe("from the stack configuration", () => {
  test("voices filtered by provider and language, camelCase", async () => {
    useConfig({ "voice-agent:baseUrl": emu.url, "voice-agent:apiKey": DEFAULT_API_KEY });
    const tamil = await getVoices({ language: "ta-IN" });
    expect(tamil.length).toBeGreaterThan(1);
    for (const v of tamil) expect(v.languages).toContain("ta-IN");
    expect(tamil[0]).toEqual({
      provider: expect.any(String),
      voiceId: expect.any(String),
      name: expect.any(String),
      languages: expect.any(Array),
      withdrawn: false,
    });
    const sarvamTamil = await getVoices({ provider: "sarvam", language: "ta-IN" });
    expect(sarvamTamil.map((v) => v.voiceId).sort()).toEqual(["meera", "vidya"]);
    expect(await getVoices({ provider: "sarvam", language: "de-DE" })).toEqual([]);
    expect((await getVoices()).length).toBeGreaterThan(sarvamTamil.length);

    // The Output form takes Inputs.
    const out = getVoicesOutput({ provider: pulumi.output("deepgram"), language: Promise.resolve("en-IN") });
    expect((await resolved(out)).map((v) => v.voiceId)).toEqual(["thalia"]);
  });

  test("withdrawn voices and retired models are left out unless asked for", async () => {
    useConfig({ "voice-agent:baseUrl": emu.url, "voice-agent:apiKey": DEFAULT_API_KEY });
    expect((await withdrawVoice(emu, "sarvam", "vidya")).withdrawn).toBe(true);
    try {
      expect((await getVoices({ provider: "sarvam", language: "ta-IN" })).map((v) => v.voiceId)).toEqual([
        "meera",
      ]);
      const all = await getVoices({ provider: "sarvam", language: "ta-IN", includeWithdrawn: true });
      expect(all.find((v) => v.voiceId === "vidya")?.withdrawn).toBe(true);
    } finally {
      emu.reset();
    }
    const models = await getModels();
    expect(models.some((m) => m.retired)).toBe(false);
    expect(models.find((m) => m.id === "gpt-4o-mini")).toEqual({
      id: "gpt-4o-mini",
      provider: "openai",
      displayName: "GPT-4o mini",
      supportsTemperature: true,
      ratePerMin: expect.any(Number),
      retired: false,
    });
    const withRetired = await resolved(getModelsOutput({ includeRetired: pulumi.output(true) }));
    expect(withRetired.find((m) => m.id === "gpt-3.5-turbo")?.retired).toBe(true);
  });

  test("transcribers, languages and TTS capabilities", async () => {
    useConfig({ "voice-agent:baseUrl": emu.url, "voice-agent:apiKey": DEFAULT_API_KEY });
    const transcribers = await getTranscribers();
    const saarika = transcribers.find((t) => t.id === "saarika:v2");
    expect(saarika?.responseSpeedSeconds?.Balanced).toEqual(expect.any(Number));
    expect(transcribers.find((t) => t.id === "chirp-2")?.responseSpeedSeconds).toBeNull();
    const languages = await resolved(getLanguagesOutput());
    expect(languages).toContainEqual({ code: "hi-IN", name: "Hindi (India)" });
    expect(await getLanguages()).toEqual(languages);
    const tts = await getTtsCapabilities();
    expect(Object.keys(tts).sort()).toEqual(["cartesia", "deepgram", "elevenlabs", "sarvam"]);
    expect(tts.cartesia).toEqual({
      model: "sonic-2",
      languages: expect.arrayContaining(["hi-IN"]),
      supportsSpeed: true,
      speedRange: [0.6, 1.5],
      supportsEmotion: true,
    });
    expect(tts.deepgram?.speedRange).toBeNull();
  });

  test("numbers, WhatsApp numbers and templates the workspace holds", async () => {
    useConfig({ "voice-agent:baseUrl": emu.url, "voice-agent:apiKey": DEFAULT_API_KEY });
    const numbers = await getNumbers();
    expect(numbers.length).toBeGreaterThan(0);
    expect(numbers[0]).toEqual({
      id: expect.any(String),
      number: expect.stringMatching(/^\+/),
      carrierStatus: expect.stringMatching(/listed|delisted/),
      lifecycleStatus: expect.stringMatching(/active|grace_period|released/),
      agentId: null,
    });
    const wa = await getWhatsAppNumbers();
    expect(wa[0]).toEqual({
      id: expect.any(String),
      number: expect.any(String),
      phoneNumberId: expect.any(String),
      displayName: expect.any(String),
    });
    const templates = await resolved(getWhatsAppTemplatesOutput());
    expect(templates).toContainEqual({ name: "order_update", language: "en-IN", status: "approved" });
    expect(await getWhatsAppTemplates()).toEqual(templates);
  });
});

describe("where the settings come from", () => {
  test("another namespace, as a Provider's namespace", async () => {
    useConfig({ "voice-agent-eu:baseUrl": emu.url, "voice-agent-eu:apiKey": DEFAULT_API_KEY });
    expect((await getLanguages({ namespace: "voice-agent-eu" })).length).toBeGreaterThan(0);
    // The default namespace is not configured here.
    await expect(getLanguages()).rejects.toThrow(/baseUrl/);
  });

  test("the VOICE_AGENT_* environment for the default namespace", async () => {
    process.env.VOICE_AGENT_BASE_URL = emu.url;
    process.env.VOICE_AGENT_API_KEY = DEFAULT_API_KEY;
    expect((await getLanguages()).length).toBeGreaterThan(0);
    // The environment does not stand in for another namespace.
    const err = (await getLanguages({ namespace: "voice-agent-eu" }).catch((e) => e)) as Error;
    expect(err.message).toMatch(/missing configuration voice-agent-eu:baseUrl/);
    expect(err.message).not.toMatch(/VOICE_AGENT_/);
  });

  test("a refused key fails the lookup without showing the key", async () => {
    const secretKey = "va_wrong_key_0123456789";
    useConfig({ "voice-agent:baseUrl": emu.url, "voice-agent:apiKey": secretKey });
    const err = (await getModels().catch((e) => e)) as Error;
    expect(err).toBeInstanceOf(Error);
    expect(String(err.message)).toMatch(/401|UNAUTHORIZED/);
    expect(`${err.message}\n${err.stack}\n${JSON.stringify(err)}`).not.toContain(secretKey);
  });
});
