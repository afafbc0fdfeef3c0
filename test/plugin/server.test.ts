/**
 * What the plugin's server does beyond the handlers, over its gRPC interface (in process): the
 * settings from stack config (`Configure`'s variables) or an explicit provider (its inputs, the key
 * a secret), a secret output marked secret, a read without properties (`pulumi import`), the schema.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import type * as grpcTypes from "@grpc/grpc-js";
import type * as provRpcTypes from "@pulumi/pulumi/proto/provider_grpc_pb";
import type * as provTypes from "@pulumi/pulumi/proto/provider_pb";
import type * as emptyTypes from "google-protobuf/google/protobuf/empty_pb";
import type * as structTypes from "google-protobuf/google/protobuf/struct_pb";
import { afterEach, describe, expect, test } from "vitest";
import { VoiceAgentClient } from "../../src/client";
import { DEFAULT_API_KEY, type RunningEmulator, startEmulator } from "../../src/emulator";
import { serve, VoiceAgentProvider } from "../../src/plugin/server";
import { RESOURCE_SIG, SECRET_SIG, SIG } from "../../src/plugin/values";
import type { HandlerFactory } from "../../src/provider/resource";
import { agentProvider } from "../../src/resources/agent/provider";
import { agentVersionProvider } from "../../src/resources/agentVersion/provider";
import { analysisGroupProvider } from "../../src/resources/analysisGroup/provider";
import { knowledgeBaseProvider } from "../../src/resources/knowledgeBase/provider";
import type { ResourceKind } from "../../src/resources/registry";
import { widgetProvider } from "../../src/resources/widget/provider";
import { requestLog as requestLogOf } from "../support/control";

const fromSdk = createRequire(require.resolve("@pulumi/pulumi/package.json"));
const grpc = fromSdk("@grpc/grpc-js") as typeof grpcTypes;
const structpb = fromSdk("google-protobuf/google/protobuf/struct_pb") as typeof structTypes;
const emptypb = fromSdk("google-protobuf/google/protobuf/empty_pb") as typeof emptyTypes;
const provpb = require("@pulumi/pulumi/proto/provider_pb") as typeof provTypes;
const provrpc = require("@pulumi/pulumi/proto/provider_grpc_pb") as typeof provRpcTypes;

const FACTORIES: Record<ResourceKind, () => HandlerFactory> = {
  agent: () => agentProvider,
  agentVersion: () => agentVersionProvider,
  widget: () => widgetProvider,
  knowledgeBase: () => knowledgeBaseProvider,
  analysisGroup: () => analysisGroupProvider,
};

type P = Record<string, any>;
const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0)) await f();
});

async function started(emuOptions: { kbProcessingMs?: number } = {}): Promise<{
  emu: RunningEmulator;
  call: <Res>(m: string, req: unknown) => Promise<Res>;
}> {
  const emu = await startEmulator({ port: 0, ...emuOptions });
  const { server, port } = await serve(new VoiceAgentProvider(FACTORIES));
  const rpc = new provrpc.ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  cleanup.push(
    () => rpc.close(),
    () => server.forceShutdown(),
    () => emu.close(),
  );
  const call = <Res>(m: string, req: unknown) =>
    new Promise<Res>((resolve, reject) =>
      (rpc as unknown as Record<string, (r: unknown, cb: (e: Error | null, r: Res) => void) => void>)[
        m
      ]?.call(rpc, req, (e, r) => (e ? reject(e) : resolve(r))),
    );
  return { emu, call };
}

const struct = (p: P) => structpb.Struct.fromJavaScript(p);
const plain = (s: structTypes.Struct | undefined): P => (s ? (s.toJavaScript() as P) : {});

async function create(
  call: <Res>(m: string, req: unknown) => Promise<Res>,
  type: string,
  name: string,
  news: P,
) {
  const check = new provpb.CheckRequest();
  check.setUrn(`urn:pulumi:test::plugin::voice-agent:index:${type}::${name}`);
  check.setType(`voice-agent:index:${type}`);
  check.setNews(struct(news));
  check.setOlds(struct({}));
  const checked = await call<provTypes.CheckResponse>("check", check);
  expect(checked.getFailuresList().map((f) => f.getReason())).toEqual([]);
  const req = new provpb.CreateRequest();
  req.setUrn(check.getUrn());
  req.setType(check.getType());
  req.setProperties(checked.getInputs());
  const res = await call<provTypes.CreateResponse>("create", req);
  return { id: res.getId(), outs: plain(res.getProperties()) };
}

describe("the plugin's server", () => {
  test("takes its settings from stack config (Configure's variables), the key a secret, and marks a secret output secret", async () => {
    const { emu, call } = await started();
    const configure = new provpb.ConfigureRequest();
    configure.getVariablesMap().set("voice-agent:config:baseUrl", emu.url);
    configure.getVariablesMap().set("voice-agent:config:apiKey", DEFAULT_API_KEY);
    configure.setArgs(struct({ baseUrl: emu.url, apiKey: { [SIG]: SECRET_SIG, value: DEFAULT_API_KEY } }));
    await call("configure", configure);
    const client = new VoiceAgentClient({ baseUrl: emu.url, apiKey: DEFAULT_API_KEY });
    const agent = await client.agents.create({ name: "Widget host" });
    const widget = await create(call, "Widget", "w", { agentId: agent.id, name: "Help" });
    // The key: a secret, whatever the input held.
    expect(widget.outs.publicKey).toEqual({ [SIG]: SECRET_SIG, value: expect.stringMatching(/.+/) });
    expect(widget.outs.publicKeyPrefix).toEqual(expect.any(String));
  });

  // (The SDK's `provider.main` crashes on such a request.) What an import hands back is what the
  // program declares for the object as the service holds it (the export's core), nothing the
  // service defaults; checked and diffed against the imported state, it is no change; and the
  // import writes nothing.
  test("reads by id alone, as `pulumi import` asks: the inputs as the service holds them, no write", async () => {
    const { emu, call } = await started();
    const configure = new provpb.ConfigureRequest();
    configure.setArgs(struct({ baseUrl: emu.url, apiKey: { [SIG]: SECRET_SIG, value: DEFAULT_API_KEY } }));
    await call("configure", configure);
    const client = new VoiceAgentClient({ baseUrl: emu.url, apiKey: DEFAULT_API_KEY });
    const kb = await client.knowledgeBases.create({
      name: "FAQ",
      description: "Store answers",
      documents: [{ name: "returns", url: "https://shop.example.com/returns" }],
    });
    const group = await client.analysis.create({
      name: "Outcome",
      description: "What happened",
      enabled: true,
      items: [{ name: "resolved", type: "boolean", description: "Resolved?", enabled: true }],
    });
    const held = await client.agents.create({
      name: "Made in the dashboard",
      system_prompt: "You help.",
      model: { model: "gpt-4o", temperature: 0.3 },
      knowledge_base_ids: [kb.id],
    });
    await client.widget.patch(held.id, { allowed_origins: ["https://shop.example.com"] });
    await client.versions.publish(held.id, held.version, { label: "v1" });
    await client.versions.activate(held.id, held.version);
    const imported = async (type: string, id: string) => {
      const read = new provpb.ReadRequest();
      read.setId(id);
      read.setUrn(`urn:pulumi:test::plugin::voice-agent:index:${type}::imported`);
      read.setType(`voice-agent:index:${type}`);
      const res = await call<provTypes.ReadResponse>("read", read);
      return { id: res.getId(), outs: plain(res.getProperties()), inputs: plain(res.getInputs()) };
    };
    /** The preview of the imported inputs pasted into a program: check, then diff against the state. */
    const previewed = async (type: string, r: { id: string; outs: P; inputs: P }, news = r.inputs) => {
      const check = new provpb.CheckRequest();
      check.setUrn(`urn:pulumi:test::plugin::voice-agent:index:${type}::imported`);
      check.setType(`voice-agent:index:${type}`);
      check.setNews(struct(news));
      check.setOlds(struct(r.inputs));
      const checked = await call<provTypes.CheckResponse>("check", check);
      expect(checked.getFailuresList().map((f) => f.getReason())).toEqual([]);
      const diff = new provpb.DiffRequest();
      diff.setId(r.id);
      diff.setUrn(check.getUrn());
      diff.setType(check.getType());
      diff.setOlds(struct(r.outs));
      diff.setOldInputs(struct(r.inputs));
      diff.setNews(checked.getInputs());
      const res = await call<provTypes.DiffResponse>("diff", diff);
      return { changes: res.getChanges(), diffs: res.getDiffsList() };
    };
    const before = (await requestLogOf(emu)).length;
    const agent = await imported("Agent", held.id);
    expect(agent.id).toBe(held.id);
    expect(agent.inputs).toEqual({
      name: "Made in the dashboard",
      systemPrompt: "You help.",
      model: { model: "gpt-4o", temperature: 0.3 },
      knowledgeBaseIds: [kb.id],
    });
    expect(agent.outs.draftVersion).toBe(held.version);
    const widget = await imported("Widget", held.id);
    expect(widget.inputs).toEqual({
      agentId: held.id,
      allowedOrigins: ["https://shop.example.com"],
      rotateKeyOnCreate: false,
    });
    const base = await imported("KnowledgeBase", kb.id);
    expect(base.inputs).toEqual({
      name: "FAQ",
      description: "Store answers",
      documents: [{ name: "returns", url: "https://shop.example.com/returns" }],
    });
    const analysis = await imported("AnalysisGroup", group.id);
    expect(analysis.inputs).toEqual({
      name: "Outcome",
      description: "What happened",
      items: [{ name: "resolved", type: "boolean", description: "Resolved?" }],
    });
    // An AgentVersion's agent comes back as `agentId` (a generated program cannot hold the Agent
    // itself: the generator writes a reference to its id); the live version that holds the Agent's
    // configuration is not pinned.
    const version = await imported("AgentVersion", `${held.id}/${held.version}`);
    expect(version.inputs).toEqual(expect.objectContaining({ agentId: held.id }));
    expect(version.inputs.agent).toBeUndefined();
    expect(version.inputs.version).toBeUndefined();
    expect(version.outs).toEqual(
      expect.objectContaining({ version: held.version, isLive: true, label: "v1" }),
    );
    const writes = (await requestLogOf(emu)).slice(before).filter((e) => e.method !== "GET");
    expect(writes).toEqual([]);
    const none = provpb.DiffResponse.DiffChanges.DIFF_NONE;
    for (const [type, r] of [
      ["Agent", agent],
      ["Widget", widget],
      ["KnowledgeBase", base],
      ["AnalysisGroup", analysis],
    ] as const) {
      expect({ type, ...(await previewed(type, r)) }).toEqual({ type, changes: none, diffs: [] });
    }
    // The program names the imported Agent (previewed above) as the AgentVersion's agent.
    const agentRef = {
      [SIG]: RESOURCE_SIG,
      urn: "urn:pulumi:test::plugin::voice-agent:index:Agent::imported",
      id: held.id,
    };
    expect(await previewed("AgentVersion", { ...version, inputs: { agent: agentRef } })).toEqual({
      changes: none,
      diffs: [],
    });
    // Or by its id, as the generated code does (`agentId: ${host.id}`): no change either.
    expect(await previewed("AgentVersion", version, { agentId: held.id })).toEqual({
      changes: none,
      diffs: [],
    });
    // Gone from the service: nothing to import.
    const missing = kb.id.replace(/.{4}$/, (t) => (t === "0000" ? "1111" : "0000"));
    expect((await imported("KnowledgeBase", missing)).id).toBe("");
  });

  test("an explicit provider without a key, and none in the environment, is refused by name", async () => {
    const { emu, call } = await started();
    const saved = process.env.VOICE_AGENT_API_KEY;
    delete process.env.VOICE_AGENT_API_KEY;
    cleanup.push(() => {
      if (saved !== undefined) process.env.VOICE_AGENT_API_KEY = saved;
    });
    const configure = new provpb.ConfigureRequest();
    configure.setArgs(struct({ baseUrl: emu.url }));
    await call("configure", configure);
    await expect(create(call, "AnalysisGroup", "g", { name: "G", items: [] })).rejects.toThrow(
      /voice-agent:apiKey/,
    );
  });

  test("serves schema.json stamped with the build's version, and answers that version (scripts/version.js)", async () => {
    const { call } = await started();
    const root = path.resolve(__dirname, "../..");
    // The build records scripts/version.js's answer in dist/version.json (`npm run build`, `npm run
    // setup`): a dist/ built at another commit fails here, rebuild it.
    const version = execFileSync(process.execPath, ["scripts/version.js"], {
      cwd: root,
      encoding: "utf8",
    }).trim();
    const info = await call<{ getVersion(): string }>("getPluginInfo", new emptypb.Empty());
    expect(
      info.getVersion(),
      "the plugin's version is not `node scripts/version.js`'s: is dist/ stale?",
    ).toBe(version);
    const schema = await call<provTypes.GetSchemaResponse>("getSchema", new provpb.GetSchemaRequest());
    const served = JSON.parse(schema.getSchema());
    const committed = JSON.parse(readFileSync(path.join(root, "schema.json"), "utf8"));
    expect(committed.version).toBeUndefined();
    expect(served).toEqual({ ...committed, version });
    expect(Object.keys(served).slice(0, 3)).toEqual(["name", "displayName", "version"]);
  });
});

/** A reference to the Agent `name` created through the plugin, as the engine sends `agent: ${host}`. */
const agentRef = (name: string, id: string) => ({
  [SIG]: RESOURCE_SIG,
  urn: `urn:pulumi:test::plugin::voice-agent:index:Agent::${name}`,
  id,
});

type Call = <Res>(m: string, req: unknown) => Promise<Res>;

async function configured(emu: RunningEmulator, call: Call): Promise<void> {
  const configure = new provpb.ConfigureRequest();
  configure.setArgs(struct({ baseUrl: emu.url, apiKey: { [SIG]: SECRET_SIG, value: DEFAULT_API_KEY } }));
  await call("configure", configure);
}

async function checked(call: Call, type: string, name: string, olds: P, news: P): Promise<P> {
  const req = new provpb.CheckRequest();
  req.setUrn(`urn:pulumi:test::plugin::voice-agent:index:${type}::${name}`);
  req.setType(`voice-agent:index:${type}`);
  req.setOlds(struct(olds));
  req.setNews(struct(news));
  const res = await call<provTypes.CheckResponse>("check", req);
  expect(res.getFailuresList().map((f) => f.getReason())).toEqual([]);
  return plain(res.getInputs());
}

/** The plugin's diff: its changed fields and, by field, the kind of the change (`ADD`, `UPDATE`...). */
async function diffed(
  call: Call,
  type: string,
  name: string,
  id: string,
  olds: P,
  news: P,
  ignoreChanges: string[] = [],
) {
  const req = new provpb.DiffRequest();
  req.setIgnorechangesList(ignoreChanges);
  req.setUrn(`urn:pulumi:test::plugin::voice-agent:index:${type}::${name}`);
  req.setType(`voice-agent:index:${type}`);
  req.setId(id);
  req.setOlds(struct(olds));
  req.setNews(struct(news));
  const res = await call<provTypes.DiffResponse>("diff", req);
  const kinds = Object.fromEntries(
    Object.entries(provpb.PropertyDiff.Kind).map(([k, v]) => [v, k] as [number, string]),
  );
  const detailed: Record<string, string> = {};
  res.getDetaileddiffMap().forEach((d, k) => {
    detailed[k] = kinds[d.getKind()] as string;
  });
  return {
    changes: res.getChanges() === provpb.DiffResponse.DiffChanges.DIFF_SOME,
    diffs: res.getDiffsList(),
    detailed,
  };
}

/**
 * What the engine does with `ignoreChanges` before it checks (pkg/v3 resource/deploy/step_generator.go,
 * `processIgnoreChanges`): each ignored property takes the value it has in the state's inputs (the
 * checked inputs of the last check), or is removed when they have none.
 */
function ignoring(news: P, stateInputs: P, ignored: string[]): P {
  const out = { ...news };
  for (const k of ignored) {
    if (k in stateInputs) out[k] = stateInputs[k];
    else delete out[k];
  }
  return out;
}

describe("the plugin's lifecycle", () => {
  // An Agent `host` and its AgentVersion `live` (`agent: ${host}`), as a YAML program declares them.
  async function hostAndLive(call: Call) {
    const agentNews = { name: "Host", systemPrompt: "## Agent Purpose\nHelp callers." };
    const agentIn = await checked(call, "Agent", "host", {}, agentNews);
    const agentReq = new provpb.CreateRequest();
    agentReq.setUrn("urn:pulumi:test::plugin::voice-agent:index:Agent::host");
    agentReq.setType("voice-agent:index:Agent");
    agentReq.setProperties(struct(agentIn));
    const agentRes = await call<provTypes.CreateResponse>("create", agentReq);
    const agent = { id: agentRes.getId(), inputs: agentIn, outs: plain(agentRes.getProperties()) };
    const ref = agentRef("host", agent.id);
    const liveIn = await checked(call, "AgentVersion", "live", {}, { agent: ref });
    const liveReq = new provpb.CreateRequest();
    liveReq.setUrn("urn:pulumi:test::plugin::voice-agent:index:AgentVersion::live");
    liveReq.setType("voice-agent:index:AgentVersion");
    liveReq.setProperties(struct(liveIn));
    const liveRes = await call<provTypes.CreateResponse>("create", liveReq);
    const live = { id: liveRes.getId(), inputs: liveIn, outs: plain(liveRes.getProperties()) };
    return { agent, agentNews, ref, live };
  }

  test("detailedDiff names only real changes: an added pin is `version` ADD, an identical `agent` reference is no change of `agent`", async () => {
    const { emu, call } = await started();
    await configured(emu, call);
    const { agent, agentNews, ref, live } = await hostAndLive(call);
    const first = live.outs.version as number;
    expect(first).toEqual(expect.any(Number));

    // A pin added (the version live, as the issue's `version: 0`): the pin is added, nothing else.
    const pinned = await checked(call, "AgentVersion", "live", live.inputs, { agent: ref, version: first });
    const pin = await diffed(call, "AgentVersion", "live", live.id, live.outs, pinned);
    expect(pin).toEqual({ changes: true, diffs: ["version"], detailed: { version: "ADD" } });

    // The prompt changes: the Agent's preview, then its AgentVersion's, the reference the same.
    const agentNext = await checked(call, "Agent", "host", agent.inputs, {
      ...agentNews,
      systemPrompt: "## Agent Purpose\nHelp callers kindly.",
    });
    const agentChange = await diffed(call, "Agent", "host", agent.id, agent.outs, agentNext);
    expect(agentChange.detailed).toEqual({ systemPrompt: "UPDATE" });
    const liveNext = await checked(call, "AgentVersion", "live", live.inputs, { agent: ref });
    expect(liveNext.agent).toEqual(live.inputs.agent);
    const follows = await diffed(call, "AgentVersion", "live", live.id, live.outs, liveNext);
    expect(follows).toEqual({ changes: true, diffs: [], detailed: {} });
  });

  test('`ignoreChanges: ["version"]` keeps the pin: the engine puts back the pin the state holds, nothing is published', async () => {
    const { emu, call } = await started();
    await configured(emu, call);
    const { ref, live } = await hostAndLive(call);
    // Pinned to the version live: the pin is in the state's inputs as `version`.
    const first = live.outs.version as number;
    const pinnedIn = await checked(call, "AgentVersion", "live", live.inputs, { agent: ref, version: first });
    const upd = new provpb.UpdateRequest();
    upd.setUrn("urn:pulumi:test::plugin::voice-agent:index:AgentVersion::live");
    upd.setType("voice-agent:index:AgentVersion");
    upd.setId(live.id);
    upd.setOlds(struct(live.outs));
    upd.setNews(struct(pinnedIn));
    const pinnedOuts = plain((await call<provTypes.UpdateResponse>("update", upd)).getProperties());
    expect(pinnedOuts.version).toBe(first);
    expect(pinnedIn.version).toBe(first);

    // The program drops the pin, or pins another version, under `ignoreChanges: ["version"]`.
    for (const program of [{ agent: ref }, { agent: ref, version: first + 7 }]) {
      const news = ignoring(program, pinnedIn, ["version"]);
      const next = await checked(call, "AgentVersion", "live", pinnedIn, news);
      expect(next.pinnedVersion).toBe(first);
      expect(await diffed(call, "AgentVersion", "live", live.id, pinnedOuts, next, ["version"])).toEqual({
        changes: false,
        diffs: [],
        detailed: {},
      });
    }
    // A state an earlier plugin wrote (the pin in its inputs as `pinnedVersion` alone): the engine
    // removes the program's `version`, and the preview is refused, naming the field and why.
    const { version: _pin, ...legacyInputs } = pinnedIn;
    const dropped = await checked(
      call,
      "AgentVersion",
      "live",
      legacyInputs,
      ignoring({ agent: ref, version: first }, legacyInputs, ["version"]),
    );
    expect(dropped.pinnedVersion).toBeUndefined();
    await expect(
      diffed(call, "AgentVersion", "live", live.id, pinnedOuts, dropped, ["version"]),
    ).rejects.toThrow(/version: ignoreChanges \["version"\] cannot keep the pin[\s\S]*`pulumi refresh`/);
    const client = new VoiceAgentClient({ baseUrl: emu.url, apiKey: DEFAULT_API_KEY });
    const versions = [];
    for await (const v of client.versions.list(live.outs.agentId)) versions.push(v);
    expect(versions.filter((v) => v.is_published).map((v) => v.version)).toEqual([first]);
  });

  test("Cancel ends a knowledge base's wait for its documents: the create fails as cancelled, and the next `up` adopts the knowledge base and finishes", async () => {
    const emu = await startEmulator({ port: 0, kbProcessingMs: 4_000 });
    cleanup.push(() => emu.close());
    const servedOn = async () => {
      const { server, port } = await serve(new VoiceAgentProvider(FACTORIES));
      const rpc = new provrpc.ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
      cleanup.push(
        () => rpc.close(),
        () => server.forceShutdown(),
      );
      const call: Call = <Res>(m: string, req: unknown) =>
        new Promise<Res>((resolve, reject) =>
          (rpc as unknown as Record<string, (r: unknown, cb: (e: Error | null, r: Res) => void) => void>)[
            m
          ]?.call(rpc, req, (e, r) => (e ? reject(e) : resolve(r))),
        );
      await configured(emu, call);
      return call;
    };
    const kbNews = {
      name: "FAQ",
      documents: [{ name: "returns", url: "https://shop.example.com/returns" }],
      readyTimeoutSeconds: 600,
    };
    const first = await servedOn();
    const createIn = await checked(first, "KnowledgeBase", "faq", {}, kbNews);
    const req = new provpb.CreateRequest();
    req.setUrn("urn:pulumi:test::plugin::voice-agent:index:KnowledgeBase::faq");
    req.setType("voice-agent:index:KnowledgeBase");
    req.setProperties(struct(createIn));
    const t0 = performance.now();
    const creating = first<provTypes.CreateResponse>("create", req).then(
      () => "created",
      (e: Error) => e.message,
    );
    await new Promise((r) => setTimeout(r, 500));
    await first("cancel", new emptypb.Empty());
    const failure = await creating;
    expect(performance.now() - t0).toBeLessThan(2_500);
    expect(failure).toMatch(/cancelled by the Pulumi engine[\s\S]*still processing "returns"/);
    expect(failure).toMatch(/Run `pulumi up` again/);

    // The next `up` (a new plugin process): the same create adopts the knowledge base (its marker).
    const client = new VoiceAgentClient({ baseUrl: emu.url, apiKey: DEFAULT_API_KEY });
    const held = async () => {
      const all = [];
      for await (const kb of client.knowledgeBases.list()) all.push(kb);
      return all;
    };
    const [made] = await held();
    const second = await servedOn();
    const res = await second<provTypes.CreateResponse>("create", req);
    expect(res.getId()).toBe(made?.id);
    expect((await held()).map((kb) => kb.documents.map((d) => d.status))).toEqual([["ready"]]);
  });
});
