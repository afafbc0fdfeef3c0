/** The version state machine, If-Match, draft_ambiguous, publish, activations and blocked_reasons. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { resetEmulator } from "../support/control";
import { type Api, reason, start } from "./helpers";

let api: Api;
beforeAll(async () => {
  api = await start();
});
afterAll(async () => {
  await api.emu.close();
});
beforeEach(async () => {
  await resetEmulator(api.emu);
});

const publish = (id: string, n: number, body?: unknown, headers?: Record<string, string>) =>
  api.post(`/v1/agents/${id}/versions/${n}/publish`, body, headers);
const activate = (id: string, version: number | null) =>
  api.post(`/v1/agents/${id}/activations`, { version });

describe("state machine", () => {
  it("patches the single draft in place, raising document_revision", async () => {
    const a = await api.createAgent();
    const r = await api.patch(`/v1/agents/${a.id}`, { system_prompt: "Hello" });
    expect(r.status).toBe(200);
    expect(r.body.version).toBe(0);
    expect(r.body.document_revision).toBe(a.document_revision + 1);
    expect(r.body.latest_version).toBe(0);
  });

  it("branches a draft from the published latest version (latest_version + 1), starting from its revision", async () => {
    const a = await api.createAgent({ system_prompt: "v0" });
    const p = await publish(a.id, 0);
    expect(p.status).toBe(200);
    expect(p.body.is_published).toBe(true);
    // If-Match with the parent's revision succeeds on the branch.
    const r = await api.patch(
      `/v1/agents/${a.id}`,
      { system_prompt: "v1" },
      { "If-Match": String(p.body.document_revision) },
    );
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ version: 1, is_published: false, latest_version: 1, system_prompt: "v1" });
    expect(r.body.document_revision).toBe(p.body.document_revision + 1);
    const v0 = await api.get(`/v1/agents/${a.id}/versions/0`);
    expect(v0.body.system_prompt).toBe("v0");
    const latest = await api.get(`/v1/agents/${a.id}`);
    expect(latest.body.version).toBe(1);
  });

  it("branches from the live version rather than the latest when one is live", async () => {
    const a = await api.createAgent({ system_prompt: "first" });
    await publish(a.id, 0);
    await api.patch(`/v1/agents/${a.id}`, { system_prompt: "second" });
    await publish(a.id, 1);
    expect((await activate(a.id, 0)).status).toBe(201);
    const r = await api.patch(`/v1/agents/${a.id}`, { name: "Renamed" });
    expect(r.body).toMatchObject({ version: 2, system_prompt: "first", name: "Renamed" });
  });

  it("refuses configuration patches of a published version (version_immutable, 409) but edits label and notes", async () => {
    const a = await api.createAgent();
    await publish(a.id, 0);
    const r = await api.patch(`/v1/agents/${a.id}?version=0`, { system_prompt: "x" });
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({ detail: { code: "version_immutable" }, code: "CONFLICT" });
    const meta = await api.patch(`/v1/agents/${a.id}?version=0`, { label: "launch", notes: "first release" });
    expect(meta.status).toBe(200);
    expect(meta.body).toMatchObject({
      version: 0,
      is_published: true,
      label: "launch",
      notes: "first release",
    });
    const rows = await api.get(`/v1/agents/${a.id}/versions`);
    expect(rows.body.data[0]).toMatchObject({ version: 0, label: "launch", notes: "first release" });
    expect((await api.get(`/v1/agents/${a.id}`)).body.latest_version).toBe(0);
  });

  it("?version=live edits the live version's label; off air it is version_not_found", async () => {
    const a = await api.createAgent();
    const off = await api.get(`/v1/agents/${a.id}?version=live`);
    expect(off.status).toBe(404);
    expect(reason(off)).toBe("version_not_found");
    await publish(a.id, 0);
    await activate(a.id, 0);
    const live = await api.get(`/v1/agents/${a.id}?version=live`);
    expect(live.body).toMatchObject({ version: 0, is_live: true, live_version: 0 });
    const l = await api.patch(`/v1/agents/${a.id}?version=live`, { label: "prod" });
    expect(l.body.label).toBe("prod");
  });

  it("?version= neither live nor a number, or a non-revision If-Match, is 400 invalid_request", async () => {
    const a = await api.createAgent();
    for (const r of [
      await api.get(`/v1/agents/${a.id}?version=latest`),
      await api.patch(`/v1/agents/${a.id}?version=-1`, {}),
      await api.patch(`/v1/agents/${a.id}`, { name: "x" }, { "If-Match": "abc" }),
    ]) {
      expect(r.status).toBe(400);
      expect(r.body.code).toBe("invalid_request");
      expect(r.body.detail.code).toBe("invalid_request");
    }
    expect((await api.get(`/v1/agents/${a.id}?version=7`)).status).toBe(404);
  });

  it("If-Match: compare-and-set against document_revision", async () => {
    const a = await api.createAgent();
    const stale = await api.patch(
      `/v1/agents/${a.id}`,
      { name: "B" },
      { "If-Match": String(a.document_revision + 5) },
    );
    expect(stale.status).toBe(409);
    expect(stale.body).toEqual({
      detail: {
        code: "revision_conflict",
        message: expect.any(String),
        param: "If-Match",
        current_revision: a.document_revision,
      },
      code: "CONFLICT",
    });
    const ok = await api.patch(
      `/v1/agents/${a.id}`,
      { name: "B" },
      { "If-Match": `"${a.document_revision}"` },
    );
    expect(ok.status).toBe(200);
    // The old revision is now stale.
    const again = await api.patch(
      `/v1/agents/${a.id}`,
      { name: "C" },
      { "If-Match": String(a.document_revision) },
    );
    expect(again.status).toBe(409);
    expect(again.body.detail.current_revision).toBe(a.document_revision + 1);
  });

  it("draft_ambiguous when several drafts are open; ?version= picks one", async () => {
    const a = await api.createAgent();
    const extra = await api.control("POST", `/_emulator/agents/${a.id}/drafts`);
    expect(extra.status).toBe(201);
    expect(extra.body.version).toBe(1);
    const r = await api.patch(`/v1/agents/${a.id}`, { name: "X" });
    expect(r.status).toBe(409);
    expect(r.body.detail.code).toBe("draft_ambiguous");
    expect(r.body.detail.candidates).toEqual([0, 1]);
    expect(r.body.detail.message).toMatch(/0.*1/);
    const ok = await api.patch(`/v1/agents/${a.id}?version=1`, { name: "X" });
    expect(ok.body).toMatchObject({ version: 1, name: "X" });
  });
});

describe("versions and publish", () => {
  it("lists version rows newest first", async () => {
    const a = await api.createAgent();
    await publish(a.id, 0, { label: "one" });
    await api.patch(`/v1/agents/${a.id}`, { system_prompt: "two" });
    const r = await api.get(`/v1/agents/${a.id}/versions`);
    expect(r.status).toBe(200);
    expect(r.body.has_more).toBe(false);
    expect(r.body.next_cursor).toBeNull();
    expect(r.body.data.map((v: any) => v.version)).toEqual([1, 0]);
    expect(Object.keys(r.body.data[1]).sort()).toEqual(
      [
        "version",
        "version_id",
        "is_published",
        "is_live",
        "label",
        "notes",
        "document_revision",
        "blocked_reasons",
        "created_at",
        "updated_at",
      ].sort(),
    );
    expect(r.body.data[1]).toMatchObject({ is_published: true, label: "one" });
  });

  it("publish is idempotent, honours If-Match and answers 404 for an unknown version", async () => {
    const a = await api.createAgent();
    const conflict = await publish(a.id, 0, undefined, { "If-Match": "999" });
    expect(conflict.status).toBe(409);
    expect(conflict.body.detail).toMatchObject({
      code: "revision_conflict",
      current_revision: a.document_revision,
    });
    const p1 = await publish(a.id, 0, { label: "r1" }, { "If-Match": String(a.document_revision) });
    expect(p1.body).toMatchObject({ is_published: true, label: "r1" });
    const p2 = await publish(a.id, 0);
    expect(p2.status).toBe(200);
    expect(p2.body).toEqual(p1.body);
    expect(reason(await publish(a.id, 5))).toBe("version_not_found");
    const extra = await publish(a.id, 0, { colour: "x" });
    expect(extra.status).toBe(422);
    expect(extra.body.detail.errors[0]).toMatchObject({ field: "colour", type: "extra_forbidden" });
  });

  it("no draft is open after publishing until the next configuration patch", async () => {
    const a = await api.createAgent();
    await publish(a.id, 0);
    const rows = await api.get(`/v1/agents/${a.id}/versions`);
    expect(rows.body.data.filter((v: any) => !v.is_published)).toHaveLength(0);
  });
});

describe("activations", () => {
  it("activate, roll back, deactivate; history newest first", async () => {
    const a = await api.createAgent();
    await publish(a.id, 0);
    await api.patch(`/v1/agents/${a.id}`, { system_prompt: "v1" });
    await publish(a.id, 1);

    const first = await activate(a.id, 1);
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({
      agent_id: a.id,
      action: "activate",
      version: 1,
      previous_version: null,
    });
    expect(Object.keys(first.body).sort()).toEqual([
      "action",
      "agent_id",
      "at",
      "id",
      "previous_version",
      "version",
    ]);

    const again = await activate(a.id, 1);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);

    const back = await activate(a.id, 0);
    expect(back.status).toBe(201);
    expect(back.body).toMatchObject({ action: "rollback", version: 0, previous_version: 1 });

    const agent = await api.get(`/v1/agents/${a.id}`);
    expect(agent.body).toMatchObject({ live_version: 0, version: 1, is_live: false });
    const summary = await api.get("/v1/agents");
    expect(summary.body.data[0]).toMatchObject({
      id: a.id,
      is_live: true,
      live_version: 0,
      latest_version: 1,
    });

    const off = await activate(a.id, null);
    expect(off.status).toBe(201);
    expect(off.body).toMatchObject({ action: "deactivate", version: null, previous_version: 0 });
    expect((await api.get(`/v1/agents/${a.id}`)).body.live_version).toBeNull();

    const history = await api.get(`/v1/agents/${a.id}/activations`);
    expect(history.body.data.map((r: any) => r.action)).toEqual(["deactivate", "rollback", "activate"]);
  });

  it("refuses drafts, unknown versions and bodies that are not {version}", async () => {
    const a = await api.createAgent();
    const draft = await activate(a.id, 0);
    expect(draft.status).toBe(409);
    expect(reason(draft)).toBe("agent_not_published");
    const unknown = await activate(a.id, 3);
    expect(unknown.status).toBe(404);
    expect(reason(unknown)).toBe("version_not_found");
    const missing = await api.post(`/v1/agents/${a.id}/activations`, {});
    expect(missing.status).toBe(422);
    expect(missing.body.detail.errors[0]).toMatchObject({ field: "version", type: "missing" });
  });

  it("a retired model blocks its versions: version_blocked listing the reasons", async () => {
    const a = await api.createAgent({ model: { model: "gemini-1.5-flash" } });
    await publish(a.id, 0);
    const retire = await api.control("POST", "/_emulator/models/gemini-1.5-flash/retire");
    expect(retire.body.retired).toBe(true);
    const v = await api.get(`/v1/agents/${a.id}/versions/0`);
    expect(v.body.blocked_reasons).toHaveLength(1);
    expect(v.body.blocked_reasons[0]).toContain("model.model");
    expect(v.body.blocked_reasons[0]).toContain("gemini-1.5-flash");
    const r = await activate(a.id, 0);
    expect(r.status).toBe(409);
    expect(reason(r)).toBe("version_blocked");
    expect(r.body.detail.message).toContain("gemini-1.5-flash");
    const models = await api.get("/v1/models");
    expect(models.body.find((m: any) => m.id === "gemini-1.5-flash").retired).toBe(true);
    // A new write must move off the retired model.
    const patch = await api.patch(`/v1/agents/${a.id}`, { system_prompt: "x" });
    expect(patch.status).toBe(400);
    expect(patch.body.detail.param).toBe("model.model");
    const fixed = await api.patch(`/v1/agents/${a.id}`, { model: { model: "gemini-2.0-flash" } });
    expect(fixed.body.blocked_reasons).toEqual([]);
  });

  it("a withdrawn voice blocks, and is no longer accepted", async () => {
    const a = await api.createAgent({ voice: { voice_id: "arvind" } });
    await publish(a.id, 0);
    const w = await api.control("POST", "/_emulator/voices/sarvam/arvind/withdraw");
    expect(w.body.withdrawn).toBe(true);
    const v = await api.get(`/v1/agents/${a.id}/versions/0`);
    expect(v.body.blocked_reasons[0]).toContain("voice.voice_id");
    expect(reason(await activate(a.id, 0))).toBe("version_blocked");
    const again = await api.post("/v1/agents", { name: "B", voice: { voice_id: "arvind" } });
    expect(again.body.detail).toMatchObject({ code: "voice_not_found", param: "voice.voice_id" });
  });
});
