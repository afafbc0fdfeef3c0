/**
 * A faithful local emulator of the voice-agent service (see docs/emulator.md).
 *
 * ```ts
 * const emu = await startEmulator({ port: 0 });
 * // ... requests to `${emu.url}/v1/...` with `Authorization: Bearer ${DEFAULT_API_KEY}`
 * await emu.control.setCallOutcomes([{ status: "no_answer" }]); // the control API, typed
 * await emu.close();
 * ```
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { CallRuntime, DEFAULT_CALL_SECONDS, MAX_CALL_SECONDS } from "./calls";
import type { EmulatorSettings } from "./context";
import { EmulatorControl } from "./controlClient";
import { Faults } from "./faults";
import { DEFAULT_RATE_WINDOW_MS, RateLimiter } from "./rateLimit";
import { RequestLog } from "./requestLog";
import { type EmulatorSeed, readSeedFile, seederOf } from "./seedFile";
import { createListener } from "./server";
import { State, type WorkspaceConfig } from "./state";

/** The key of the `default` workspace when no workspace is configured. */
export const DEFAULT_API_KEY = "va_test_local";

/** Name of the workspace when none is configured. */
export const DEFAULT_WORKSPACE = "default";

/** Default requests per minute per key. */
export const DEFAULT_RATE_LIMIT = 300;

/** Options of `startEmulator`. */
export interface EmulatorOptions {
  /** Interface to listen on (default 127.0.0.1). */
  host?: string;
  /** Port (default 0: a free port). */
  port?: number;
  /** SQLite file: state survives restarts. Without it the state lives in memory. */
  db?: string;
  /** Workspaces and their keys (default: `default` with `va_test_local`). */
  workspaces?: WorkspaceConfig[];
  /**
   * Requests per key within the moving window (default 300; 0 disables). Named for the service's
   * one-minute window; with `rateWindowMs` it counts per that window instead.
   */
  rateLimitPerMinute?: number;
  /**
   * Length of the rate-limit window in ms (default 60 000, the service's). Tests shorten it so that
   * a full window passes in seconds.
   */
  rateWindowMs?: number;
  /** How long knowledge-base documents stay `processing` (default 100 ms). */
  kbProcessingMs?: number;
  /**
   * How long a placed call's whole life takes, from ringing to `call.processing.completed`, in
   * seconds (default 1; tests use 0.1 to 0.3). See docs/emulator.md, "Calls".
   */
  callSeconds?: number;
  /**
   * What the workspaces hold from the start and after every reset, besides the built-in seed: their
   * agents, knowledge bases, analysis groups and numbers (docs/emulator.md, "Your own seed"). A seed
   * object, or the path of a JSON file holding one (`--seed FILE`). An entry the service would refuse
   * fails the start, naming the entry. With `db`, a workspace the database already holds is loaded as
   * it was; a reset empties the database and seeds again.
   */
  seed?: EmulatorSeed | string;
}

/** A running emulator. */
export interface RunningEmulator {
  /** `http://HOST:PORT`, without a trailing slash. */
  url: string;
  host: string;
  port: number;
  /** Workspaces and keys it serves. */
  workspaces: WorkspaceConfig[];
  /** The typed client of its control API (faults, call outcomes, traffic, chats, webhooks, request log, state, reset). */
  control: EmulatorControl;
  /** Back to the seeded state (same as `POST /_emulator/reset`). */
  reset(): void;
  /** Stops listening, drops open connections and closes the database. */
  close(): Promise<void>;
}

/** Checks workspace names and keys: non-empty, no duplicates. */
export function checkWorkspaces(workspaces: WorkspaceConfig[]): void {
  const names = new Set<string>();
  const keys = new Set<string>();
  for (const w of workspaces) {
    if (!/^[A-Za-z0-9_.-]+$/.test(w.name))
      throw new Error(`workspace name '${w.name}' must be letters, digits, '.', '_' or '-'`);
    if (!w.key || /\s/.test(w.key)) throw new Error(`workspace '${w.name}' needs a key without spaces`);
    if (names.has(w.name)) throw new Error(`workspace '${w.name}' is configured twice`);
    if (keys.has(w.key)) throw new Error(`key '${w.key}' is given to two workspaces`);
    names.add(w.name);
    keys.add(w.key);
  }
}

/** Starts an emulator and resolves once it listens. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const host = options.host ?? "127.0.0.1";
  const workspaces = options.workspaces?.length
    ? options.workspaces
    : [{ name: DEFAULT_WORKSPACE, key: DEFAULT_API_KEY }];
  checkWorkspaces(workspaces);
  const callSeconds = options.callSeconds ?? DEFAULT_CALL_SECONDS;
  if (!Number.isFinite(callSeconds) || callSeconds <= 0 || callSeconds > MAX_CALL_SECONDS)
    throw new Error(`callSeconds must be more than 0 and at most ${MAX_CALL_SECONDS}, got ${callSeconds}`);
  const limiter = new RateLimiter(
    options.rateLimitPerMinute ?? DEFAULT_RATE_LIMIT,
    options.rateWindowMs ?? DEFAULT_RATE_WINDOW_MS,
  );
  const seed = typeof options.seed === "string" ? readSeedFile(options.seed) : options.seed;
  const seeder = seed
    ? seederOf(
        seed,
        workspaces.map((w) => w.name),
      )
    : undefined;
  // A seed an entry of which the service would refuse fails the start, with or without a
  // database, before anything is written: tried first on a throwaway in-memory state (a database
  // that already holds the workspaces would skip the seed, and a reset would then fail on it).
  if (seeder && options.db) new State(workspaces, undefined, seeder);
  const state = new State(workspaces, options.db, seeder);
  const settings: EmulatorSettings = {
    kbProcessingMs: options.kbProcessingMs ?? 100,
    rateLimitPerMinute: options.rateLimitPerMinute ?? DEFAULT_RATE_LIMIT,
    baseUrl: "",
    callMs: Math.max(1, Math.round(callSeconds * 1000)),
  };
  const calls = new CallRuntime(() => settings.baseUrl);
  const faults = new Faults();
  const log = new RequestLog();
  const server: Server = createServer(
    { keepAliveTimeout: 30_000 },
    createListener({ state, settings, faults, log, limiter, calls }),
  );
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port ?? 0, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (err) {
    await calls.close();
    state.close();
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  settings.baseUrl = url;
  let closed: Promise<void> | undefined;
  return {
    url,
    host,
    port,
    workspaces,
    control: new EmulatorControl(url),
    reset: () => {
      calls.reset();
      state.reset();
      faults.clear();
      limiter.clear();
      log.clear();
    },
    close: () => {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => {
          void calls.close().then(() => {
            state.close();
            resolve();
          });
        });
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

export { type BulkAgent, MAX_BULK_AGENTS } from "./bulkAgents";
export { type ControlCallBody, DEFAULT_CALL_SECONDS, MAX_CALL_SECONDS, type OutcomeRule } from "./calls";
export type { EmulatorSnapshot } from "./control";
export {
  type BulkAgentsAnswer,
  type BulkAgentsRequest,
  type ChatRequest,
  type ControlAnswer,
  ControlError,
  EmulatorControl,
  type EmulatorHealth,
  type TrafficAnswer,
  type TrafficRequest,
  type WhatsappTemplate,
} from "./controlClient";
export type { FaultConfig } from "./faults";
export { DEFAULT_RATE_WINDOW_MS } from "./rateLimit";
export type { LogEntry } from "./requestLog";
export type {
  EmulatorSeed,
  SeedAgent,
  SeedAnalysisGroup,
  SeedKnowledgeBase,
  SeedWorkspace,
} from "./seedFile";
export type { WorkspaceConfig } from "./state";
export { MAX_TRAFFIC_AGENTS, MAX_TRAFFIC_CALLS, type TrafficMixEntry } from "./traffic";
