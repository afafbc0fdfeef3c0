/**
 * The provider plugin `voice-agent`: Pulumi's gRPC `ResourceProvider` service, served over the
 * SDK's generated stubs (`@pulumi/pulumi/proto`) with `@grpc/grpc-js` (the SDK's own). It calls the
 * very handlers the dynamic resources call (`src/resources/registry.ts`, each kind's `provider.ts`):
 * this file only translates, it decides nothing about a resource.
 *
 * Why not the SDK's `provider.main`: its server answers `Configure` itself and drops the
 * configuration, and its `read` cannot take a request without properties (`pulumi import`).
 *
 * What the plugin adds to the handlers, and nothing else:
 * - `Configure`: `baseUrl` and the secret `apiKey` from the provider's inputs (stack config
 *   `voice-agent:*` or an explicit `pulumi:providers:voice-agent`), else the environment.
 * - Secrets unwrapped on the way in; a property that held one goes back secret, and so do the
 *   outputs the schema declares secret (a widget's key).
 * - What a TypeScript program computes before registering (`agentInputs.ts`): an Agent's create
 *   marker, an AgentVersion's expansion of `agent` (the same function the class calls).
 * - `detailedDiff` naming the user's fields.
 * - An AgentVersion's line in the preview (`previewNote`, the words the TypeScript class logs),
 *   sent to the engine's log: a YAML or Go program runs no code of ours that could say it.
 */
import { createRequire } from "node:module";
import type * as grpcTypes from "@grpc/grpc-js";
import type * as engineRpcTypes from "@pulumi/pulumi/proto/engine_grpc_pb";
import type * as engineTypes from "@pulumi/pulumi/proto/engine_pb";
import type * as pluginTypes from "@pulumi/pulumi/proto/plugin_pb";
import type * as provRpcTypes from "@pulumi/pulumi/proto/provider_grpc_pb";
import type * as provTypes from "@pulumi/pulumi/proto/provider_pb";
import type * as emptyTypes from "google-protobuf/google/protobuf/empty_pb";
import type * as structTypes from "google-protobuf/google/protobuf/struct_pb";
import type { VoiceAgentClient } from "../client";
import { importedInputs } from "../export/adopt";
import { ExpectedFailure, isExpectedFailure } from "../provider/failures";
import { deepEqual } from "../provider/normalize";
import type { HandlerFactory, ProviderContext, ResourceHandler } from "../provider/resource";
import { UNKNOWN } from "../provider/unknowns";
import { previewNote } from "../resources/agentVersion/plan";
import { LOOKUPS, type LookupName } from "../resources/catalogueLookups";
import {
  heldSecretInputs,
  PROVIDER_INPUTS,
  renamedInputs,
  SECRET_OUTPUTS,
  secretInputPaths,
} from "../resources/inputSpecs";
import { RESOURCES, type ResourceKind } from "../resources/registry";
import { buildSchema, buildVersion } from "./buildInfo";
import { type Face, KINDS, type KindFace } from "./faces";
import { holds, type Path, type Props, unwrap, wrap } from "./values";

/** The SDK's directory: the stubs and grpc-js are loaded from it, so they are the SDK's own. */
const fromSdk = createRequire(require.resolve("@pulumi/pulumi/package.json"));
const grpc = fromSdk("@grpc/grpc-js") as typeof grpcTypes;
const provpb = require("@pulumi/pulumi/proto/provider_pb") as typeof provTypes;
const provrpc = require("@pulumi/pulumi/proto/provider_grpc_pb") as typeof provRpcTypes;
const pluginpb = require("@pulumi/pulumi/proto/plugin_pb") as typeof pluginTypes;
const structpb = fromSdk("google-protobuf/google/protobuf/struct_pb") as typeof structTypes;
const emptypb = fromSdk("google-protobuf/google/protobuf/empty_pb") as typeof emptyTypes;
const enginepb = require("@pulumi/pulumi/proto/engine_pb") as typeof engineTypes;
const enginerpc = require("@pulumi/pulumi/proto/engine_grpc_pb") as typeof engineRpcTypes;

/** Says a line in the engine's output, under the resource `urn`. */
export type EngineLog = (severity: "info" | "warning", message: string, urn: string) => Promise<void>;

/** The engine's log at `address` (the plugin's first argument); a failure to say it is not the step's. */
export function engineLog(address: string): EngineLog {
  const client = new enginerpc.EngineClient(address, grpc.credentials.createInsecure());
  return (severity, message, urn) => {
    const req = new enginepb.LogRequest();
    req.setSeverity(severity === "warning" ? enginepb.LogSeverity.WARNING : enginepb.LogSeverity.INFO);
    req.setMessage(message);
    req.setUrn(urn);
    return new Promise((resolve) => client.log(req, () => resolve()));
  };
}

/**
 * The build's version (scripts/version.js: from git; embedded in the single executable, else
 * recorded in `dist/version.json` by the build, else package.json's): what GetPluginInfo answers
 * and the served schema carries.
 */
export const VERSION = buildVersion();
let schemaCache: string | undefined;
/**
 * schema.json as shipped (embedded in the single executable), stamped with the build's version: the
 * committed schema carries none (every commit builds another), and what GetSchema serves names the
 * plugin that serves it.
 */
export function schemaText(): string {
  schemaCache ??= stampedSchema(buildSchema(), VERSION);
  return schemaCache;
}

/** A schema's text with `version` set to `version` (after `displayName`, where Pulumi's schemas have it). */
export function stampedSchema(text: string, version: string): string {
  const { name, displayName, version: _unstamped, ...rest } = JSON.parse(text) as Record<string, unknown>;
  return `${JSON.stringify({ name, displayName, version, ...rest }, null, 2)}\n`;
}

interface SchemaResources {
  resources: Record<
    string,
    { properties: Record<string, { secret?: boolean }>; inputProperties: Record<string, unknown> }
  >;
}
let parsedSchema: SchemaResources | undefined;
/** schema.json's resources, parsed once. */
function schemaResources(): SchemaResources["resources"] {
  parsedSchema ??= JSON.parse(schemaText()) as SchemaResources;
  return parsedSchema.resources;
}

/** The outputs the schema declares secret, by resource token. */
function secretOutputs(token: string): string[] {
  return Object.entries(schemaResources()[token]?.properties ?? {})
    .filter(([, p]) => p.secret === true)
    .map(([k]) => k);
}

/** The resource type name of `token` (`voice-agent:index:AgentVersion` → `AgentVersion`). */
const typeName = (token: string): string => token.slice(token.lastIndexOf(":") + 1);

/**
 * Where the inputs `checked` (the handler's names) hold a secret: where the program's `news` held
 * one (`paths`, a renamed input under its new name), where the resource keeps one whatever the
 * program gave (`inputSpecs.ts`: staging's key), and `copied` (what it copies of another resource's
 * secret).
 */
function inputSecretPaths(
  token: string,
  checked: Props,
  paths: readonly Path[],
  copied: readonly Path[],
): Path[] {
  const renamed = renamedInputs(typeName(token));
  const fromNews = paths.map((p): Path => {
    const [head, ...rest] = p;
    const to = typeof head === "string" && !(head in checked) ? renamed[head] : undefined;
    return to !== undefined ? [to, ...rest] : p;
  });
  const always = secretInputPaths(typeName(token)).filter((p) => holds(checked, p));
  return [...fromNews, ...always, ...copied];
}

/** The inputs of `token` (by the schema) whose values differ between the state and the inputs. */
function inputChanges(token: string, olds: Props, news: Props): string[] {
  return Object.keys(schemaResources()[token]?.inputProperties ?? {}).filter(
    (k) => (news[k] !== undefined || k in olds) && !deepEqual(olds[k] ?? null, news[k] ?? null),
  );
}

/**
 * The outputs a preview plans for a create or update: the checked inputs (values the check
 * computed, such as an Agent's content hash, included), every other output unknown until the
 * write, but the resource's identity, which an update keeps (so `${agent.agentId}` stays known and
 * a Widget on it is not replaced when the agent's configuration changes).
 */
function planned(token: string, olds: Props, news: Props): Props {
  const outputs = new Set([...Object.keys(schemaResources()[token]?.properties ?? {}), ...Object.keys(olds)]);
  const keeps = KINDS[token]?.identity ?? [];
  const out: Props = { ...news };
  for (const k of outputs) {
    if (k in news) continue;
    out[k] = keeps.includes(k) && olds[k] !== undefined ? olds[k] : UNKNOWN;
  }
  return out;
}

const isLookup = (name: string): name is LookupName => Object.hasOwn(LOOKUPS, name);

/** The provider's settings, from `Configure`. */
export interface Settings {
  baseUrl?: string;
  apiKey?: string;
}

/**
 * A context on the settings `Configure` received, the environment as the fallback (as today);
 * `signal`: aborted by the engine's `Cancel`.
 */
function contextOn(
  settings: () => Settings,
  make: ((s: Settings) => Promise<VoiceAgentClient>) | undefined,
  signal: AbortSignal,
): ProviderContext {
  let built: Promise<VoiceAgentClient> | undefined;
  let builtFor: Settings | undefined;
  const client = async () => {
    const s = settings();
    if (!built || builtFor !== s) {
      builtFor = s;
      built = make
        ? make(s)
        : import("../client/index.js").then(({ VoiceAgentClient, configFromPulumi }) => {
            const values: Record<string, string | undefined> = {
              "voice-agent:baseUrl": s.baseUrl,
              "voice-agent:apiKey": s.apiKey,
            };
            // The engine's Cancel also ends a request's retries and abandons one in flight.
            return new VoiceAgentClient({
              ...configFromPulumi({ get: (k: string) => values[k] }, process.env),
              signal,
            });
          });
      built.catch(() => {
        built = undefined;
      });
    }
    return built;
  };
  return { client, warmUp: () => undefined, signal };
}

type Unary<Req, Res> = grpcTypes.handleUnaryCall<Req, Res>;
type Call<Req> = grpcTypes.ServerUnaryCall<Req, unknown>;

function toStruct(props: Props): structTypes.Struct {
  return structpb.Struct.fromJavaScript(props as Record<string, structTypes.JavaScriptValue>);
}
const fromStruct = (s: structTypes.Struct | undefined): Props => (s ? (s.toJavaScript() as Props) : {});

/**
 * An error for the engine: the message alone (an expected failure, or any failure of a create or
 * update, as the dynamic resources report them), else with its stack (a bug).
 */
function grpcError(err: unknown, plain: boolean): grpcTypes.ServiceError {
  const e = err instanceof Error ? err : new Error(String(err));
  const details = plain || isExpectedFailure(e) ? e.message : `${e.message}\n${e.stack ?? ""}`;
  return Object.assign(new Error(details), {
    code: grpc.status.UNKNOWN,
    details,
    metadata: new grpc.Metadata(),
  });
}

/** `fn`'s answer, or its failure, to the gRPC callback. */
function answer<Req, Res>(fn: (call: Call<Req>) => Promise<Res>, plain = false): Unary<Req, Res> {
  return (call, callback) => {
    fn(call).then(
      (res) => callback(null, res),
      (err: unknown) => callback(grpcError(err, plain), null),
    );
  };
}

/** The resource server: the handlers of every kind, on one context. */
export class VoiceAgentProvider {
  private settings: Settings = {};
  private readonly ctx: ProviderContext;
  private readonly handlers = new Map<ResourceKind, ResourceHandler>();
  /** What each Agent of this deployment last looked like, by URN, for its AgentVersions. */
  readonly agents = new Map<string, Props>();
  /** Aborted by the engine's `Cancel`: the long waits of the steps under way end (`cancel.ts`). */
  private readonly cancelled = new AbortController();

  /**
   * @param factories each kind's provider side (the registry's, loaded on first use)
   * @param make builds the client from the settings (the package's client by default)
   * @param log the engine's log (none: nothing is said)
   */
  constructor(
    private readonly factories: Record<ResourceKind, () => HandlerFactory> = RESOURCES,
    make?: (s: Settings) => Promise<VoiceAgentClient>,
    private readonly log?: EngineLog,
  ) {
    this.ctx = contextOn(() => this.settings, make, this.cancelled.signal);
  }

  /** An AgentVersion's line for the step at `urn` whose planned outputs are `props` (`plan.ts`). */
  private async say(type: string, urn: string, props: Props): Promise<void> {
    if (!this.log || KINDS[type]?.kind !== "agentVersion") return;
    const note = previewNote(props, urn.slice(urn.lastIndexOf("::") + 2));
    if (note) await this.log(note.severity, note.message, urn);
  }

  private face(type: string): { kind: ResourceKind; face: KindFace; handler: ResourceHandler } {
    const entry = KINDS[type];
    if (!entry) throw new Error(`voice-agent: unknown resource type ${type}`);
    let handler = this.handlers.get(entry.kind);
    if (!handler) {
      handler = this.factories[entry.kind]()(this.ctx);
      this.handlers.set(entry.kind, handler);
    }
    return { kind: entry.kind, face: entry, handler };
  }

  /** `secrets`: the properties that are secrets, of what the face records as seen. */
  private faceCtx(urn: string, secrets?: ReadonlySet<string>): Face {
    return { urn, agents: this.agents, ...(secrets ? { secrets } : {}) };
  }

  configure = answer<provTypes.ConfigureRequest, provTypes.ConfigureResponse>(async (call) => {
    const args = unwrap(fromStruct(call.request.getArgs())).values;
    const vars = call.request.getVariablesMap();
    const pick = (key: "baseUrl" | "apiKey") => {
      const v = args[key] ?? vars.get(`voice-agent:config:${key}`) ?? vars.get(`voice-agent:${key}`);
      return typeof v === "string" && v !== "" ? v : undefined;
    };
    const baseUrl = pick("baseUrl");
    const apiKey = pick("apiKey");
    this.settings = { ...(baseUrl ? { baseUrl } : {}), ...(apiKey ? { apiKey } : {}) };
    const res = new provpb.ConfigureResponse();
    res.setAcceptsecrets(true);
    res.setAcceptresources(true);
    res.setAcceptoutputs(false);
    // At preview, `Create` and `Update` say what the outputs will be (`planned`).
    res.setSupportspreview(true);
    return res;
  });

  // The settings handed back with the key a secret, however it was set (`pulumi config set` without
  // `--secret` included): the engine keeps the provider's inputs as checked here.
  checkConfig = answer<provTypes.CheckRequest, provTypes.CheckResponse>(async (call) => {
    const news = unwrap(fromStruct(call.request.getNews()));
    const always = Object.entries(PROVIDER_INPUTS).flatMap(([k, spec]) =>
      "secret" in spec && spec.secret ? [k] : [],
    );
    const res = new provpb.CheckResponse();
    res.setInputs(toStruct(wrap(news.values, new Set([...news.secrets, ...always]))));
    return res;
  });

  diffConfig = answer<provTypes.DiffRequest, provTypes.DiffResponse>(async (call) => {
    const olds = unwrap(fromStruct(call.request.getOldInputs())).values;
    const news = unwrap(fromStruct(call.request.getNews())).values;
    const changed = (["baseUrl", "apiKey"] as const).filter((k) => olds[k] !== news[k]);
    const res = new provpb.DiffResponse();
    res.setChanges(
      changed.length > 0
        ? provpb.DiffResponse.DiffChanges.DIFF_SOME
        : provpb.DiffResponse.DiffChanges.DIFF_NONE,
    );
    res.setDiffsList(changed);
    return res;
  });

  check = answer<provTypes.CheckRequest, provTypes.CheckResponse>(async (call) => {
    const req = call.request;
    const { face, handler } = this.face(req.getType());
    const olds = unwrap(fromStruct(req.getOlds()));
    const news = unwrap(fromStruct(req.getNews()));
    const fc = this.faceCtx(req.getUrn());
    const refused = face.refused?.(news.values);
    // The engine's check of what `pulumi import` read (olds and news the same inputs): both in the
    // handler's terms, so that they stay the same.
    const reread = Object.keys(olds.values).length > 0 && deepEqual(olds.values, news.values);
    const result = refused
      ? { inputs: news.values, failures: [{ property: "", reason: refused }] }
      : await handler.check(
          reread ? face.newsIn(olds.values, fc) : olds.values,
          face.newsIn(news.values, fc),
        );
    const checked = face.checkedOut(result.inputs ?? {}, news.values, fc);
    face.seen(req.getUrn(), checked, this.faceCtx(req.getUrn(), news.secrets), true);
    const secretPaths = inputSecretPaths(
      req.getType(),
      checked,
      news.paths,
      face.copiedSecrets?.(news.values, fc) ?? [],
    );
    const res = new provpb.CheckResponse();
    res.setInputs(toStruct(wrap(checked, new Set(), secretPaths)));
    res.setFailuresList(
      (result.failures ?? []).map((f) => {
        const failure = new provpb.CheckFailure();
        failure.setProperty("");
        failure.setReason(f.reason);
        return failure;
      }),
    );
    return res;
  });

  diff = answer<provTypes.DiffRequest, provTypes.DiffResponse>(async (call) => {
    const req = call.request;
    const { face, handler } = this.face(req.getType());
    const olds = unwrap(fromStruct(req.getOlds())).values;
    const news = unwrap(fromStruct(req.getNews())).values;
    face.seen(req.getUrn(), { ...olds, ...news }, this.faceCtx(req.getUrn()), true);
    const ignoreRefused = face.ignoreRefused?.(req.getIgnorechangesList(), olds, news);
    if (ignoreRefused) throw new ExpectedFailure(ignoreRefused);
    const result = await handler.diff(req.getId(), olds, face.handlerIn?.(news) ?? news);
    // A version taken off air that stays so: said at every preview and deploy, as the class says it.
    if (result.changes === false) await this.say(req.getType(), req.getUrn(), olds);
    const res = new provpb.DiffResponse();
    const D = provpb.DiffResponse.DiffChanges;
    res.setChanges(
      result.changes === undefined ? D.DIFF_UNKNOWN : result.changes ? D.DIFF_SOME : D.DIFF_NONE,
    );
    const replaces = result.replaces ?? [];
    // The handlers replace only for another agent (an AgentVersion's `agentId`, or its `agent`).
    res.setReplacesList(
      replaces.map((k) =>
        k === "agentId" && req.getType().endsWith(":AgentVersion") && news.agent !== undefined ? "agent" : k,
      ),
    );
    res.setStablesList(result.stables ?? []);
    res.setDeletebeforereplace(result.deleteBeforeReplace ?? false);
    // The handlers that name their changed fields (the Agent's) say them; else they are compared.
    const named = (result as { diffs?: string[] }).diffs ?? inputChanges(req.getType(), olds, news);
    const fields = result.changes ? face.userFields([...named, ...replaces], olds, news) : [];
    res.setDiffsList(fields);
    if (result.changes) {
      res.setHasdetaileddiff(true);
      const detailed = res.getDetaileddiffMap();
      const replaced = new Set(res.getReplacesList());
      for (const f of fields) {
        const d = new provpb.PropertyDiff();
        const inOld = face.holds ? face.holds(f, olds) : f in olds;
        const inNew = face.holds ? face.holds(f, news) : f in news;
        const K = provpb.PropertyDiff.Kind;
        const kind = !inOld && inNew ? K.ADD : inOld && !inNew ? K.DELETE : K.UPDATE;
        d.setKind(replaced.has(f) ? kind + 1 : kind);
        d.setInputdiff(true);
        detailed.set(f, d);
      }
    }
    return res;
  });

  create = answer<provTypes.CreateRequest, provTypes.CreateResponse>(async (call) => {
    const req = call.request;
    const { face, handler } = this.face(req.getType());
    const inputs = unwrap(fromStruct(req.getProperties()));
    if (req.getPreview()) {
      const res = new provpb.CreateResponse();
      const secrets = this.secretsOf(req.getType(), inputs.secrets, inputs.values);
      res.setProperties(toStruct(wrap(planned(req.getType(), {}, inputs.values), secrets)));
      await this.say(req.getType(), req.getUrn(), inputs.values);
      return res;
    }
    const result = await handler.create(face.handlerIn?.(inputs.values) ?? inputs.values);
    const outs = face.outputsOut((result.outs ?? {}) as Props, inputs.values);
    const secrets = this.secretsOf(req.getType(), inputs.secrets, inputs.values);
    face.seen(req.getUrn(), outs, this.faceCtx(req.getUrn(), secrets));
    const res = new provpb.CreateResponse();
    res.setId(result.id);
    res.setProperties(toStruct(wrap(outs, secrets)));
    return res;
  }, true);

  read = answer<provTypes.ReadRequest, provTypes.ReadResponse>(async (call) => {
    const req = call.request;
    const { kind, face, handler } = this.face(req.getType());
    const props = unwrap(fromStruct(req.getProperties()));
    const oldInputs = unwrap(fromStruct(req.getInputs()));
    const res = new provpb.ReadResponse();
    // `pulumi import` sends neither properties nor inputs: what the program would declare for the
    // object as the service holds it (the export's core), then the handler's read on those inputs.
    const imported = Object.keys(props.values).length === 0 && Object.keys(oldInputs.values).length === 0;
    if (imported) {
      const declared = await importedInputs(await this.ctx.client(), kind, req.getId());
      if (declared === null) return res; // gone: nothing to import
      if (declared) oldInputs.values = declared;
    }
    const result = await handler.read(req.getId(), { ...oldInputs.values, ...props.values });
    if (!result.id) return res; // gone: the resource leaves the state
    const outs = face.outputsOut((result.props ?? {}) as Props, oldInputs.values);
    const secrets = this.secretsOf(
      req.getType(),
      new Set([...props.secrets, ...oldInputs.secrets]),
      oldInputs.values,
    );
    face.seen(req.getUrn(), outs, this.faceCtx(req.getUrn(), secrets));
    res.setId((imported && face.importedId?.(outs)) || result.id);
    res.setProperties(toStruct(wrap(outs, secrets)));
    const inputs = face.readInputsOut((result.inputs ?? {}) as Props, oldInputs.values, imported);
    // The inputs' secrets where they were, and those the resource keeps whatever was given (a state
    // written before staging's key was kept secret is marked by its first refresh).
    const copied = face.copiedSecrets?.(inputs, this.faceCtx(req.getUrn())) ?? [];
    res.setInputs(
      toStruct(wrap(inputs, new Set(), inputSecretPaths(req.getType(), inputs, oldInputs.paths, copied))),
    );
    return res;
  });

  update = answer<provTypes.UpdateRequest, provTypes.UpdateResponse>(async (call) => {
    const req = call.request;
    const { face, handler } = this.face(req.getType());
    const olds = unwrap(fromStruct(req.getOlds()));
    const news = unwrap(fromStruct(req.getNews()));
    if (req.getPreview()) {
      const res = new provpb.UpdateResponse();
      const secrets = this.secretsOf(req.getType(), new Set([...olds.secrets, ...news.secrets]), news.values);
      res.setProperties(toStruct(wrap(planned(req.getType(), olds.values, news.values), secrets)));
      await this.say(req.getType(), req.getUrn(), news.values);
      return res;
    }
    const result = await handler.update(
      req.getId(),
      olds.values,
      face.handlerIn?.(news.values) ?? news.values,
    );
    const outs = face.outputsOut((result.outs ?? {}) as Props, news.values);
    const secrets = this.secretsOf(req.getType(), news.secrets, news.values);
    face.seen(req.getUrn(), outs, this.faceCtx(req.getUrn(), secrets));
    const res = new provpb.UpdateResponse();
    res.setProperties(toStruct(wrap(outs, secrets)));
    return res;
  }, true);

  delete = answer<provTypes.DeleteRequest, emptyTypes.Empty>(async (call) => {
    const req = call.request;
    const { handler } = this.face(req.getType());
    const props = unwrap(fromStruct(req.getProperties())).values;
    await handler.delete(req.getId(), props);
    return new emptypb.Empty();
  });

  /** The catalogue lookups, as functions: the same `LOOKUPS` the program's lookups call. */
  invoke = answer<provTypes.InvokeRequest, provTypes.InvokeResponse>(async (call) => {
    const token = call.request.getTok();
    const name = token.replace(/^voice-agent:index:/, "");
    if (!isLookup(name)) throw new Error(`voice-agent: unknown function ${token}`);
    const args = unwrap(fromStruct(call.request.getArgs())).values;
    const c = await this.ctx.client();
    const result: unknown = await (LOOKUPS[name] as (c: VoiceAgentClient, a: Props) => Promise<unknown>)(
      c,
      args,
    );
    const res = new provpb.InvokeResponse();
    res.setReturn(toStruct({ [Array.isArray(result) ? "items" : "providers"]: result }));
    return res;
  });

  getSchema = answer<provTypes.GetSchemaRequest, provTypes.GetSchemaResponse>(async () => {
    const res = new provpb.GetSchemaResponse();
    res.setSchema(schemaText());
    return res;
  });

  getPluginInfo = answer<emptyTypes.Empty, pluginTypes.PluginInfo>(async () => {
    const res = new pluginpb.PluginInfo();
    res.setVersion(VERSION);
    return res;
  });

  /**
   * The engine cancels the deployment (Ctrl-C): the steps under way stop their long waits (a
   * knowledge base's readiness, test calls) and fail as cancelled, each the way its own deadline
   * fails it, which the next `up` finishes from. The engine sends no step after it.
   */
  cancel = answer<emptyTypes.Empty, emptyTypes.Empty>(async () => {
    this.cancelled.abort();
    return new emptypb.Empty();
  });

  /**
   * The outputs handed back secret: those of an input that held a secret, those the resource keeps
   * secret whatever was given (`inputSpecs.ts`: an input holding one, such as `promote` holding
   * staging's key in `inputs`, whole, as the class's `additionalSecretOutputs` makes it), and those the
   * schema declares secret.
   */
  private secretsOf(type: string, fromInputs: ReadonlySet<string>, inputs: Props): Set<string> {
    const name = typeName(type);
    const always = heldSecretInputs(name, inputs);
    return new Set([...fromInputs, ...always, ...(SECRET_OUTPUTS[name] ?? []), ...secretOutputs(type)]);
  }
}

/** Serves `provider` on 127.0.0.1 (a free port); resolves the server and its port. */
export async function serve(
  provider: VoiceAgentProvider,
): Promise<{ server: grpcTypes.Server; port: number }> {
  const server = new grpc.Server({ "grpc.max_receive_message_length": 400 * 1024 * 1024 });
  const service = provrpc.ResourceProviderService;
  const impl: Partial<provRpcTypes.IResourceProviderServer> = {
    configure: provider.configure,
    checkConfig: provider.checkConfig,
    diffConfig: provider.diffConfig,
    check: provider.check,
    diff: provider.diff,
    create: provider.create,
    read: provider.read,
    update: provider.update,
    delete: provider.delete,
    getSchema: provider.getSchema,
    invoke: provider.invoke,
    getPluginInfo: provider.getPluginInfo,
    cancel: provider.cancel,
  };
  server.addService(service, impl as grpcTypes.UntypedServiceImplementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return { server, port };
}
