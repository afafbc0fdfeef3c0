/**
 * One behaviour, two faces: the same cases run through the dynamic resources' handlers (as
 * Pulumi's dynamic-provider process calls them) and through the provider plugin over its gRPC
 * interface (in process), against one emulator. A case both faces can express gets the same
 * answer (the refusal at preview and its words, the diff, what the service holds, the conflict),
 * or this fails.
 */
import * as path from "node:path";
import type * as grpcTypes from "@grpc/grpc-js";
import type * as provRpcTypes from "@pulumi/pulumi/proto/provider_grpc_pb";
import type * as provTypes from "@pulumi/pulumi/proto/provider_pb";
import type * as structTypes from "google-protobuf/google/protobuf/struct_pb";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { VoiceAgentClient } from "../../src/client";
import { DEFAULT_API_KEY, type RunningEmulator } from "../../src/emulator";
import { serve, VoiceAgentProvider } from "../../src/plugin/server";
import { SECRET_SIG, SIG } from "../../src/plugin/values";
import { UNKNOWN } from "../../src/provider/normalize";
import type { HandlerFactory } from "../../src/provider/resource";
import { agentProvider } from "../../src/resources/agent/provider";
import { AgentVersion, type AgentVersionArgs } from "../../src/resources/agentVersion";
import { previewNote } from "../../src/resources/agentVersion/plan";
import { agentVersionProvider } from "../../src/resources/agentVersion/provider";
import { rollbackLine, rollbackNote } from "../../src/resources/agentVersion/rollback";
import { analysisGroupProvider } from "../../src/resources/analysisGroup/provider";
import { LOOKUPS } from "../../src/resources/catalogueLookups";
import { knowledgeBaseProvider } from "../../src/resources/knowledgeBase/provider";
import type { ResourceKind } from "../../src/resources/registry";
import { widgetProvider } from "../../src/resources/widget/provider";
import { emulatorForFile, testContext, versionInputs } from "../provider/support";

const sdkDir = path.dirname(require.resolve("@pulumi/pulumi/package.json"));
const load = <T>(id: string): T => require(require.resolve(id, { paths: [sdkDir] })) as T;
const grpc = load<typeof grpcTypes>("@grpc/grpc-js");
const provpb = require("@pulumi/pulumi/proto/provider_pb") as typeof provTypes;
const provrpc = require("@pulumi/pulumi/proto/provider_grpc_pb") as typeof provRpcTypes;
const structpb = load<typeof structTypes>("google-protobuf/google/protobuf/struct_pb");

type P = Record<string, any>;
/** Each kind's provider side, handed to both faces (the registry's `require`s need compiled code). */
const FACTORIES: Record<ResourceKind, () => HandlerFactory> = {
  agent: () => agentProvider,
  agentVersion: () => agentVersionProvider,
  widget: () => widgetProvider,
  knowledgeBase: () => knowledgeBaseProvider,
  analysisGroup: () => analysisGroupProvider,
};
const RESOURCES = FACTORIES;
let emu: RunningEmulator;
let client: VoiceAgentClient;
emulatorForFile({}, (e, c) => {
  emu = e;
  client = c;
});

/** What both faces answer, in one shape. */
interface Face {
  check(kind: ResourceKind, name: string, olds: P, news: P): Promise<{ inputs: P; failures: string[] }>;
  diff(kind: ResourceKind, name: string, id: string, olds: P, news: P): Promise<boolean>;
  create(kind: ResourceKind, name: string, inputs: P): Promise<{ id: string; outs: P }>;
  update(kind: ResourceKind, name: string, id: string, olds: P, news: P): Promise<P>;
  /** The AgentVersion's program inputs for an agent created through this face. */
  versionOf(agent: { name: string; outs: P }, extra: P): P;
  /** The same, the agent named by its id (`agentId`, as `pulumi import` writes it). */
  versionById(agent: { outs: P }, extra: P): P;
  /**
   * The AgentVersion's program inputs in the preview of its agent's change (`checked`: the Agent's
   * checked inputs): what the program has of the agent then.
   */
  versionAtPreview(agent: { name: string; outs: P; checked: P }, extra: P): P;
  /** The line the preview of an AgentVersion's update says (its checked inputs `news`). */
  previewLine(name: string, id: string, olds: P, news: P): Promise<string | undefined>;
}

const dynamic: Face = {
  async check(kind, _name, olds, news) {
    const r = await RESOURCES[kind]()(testContext).check(olds, news);
    return { inputs: r.inputs ?? {}, failures: (r.failures ?? []).map((f) => f.reason) };
  },
  async diff(kind, _name, id, olds, news) {
    return (await RESOURCES[kind]()(testContext).diff(id, olds, news)).changes === true;
  },
  async create(kind, _name, inputs) {
    const r = await RESOURCES[kind]()(testContext).create(inputs);
    return { id: r.id, outs: r.outs as P };
  },
  async update(kind, _name, id, olds, news) {
    return (await RESOURCES[kind]()(testContext).update(id, olds, news)).outs as P;
  },
  versionOf: (agent, extra) => versionInputs(agent.outs, extra),
  // The class sends the id, and `live` (default true); the provider completes the rest.
  versionById: (agent, extra) => ({ agentId: agent.outs.agentId, live: true, ...extra }),
  // The program's view: the agent's outputs unknown but its id and checked `__contentHash`.
  versionAtPreview: (agent, extra) => ({
    ...Object.fromEntries(
      Object.entries(versionInputs(agent.outs, extra)).map(([k, v]) => [
        k,
        k === "agentId" || k in extra || k === "live" ? v : UNKNOWN,
      ]),
    ),
    __contentHash: agent.checked.__contentHash,
  }),
  // The class logs it from its outputs, which at preview are the checked inputs.
  previewLine: async (name, _id, _olds, news) => previewNote(news, name)?.message,
};

const TOKENS: Record<ResourceKind, string> = {
  agent: "Agent",
  agentVersion: "AgentVersion",
  widget: "Widget",
  knowledgeBase: "KnowledgeBase",
  analysisGroup: "AnalysisGroup",
};
const typeOf = (kind: ResourceKind) => `voice-agent:index:${TOKENS[kind]}`;
const urnOf = (kind: ResourceKind, name: string) => `urn:pulumi:test::faces::${typeOf(kind)}::${name}`;
const toStruct = (p: P) => structpb.Struct.fromJavaScript(p);
const fromStruct = (s: structTypes.Struct | undefined): P => (s ? (s.toJavaScript() as P) : {});

let server: grpcTypes.Server;
let rpc: provRpcTypes.ResourceProviderClient;
function unary<Req, Res>(method: string, req: Req): Promise<Res> {
  return new Promise((resolve, reject) =>
    (rpc as unknown as Record<string, (r: Req, cb: (e: Error | null, r: Res) => void) => void>)[method]?.call(
      rpc,
      req,
      (e, r) => (e ? reject(e) : resolve(r)),
    ),
  );
}

const plugin: Face = {
  async check(kind, name, olds, news) {
    const req = new provpb.CheckRequest();
    req.setUrn(urnOf(kind, name));
    req.setType(typeOf(kind));
    req.setName(name);
    req.setOlds(toStruct(olds));
    req.setNews(toStruct(news));
    const res = await unary<provTypes.CheckRequest, provTypes.CheckResponse>("check", req);
    return { inputs: fromStruct(res.getInputs()), failures: res.getFailuresList().map((f) => f.getReason()) };
  },
  async diff(kind, name, id, olds, news) {
    const req = new provpb.DiffRequest();
    req.setId(id);
    req.setUrn(urnOf(kind, name));
    req.setType(typeOf(kind));
    req.setOlds(toStruct(olds));
    req.setNews(toStruct(news));
    const res = await unary<provTypes.DiffRequest, provTypes.DiffResponse>("diff", req);
    return res.getChanges() === provpb.DiffResponse.DiffChanges.DIFF_SOME;
  },
  async create(kind, name, inputs) {
    const req = new provpb.CreateRequest();
    req.setUrn(urnOf(kind, name));
    req.setType(typeOf(kind));
    req.setProperties(toStruct(inputs));
    const res = await unary<provTypes.CreateRequest, provTypes.CreateResponse>("create", req);
    return { id: res.getId(), outs: fromStruct(res.getProperties()) };
  },
  async update(kind, name, id, olds, news) {
    const req = new provpb.UpdateRequest();
    req.setId(id);
    req.setUrn(urnOf(kind, name));
    req.setType(typeOf(kind));
    req.setOlds(toStruct(olds));
    req.setNews(toStruct(news));
    const res = await unary<provTypes.UpdateRequest, provTypes.UpdateResponse>("update", req);
    return fromStruct(res.getProperties());
  },
  versionOf: (agent, extra) => ({
    agent: {
      [SIG]: "5cf8f73096256a8f31e491e813e4eb8e",
      urn: urnOf("agent", agent.name),
      id: agent.outs.agentId,
    },
    ...extra,
  }),
  versionAtPreview: (agent, extra) => plugin.versionOf(agent, extra),
  versionById: (agent, extra) => ({ agentId: agent.outs.agentId, ...extra }),
  async previewLine(name, id, olds, news) {
    const req = new provpb.UpdateRequest();
    req.setId(id);
    req.setUrn(urnOf("agentVersion", name));
    req.setType(typeOf("agentVersion"));
    req.setOlds(toStruct(olds));
    req.setNews(toStruct(news));
    req.setPreview(true);
    said.length = 0;
    await unary<provTypes.UpdateRequest, provTypes.UpdateResponse>("update", req);
    expect(said.every((s) => s.urn === urnOf("agentVersion", name))).toBe(true);
    expect(said.length).toBeLessThanOrEqual(1);
    return said[0]?.message;
  },
};

/** What the plugin said to the engine's log. */
const said: { severity: string; message: string; urn: string }[] = [];

beforeAll(async () => {
  const served = await serve(
    new VoiceAgentProvider(FACTORIES, undefined, async (severity, message, urn) => {
      said.push({ severity, message, urn });
    }),
  );
  server = served.server;
  rpc = new provrpc.ResourceProviderClient(`127.0.0.1:${served.port}`, grpc.credentials.createInsecure());
  const req = new provpb.ConfigureRequest();
  // The key arrives as a secret, as the engine sends stack config or an explicit provider's input.
  req.setArgs(toStruct({ baseUrl: emu.url, apiKey: { [SIG]: SECRET_SIG, value: DEFAULT_API_KEY } }));
  const res = await unary<provTypes.ConfigureRequest, provTypes.ConfigureResponse>("configure", req);
  expect(res.getAcceptsecrets()).toBe(true);
});
afterAll(() => {
  rpc?.close();
  server?.forceShutdown();
});

const FACES = { dynamic, plugin } as const;
type FaceName = keyof typeof FACES;

/** Runs `run` through both faces (unique names per face) and returns both answers. */
async function both<T>(run: (face: Face, tag: string) => Promise<T>): Promise<Record<FaceName, T>> {
  const out = {} as Record<FaceName, T>;
  for (const [name, face] of Object.entries(FACES) as [FaceName, Face][]) out[name] = await run(face, name);
  return out;
}

/** Whether `v` holds an undefined value at any depth. */
const holdsUndefined = (v: unknown): boolean =>
  v === undefined || (typeof v === "object" && v !== null && Object.values(v).some(holdsUndefined));

/** A value with the names each face gave its objects made the same. */
const untag = (v: unknown) => JSON.parse(JSON.stringify(v).replaceAll(/(dynamic|plugin)/g, "<face>"));

/** `check` then `create`; the check must pass. */
async function up(face: Face, kind: ResourceKind, name: string, inputs: P) {
  const checked = await face.check(kind, name, {}, inputs);
  expect(checked.failures).toEqual([]);
  const made = await face.create(kind, name, checked.inputs);
  return { ...made, inputs: checked.inputs };
}

describe("the dynamic resources and the plugin agree", () => {
  test.each<[string, ResourceKind, P]>([
    ["a misspelt Agent property", "agent", { name: "x", systemPromt: "## Agent Purpose\nHelp." }],
    ["an Agent value of the wrong type", "agent", { name: "x", model: { temperature: "hot" } }],
    ["an Agent rule (speed out of range)", "agent", { name: "x", voice: { speed: 9 } }],
    ["a Widget origin with a path", "widget", { agentId: "a", allowedOrigins: ["https://example.com/x"] }],
    ["a misspelt AnalysisGroup property", "analysisGroup", { name: "g", itemz: [] }],
  ])("refused at preview, in the same words: %s", async (_case, kind, inputs) => {
    const r = await both((face) => face.check(kind, "refused", {}, inputs));
    expect(r.dynamic.failures.length).toBeGreaterThan(0);
    expect(r.plugin.failures).toEqual(r.dynamic.failures);
  });

  test("an Agent: created alike, a no-op diff is none, a change is one, a dashboard edit is a conflict", async () => {
    const r = await both(async (face, tag) => {
      const name = `faces-agent-${tag}`;
      const made = await up(face, "agent", name, { name, systemPrompt: "## Agent Purpose\nHelp callers." });
      const held = await client.agents.get(made.id);
      const same = await face.check("agent", name, made.inputs, {
        name,
        systemPrompt: "## Agent Purpose\nHelp callers.",
      });
      const noop = await face.diff("agent", name, made.id, made.outs, same.inputs);
      const changedInputs = { name, systemPrompt: "## Agent Purpose\nHelp callers kindly." };
      const changed = await face.check("agent", name, made.inputs, changedInputs);
      const change = await face.diff("agent", name, made.id, made.outs, changed.inputs);
      // Someone edits the agent in the dashboard; the next update must refuse, writing nothing.
      await client.agents.patch(
        made.id,
        { system_prompt: "## Agent Purpose\nEdited." },
        { ifMatch: held.document_revision },
      );
      const conflict = await face.update("agent", name, made.id, made.outs, changed.inputs).then(
        () => "written",
        // gRPC's client prefixes the status ("2 UNKNOWN: "); the engine shows the details.
        (e: Error) => e.message.replace(/^\d+ [A-Z_]+: /, "").replaceAll(made.id, "<id>"),
      );
      const after = await client.agents.get(made.id);
      return {
        held: { prompt: held.system_prompt, name: held.name },
        noop,
        change,
        conflict,
        promptAfter: after.system_prompt,
      };
    });
    expect(r.dynamic.conflict).toMatch(/changed outside Pulumi/);
    expect(untag(r.plugin)).toEqual(untag(r.dynamic));
  });

  test("an AgentVersion follows its Agent: a prompt change publishes and puts live the next version", async () => {
    const r = await both(async (face, tag) => {
      const name = `faces-version-${tag}`;
      const agent = await up(face, "agent", name, { name, systemPrompt: "## Agent Purpose\nV1." });
      const v1 = await up(
        face,
        "agentVersion",
        `${name}-v`,
        face.versionOf({ name, outs: agent.outs }, { label: "one" }),
      );
      // The prompt changes: the Agent updates, then the AgentVersion sees a new configuration.
      const nextInputs = { name, systemPrompt: "## Agent Purpose\nV2." };
      const checked = await face.check("agent", name, agent.inputs, nextInputs);
      expect(await face.diff("agent", name, agent.id, agent.outs, checked.inputs)).toBe(true);
      const agentOuts = await face.update("agent", name, agent.id, agent.outs, checked.inputs);
      const vChecked = await face.check(
        "agentVersion",
        `${name}-v`,
        v1.inputs,
        face.versionOf({ name, outs: agentOuts }, { label: "one" }),
      );
      const vChange = await face.diff("agentVersion", `${name}-v`, v1.id, v1.outs, vChecked.inputs);
      const v2 = await face.update("agentVersion", `${name}-v`, v1.id, v1.outs, vChecked.inputs);
      const held = await client.agents.get(agent.id);
      return {
        first: { version: v1.outs.version, isLive: v1.outs.isLive, origin: v1.outs.origin },
        vChange,
        second: { version: v2.version, isLive: v2.isLive, origin: v2.origin },
        live: held.live_version,
      };
    });
    expect(r.dynamic.vChange).toBe(true);
    expect(r.plugin).toEqual(r.dynamic);
  });

  test("an AgentVersion named by its agent's id follows it as one naming the Agent: the preview of a change shows it, up publishes", async () => {
    const r = await both(async (face, tag) => {
      const name = `faces-byid-${tag}`;
      const agent = await up(face, "agent", name, { name, systemPrompt: "## Agent Purpose\nV1." });
      const v = await up(face, "agentVersion", `${name}-v`, face.versionById(agent, { label: "one" }));
      // A no-op preview: no change.
      const same = await face.check("agent", name, agent.inputs, {
        name,
        systemPrompt: "## Agent Purpose\nV1.",
      });
      const agentNoop = await face.diff("agent", name, agent.id, agent.outs, same.inputs);
      const vSame = await face.check(
        "agentVersion",
        `${name}-v`,
        v.inputs,
        face.versionById(agent, { label: "one" }),
      );
      const noop = await face.diff("agentVersion", `${name}-v`, v.id, v.outs, vSame.inputs);
      // The preview of a prompt change: the Agent changes, and so does the version, with its line.
      const next = { name, systemPrompt: "## Agent Purpose\nV2." };
      const checked = await face.check("agent", name, agent.inputs, next);
      expect(await face.diff("agent", name, agent.id, agent.outs, checked.inputs)).toBe(true);
      const vPreview = await face.check(
        "agentVersion",
        `${name}-v`,
        v.inputs,
        face.versionById(agent, { label: "one" }),
      );
      const previewChange = await face.diff("agentVersion", `${name}-v`, v.id, v.outs, vPreview.inputs);
      const line = await face.previewLine(`${name}-v`, v.id, v.outs, vPreview.inputs);
      // `up`: the Agent writes, then the version publishes and goes live.
      const agentOuts = await face.update("agent", name, agent.id, agent.outs, checked.inputs);
      const vChecked = await face.check(
        "agentVersion",
        `${name}-v`,
        v.inputs,
        face.versionById(agent, { label: "one" }),
      );
      const v2 = await face.update("agentVersion", `${name}-v`, v.id, v.outs, vChecked.inputs);
      const held = await client.agents.get(agent.id);
      // Then nothing more to do.
      const after = await face.check(
        "agentVersion",
        `${name}-v`,
        vChecked.inputs,
        face.versionById(agent, { label: "one" }),
      );
      const settled = await face.diff("agentVersion", `${name}-v`, v.id, v2, after.inputs);
      return {
        agentNoop,
        noop,
        // The completed inputs are a property map (Pulumi's dynamic provider refuses an undefined).
        undefinedIn: [vSame, vPreview, vChecked, after].some((c) => holdsUndefined(c.inputs)),
        previewChange,
        line,
        first: { version: v.outs.version, isLive: v.outs.isLive, origin: v.outs.origin },
        second: {
          version: v2.version,
          isLive: v2.isLive,
          origin: v2.origin,
          agentDraft: agentOuts.draftVersion,
        },
        live: held.live_version,
        settled,
      };
    });
    expect(untag(r.dynamic)).toEqual({
      agentNoop: false,
      noop: false,
      undefinedIn: false,
      previewChange: true,
      line: "AgentVersion faces-byid-<face>-v: publishes version 1 and puts it live",
      first: { version: 0, isLive: true, origin: "published" },
      second: { version: 1, isLive: true, origin: "published", agentDraft: 1 },
      live: 1,
      settled: false,
    });
    expect(untag(r.plugin)).toEqual(untag(r.dynamic));
  });

  test("an AgentVersion naming its agent neither or twice, or by an id no Agent of the stack has, is refused at preview, naming agentId, in the same words", async () => {
    // The plugin: the check refuses.
    const pluginSays = async (news: P) => (await plugin.check("agentVersion", "refused", {}, news)).failures;
    const ref = { [SIG]: "5cf8f73096256a8f31e491e813e4eb8e", urn: urnOf("agent", "x"), id: "agt_x" };
    const neither = await pluginSays({ label: "x" });
    const twice = await pluginSays({ agent: ref, agentId: "agt_x" });
    // The class: the program stops at the resource, before anything is registered (the Agent a
    // stand-in: the rule only asks whether it is given).
    const host = { agentId: "agt_x" };
    const classSays = (args: P) => {
      try {
        new AgentVersion("refused", args as AgentVersionArgs);
        return "accepted";
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(neither).toEqual([expect.stringMatching(/^agentId: /)]);
    expect(twice).toEqual([expect.stringMatching(/^agentId: .*not both/)]);
    expect(classSays({ label: "x" })).toBe(`AgentVersion refused: ${neither[0]}`);
    expect(classSays({ agent: host, agentId: "agt_x" })).toBe(`AgentVersion refused: ${twice[0]}`);
    // An id no Agent of this deployment has: refused by the provider side, alike.
    const unknownId = await both((face) =>
      face.check("agentVersion", "refused", {}, face.versionById({ outs: { agentId: "agt_nobody" } }, {})),
    );
    expect(unknownId.dynamic.failures).toEqual([
      expect.stringMatching(/^agentId: no Agent of this stack has the id "agt_nobody"/),
    ]);
    expect(unknownId.plugin.failures).toEqual(unknownId.dynamic.failures);
    // An id unknown at preview (an agent created in the same deploy) is never reported missing.
    const toCome = await both((face) =>
      face.check("agentVersion", "later", {}, face.versionById({ outs: { agentId: UNKNOWN } }, {})),
    );
    expect(toCome.dynamic.failures).toEqual([]);
    expect(toCome.plugin.failures).toEqual([]);
  });

  test("the preview of an AgentVersion says in one line which version it publishes, and for a revert which comes back", async () => {
    const r = await both(async (face, tag) => {
      const name = `faces-plan-${tag}`;
      const first = { name, systemPrompt: "## Agent Purpose\nV1." };
      const agent = await up(face, "agent", name, first);
      const v = await up(face, "agentVersion", `${name}-v`, face.versionOf({ name, outs: agent.outs }, {}));
      // The preview of a prompt change, then its `up`; then the preview of its revert.
      const step = async (
        a: { id: string; outs: P; inputs: P },
        ver: { id: string; outs: P; inputs: P },
        inputs: P,
      ) => {
        const checked = await face.check("agent", name, a.inputs, inputs);
        expect(await face.diff("agent", name, a.id, a.outs, checked.inputs)).toBe(true);
        const news = face.versionAtPreview({ name, outs: a.outs, checked: checked.inputs }, {});
        const vChecked = await face.check("agentVersion", `${name}-v`, ver.inputs, news);
        return { checked, line: await face.previewLine(`${name}-v`, ver.id, ver.outs, vChecked.inputs) };
      };
      const change = await step(agent, v, { name, systemPrompt: "## Agent Purpose\nV2." });
      const agentOuts = await face.update("agent", name, agent.id, agent.outs, change.checked.inputs);
      const vInputs = (
        await face.check("agentVersion", `${name}-v`, v.inputs, face.versionOf({ name, outs: agentOuts }, {}))
      ).inputs;
      const v2 = await face.update("agentVersion", `${name}-v`, v.id, v.outs, vInputs);
      const revert = await step(
        { id: agent.id, outs: agentOuts, inputs: change.checked.inputs },
        { id: v.id, outs: v2, inputs: vInputs },
        first,
      );
      return { change: change.line, published: v2.version, revert: revert.line };
    });
    expect(untag(r.dynamic)).toEqual({
      change: "AgentVersion faces-plan-<face>-v: publishes version 1 and puts it live",
      published: 1,
      revert:
        "AgentVersion faces-plan-<face>-v: a revert: brings back version 0, which holds this configuration; nothing published",
    });
    expect(untag(r.plugin)).toEqual(untag(r.dynamic));
  });

  test("a revert to the configuration of a version the watch judged failing (a row labelled `activate`) leaves it off air", async () => {
    const r = await both(async (face, tag) => {
      const name = `faces-judged-${tag}`;
      const first = { name, systemPrompt: "## Agent Purpose\nV1." };
      const agent = await up(face, "agent", name, first);
      const v = await up(face, "agentVersion", `${name}-v`, face.versionOf({ name, outs: agent.outs }, {}));
      const second = { name, systemPrompt: "## Agent Purpose\nV2." };
      const checked = await face.check("agent", name, agent.inputs, second);
      const agentOuts = await face.update("agent", name, agent.id, agent.outs, checked.inputs);
      const deploy = async (olds: { outs: P; inputs: P }, extra: P, outs = agentOuts) => {
        const inputs = (
          await face.check("agentVersion", `${name}-v`, olds.inputs, face.versionOf({ name, outs }, extra))
        ).inputs;
        return { outs: await face.update("agentVersion", `${name}-v`, v.id, olds.outs, inputs), inputs };
      };
      const v1 = await deploy(v, {});
      // A person pins version 0 (1 -> 0, `rollback`); it fails, and the watch puts 1 live (0 -> 1,
      // `activate`), why in version 1's notes.
      const pinned = await deploy(v1, tag === "plugin" ? { version: 0 } : { pinnedVersion: 0 });
      const row = await client.versions.activate(agent.id, 1);
      const line = rollbackLine(row.at, 0, 1, "Default Analysis/User Sentiment = negative on 20 of 30 calls");
      await client.agents.patch(agent.id, { notes: rollbackNote(null, line) }, { version: 1 });
      // The revert to version 0's configuration, the pin removed.
      const back = await face.check("agent", name, checked.inputs, first);
      const revertOuts = await face.update("agent", name, agent.id, agentOuts, back.inputs);
      const revert = await deploy(pinned, {}, revertOuts);
      const rb = revert.outs.rolledBack as P | undefined;
      return {
        pinned: pinned.outs.version,
        action: row.action,
        version: revert.outs.version,
        isLive: revert.outs.isLive,
        rolledBack: rb && { action: rb.action, to: rb.to, reason: rb.reason },
        live: (await client.agents.get(agent.id)).live_version,
      };
    });
    expect(r.dynamic).toEqual({
      pinned: 0,
      action: "activate",
      version: 0,
      isLive: false,
      rolledBack: {
        action: "activate",
        to: 1,
        reason: "Default Analysis/User Sentiment = negative on 20 of 30 calls",
      },
      live: 1,
    });
    expect(r.plugin).toEqual(r.dynamic);
  });

  test("the catalogue lookups answer alike (a program's lookup, the plugin's function)", async () => {
    const args = { provider: "sarvam", language: "ta-IN" };
    const direct = await LOOKUPS.getVoices(client, args);
    const req = new provpb.InvokeRequest();
    req.setTok("voice-agent:index:getVoices");
    req.setArgs(toStruct(args));
    const res = await unary<provTypes.InvokeRequest, provTypes.InvokeResponse>("invoke", req);
    expect(direct.length).toBeGreaterThan(0);
    expect(fromStruct(res.getReturn()).items).toEqual(direct);
    const caps = new provpb.InvokeRequest();
    caps.setTok("voice-agent:index:getTtsCapabilities");
    const capsRes = await unary<provTypes.InvokeRequest, provTypes.InvokeResponse>("invoke", caps);
    expect(fromStruct(capsRes.getReturn()).providers).toEqual(await LOOKUPS.getTtsCapabilities(client));
  });

  test("a KnowledgeBase and an AnalysisGroup: created alike, no-op diff none", async () => {
    const r = await both(async (face, tag) => {
      const kb = await up(face, "knowledgeBase", `kb-${tag}`, {
        name: `faces-kb-${tag}`,
        documents: [{ name: "faq", text: "Opening hours: 9 to 5." }],
      });
      const group = await up(face, "analysisGroup", `g-${tag}`, {
        name: `faces-group-${tag}`,
        items: [{ name: "Resolved", type: "boolean", description: "Was the issue resolved?" }],
      });
      const kbAgain = await face.check("knowledgeBase", `kb-${tag}`, kb.inputs, kb.inputs);
      const gAgain = await face.check("analysisGroup", `g-${tag}`, group.inputs, group.inputs);
      return {
        kbNoop: await face.diff("knowledgeBase", `kb-${tag}`, kb.id, kb.outs, kbAgain.inputs),
        groupNoop: await face.diff("analysisGroup", `g-${tag}`, group.id, group.outs, gAgain.inputs),
        kbDocs: kb.outs.documents,
        items: group.outs.items,
      };
    });
    expect(r.dynamic.kbNoop).toBe(false);
    expect(untag(r.plugin)).toEqual(untag(r.dynamic));
  });
});
