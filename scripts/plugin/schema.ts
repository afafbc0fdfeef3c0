/**
 * Generates the provider plugin's Pulumi package schema (`schema.json`) from the resources' public
 * input and output definitions: the `<Kind>Args` interfaces of `src/resources/<kind>/index.ts` and
 * the `declare readonly` outputs and public getters of each class, types and TSDoc alike, read with
 * TypeScript's own checker. Nothing is written twice: `test/plugin/schema.test.ts` fails when
 * `schema.json` is stale, and when its property names disagree with the zod definitions that
 * validate the inputs.
 *
 * Run: `npm run plugin:schema` (writes schema.json).
 */
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import * as ts from "typescript";
import { PROVIDER_INPUTS, RESOURCE_INPUTS, SECRET_OUTPUTS } from "../../src/resources/inputSpecs";

const ROOT = path.resolve(__dirname, "../..");
const PKG = "voice-agent";
const TOKEN = (name: string) => `${PKG}:index:${name}`;

/** Where Pulumi downloads the plugin's release archives (`pulumi-resource-voice-agent-v<version>-<os>-<arch>.tar.gz`). */
export const PLUGIN_DOWNLOAD_URL = "github://api.github.com/pulumi-voice-agent";
/** The Go SDK's package; its module is `sdk/go.mod`'s, tagged `sdk/vX.Y.Z` at a release. */
export const GO_IMPORT_BASE_PATH = "github.com/pulumi-voice-agent/pulumi-voice-agent/sdk/go/voiceagent";

/** The resources: type name, module, args interface, class. */
const RESOURCES = [
  { name: "Agent", file: "src/resources/agent/index.ts", args: "AgentArgs" },
  { name: "AgentVersion", file: "src/resources/agentVersion/index.ts", args: "AgentVersionArgs" },
  { name: "Widget", file: "src/resources/widget/index.ts", args: "WidgetArgs" },
  { name: "KnowledgeBase", file: "src/resources/knowledgeBase/index.ts", args: "KnowledgeBaseArgs" },
  { name: "AnalysisGroup", file: "src/resources/analysisGroup/index.ts", args: "AnalysisGroupArgs" },
] as const;

/** The catalogue lookups, served as functions (`LOOKUPS`: each takes a client, then its arguments). */
const LOOKUPS_FILE = "src/resources/catalogueLookups.ts";

/** A function's result: Pulumi's functions return an object, so a list is its `items`, a map its `providers`. */
export const RESULT_KEYS = { list: "items", map: "providers" } as const;

/** Inputs only the TypeScript face has (it runs no program-side step in other languages). */
const TS_ONLY = new Set<string>([]);

type Spec = Record<string, unknown>;
interface Schema {
  name: string;
  displayName: string;
  version?: string;
  pluginDownloadURL: string;
  description: string;
  keywords: string[];
  homepage: string;
  license: string;
  repository: string;
  publisher: string;
  meta: { moduleFormat: string };
  language: Record<string, unknown>;
  config: { variables: Record<string, Spec> };
  provider: Spec;
  resources: Record<string, Spec>;
  functions: Record<string, Spec>;
  types: Record<string, Spec>;
}

const pascal = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** The schema, as an object (the same every run: sorted where order is not the source's). */
export function generateSchema(): Schema {
  const program = ts.createProgram(
    [...RESOURCES.map((r) => path.join(ROOT, r.file)), path.join(ROOT, LOOKUPS_FILE)],
    {
      strict: true,
      module: ts.ModuleKind.Node16,
      moduleResolution: ts.ModuleResolutionKind.Node16,
      skipLibCheck: true,
      noEmit: true,
    },
  );
  const checker = program.getTypeChecker();
  const types: Record<string, Spec> = {};
  const typeSources = new Map<string, ts.Symbol | ts.Type>();

  const docOf = (sym: ts.Symbol): string | undefined => {
    const text = ts.displayPartsToString(sym.getDocumentationComment(checker)).trim();
    return text === "" ? undefined : text;
  };

  /** `pulumi.Input<T>` / `Output<T>` / `Promise<T>` members dropped, `null` and `undefined` too. */
  const members = (type: ts.Type): ts.Type[] => {
    const all = type.isUnion() ? type.types : [type];
    const out: ts.Type[] = [];
    for (const t of all) {
      if (t.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Null | ts.TypeFlags.Void)) continue;
      const name = t.getSymbol()?.getName() ?? t.aliasSymbol?.getName();
      if (name === "Promise" || name === "OutputInstance") continue;
      // `pulumi.Output<T>` (an intersection: `OutputInstance<T> & Lifted<T>`), from an input's `Input<T>`.
      if (
        name === "Output" ||
        (t.isIntersection() && t.types.some((x) => x.getSymbol()?.getName() === "OutputInstance"))
      ) {
        continue;
      }
      out.push(t);
    }
    // `true | false` is boolean.
    const bools = out.filter((t) => t.flags & ts.TypeFlags.BooleanLiteral);
    if (bools.length === 2)
      return [...out.filter((t) => !(t.flags & ts.TypeFlags.BooleanLiteral)), checker.getBooleanType()];
    return out;
  };

  const specOfOne = (t: ts.Type, owner: string): Spec => {
    if (t.flags & (ts.TypeFlags.String | ts.TypeFlags.StringLiteral)) return { type: "string" };
    if (t.flags & (ts.TypeFlags.Number | ts.TypeFlags.NumberLiteral)) return { type: "number" };
    if (t.flags & (ts.TypeFlags.Boolean | ts.TypeFlags.BooleanLiteral)) return { type: "boolean" };
    if (t.flags & (ts.TypeFlags.Unknown | ts.TypeFlags.Any)) return { $ref: "pulumi.json#/Any" };
    // `string & {}` (a string with suggested literals) is a string.
    if (t.isIntersection()) {
      const prim = t.types.find(
        (x) => x.flags & (ts.TypeFlags.String | ts.TypeFlags.Number | ts.TypeFlags.Boolean),
      );
      if (prim) return specOfOne(prim, owner);
    }
    // A tuple (`[min, max]`) is a list of its first element's type.
    if (checker.isTupleType(t)) {
      const [first] = checker.getTypeArguments(t as ts.TypeReference);
      return { type: "array", items: first ? specOf(first, `${owner}Item`) : { $ref: "pulumi.json#/Any" } };
    }
    if (checker.isArrayType(t)) {
      const [item] = checker.getTypeArguments(t as ts.TypeReference);
      return { type: "array", items: item ? specOf(item, `${owner}Item`) : { $ref: "pulumi.json#/Any" } };
    }
    const sym = t.getSymbol();
    if (sym && sym.getName() === "Agent" && sym.flags & ts.SymbolFlags.Class)
      return { $ref: `#/resources/${TOKEN("Agent")}` };
    const index = checker.getIndexInfoOfType(t, ts.IndexKind.String);
    if (index && checker.getPropertiesOfType(t).length === 0) {
      return { type: "object", additionalProperties: specOf(index.type, `${owner}Value`) };
    }
    if (t.flags & ts.TypeFlags.Object) {
      const declared =
        sym && !(sym.flags & ts.SymbolFlags.TypeLiteral) && sym.getName() !== "__type"
          ? sym.getName()
          : undefined;
      // The catalogue's types (a Voice offered) are not the inputs' (an agent's VoiceArgs).
      const catalogue = sym?.declarations?.[0]?.getSourceFile().fileName.endsWith(LOOKUPS_FILE) ?? false;
      const name = declared ? `${catalogue ? "Catalogue" : ""}${declared.replace(/Args$/, "")}` : owner;
      const token = TOKEN(name);
      const from = typeSources.get(token);
      if (from && from !== (sym ?? t)) throw new Error(`schema: two types named ${token}`);
      if (!from) {
        typeSources.set(token, sym ?? t);
        types[token] = objectSpec(t, name, sym ? docOf(sym) : undefined);
      }
      return { $ref: `#/types/${token}` };
    }
    throw new Error(`schema: no Pulumi type for ${checker.typeToString(t)} (${owner})`);
  };

  const visiting = new Set<ts.Type>();
  const specOf = (type: ts.Type, owner: string): Spec => {
    // A recursive type (JSON values) is any JSON value.
    if (visiting.has(type)) return { $ref: "pulumi.json#/Any" };
    visiting.add(type);
    try {
      return specOfUnion(type, owner);
    } finally {
      visiting.delete(type);
    }
  };
  const specOfUnion = (type: ts.Type, owner: string): Spec => {
    const ms = members(type);
    if (ms.length > 1 && ms.every(isRecordType)) return mergedObject(type, ms, owner);
    const specs: Spec[] = [];
    for (const m of ms) {
      const s = specOfOne(m, owner);
      if (!specs.some((x) => JSON.stringify(x) === JSON.stringify(s))) specs.push(s);
    }
    if (specs.length === 1 && specs[0]) return specs[0];
    if (specs.length === 0) return { $ref: "pulumi.json#/Any" };
    // Pulumi's schema: a union is `oneOf` of its members.
    return { oneOf: specs };
  };

  /** An object type with properties of its own (not a list, a map, a class, a primitive). */
  const isRecordType = (t: ts.Type): boolean =>
    (t.flags & ts.TypeFlags.Object) !== 0 &&
    !checker.isArrayType(t) &&
    !checker.isTupleType(t) &&
    ((t.getSymbol()?.flags ?? 0) & ts.SymbolFlags.Class) === 0 &&
    checker.getIndexInfoOfType(t, ts.IndexKind.String) === undefined &&
    checker.getPropertiesOfType(t).length > 0;

  /**
   * A union of object types (a knowledge base's document: `{name, text}`, `{name, url}` or
   * `{name, heldText}`) as one object type holding every member's properties, required where every
   * member requires it. Pulumi's SDKs type no `oneOf` of objects (Go's is an untyped
   * `pulumi.ArrayInput`, into which `pulumi import` writes Go that does not compile); which member
   * a value is stays told by the properties it sets, checked by the provider as in TypeScript. Named
   * after the union's alias (`KnowledgeBaseDocumentArgs`: `KnowledgeBaseDocument`), else its owner.
   */
  const mergedObject = (type: ts.Type, ms: readonly ts.Type[], owner: string): Spec => {
    let named: ts.Type = type;
    while (named.aliasSymbol?.getName() === "Input" && named.aliasTypeArguments?.[0]) {
      named = named.aliasTypeArguments[0];
    }
    const alias =
      named.aliasSymbol && named.aliasSymbol.getName() !== "Input" ? named.aliasSymbol : undefined;
    const name = alias ? alias.getName().replace(/Args$/, "") : owner;
    const token = TOKEN(name);
    const source = alias ?? named;
    const from = typeSources.get(token);
    if (from && from !== source) throw new Error(`schema: two types named ${token}`);
    if (!from) {
      typeSources.set(token, source);
      const properties: Record<string, Spec> = {};
      const requiredBy = new Map<string, number>();
      for (const m of ms) {
        const own = propertiesOf(m, name, () => false);
        for (const [k, spec] of Object.entries(own.properties)) {
          const before = properties[k];
          if (!before) properties[k] = spec;
          else {
            const { description: _a, ...was } = before;
            const { description: _b, ...is } = spec;
            if (JSON.stringify(was) !== JSON.stringify(is)) {
              throw new Error(`schema: ${name}.${k} has two types in the members of its union`);
            }
          }
        }
        for (const k of own.required) requiredBy.set(k, (requiredBy.get(k) ?? 0) + 1);
      }
      const required = [...requiredBy].filter(([, n]) => n === ms.length).map(([k]) => k);
      // The alias's documentation, else its members' (each form, as a list).
      const forms = ms.flatMap((m) => {
        const sym = m.getSymbol();
        const doc = sym ? docOf(sym) : undefined;
        return doc ? [`- ${doc}`] : [];
      });
      const description =
        (alias ? docOf(alias) : undefined) ?? (forms.length > 0 ? `One of:\n${forms.join("\n")}` : undefined);
      types[token] = {
        ...(description ? { description } : {}),
        type: "object",
        properties,
        ...(required.length > 0 ? { required } : {}),
      };
    }
    return { $ref: `#/types/${token}` };
  };

  const propertiesOf = (t: ts.Type, owner: string, skip: (name: string) => boolean) => {
    const properties: Record<string, Spec> = {};
    const required: string[] = [];
    for (const p of checker.getPropertiesOfType(t)) {
      const name = p.getName();
      if (skip(name)) continue;
      const decl = p.valueDeclaration ?? p.declarations?.[0];
      if (!decl) continue;
      // An output's declared `pulumi.Output<T>` (a property's, or a getter's that derives it): T.
      const node =
        ts.isPropertyDeclaration(decl) || ts.isGetAccessorDeclaration(decl) ? decl.type : undefined;
      const outputOf =
        node && ts.isTypeReferenceNode(node) && /(^|\.)Output$/.test(node.typeName.getText())
          ? node.typeArguments?.[0]
          : undefined;
      const pt = outputOf
        ? checker.getTypeFromTypeNode(outputOf)
        : checker.getTypeOfSymbolAtLocation(p, decl);
      const spec: Spec = { ...specOf(pt, `${owner}${pascal(name)}`) };
      const doc = docOf(p);
      if (doc) spec.description = doc;
      properties[name] = spec;
      // An output is always there when its declared type holds no `null` or `undefined`.
      const nullable = (pt.isUnion() ? pt.types : [pt]).some(
        (m) => m.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Null | ts.TypeFlags.Void),
      );
      if (outputOf ? !nullable : !(p.flags & ts.SymbolFlags.Optional)) required.push(name);
    }
    return { properties, required };
  };

  const objectSpec = (t: ts.Type, name: string, description: string | undefined): Spec => {
    const { properties, required } = propertiesOf(t, name, () => false);
    return {
      ...(description ? { description } : {}),
      type: "object",
      properties,
      ...(required.length > 0 ? { required } : {}),
    };
  };

  const resources: Record<string, Spec> = {};
  for (const r of RESOURCES) {
    const source = program.getSourceFile(path.join(ROOT, r.file));
    if (!source) throw new Error(`schema: ${r.file} not found`);
    const moduleSym = checker.getSymbolAtLocation(source);
    if (!moduleSym) throw new Error(`schema: ${r.file} has no exports`);
    const exports = checker.getExportsOfModule(moduleSym);
    const argsSym = exports.find((s) => s.getName() === r.args);
    const classSym = exports.find((s) => s.getName() === r.name);
    if (!argsSym || !classSym) throw new Error(`schema: ${r.file} exports no ${r.args} or ${r.name}`);
    const argsType = checker.getDeclaredTypeOfSymbol(argsSym);
    const inputs = propertiesOf(argsType, r.name, (n) => TS_ONLY.has(`${r.name}.${n}`));
    // The outputs: the class's public `declare readonly` properties (those with a type of their own)
    // and public getters (the AgentVersion derives six from one registered output).
    const instance = checker.getDeclaredTypeOfSymbol(classSym);
    const outputs = propertiesOf(instance, r.name, (n) => {
      const p = instance.getProperty(n);
      const decl = p?.valueDeclaration;
      if (!decl || !(ts.isPropertyDeclaration(decl) || ts.isGetAccessorDeclaration(decl))) return true;
      // Inherited (urn, id), or not a class member.
      if (!ts.isClassLike(decl.parent) || decl.parent.name?.getText() !== r.name) return true;
      const mods = ts.getCombinedModifierFlags(decl);
      return (mods & ts.ModifierFlags.Private) !== 0 || (mods & ts.ModifierFlags.Protected) !== 0;
    });
    // Outputs carry the inputs' types: the input's spec wins (its documentation is the user's).
    const properties = { ...outputs.properties, ...inputs.properties };
    resources[TOKEN(r.name)] = {
      description: docOf(classSym),
      properties: sortKeys(properties),
      // The outputs always there (SDKs type them as plain values, not pointers or optionals).
      ...(outputs.required.length > 0 ? { required: outputs.required.sort() } : {}),
      inputProperties: sortKeys(inputs.properties),
      ...(inputs.required.length > 0 ? { requiredInputs: inputs.required.sort() } : {}),
    };
  }

  // Values Pulumi keeps secret wherever it holds them, from the one definition (`inputSpecs.ts`): an
  // input secret whole, or a property of its type (`promote`'s `apiKey`), and outputs.
  const typeOfRef = (spec: Spec | undefined): Spec | undefined =>
    typeof spec?.$ref === "string" ? types[spec.$ref.replace("#/types/", "")] : undefined;
  for (const [name, inputs] of Object.entries(RESOURCE_INPUTS)) {
    const resource = resources[TOKEN(name)] as { inputProperties: Record<string, Spec> } | undefined;
    if (!resource) throw new Error(`schema: inputSpecs.ts names no resource ${name}`);
    for (const [arg, { secret }] of Object.entries(inputs)) {
      const input = resource.inputProperties[arg];
      if (!input) throw new Error(`schema: ${name} has no input ${arg}`);
      if (secret === true) input.secret = true;
      for (const p of secret === true ? [] : (secret ?? [])) {
        let spec: Spec | undefined = input;
        for (const step of p.split(".")) {
          spec = (typeOfRef(spec)?.properties as Record<string, Spec> | undefined)?.[step];
        }
        if (!spec) throw new Error(`schema: ${name}.${arg} has no ${p}`);
        spec.secret = true;
      }
    }
  }
  for (const [name, outputs] of Object.entries(SECRET_OUTPUTS)) {
    for (const k of outputs) {
      const spec = (resources[TOKEN(name)]?.properties as Record<string, Spec> | undefined)?.[k];
      if (!spec) throw new Error(`schema: ${name} has no output ${k}`);
      spec.secret = true;
    }
  }

  const functions: Record<string, Spec> = {};
  {
    const source = program.getSourceFile(path.join(ROOT, LOOKUPS_FILE));
    const moduleSym = source && checker.getSymbolAtLocation(source);
    const lookups = moduleSym && checker.getExportsOfModule(moduleSym).find((s) => s.getName() === "LOOKUPS");
    if (!lookups?.valueDeclaration) throw new Error(`schema: ${LOOKUPS_FILE} exports no LOOKUPS`);
    const type = checker.getTypeOfSymbolAtLocation(lookups, lookups.valueDeclaration);
    for (const fn of checker.getPropertiesOfType(type)) {
      const decl = fn.valueDeclaration;
      if (!decl) continue;
      const [signature] = checker.getTypeOfSymbolAtLocation(fn, decl).getCallSignatures();
      if (!signature) continue;
      const name = fn.getName();
      const Name = pascal(name.replace(/^get/, ""));
      const argsParam = signature.getParameters()[1];
      const inputs = argsParam?.valueDeclaration
        ? propertiesOf(
            checker.getNonNullableType(
              checker.getTypeOfSymbolAtLocation(argsParam, argsParam.valueDeclaration),
            ),
            `${Name}Args`,
            () => false,
          )
        : undefined;
      const [result] = checker.getTypeArguments(signature.getReturnType() as ts.TypeReference);
      if (!result) throw new Error(`schema: ${name} returns no promise`);
      const key = checker.isArrayType(result) ? RESULT_KEYS.list : RESULT_KEYS.map;
      functions[TOKEN(name)] = {
        description: docOf(fn),
        ...(inputs ? { inputs: { properties: sortKeys(inputs.properties) } } : {}),
        outputs: { properties: { [key]: specOf(result, Name) }, required: [key] },
      };
    }
  }

  const baseUrl = {
    type: "string",
    description:
      "The service's base URL, e.g. `https://api.example.com`. Falls back to the `VOICE_AGENT_BASE_URL` environment variable.",
  };
  const apiKey = {
    type: "string",
    secret: PROVIDER_INPUTS.apiKey.secret,
    description:
      "The workspace's API key (a secret). Falls back to the `VOICE_AGENT_API_KEY` environment variable.",
  };
  const pkg = require(path.join(ROOT, "package.json")) as { homepage: string; license: string };
  return {
    name: PKG,
    displayName: "Voice Agent",
    // No `version`: every commit builds another (scripts/version.js), so the committed schema and SDKs
    // carry none. The plugin stamps its version into the schema GetSchema serves, and a release
    // generates the SDKs from a schema stamped with the release's (`npm run plugin:sdk -- --version`,
    // scripts/release/dry-run.js). The Go SDK's version is its module's (the tag `sdk/vX.Y.Z`).
    // Where the engine downloads the plugin a program needs: this repository's GitHub releases
    // (github:// derives the repository `pulumi-<name>`: pulumi-voice-agent/pulumi-voice-agent).
    pluginDownloadURL: PLUGIN_DOWNLOAD_URL,
    description:
      "Voice agents as code: agents, published versions, widgets, knowledge bases and analysis groups.",
    keywords: ["pulumi", "voice-agent", "category/utility", "kind/native"],
    homepage: pkg.homepage,
    license: pkg.license,
    repository: "https://github.com/pulumi-voice-agent/pulumi-voice-agent",
    publisher: "pulumi-voice-agent",
    meta: { moduleFormat: "(.*)" },
    // The generated SDKs (`npm run plugin:sdk`, sdk/): the Go module is `sdk/go.mod`
    // (github.com/pulumi-voice-agent/pulumi-voice-agent/sdk), its package `.../sdk/go/voiceagent`.
    language: {
      // No respectSchemaVersion: the Go SDK's version is its module's (go list), so the code a
      // release tags is the code committed.
      go: { importBasePath: GO_IMPORT_BASE_PATH },
      nodejs: { packageName: "@pulumi-voice-agent/voice-agent" },
      python: { packageName: "pulumi_voice_agent", respectSchemaVersion: true },
    },
    config: { variables: { baseUrl, apiKey } },
    provider: {
      description:
        "The provider's settings: each falls back to stack config (`voice-agent:baseUrl`, `voice-agent:apiKey`), then to the environment.",
      properties: { baseUrl, apiKey },
      inputProperties: { baseUrl, apiKey },
    },
    resources,
    functions: sortKeys(functions),
    types: sortKeys(types),
  };
}

function sortKeys<T>(o: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
}

/** schema.json's text. */
export function schemaText(): string {
  return `${JSON.stringify(generateSchema(), null, 2)}\n`;
}

if (require.main === module) {
  writeFileSync(path.join(ROOT, "schema.json"), schemaText());
  console.log("wrote schema.json");
}
