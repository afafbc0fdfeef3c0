/**
 * Against the emulator: every error shape of the reference parsed to the right class, code and
 * field; pagination across pages; redaction of the key from errors, thrown objects and debug lines.
 */
import { inspect } from "node:util";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  ApiError,
  AuthError,
  BadRequestError,
  ConflictError,
  ConnectionError,
  closeDispatchers,
  NotFoundError,
  ValidationError,
  VoiceAgentClient,
} from "../../src/client";
import { send } from "../../src/client/transport";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { revokeKey } from "../support/control";

const KEY = "va_errors_SECRET_7f3e9c21";
const OTHER_KEY = "va_other_SECRET_55aa00";
let emu: RunningEmulator;
let client: VoiceAgentClient;

beforeAll(async () => {
  emu = await startEmulator({
    port: 0,
    rateLimitPerMinute: 0,
    workspaces: [
      { name: "main", key: KEY },
      { name: "other", key: OTHER_KEY },
    ],
  });
  client = new VoiceAgentClient({ baseUrl: emu.url, apiKey: KEY, rateLimitPerMinute: 100_000 });
});

afterAll(async () => {
  await closeDispatchers();
  await emu?.close();
});

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

const control = (method: string, path: string, body?: unknown) =>
  fetch(`${emu.url}/_emulator${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/** Every form a thrown object can leak through. */
const forms = (e: unknown): string[] => [
  String(e),
  (e as Error).message,
  String((e as Error).stack),
  JSON.stringify(e),
  inspect(e, { depth: 10, showHidden: true }),
];

const caught = async (p: Promise<unknown>): Promise<ApiError> => {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e, "expected the call to fail").toBeInstanceOf(ApiError);
  return e as ApiError;
};

describe("error shapes", () => {
  it("422 validation_error: errors[] with field paths, message names the first field and request id", async () => {
    const e = await caught(client.agents.create({ name: "v", voice: { speed: 9 }, tools: [] } as never));
    expect(e).toBeInstanceOf(ValidationError);
    expect(e.status).toBe(422);
    expect(e.code).toBe("validation_error");
    expect(e.classCode).toBe("VALIDATION_ERROR");
    const fields = e.errors.map((x) => x.field);
    expect(fields).toContain("voice.speed");
    expect(fields).toContain("tools");
    expect(e.errors.find((x) => x.field === "tools")?.type).toBe("extra_forbidden");
    expect(e.requestId).toMatch(/\S+/);
    expect(e.message).toContain(`${e.errors[0]?.field}: `);
    expect(e.message).toContain(`request ${e.requestId}`);
    expect(e.method).toBe("POST");
    expect(e.path).toBe("/v1/agents");
  });

  it("422 for a query parameter names query.<name>", async () => {
    const e = await caught(client.agents.listPage({ limit: 500 }));
    expect(e).toBeInstanceOf(ValidationError);
    expect(e.errors[0]).toMatchObject({ field: "query.limit", type: "less_than_equal" });
    expect(e.message).toMatch(/^validation_error: query\.limit: /);
  });

  it("400 voice_not_found and document_invalid carry param, named in the message", async () => {
    const v = await caught(
      client.agents.create({ name: "v", voice: { provider: "sarvam", voice_id: "nobody" } }),
    );
    expect(v).toBeInstanceOf(BadRequestError);
    expect(v.code).toBe("voice_not_found");
    expect(v.param).toBe("voice.voice_id");
    expect(v.message).toMatch(
      /^voice_not_found: voice\.voice_id: .*\(HTTP 400, POST \/v1\/agents, request \S+\)$/,
    );

    const d = await caught(
      client.agents.create({ name: "d", knowledge_base_ids: ["00000000-0000-4000-8000-000000000000"] }),
    );
    expect(d).toBeInstanceOf(BadRequestError);
    expect(d.code).toBe("document_invalid");
    expect(d.param).toMatch(/^knowledge_base_ids/);
    expect(d.message).toContain(`document_invalid: ${d.param}`);
  });

  it("400 invalid_request with the reason at top level (malformed If-Match)", async () => {
    const a = await client.agents.create({ name: "bad-if-match" });
    const e = await caught(
      send(
        { baseUrl: emu.url, apiKey: KEY },
        {
          method: "PATCH",
          path: `/v1/agents/${a.id}`,
          body: { system_prompt: "x" },
          headers: { "if-match": "not-a-number" },
          retry: "unsafe",
        },
      ),
    );
    expect(e).toBeInstanceOf(BadRequestError);
    expect(e.code).toBe("invalid_request");
    expect(e.classCode).toBe("invalid_request");
    expect(e.param).toBe("If-Match");
  });

  it("409 revision_conflict carries current_revision", async () => {
    const a = await client.agents.create({ name: "conflict" });
    const e = await caught(
      client.agents.patch(a.id, { system_prompt: "x" }, { ifMatch: a.document_revision + 5 }),
    );
    expect(e).toBeInstanceOf(ConflictError);
    expect(e.code).toBe("revision_conflict");
    expect(e.classCode).toBe("CONFLICT");
    expect(e.param).toBe("If-Match");
    expect(e.currentRevision).toBe(a.document_revision);
    expect(e.message).toMatch(/^revision_conflict: If-Match: /);
  });

  it("409 draft_ambiguous lists the candidate drafts", async () => {
    const a = await client.agents.create({ name: "ambiguous" });
    const res = await control("POST", `/agents/${a.id}/drafts`);
    expect(res.ok).toBe(true);
    const e = await caught(client.agents.patch(a.id, { system_prompt: "x" }));
    expect(e).toBeInstanceOf(ConflictError);
    expect(e.code).toBe("draft_ambiguous");
    expect(e.candidates?.length).toBeGreaterThanOrEqual(2);
    expect(e.candidates).toContain(0);
  });

  it("404 version_not_found (object detail) and 404 unknown path (plain-string detail)", async () => {
    const a = await client.agents.create({ name: "nf" });
    const v = await caught(client.versions.get(a.id, 42));
    expect(v).toBeInstanceOf(NotFoundError);
    expect(v.code).toBe("version_not_found");

    const p = await caught(
      send(
        { baseUrl: emu.url, apiKey: KEY },
        { method: "GET", path: "/v1/nothing-here", retry: "idempotent" },
      ),
    );
    expect(p).toBeInstanceOf(NotFoundError);
    expect(p.code).toBe("NOT_FOUND");
    expect(p.detailMessage).toBe("Not Found");
    expect(p.param).toBeUndefined();
  });

  it("405 wrong method: plain-string detail, METHOD_NOT_ALLOWED", async () => {
    const e = await caught(
      send({ baseUrl: emu.url, apiKey: KEY }, { method: "DELETE", path: "/v1/agents", retry: "idempotent" }),
    );
    expect(e.status).toBe(405);
    expect(e.code).toBe("METHOD_NOT_ALLOWED");
    expect(e.detailMessage).toBe("Method Not Allowed");
  });

  it("401 plain-string detail: reason from the top-level code, and the wrong key is not echoed", async () => {
    const wrong = "va_wrong_SECRET_0000ffff";
    const bad = new VoiceAgentClient({ baseUrl: emu.url, apiKey: wrong });
    const e = await caught(bad.catalogue.models());
    expect(e).toBeInstanceOf(AuthError);
    expect(e.status).toBe(401);
    expect(e.code).toBe("UNAUTHORIZED");
    expect(e.detailMessage).toBe("Invalid API key");
    for (const f of forms(e)) expect(f).not.toContain(wrong);
  });

  it("409 knowledge_base_in_use and group_protected", async () => {
    const kb = await client.knowledgeBases.create({ name: "in-use" });
    await client.agents.create({ name: "uses-kb", knowledge_base_ids: [kb.id] });
    const e = await caught(client.knowledgeBases.delete(kb.id));
    expect(e).toBeInstanceOf(ConflictError);
    expect(e.code).toBe("knowledge_base_in_use");
    const def = await client.analysis.list().find((g) => g.name === "Default Analysis");
    expect(def).toBeDefined();
    const g = await caught(client.analysis.delete(def?.id as string));
    expect(g.code).toBe("group_protected");
  });
});

describe("pagination", () => {
  it("walks every page of agents with the cursor", async () => {
    const names = Array.from({ length: 7 }, (_, i) => `paged-${i}`);
    const created = [];
    for (const name of names) created.push(await client.agents.create({ name }));
    const pages = [];
    for await (const page of client.agents.list({ limit: 2 }).pages()) pages.push(page);
    const all = pages.flatMap((p) => p.data);
    expect(pages.length).toBeGreaterThanOrEqual(4);
    expect(pages.slice(0, -1).every((p) => p.has_more && p.next_cursor && p.data.length === 2)).toBe(true);
    expect(pages.at(-1)?.has_more).toBe(false);
    expect(pages.at(-1)?.next_cursor).toBeNull();
    expect(new Set(all.map((a) => a.id)).size).toBe(all.length);
    for (const c of created) expect(all.map((a) => a.id)).toContain(c.id);
    expect((await client.agents.list({ limit: 3 }).toArray()).map((a) => a.id).sort()).toEqual(
      all.map((a) => a.id).sort(),
    );
  });

  it("walks versions and activations", async () => {
    const a = await client.agents.create({ name: "versions", system_prompt: "v0" });
    let rev = a.document_revision;
    for (let i = 1; i <= 3; i++) {
      const p = await client.versions.publish(a.id, i - 1, { label: `v${i - 1}` }, { ifMatch: rev });
      await client.versions.activate(a.id, p.version);
      const d = await client.agents.patch(a.id, { system_prompt: `v${i}` });
      expect(d.version).toBe(i);
      rev = d.document_revision;
    }
    const versions = await client.versions.list(a.id).toArray();
    expect(versions.map((v) => v.version)).toEqual([3, 2, 1, 0]);
    const acts = await client.versions.activations(a.id).toArray();
    expect(acts.map((r) => r.version)).toEqual([2, 1, 0]);
  });
});

describe("redaction", () => {
  it("keeps the key out of every error, thrown object, client form and debug line", async () => {
    vi.stubEnv("VOICE_AGENT_DEBUG", "1");
    const lines: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });

    const errors: unknown[] = [];
    const grab = (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (e) => errors.push(e),
      );
    const a = await client.agents.create({ name: "redaction" });
    await grab(client.agents.create({ name: "r", voice: { speed: 99 } }));
    await grab(client.agents.create({ name: `r ${KEY}`, voice: { provider: "sarvam", voice_id: KEY } }));
    await grab(client.agents.patch(a.id, { system_prompt: KEY }, { ifMatch: 999 }));
    await grab(client.agents.get(KEY));
    await grab(client.versions.get(a.id, 7));
    await grab(
      send({ baseUrl: emu.url, apiKey: KEY }, { method: "GET", path: `/v1/${KEY}`, retry: "idempotent" }),
    );
    // No answer at all: a closed port.
    await grab(
      new VoiceAgentClient({
        baseUrl: "http://127.0.0.1:9",
        apiKey: KEY,
        retryBudgetMs: 200,
      }).catalogue.models(),
    );
    // A key revoked while in use.
    const revocable = "va_revoked_SECRET_abcdef";
    const emu2 = await startEmulator({ port: 0, workspaces: [{ name: "r", key: revocable }] });
    try {
      const c2 = new VoiceAgentClient({ baseUrl: emu2.url, apiKey: revocable });
      await c2.catalogue.models();
      await revokeKey(emu2, revocable);
      await grab(c2.catalogue.models());
      const revoked = errors.at(-1);
      expect(revoked).toBeInstanceOf(AuthError);
      for (const f of forms(revoked)) expect(f).not.toContain(revocable);
      for (const f of [JSON.stringify(c2), inspect(c2, { showHidden: true, depth: 10 }), String(c2)]) {
        expect(f).not.toContain(revocable);
      }
    } finally {
      await emu2.close();
    }

    expect(errors).toHaveLength(8);
    expect(errors.filter((e) => e instanceof ConnectionError)).toHaveLength(1);
    for (const e of errors) for (const f of forms(e)) expect(f).not.toContain(KEY);
    for (const f of [
      JSON.stringify(client),
      inspect(client, { showHidden: true, depth: 10 }),
      String(client),
    ]) {
      expect(f).not.toContain(KEY);
    }
    const debug = lines.filter((l) => l.startsWith("voice-agent "));
    expect(debug.length).toBeGreaterThanOrEqual(9);
    for (const l of lines) expect(l).not.toContain(KEY);
    expect(debug.some((l) => /method=GET path=\/v1\/agents\/\[REDACTED\] status=/.test(l))).toBe(true);
    expect(debug.some((l) => /status=ECONNREFUSED/.test(l))).toBe(true);
  });

  it("logs nothing unless VOICE_AGENT_DEBUG is set", async () => {
    vi.stubEnv("VOICE_AGENT_DEBUG", "");
    const spy = vi.spyOn(process.stderr, "write");
    await client.catalogue.languages();
    expect(spy.mock.calls.filter((c) => String(c[0]).startsWith("voice-agent "))).toHaveLength(0);
  });
});
