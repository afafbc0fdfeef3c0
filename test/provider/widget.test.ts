/**
 * Widget handlers against the emulator: validation at preview naming the field, adoption and
 * merge-patch on create, no diff for values the program does not set or orders differently, update
 * of changed fields only, drift on refresh, declarative key rotation, and destroy pausing the widget.
 */
import { describe, expect, test, vi } from "vitest";
import type { VoiceAgentClient } from "../../src/client";
import type { RunningEmulator } from "../../src/emulator";
import { UNKNOWN } from "../../src/provider/normalize";
import { widgetProvider } from "../../src/resources/widget/provider";
import { checkAndCreate, emulatorForFile, testContext } from "./support";

const h = widgetProvider(testContext);

let _emu: RunningEmulator;
let client: VoiceAgentClient;

emulatorForFile({}, (e, c) => {
  _emu = e;
  client = c;
});

async function newAgent(name = "Widget test agent"): Promise<string> {
  return (await client.agents.create({ name })).id;
}

/** What the engine does on `up` for a new resource: check, then create. */
const up = (inputs: Record<string, any>) => checkAndCreate(h, inputs);

/** The diff of a preview: state outputs against the (checked) program inputs. */
async function diff(id: string, outs: Record<string, any>, inputs: Record<string, any>) {
  const checked = await h.check({}, inputs);
  return h.diff(id, outs, checked.inputs);
}

const THEME = {
  title: "Help",
  accentColor: "#12ab34",
  position: "bottom-left" as const,
  buttonShape: "pill" as const,
  panelRadius: 8,
  widgetWidth: 400,
  showInboundNumber: true,
};

describe("validation at preview", () => {
  test("every problem names the field as the program spells it", async () => {
    const { failures } = await h.check(
      {},
      {
        name: "",
        allowedOrigins: [
          "http://example.com",
          "https://shop.example.com/cart",
          "https://*.example.com",
          "https://ok.example.com",
        ],
        enabledModes: { chat: "yes" },
        theme: {
          accentColor: "red",
          userMessageTextColor: "#12345",
          position: "middle",
          buttonShape: "circle",
          panelRadius: 3.5,
          widgetHeight: -1,
        },
        defaultVariables: { order_id: 7, Plan_Tier: "gold" },
        status: "off",
      },
    );
    const props = (failures ?? []).map((f) => f.property).sort();
    expect(props).toEqual(
      [
        "agentId",
        "name",
        "allowedOrigins[0]",
        "allowedOrigins[1]",
        "allowedOrigins[2]",
        "enabledModes.chat",
        "theme.accentColor",
        "theme.userMessageTextColor",
        "theme.position",
        "theme.buttonShape",
        "theme.panelRadius",
        "theme.widgetHeight",
        "defaultVariables.order_id",
        "status",
      ].sort(),
    );
    for (const f of failures ?? []) expect(f.reason.startsWith(`${f.property}:`)).toBe(true);
    const reason = (p: string) => failures?.find((f) => f.property === p)?.reason ?? "";
    expect(reason("allowedOrigins[0]")).toMatch(/https/);
    expect(reason("allowedOrigins[1]")).toMatch(/exact origin/);
    expect(reason("allowedOrigins[2]")).toMatch(/wildcard/);
    expect(reason("theme.accentColor")).toMatch(/#RRGGBB/);
    expect(reason("theme.position")).toMatch(/bottom-right/);
    expect(reason("theme.panelRadius")).toMatch(/integer/);
  });

  test("localhost may use http; values unknown during preview are tolerated; status defaults to active", async () => {
    const checked = await h.check(
      {},
      {
        agentId: UNKNOWN,
        name: UNKNOWN,
        allowedOrigins: ["http://localhost:3000", "http://127.0.0.1:8080", UNKNOWN],
        theme: { accentColor: UNKNOWN, position: "top-left" },
        defaultVariables: { region: UNKNOWN },
      },
    );
    expect(checked.failures).toEqual([]);
    expect(checked.inputs.status).toBe("active");
  });

  test("a trigger must be a string or a number", async () => {
    const { failures } = await h.check({}, { agentId: "a", rotateKeyTrigger: { at: 1 } });
    expect(failures?.map((f) => f.property)).toEqual(["rotateKeyTrigger"]);
  });
});

describe("misspelt inputs are refused at preview, naming the key", () => {
  test("a top-level key that is not an input, with the input it was probably meant to be", async () => {
    const { failures } = await h.check({}, { agentId: "a", allowedOrigin: ["https://a.example.com"] });
    expect(failures).toEqual([
      {
        property: "allowedOrigin",
        reason: expect.stringContaining(
          "allowedOrigin: not an input of Widget (did you mean allowedOrigins?)",
        ),
      },
    ]);
  });

  test("a nested key that is not a field, at its path in the program's spelling", async () => {
    const { failures } = await h.check(
      {},
      {
        agentId: "a",
        theme: { title: "Help", accentColour: "#123456" },
        enabledModes: { chat: true, voice: true },
      },
    );
    expect(failures?.map((f) => f.property).sort()).toEqual(["enabledModes.voice", "theme.accentColour"]);
    for (const f of failures ?? []) expect(f.reason).toMatch(/extra_forbidden/);
  });

  test("default-variable names are the user's own and never refused", async () => {
    const { failures } = await h.check({}, { agentId: "a", defaultVariables: { anyName_At_All: "x" } });
    expect(failures).toEqual([]);
  });
});

describe("values unknown at preview, at every level", () => {
  test("a whole input: never missing, never replaced by a default", async () => {
    const news = {
      agentId: UNKNOWN,
      name: UNKNOWN,
      allowedOrigins: UNKNOWN,
      enabledModes: UNKNOWN,
      theme: UNKNOWN,
      defaultVariables: UNKNOWN,
      status: UNKNOWN,
      rotateKeyTrigger: UNKNOWN,
      rotateKeyOnCreate: UNKNOWN,
    };
    const checked = await h.check({}, news);
    expect(checked.failures).toEqual([]);
    expect(checked.inputs).toEqual(news);
  });

  test("inside an object: the known siblings are still checked", async () => {
    const { failures } = await h.check(
      {},
      {
        agentId: "a",
        enabledModes: { chat: UNKNOWN, talk: "no" },
        theme: { accentColor: UNKNOWN, panelRadius: UNKNOWN, position: "middle" },
        defaultVariables: { region: UNKNOWN, tier: "gold" },
      },
    );
    expect(failures?.map((f) => f.property).sort()).toEqual(["enabledModes.talk", "theme.position"]);
  });

  test("one origin of the list: the others keep their indexes", async () => {
    const { failures } = await h.check(
      {},
      { agentId: "a", allowedOrigins: [UNKNOWN, "https://ok.example.com", "http://shop.example.com"] },
    );
    expect(failures?.map((f) => f.property)).toEqual(["allowedOrigins[2]"]);
  });

  test("diff of a preview with an unknown colour or origin: a change of that field", async () => {
    const agentId = await newAgent();
    const { id, outs } = await up({
      agentId,
      allowedOrigins: ["https://a.example.com"],
      theme: { accentColor: "#111111", title: "T" },
    });
    const colour = await h.diff(id, outs, {
      agentId,
      allowedOrigins: ["https://a.example.com"],
      theme: { accentColor: UNKNOWN, title: "T" },
      status: "active",
    });
    expect(colour).toMatchObject({ changes: true, replaces: [], diffs: ["theme"] });
    const origin = await h.diff(id, outs, {
      agentId,
      allowedOrigins: ["https://a.example.com", UNKNOWN],
      theme: { accentColor: "#111111", title: "T" },
      status: "active",
    });
    expect(origin).toMatchObject({ changes: true, diffs: ["allowedOrigins"] });
  });
});

describe("typed provider state", () => {
  test("state written by 0.1.0 (the same outputs) reads and diffs", async () => {
    const agentId = await newAgent();
    const w = await client.widget.get(agentId);
    await client.widget.patch(agentId, { theme: { accent_color: "#111111" } });
    // The outputs 0.1.0 recorded: the inputs, the managed fields' values, the key outputs.
    const recorded = {
      agentId,
      theme: { accentColor: "#111111" },
      status: "active",
      rotateKeyOnCreate: false,
      widgetId: w.id,
      publicKeyPrefix: w.public_key_prefix,
      publicKey: null,
      keyRotatedAt: null,
    };
    const read = await h.read(w.id, recorded);
    expect(read.id).toBe(w.id);
    expect(read.props).toMatchObject(recorded);
    const inputs = { agentId, theme: { accentColor: "#111111" }, rotateKeyOnCreate: false, status: "active" };
    expect((await h.diff(w.id, recorded, inputs)).changes).toBe(false);
  });

  test("a state that does not parse is refused by every step, naming the resource", async () => {
    const broken = { agentId: 42, status: "active" };
    const inputs = { agentId: "a", status: "active" };
    for (const step of [
      () => h.diff("w", broken, inputs),
      () => h.read("w", broken),
      () => h.update("w", broken, inputs),
      () => h.delete("w", broken),
    ]) {
      await expect(step()).rejects.toThrow(/Widget state .*agentId/);
    }
  });
});

describe("compare-and-set", () => {
  test("dashboard edits the service treats as equal (origin order, colour case) are no conflict", async () => {
    const agentId = await newAgent();
    const { id, inputs, outs } = await up({
      agentId,
      allowedOrigins: ["https://a.example.com", "https://b.example.com"],
      theme: { accentColor: "#ABCDEF" },
    });
    await client.widget.patch(agentId, {
      allowed_origins: ["https://b.example.com", "https://a.example.com"],
      theme: { accent_color: "#abcdef" },
    });
    await h.update(id, outs, { ...inputs, name: "Renamed" });
    expect((await client.widget.get(agentId)).name).toBe("Renamed");
  });

  test("a dashboard edit of an origin or a default variable is refused; after a refresh the update applies", async () => {
    const agentId = await newAgent();
    const { id, inputs, outs } = await up({
      agentId,
      allowedOrigins: ["https://a.example.com"],
      defaultVariables: { region: "north" },
    });
    await client.widget.patch(agentId, { default_variables: { added: "dashboard" } });
    const news = { ...inputs, allowedOrigins: ["https://c.example.com"] };
    await expect(h.update(id, outs, news)).rejects.toThrow(
      /was changed outside Pulumi \(defaultVariables\)\. Nothing was written/,
    );
    expect((await client.widget.get(agentId)).allowed_origins).toEqual(["https://a.example.com"]);
    const read = await h.read(id, outs);
    await h.update(id, read.props, news);
    const w = await client.widget.get(agentId);
    expect(w.allowed_origins).toEqual(["https://c.example.com"]);
    expect(w.default_variables).toEqual({ region: "north" });
  });

  test("destroy does not pause a widget changed outside Pulumi; one already paused is left as it is", async () => {
    const agentId = await newAgent();
    const { id, outs } = await up({ agentId, name: "Ours", rotateKeyOnCreate: false });
    await client.widget.patch(agentId, { name: "Dashboard" });
    await expect(h.delete(id, outs)).rejects.toThrow(/was changed outside Pulumi \(name\)/);
    expect(await client.widget.get(agentId)).toMatchObject({ name: "Dashboard", status: "active" });

    await client.widget.patch(agentId, { name: "Ours", status: "paused" });
    const patch = vi.spyOn(client.widget, "patch");
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      await h.delete(id, outs);
      expect(patch).not.toHaveBeenCalled();
    } finally {
      patch.mockRestore();
      log.mockRestore();
    }
  });
});

describe("lifecycle", () => {
  test("create adopts the agent's widget, writes the declared fields and rotates the key once", async () => {
    const agentId = await newAgent();
    const before = await client.widget.get(agentId);
    const { id, inputs, outs } = await up({
      agentId,
      name: "Shop helper",
      allowedOrigins: ["https://shop.example.com", "http://localhost:3000"],
      enabledModes: { talk: false },
      theme: THEME,
      defaultVariables: { Order_ID: "none", "plan-tier": "free" },
    });
    expect(id).toBe(before.id);
    expect(outs.widgetId).toBe(before.id);
    expect(outs.publicKey).toMatch(/^pk_/);
    expect(outs.publicKey.startsWith(outs.publicKeyPrefix)).toBe(true);
    expect(outs.publicKeyPrefix).not.toBe(before.public_key_prefix);
    expect(outs.keyRotatedAt).toEqual(expect.any(String));
    expect(outs.status).toBe("active");

    const w = await client.widget.get(agentId);
    expect(w.name).toBe("Shop helper");
    expect([...w.allowed_origins].sort()).toEqual(["http://localhost:3000", "https://shop.example.com"]);
    expect(w.enabled_modes).toEqual({ chat: true, talk: false });
    expect(w.theme.position).toBe("bottom-left");
    expect(w.theme.accent_color.toUpperCase()).toBe("#12AB34");
    expect(w.theme.title).toBe("Help");
    // Theme fields the program does not set keep the service's values.
    expect(w.theme.subtitle).toBe(before.theme.subtitle);
    // Default-variable keys keep their spelling.
    expect(w.default_variables).toEqual({ Order_ID: "none", "plan-tier": "free" });
    expect(w.public_key_prefix).toBe(outs.publicKeyPrefix);

    // Nothing left to change, and refresh finds nothing either.
    expect((await h.diff(id, outs, inputs)).changes).toBe(false);
    const read = await h.read(id, outs);
    expect((await h.diff(id, read.props, inputs)).changes).toBe(false);
    expect(read.props.publicKey).toBe(outs.publicKey);
  });

  test("no diff for origin order, duplicate origins, colour case or fields left unset", async () => {
    const agentId = await newAgent();
    const { id, outs } = await up({
      agentId,
      allowedOrigins: ["https://b.example.com", "https://a.example.com"],
      theme: { accentColor: "#ABCDEF" },
    });
    const same = await diff(id, outs, {
      agentId,
      allowedOrigins: ["https://a.example.com", "https://b.example.com", "https://a.example.com"],
      theme: { accentColor: "#abcdef" },
    });
    expect(same).toEqual({ changes: false, replaces: [], diffs: [] });
    // A dashboard edit of a field the program does not set is not a diff.
    await client.widget.patch(agentId, {
      theme: { title: "Edited elsewhere" },
      enabled_modes: { chat: false },
    });
    const read = await h.read(id, outs);
    expect(
      (
        await h.diff(id, read.props, {
          agentId,
          allowedOrigins: outs.allowedOrigins,
          theme: outs.theme,
          status: "active",
        })
      ).changes,
    ).toBe(false);
    // A changed value, a new field, and another agent are.
    expect(
      (
        await diff(id, outs, {
          agentId,
          allowedOrigins: ["https://a.example.com"],
          theme: { accentColor: "#ABCDEF" },
        })
      ).changes,
    ).toBe(true);
    expect(
      (
        await diff(id, outs, {
          agentId,
          allowedOrigins: outs.allowedOrigins,
          theme: { accentColor: "#ABCDEF", title: "New" },
        })
      ).changes,
    ).toBe(true);
    expect(
      (await diff(id, outs, { agentId: "another", allowedOrigins: outs.allowedOrigins, theme: outs.theme }))
        .replaces,
    ).toEqual(["agentId"]);
  });

  test("update merge-patches only what changed; origins and default variables are whole sets", async () => {
    const agentId = await newAgent();
    const first = await up({
      agentId,
      name: "Before",
      allowedOrigins: ["https://a.example.com", "https://b.example.com"],
      theme: { title: "T", position: "top-right" },
      defaultVariables: { keep: "1", drop: "2" },
    });
    const spy = vi.spyOn(client.widget, "patch");
    try {
      const news = (
        await h.check(
          {},
          {
            agentId,
            name: "Before",
            allowedOrigins: ["https://c.example.com"],
            theme: { title: "T", position: "bottom-left" },
            defaultVariables: { keep: "1", added: "3" },
          },
        )
      ).inputs;
      expect((await h.diff(first.id, first.outs, news)).changes).toBe(true);
      const { outs } = await h.update(first.id, first.outs, news);
      expect(spy).toHaveBeenCalledTimes(1);
      expect(spy.mock.calls[0]?.[1]).toEqual({
        allowed_origins: ["https://c.example.com"],
        theme: { position: "bottom-left" },
        default_variables: { added: "3", drop: null },
      });
      const w = await client.widget.get(agentId);
      expect(w.allowed_origins).toEqual(["https://c.example.com"]);
      expect(w.default_variables).toEqual({ keep: "1", added: "3" });
      expect(w.theme.title).toBe("T");
      expect(w.name).toBe("Before");
      // No rotation without a trigger change: the key is kept.
      expect(outs?.publicKey).toBe(first.outs.publicKey);
      expect((await h.diff(first.id, outs, news)).changes).toBe(false);
    } finally {
      spy.mockRestore();
    }
  });

  test("refresh shows a dashboard edit of a managed field as drift, and the next update writes it back", async () => {
    const agentId = await newAgent();
    const { id, inputs, outs } = await up({
      agentId,
      theme: { accentColor: "#111111", position: "top-left" },
    });
    await client.widget.patch(agentId, { theme: { accent_color: "#222222" }, status: "paused" });
    const read = await h.read(id, outs);
    expect((await h.diff(id, read.props, inputs)).changes).toBe(true);
    expect(read.inputs?.theme).toEqual({ accentColor: "#222222", position: "top-left" });
    expect(read.inputs?.status).toBe("paused");
    // The program still declares the old values: the next up puts them back.
    expect((await h.diff(id, read.props, inputs)).changes).toBe(true);
    await h.update(id, read.props, inputs);
    const w = await client.widget.get(agentId);
    expect(w.theme.accent_color).toBe("#111111");
    expect(w.status).toBe("active");
  });

  test("changing rotateKeyTrigger rotates the key; a rotation elsewhere shows as a change and is redone", async () => {
    const agentId = await newAgent();
    const first = await up({ agentId, rotateKeyTrigger: 1 });
    const news = (await h.check({}, { agentId, rotateKeyTrigger: 2 })).inputs;
    expect((await h.diff(first.id, first.outs, news)).changes).toBe(true);
    const second = (await h.update(first.id, first.outs, news)).outs as Record<string, any>;
    expect(second.publicKey).not.toBe(first.outs.publicKey);
    expect(second.publicKey.startsWith(second.publicKeyPrefix)).toBe(true);
    expect((await client.widget.get(agentId)).public_key_prefix).toBe(second.publicKeyPrefix);
    expect((await h.diff(first.id, second, news)).changes).toBe(false);

    // Someone rotates the key in the dashboard: the key in the state no longer works.
    await client.widget.rotateKey(agentId);
    const read = await h.read(first.id, second);
    expect((await h.diff(first.id, read.props, news)).changes).toBe(true);
    const third = (await h.update(first.id, read.props, news)).outs as Record<string, any>;
    expect(third.publicKey).not.toBe(second.publicKey);
    expect((await client.widget.get(agentId)).public_key_prefix).toBe(third.publicKeyPrefix);
    expect(third.publicKey.startsWith(third.publicKeyPrefix)).toBe(true);
  });

  test("rotateKeyOnCreate: false keeps the current key (publicKey null until the first rotation)", async () => {
    const agentId = await newAgent();
    const before = await client.widget.get(agentId);
    const { id, inputs, outs } = await up({ agentId, rotateKeyOnCreate: false });
    expect(outs.publicKey).toBeNull();
    expect(outs.publicKeyPrefix).toBe(before.public_key_prefix);
    expect((await h.diff(id, outs, inputs)).changes).toBe(false);
    const read = await h.read(id, outs);
    expect((await h.diff(id, read.props, inputs)).changes).toBe(false);
  });

  test("destroy pauses the widget and says so", async () => {
    const agentId = await newAgent("Agent to destroy");
    const { id, outs } = await up({ agentId, name: "Going away" });
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      await h.delete(id, outs);
      expect(log.mock.calls.map((c) => String(c[0])).join("\n")).toMatch(/widget "Going away".*paused/);
    } finally {
      log.mockRestore();
    }
    expect((await client.widget.get(agentId)).status).toBe("paused");
  });
});
