/**
 * The emulator's control API for this repository's tests and benchmarks: the package's own typed
 * client (`EmulatorControl`, src/emulator/controlClient.ts, exported from
 * `pulumi-voice-agent/emulator`) with the emulator first, as the tests have always called it. Every
 * function throws a `ControlError` when the emulator refuses; `controlCall` returns any answer as
 * it is (its body untyped), for tests of the control API itself.
 */
import {
  type ControlAnswer,
  type ControlCallBody,
  EmulatorControl,
  type FaultConfig,
  type OutcomeRule,
  type TrafficRequest,
} from "../../src/emulator";

export { ControlError, type WhatsappTemplate } from "../../src/emulator";

/** Where an emulator listens: a `RunningEmulator`, or anything with its `url`. */
export interface EmulatorAddress {
  url: string;
}

/** The control client of an emulator. */
export const control = (emu: EmulatorAddress): EmulatorControl => new EmulatorControl(emu.url);

/** Sends one control request and returns the answer, whatever its status. */
export async function controlCall(
  emu: EmulatorAddress,
  method: string,
  path: string,
  body?: unknown,
): Promise<Omit<ControlAnswer, "body"> & { body: any }> {
  return control(emu).request(method, path, body);
}

export const resetEmulator = (emu: EmulatorAddress) => control(emu).reset();
export const clearRateLimit = (emu: EmulatorAddress) => control(emu).clearRateLimit();
export const setFaults = (emu: EmulatorAddress, faults: Partial<FaultConfig>) =>
  control(emu).setFaults(faults);
export const getFaults = (emu: EmulatorAddress) => control(emu).faults();
export const requestLog = (emu: EmulatorAddress) => control(emu).requests();
export const clearRequestLog = (emu: EmulatorAddress) => control(emu).clearRequests();
export const retireModel = (emu: EmulatorAddress, modelId: string) => control(emu).retireModel(modelId);
export const withdrawVoice = (emu: EmulatorAddress, provider: string, voiceId: string) =>
  control(emu).withdrawVoice(provider, voiceId);
export const revokeKey = (emu: EmulatorAddress, key: string) => control(emu).revokeKey(key);
export const addNumber = (emu: EmulatorAddress, workspace: string, number: string) =>
  control(emu).addNumber(workspace, number);
export const addWhatsappTemplate = (
  emu: EmulatorAddress,
  workspace: string,
  template: { name: string; language: string },
) => control(emu).addWhatsappTemplate(workspace, template);
export const addCustomTool = (emu: EmulatorAddress, workspace: string, name: string) =>
  control(emu).addCustomTool(workspace, name);
export const openDraft = (emu: EmulatorAddress, agentId: string) => control(emu).openDraft(agentId);
export const setCallOutcomes = (emu: EmulatorAddress, rules: OutcomeRule[]) =>
  control(emu).setCallOutcomes(rules);
export const setAgentWebhook = (emu: EmulatorAddress, agentId: string, url: string | null) =>
  control(emu).setAgentWebhook(agentId, url);
export const trafficCall = (emu: EmulatorAddress, call: ControlCallBody) => control(emu).call(call);
export const traffic = (emu: EmulatorAddress, body: TrafficRequest) => control(emu).traffic(body);
