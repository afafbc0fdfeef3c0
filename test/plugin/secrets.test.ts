/**
 * Secretness is the core's (`src/resources/inputSpecs.ts`), not a face's: every value the schema
 * marks secret, and every value copied from a secret, stays secret through the provider plugin
 * (its CheckConfig, Check, Create, Update and Read answers), the TypeScript class (what it
 * registers) and `voice-agent-diff`'s report, whatever the program gave: a key set without
 * `--secret`, staging's key written plainly, a secret prompt copied into a promotion's compared
 * configuration. Each answer is searched for the plain values and holds none.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import type * as grpcTypes from "@grpc/grpc-js";
import * as pulumi from "@pulumi/pulumi";
import type * as provRpcTypes from "@pulumi/pulumi/proto/provider_grpc_pb";
import type * as provTypes from "@pulumi/pulumi/proto/provider_pb";
import type * as structTypes from "google-protobuf/google/protobuf/struct_pb";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
// The compiled classes, as a program loads them (the source resolves the provider modules by path).
import { Agent, AgentVersion } from "../../dist";
import { DEFAULT_API_KEY, type RunningEmulator, startEmulator } from "../../src/emulator";
import { parsePreview, renderReport, userInputs } from "../../src/gitops/report";
import { serve, VoiceAgentProvider } from "../../src/plugin/server";
import { RESOURCE_SIG, SECRET_SIG, SIG } from "../../src/plugin/values";
import type { HandlerFactory } from "../../src/provider/resource";
import { agentProvider } from "../../src/resources/agent/provider";
import { agentVersionProvider } from "../../src/resources/agentVersion/provider";
import { analysisGroupProvider } from "../../src/resources/analysisGroup/provider";
import { knowledgeBaseProvider } from "../../src/resources/knowledgeBase/provider";
import type { ResourceKind } from "../../src/resources/registry";
import { widgetProvider } from "../../src/resources/widget/provider";

const fromSdk = createRequire(require.resolve("@pulumi/pulumi/package.json"));
const grpc = fromSdk("@grpc/grpc-js") as typeof grpcTypes;
const structpb = fromSdk("google-protobuf/google/protobuf/struct_pb") as typeof structTypes;
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
const STAGING_KEY = "va_test_staging_secret_key";
/** The prompt both agents declare; a secret in production's program. */
const PROMPT = "## Agent Purpose\nThe secret playbook: offer the 40% retention discount.";
const secret = (value: unknown) => ({ [SIG]: SECRET_SIG, value });

/** `v` as JSON with every secret's value left out: what a reader of the state or the preview sees. */
function visible(v: unknown): string {
  return JSON.stringify(v, (_k, x) =>
    x && typeof x === "object" && (x as P)[SIG] === SECRET_SIG ? "[secret]" : x,
  );
}

/** Every value the schema marks secret among the inputs (`provider.apiKey`, `AgentVersion.promote.apiKey`). */
function schemaSecretInputs(): string[] {
  type Spec = { secret?: boolean; $ref?: string; properties?: Record<string, Spec>; items?: Spec };
  const schema = JSON.parse(readFileSync(path.join(__dirname, "../../schema.json"), "utf8")) as {
    provider: { inputProperties: Record<string, Spec> };
    resources: Record<string, { inputProperties: Record<string, Spec> }>;
    types: Record<string, Spec>;
  };
  const out: string[] = [];
  const walk = (spec: Spec, at: string, seen: Set<string>) => {
    if (spec.secret) out.push(at);
    if (spec.items) walk(spec.items, at, seen);
    const ref = spec.$ref?.startsWith("#/types/") ? spec.$ref.slice(8) : undefined;
    if (ref && !seen.has(ref)) {
      const type = schema.types[ref];
      if (type) walk(type, at, new Set([...seen, ref]));
    }
    for (const [k, p] of Object.entries(spec.properties ?? {})) walk(p, `${at}.${k}`, seen);
  };
  walk({ properties: schema.provider.inputProperties }, "provider", new Set());
  for (const [token, r] of Object.entries(schema.resources))
    walk({ properties: r.inputProperties }, token.replace("voice-agent:index:", ""), new Set());
  return out.sort();
}

let emu: RunningEmulator;
const cleanup: (() => unknown)[] = [];
beforeAll(async () => {
  emu = await startEmulator({
    port: 0,
    workspaces: [
      { name: "production", key: DEFAULT_API_KEY },
      { name: "staging", key: STAGING_KEY },
    ],
  });
  cleanup.push(() => emu.close());
});
afterAll(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

/** A plugin server in process, configured on the emulator with `key`; its unary calls. */
async function plugin(key: string) {
  const { server, port } = await serve(new VoiceAgentProvider(FACTORIES));
  const rpc = new provrpc.ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  cleanup.push(
    () => server.forceShutdown(),
    () => rpc.close(),
  );
  const call = <Res>(m: string, req: unknown) =>
    new Promise<Res>((resolve, reject) =>
      (rpc as unknown as Record<string, (r: unknown, cb: (e: Error | null, r: Res) => void) => void>)[
        m
      ]?.call(rpc, req, (e, r) => (e ? reject(e) : resolve(r))),
    );
  const configure = new provpb.ConfigureRequest();
  configure.setArgs(structpb.Struct.fromJavaScript({ baseUrl: emu.url, apiKey: key }));
  await call("configure", configure);
  const urn = (type: string, name: string) => `urn:pulumi:dev::secrets::voice-agent:index:${type}::${name}`;
  const struct = (p: P) => structpb.Struct.fromJavaScript(p);
  const js = (s: structTypes.Struct | undefined): P => (s ? (s.toJavaScript() as P) : {});
  return {
    call,
    urn,
    async check(type: string, name: string, news: P, olds: P = {}) {
      const req = new provpb.CheckRequest();
      req.setUrn(urn(type, name));
      req.setType(`voice-agent:index:${type}`);
      req.setOlds(struct(olds));
      req.setNews(struct(news));
      const res = await call<provTypes.CheckResponse>("check", req);
      expect(res.getFailuresList().map((f) => f.getReason())).toEqual([]);
      return js(res.getInputs());
    },
    async create(type: string, name: string, inputs: P, preview = false) {
      const req = new provpb.CreateRequest();
      req.setUrn(urn(type, name));
      req.setType(`voice-agent:index:${type}`);
      req.setProperties(struct(inputs));
      req.setPreview(preview);
      const res = await call<provTypes.CreateResponse>("create", req);
      return { id: res.getId(), outs: js(res.getProperties()) };
    },
    async read(type: string, name: string, id: string, props: P, inputs: P) {
      const req = new provpb.ReadRequest();
      req.setId(id);
      req.setUrn(urn(type, name));
      req.setType(`voice-agent:index:${type}`);
      req.setProperties(struct(props));
      req.setInputs(struct(inputs));
      const res = await call<provTypes.ReadResponse>("read", req);
      return { outs: js(res.getProperties()), inputs: js(res.getInputs()) };
    },
    async update(type: string, name: string, id: string, olds: P, news: P, preview = false) {
      const req = new provpb.UpdateRequest();
      req.setId(id);
      req.setUrn(urn(type, name));
      req.setType(`voice-agent:index:${type}`);
      req.setOlds(struct(olds));
      req.setNews(struct(news));
      req.setPreview(preview);
      return js((await call<provTypes.UpdateResponse>("update", req)).getProperties());
    },
  };
}

describe("secrets stay secret, whatever way they were given", () => {
  test("the schema's secret inputs are the ones this file walks through the faces and the report", () => {
    expect(schemaSecretInputs()).toEqual(["AgentVersion.promote.apiKey", "provider.apiKey"]);
  });

  test("plugin: the provider's key, set without --secret, comes back from CheckConfig a secret (baseUrl plain)", async () => {
    const p = await plugin(DEFAULT_API_KEY);
    for (const apiKey of [DEFAULT_API_KEY, secret(DEFAULT_API_KEY)]) {
      const req = new provpb.CheckRequest();
      req.setUrn("urn:pulumi:dev::secrets::pulumi:providers:voice-agent::default");
      req.setType("pulumi:providers:voice-agent");
      req.setOlds(structpb.Struct.fromJavaScript({}));
      req.setNews(structpb.Struct.fromJavaScript({ baseUrl: emu.url, apiKey, version: "0.2.0" }));
      const res = await p.call<provTypes.CheckResponse>("checkConfig", req);
      const inputs = res.getInputs()?.toJavaScript() as P;
      expect(inputs.apiKey).toEqual(secret(DEFAULT_API_KEY));
      expect(inputs.baseUrl).toBe(emu.url);
      expect(visible(inputs)).not.toContain(DEFAULT_API_KEY);
    }
  });

  test("plugin: staging's key given plainly and a secret prompt copied for the promotion stay secret in check, preview, create, refresh and update", async () => {
    // Staging: the same agent, live, in its own workspace.
    const staging = await plugin(STAGING_KEY);
    const sHost = await staging.create(
      "Agent",
      "host",
      await staging.check("Agent", "host", { name: "Support", systemPrompt: PROMPT }),
    );
    const sRef = { [SIG]: RESOURCE_SIG, urn: staging.urn("Agent", "host"), id: sHost.id };
    await staging.create(
      "AgentVersion",
      "live",
      await staging.check("AgentVersion", "live", { agent: sRef }),
    );

    const prod = await plugin(DEFAULT_API_KEY);
    const agentNews = { name: "Support", systemPrompt: secret(PROMPT) };
    const agentChecked = await prod.check("Agent", "host", agentNews);
    const host = await prod.create("Agent", "host", agentChecked);
    expect(visible(host.outs)).not.toContain("retention discount");
    const ref = { [SIG]: RESOURCE_SIG, urn: prod.urn("Agent", "host"), id: host.id };
    const promote = { from: sHost.outs.agentId, apiKey: STAGING_KEY, minCalls: 0 };
    const news = { agent: ref, promote };
    const checked = await prod.check("AgentVersion", "live", news);
    // Nested, as the class registers it: the rest of `promote` stays readable.
    expect(checked.promote).toEqual({ ...promote, apiKey: secret(STAGING_KEY) });
    expect(checked.promoteConfig.systemPrompt).toEqual(secret(PROMPT));
    expect(checked.promoteConfig.name).toBe("Support");
    const planned = await prod.create("AgentVersion", "live", checked, true);
    const made = await prod.create("AgentVersion", "live", checked);
    expect(made.outs.promote).toEqual(secret(expect.objectContaining({ apiKey: STAGING_KEY })));
    const read = await prod.read("AgentVersion", "live", made.id, made.outs, checked);
    // A state written before: the key plain in it is made secret by the refresh.
    const unmarked = JSON.parse(
      JSON.stringify(checked).replaceAll(JSON.stringify(secret(STAGING_KEY)), JSON.stringify(STAGING_KEY)),
    );
    expect(visible(unmarked)).toContain(STAGING_KEY);
    const reread = await prod.read("AgentVersion", "live", made.id, made.outs, unmarked);
    const label = await prod.check("AgentVersion", "live", { ...news, label: "next" }, checked);
    const updatePreview = await prod.update("AgentVersion", "live", made.id, read.outs, label, true);
    const updated = await prod.update("AgentVersion", "live", made.id, read.outs, label);
    for (const [what, answer] of Object.entries({
      checked,
      planned,
      made,
      read,
      reread: reread.inputs,
      label,
      updatePreview,
      updated,
    })) {
      expect(visible(answer), what).not.toContain(STAGING_KEY);
      expect(visible(answer), what).not.toContain("retention discount");
    }
  });
});

describe("the TypeScript class registers the same secrets", () => {
  test("staging's key given plainly is registered secret; the prompt it copies from a secret stays secret", async () => {
    const registered = new Map<string, P>();
    await pulumi.runtime.setMocks(
      {
        newResource: (args) => {
          registered.set(args.name, args.inputs);
          return { id: `${args.name}-id`, state: args.inputs };
        },
        call: () => ({}),
      },
      "secrets",
      "dev",
      true,
      "organization",
    );
    const agent = new Agent("host", { name: "Support", systemPrompt: pulumi.secret(PROMPT) });
    new AgentVersion("live", { agent, promote: { from: "staging-agent", apiKey: STAGING_KEY, minCalls: 0 } });
    await new Promise((r) => setTimeout(r, 200));
    await pulumi.runtime.disconnect?.();
    const inputs = registered.get("live");
    // The SDK marks the object holding a secret Output secret whole (the plugin, only the key in it).
    expect(visible(inputs?.promote)).toBe('"[secret]"');
    expect(JSON.stringify(inputs?.promote)).toContain(STAGING_KEY);
    expect(JSON.stringify(inputs?.promoteConfig)).toContain("retention discount");
    expect(visible(inputs)).not.toContain(STAGING_KEY);
    expect(visible(inputs)).not.toContain("retention discount");
  });
});

describe("voice-agent-diff's report", () => {
  test("never prints staging's key, even from a state or preview that holds it plain", () => {
    const urn = "urn:pulumi:dev::secrets::voice-agent:index:AgentVersion::live";
    const plainInputs = {
      agentId: "agent-1",
      live: true,
      promote: { from: "staging-agent", apiKey: STAGING_KEY, minCalls: 0 },
    };
    const preview = parsePreview({
      steps: [
        {
          op: "create",
          urn,
          newState: { urn, type: "voice-agent:index:AgentVersion", inputs: plainInputs, outputs: {} },
        },
        {
          op: "update",
          urn: `${urn}2`,
          oldState: {
            urn: `${urn}2`,
            type: "voice-agent:index:AgentVersion",
            inputs: plainInputs,
            outputs: {},
          },
          newState: {
            urn: `${urn}2`,
            type: "voice-agent:index:AgentVersion",
            inputs: { ...plainInputs, promote: { ...plainInputs.promote, apiKey: "va_other_plain_key" } },
            outputs: {},
          },
        },
      ],
    });
    const report = renderReport(preview);
    expect(report).toContain("staging-agent");
    expect(report).not.toContain(STAGING_KEY);
    expect(report).not.toContain("va_other_plain_key");
    expect(userInputs("AgentVersion", plainInputs).promote).toEqual({
      from: "staging-agent",
      apiKey: "[secret]",
      minCalls: 0,
    });
  });
});
