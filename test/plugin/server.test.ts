/**
 * What the plugin's server does beyond the handlers, over its gRPC interface (in process): the
 * settings from stack config (`Configure`'s variables) or an explicit provider (its inputs, the key
 * a secret), a secret output marked secret, a read without properties (`pulumi import`), the schema.
 */
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

async function started(): Promise<{
  emu: RunningEmulator;
  call: <Res>(m: string, req: unknown) => Promise<Res>;
}> {
  const emu = await startEmulator({ port: 0 });
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

  test("serves schema.json and the package's version", async () => {
    const { call } = await started();
    const schema = await call<provTypes.GetSchemaResponse>("getSchema", new provpb.GetSchemaRequest());
    const root = path.resolve(__dirname, "../..");
    expect(schema.getSchema()).toBe(readFileSync(path.join(root, "schema.json"), "utf8"));
    const info = await call<{ getVersion(): string }>("getPluginInfo", new emptypb.Empty());
    expect(info.getVersion()).toBe(JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")).version);
  });
});
