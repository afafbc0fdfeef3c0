/** Shared helpers of the emulator tests: a real emulator on a random port, and a tiny HTTP client. */

import {
  DEFAULT_API_KEY,
  type EmulatorOptions,
  type RunningEmulator,
  startEmulator,
} from "../../src/emulator";
import { controlCall } from "../support/control";

export interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

/** A client bound to one emulator and one key. */
export interface Api {
  emu: RunningEmulator;
  key: string;
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer>;
  get(path: string, headers?: Record<string, string>): Promise<Answer>;
  post(path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer>;
  patch(path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer>;
  put(path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer>;
  del(path: string, headers?: Record<string, string>): Promise<Answer>;
  /** Control API call (no key), answered as it is (test/support/control.ts has one function per operation). */
  control(method: string, path: string, body?: unknown): Promise<Answer>;
  /** Creates an agent and returns its detail (asserts 201). */
  createAgent(body?: Record<string, unknown>): Promise<any>;
  withKey(key: string): Api;
}

/** Sends one request; `body` is JSON-encoded unless it is a string. */
export async function request(
  url: string,
  method: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)["Content-Type"] = "application/json";
  }
  const res = await fetch(url, init);
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

export function bind(emu: RunningEmulator, key = DEFAULT_API_KEY): Api {
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    request(`${emu.url}${path}`, method, body, { Authorization: `Bearer ${key}`, ...headers });
  const api: Api = {
    emu,
    key,
    call,
    get: (p, h) => call("GET", p, undefined, h),
    post: (p, b, h) => call("POST", p, b, h),
    patch: (p, b, h) => call("PATCH", p, b, h),
    put: (p, b, h) => call("PUT", p, b, h),
    del: (p, h) => call("DELETE", p, undefined, h),
    control: (method, path, body) => controlCall(emu, method, path, body),
    async createAgent(body = {}) {
      const r = await call("POST", "/v1/agents", { name: "Test agent", ...body });
      if (r.status !== 201) throw new Error(`create agent: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    },
    withKey: (k) => bind(emu, k),
  };
  return api;
}

/** Starts an emulator for a test file (no rate limit unless asked) and returns a bound client. */
export async function start(options: EmulatorOptions = {}): Promise<Api> {
  const emu = await startEmulator({ rateLimitPerMinute: 0, kbProcessingMs: 50, ...options });
  return bind(emu);
}

/** The reason of an error answer, read as the reference says. */
export function reason(a: Answer): string | undefined {
  const b = a.body;
  if (b && typeof b.detail === "object" && b.detail !== null) return b.detail.code;
  return b?.code;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
