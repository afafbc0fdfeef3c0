/**
 * The program side stays light: a program that imports the package loads the resource classes and
 * their inputs only, never the provider's modules (zod and the spec's schemas, undici and the HTTP
 * client). Each of those costs every `pulumi preview` and `up` its load time (docs/performance.md).
 * And registering a resource formats no stack trace per property (src/resources/serviceResource.ts).
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { describe, expect, test } from "vitest";
// The compiled package, as a program loads it (the source resolves the provider modules by path).
import { Agent, AgentVersion, AnalysisGroup, KnowledgeBase, Widget } from "../dist";
// The fields the AgentVersion takes from its Agent (a module that loads nothing).
import { DRAFT_FIELDS, OUTCOME_FIELDS, OUTCOME_KEY } from "../dist/resources/agentVersion/layout";
import { UNRECORDED } from "../dist/resources/promiseTraces";
import { registrationSites } from "../dist/resources/registrationTrace";

const ROOT = path.resolve(__dirname, "..");

test("importing the package loads no zod, no undici, no spec schemas and no HTTP client", () => {
  const out = execFileSync(
    process.execPath,
    [
      "-r",
      "ts-node/register/transpile-only",
      "-e",
      `require("@pulumi/pulumi");
const before = new Set(Object.keys(require.cache));
require("./src/index.ts");
console.log(JSON.stringify(Object.keys(require.cache).filter((k) => !before.has(k))));`,
    ],
    { cwd: ROOT, encoding: "utf8" },
  );
  const loaded = (JSON.parse(out) as string[]).map((f) => path.relative(ROOT, f));
  expect(loaded).toContain("src/resources/agent/index.ts");
  const heavy = loaded.filter((f) =>
    /node_modules\/(zod|undici)\/|^src\/spec\/|^src\/client\/(?!recovery\.ts$)|^src\/resources\/[^/]+\/(provider|projection|rules)\.ts$/.test(
      f,
    ),
  );
  expect(heavy).toEqual([]);
}, 60_000);

/** The frames of each trace `Error.prepareStackTrace` formatted while `fn` ran. */
function tracesFormattedBy(fn: () => void): NodeJS.CallSite[][] {
  const previous = Error.prepareStackTrace;
  const traces: NodeJS.CallSite[][] = [];
  Error.prepareStackTrace = (err, frames) => {
    traces.push(frames);
    return previous ? previous(err, frames) : `${err}\n${frames.map((f) => `    at ${f}`).join("\n")}`;
  };
  try {
    fn();
  } finally {
    Error.prepareStackTrace = previous;
  }
  return traces;
}

/** Calls of `Error.prepareStackTrace` that formatted at least one frame while `fn` ran. */
const tracesFormatted = (fn: () => void): number =>
  tracesFormattedBy(fn).filter((frames) => frames.length > 0).length;

/** Pulumi's mocks: every resource created with its inputs as its state. */
function mockResources(): Promise<void> {
  return pulumi.runtime.setMocks(
    { newResource: (args) => ({ id: `${args.name}-id`, state: args.inputs }), call: () => ({}) },
    "project",
    "stack",
    true,
    "organization",
  );
}

describe("registering a resource", () => {
  test("formats no stack trace per property, only each resource's source position; the limit is restored", async () => {
    await mockResources();
    const limit = Error.stackTraceLimit;
    // A plain resource with a handful of properties pays four formatted traces per property.
    const plain = tracesFormatted(() => {
      class Plain extends pulumi.CustomResource {}
      new Plain("test:index:Plain", "plain", { a: 1, b: 2, c: 3, d: 4, e: 5, f: 6 });
    });
    expect(plain).toBeGreaterThan(20);
    const ours = tracesFormatted(() => {
      for (let i = 0; i < 5; i++) {
        const agent = new Agent(`agent-${i}`, {
          name: `Agent ${i}`,
          systemPrompt: "## Agent Purpose\nHelp.",
        });
        new AgentVersion(`agent-${i}-live`, { agent, label: "v1" });
        new Widget(`agent-${i}-widget`, { agentId: agent.agentId });
        new KnowledgeBase(`kb-${i}`, { name: `KB ${i}` });
        new AnalysisGroup(`group-${i}`, { name: `Group ${i}` });
      }
    });
    // 25 resources: each formats its source position once (plus the first serialization's own).
    expect(ours).toBeLessThanOrEqual(2 * 25);
    expect(Error.stackTraceLimit).toBe(limit);
  });

  test("the stack Pulumi records names the program's line, and holds none of the package's or the loader's frames", async () => {
    await mockResources();
    // What Pulumi's capture (`Resource.callsites`) hands the formatter while each resource registers.
    const captures = tracesFormattedBy(() => {
      const agent = new Agent("traced", { name: "Traced", systemPrompt: "## Agent Purpose\nHelp." });
      new AgentVersion("traced-live", { agent });
    })
      .filter((frames) => frames[0]?.getFunctionName() === "callsites")
      .map((frames) => frames.map((f) => String(f.getFileName())));
    // Those of the two resources (a provider resource may register first: this file's first resource).
    const ofOurs = captures.filter((files) =>
      files[4]?.includes(`${path.sep}dist${path.sep}resources${path.sep}`),
    );
    expect(ofOurs).toHaveLength(2);
    for (const files of ofOurs) {
      // Pulumi skips five frames (its own four and the resource's class): the sixth is its source
      // position, the program's line here, not the package's class.
      expect(files[5]).toBe(__filename);
      expect(files.slice(5).some((f) => f.includes(`${path.sep}dist${path.sep}`))).toBe(false);
      // And the trace ends where the program's module runs: nothing of the loader or the runtime.
      expect(files.some((f) => f.startsWith("node:internal/modules/"))).toBe(false);
    }
  });

  test("registrationSites: Pulumi's four frames, the package's outermost, the program's down to the loader; any other trace whole", () => {
    const site = (file: string, fn: string | null = null) => ({
      getFileName: () => file,
      getFunctionName: () => fn,
    });
    const pulumiFile = "/p/node_modules/@pulumi/pulumi/resource.js";
    const capture = [
      site(pulumiFile, "callsites"),
      site(pulumiFile, "stackTrace"),
      site(pulumiFile, "Resource"),
      site(pulumiFile, "CustomResource"),
      site("/pkg/dist/resources/serviceResource.js", "ServiceResource"),
      site("/pkg/dist/resources/agent/index.js", "Agent"),
      site("/p/agents.ts", "makeAgent"),
      site("/p/index.ts"),
      site("node:internal/modules/cjs/loader", "Module._compile"),
      site("/p/node_modules/ts-node/src/index.ts"),
      site("/p/node_modules/@pulumi/pulumi/cmd/run/run.js"),
    ];
    const ours = (f: string) => f.startsWith("/pkg/dist/");
    const kept = registrationSites(capture, ours).map((s) => s.getFileName());
    expect(kept).toEqual([
      pulumiFile,
      pulumiFile,
      pulumiFile,
      pulumiFile,
      "/pkg/dist/resources/agent/index.js",
      "/p/agents.ts",
      "/p/index.ts",
    ]);
    // A class of the program's own (not the package's), or any other error's trace: unchanged.
    const foreign = [...capture.slice(0, 4), site("/p/index.ts", "Mine"), ...capture.slice(7)];
    expect(registrationSites(foreign, ours)).toEqual(foreign);
    const other = [site("/p/index.ts", "main"), ...capture.slice(8)];
    expect(registrationSites(other, ours)).toEqual(other);
  });

  test("an AgentVersion registers the inputs the program gives and its outputs, no undefined input", async () => {
    await mockResources();
    const agent = new Agent("registers", { name: "Registers", systemPrompt: "## Agent Purpose\nHelp." });
    const version = new AgentVersion("registers-live", { agent });
    const registered = Object.keys(version);
    // Each registered property is an Output with its promises, per resource, in every preview.
    for (const input of ["verify", "watch", "reinstate", "promote", "promoteConfig", "pinnedVersion"]) {
      expect(registered).not.toContain(input);
    }
    for (const output of [
      "agentId",
      "version",
      "versionId",
      "isLive",
      "liveVersion",
      "origin",
      "activation",
      "label",
      "notes",
      "rolledBack",
    ]) {
      expect(pulumi.Output.isInstance((version as unknown as Record<string, unknown>)[output]), output).toBe(
        true,
      );
    }
    // What the deploy made of the version is one registered output the six properties derive from.
    expect(registered).toContain(OUTCOME_KEY);
    for (const field of OUTCOME_FIELDS) expect(registered).not.toContain(field);
    // What it takes from its Agent is one input: one Output, one dependency in the state.
    expect(registered).toContain("__draft");
    for (const flat of DRAFT_FIELDS) expect(registered).not.toContain(flat);
    // The Agent's checked hash rides in `__draft`; a promotion's proof is registered only with `promote`.
    expect(registered).not.toContain("__contentHash");
    expect(registered).not.toContain("promoteProof");
    // An Agent attaching none of the program's knowledge bases or groups registers no `attachedNames`.
    expect(Object.keys(agent)).not.toContain("attachedNames");
    const pinned = new AgentVersion("registers-pinned", { agent, version: 0, label: "v0" });
    expect(Object.keys(pinned)).toContain("pinnedVersion");
    expect(Object.keys(pinned)).not.toContain("contentHash");
  });

  test("an AgentVersion's outcome properties: as the state records them; unset when a whole record lacks one; unknown in a preview whose record is partial", async () => {
    /** `output`'s value and whether it is known. */
    const seen = async (output: pulumi.Output<unknown>) => {
      const internal = output as unknown as { isKnown: Promise<boolean> };
      const known = await internal.isKnown;
      return { known, value: known ? await new Promise((r) => output.apply(r)) : undefined };
    };
    const rolledBack = { at: "2026-11-27T10:00:00Z", action: "rollback", to: 0, reason: "the watch" };
    const withOutcome = (outcome: Record<string, unknown>, preview: boolean) =>
      pulumi.runtime.setMocks(
        {
          newResource: (args) => ({
            id: `${args.name}-id`,
            state: args.type.endsWith(":AgentVersion")
              ? { ...args.inputs, version: 1, [OUTCOME_KEY]: outcome }
              : args.inputs,
          }),
          call: () => ({}),
        },
        "project",
        "stack",
        preview,
        "organization",
      );
    const make = (name: string) => {
      const agent = new Agent(name, { name, systemPrompt: "## Agent Purpose\nHelp." });
      return new AgentVersion(`${name}-live`, { agent });
    };

    // A deploy's record: each property as recorded, those it lacks unset (known).
    await withOutcome({ origin: "reused", activation: "rollback", blockedReasons: [], rolledBack }, false);
    const whole = make("whole");
    expect(await seen(whole.origin)).toEqual({ known: true, value: "reused" });
    expect(await seen(whole.activation)).toEqual({ known: true, value: "rollback" });
    expect(await seen(whole.rolledBack)).toEqual({ known: true, value: rolledBack });
    expect(await seen(whole.verification)).toEqual({ known: true, value: undefined });
    expect(await seen(whole.promotion)).toEqual({ known: true, value: undefined });
    // The same property twice is the same Output (derived once).
    expect(whole.origin).toBe(whole.origin);
    // An outcome's name given as an input (from JavaScript, or settings loaded from YAML) is refused by name.
    const agent = new Agent("given", { name: "given", systemPrompt: "## Agent Purpose\nHelp." });
    expect(() => new AgentVersion("given-live", { agent, origin: "pinned" } as never)).toThrow(
      "AgentVersion given-live: origin: not an input of AgentVersion (an output)",
    );

    // The preview of a change that knows part of it (a label change's check: the version's rollback
    // and blocked reasons): those known, the rest unknown, never reported missing.
    await withOutcome({ blockedReasons: ["model retired"], rolledBack }, true);
    const partial = make("partial");
    expect(await seen(partial.rolledBack)).toEqual({ known: true, value: rolledBack });
    expect(await seen(partial.blockedReasons)).toEqual({ known: true, value: ["model retired"] });
    expect((await seen(partial.origin)).known).toBe(false);
    expect((await seen(partial.verification)).known).toBe(false);
  });

  test("Pulumi's promise traces are not formatted once a resource registers (unless PULUMI_DEBUG_PROMISE_LEAKS); every other trace is", async () => {
    await mockResources();
    const { debuggablePromise } = require("@pulumi/pulumi/runtime/debuggable") as {
      debuggablePromise: <T>(p: Promise<T>, ctx: unknown) => Promise<T>;
    };
    /** The trace Pulumi records on a promise it makes (on the promise it is given). */
    const recorded = (value: number) => {
      const p = Promise.resolve(value);
      debuggablePromise(p, "a property");
      return (p as Promise<number> & { _debugStackTrace?: string })._debugStackTrace;
    };
    const previous = Error.prepareStackTrace;
    let formatted = 0;
    // The program's formatter (source-map-support's in a TypeScript program).
    Error.prepareStackTrace = (err, frames) => {
      formatted++;
      return `${err}${frames.map((f) => `\n    at ${f}`).join("")}`;
    };
    try {
      new Agent("traces", { name: "Traces", systemPrompt: "## Agent Purpose\nHelp." });
      formatted = 0;
      expect(recorded(1)).toBe(UNRECORDED);
      expect(formatted).toBe(0);
      // The program's own traces are its formatter's, whole.
      const own = new Error("the program's").stack ?? "";
      expect(formatted).toBe(1);
      expect(own).toContain("program.test");
      // Asked for, Pulumi's are recorded as before.
      process.env.PULUMI_DEBUG_PROMISE_LEAKS = "true";
      expect(recorded(2)).toContain("debuggablePromise");
      expect(formatted).toBe(2);
    } finally {
      delete process.env.PULUMI_DEBUG_PROMISE_LEAKS;
      Error.prepareStackTrace = previous;
    }
  });

  test("an error thrown while registering keeps a stack that names the caller", async () => {
    const limit = Error.stackTraceLimit;
    let thrown: unknown;
    try {
      new Agent("", { name: "nameless" });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(Error);
    expect((thrown as Error).message).toMatch(/name/i);
    expect((thrown as Error).stack).toContain("program.test.ts");
    expect(Error.stackTraceLimit).toBe(limit);
  });
});

describe("the provider text a resource stores (`__provider`)", () => {
  test("installed: one short require of the kind's module, which loads the provider earlier states' texts load", async () => {
    // The package as a user's project has it: node_modules/pulumi-voice-agent, its exports map included.
    const base = mkdtempSync(path.join(ROOT, ".tmp", "installed-text-"));
    try {
      writeFileSync(path.join(base, "package.json"), JSON.stringify({ name: "project", private: true }));
      const pkg = path.join(base, "node_modules", "pulumi-voice-agent");
      mkdirSync(pkg, { recursive: true });
      cpSync(path.join(ROOT, "package.json"), path.join(pkg, "package.json"));
      cpSync(path.join(ROOT, "dist"), path.join(pkg, "dist"), { recursive: true });
      // Its neighbours (@pulumi/pulumi and the rest) linked in; --preserve-symlinks below keeps them there.
      for (const entry of readdirSync(path.join(ROOT, "node_modules"))) {
        if (entry.startsWith(".")) continue;
        symlinkSync(path.join(ROOT, "node_modules", entry), path.join(base, "node_modules", entry));
      }
      // In the project's folder, as the dynamic-provider process loads a text (require-from-string):
      // ours, and the closure serializer's text, which states written by earlier releases hold.
      const out = execFileSync(
        process.execPath,
        [
          "--preserve-symlinks",
          "-e",
          `const pulumi = require("@pulumi/pulumi");
const load = (text) => require("require-from-string")(text).handler();
const { providerText } = require(${JSON.stringify(path.join(pkg, "dist/resources/providerText.js"))});
(async () => {
  const texts = [];
  for (const kind of ["agent", "agentVersion", "widget", "knowledgeBase", "analysisGroup"]) {
    const provider = require("pulumi-voice-agent/provider/" + kind);
    const earlier = (await pulumi.runtime.serializeFunction(() => provider, { allowSecrets: true })).text;
    const ours = providerText(kind);
    texts.push({ kind, ours, earlier, same: load(ours) === provider && load(earlier) === provider });
  }
  console.log(JSON.stringify(texts));
})();`,
        ],
        { cwd: base, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
      );
      const texts: { kind: string; ours: string; earlier: string; same: boolean }[] = JSON.parse(out);
      expect(texts).toHaveLength(5);
      for (const { kind, ours, earlier, same } of texts) {
        // The state holds it twice per resource and the engine rewrites the state after every step.
        expect(ours).toBe(`exports.handler = () => require("pulumi-voice-agent/provider/${kind}");\n`);
        expect(earlier).toContain(`const provider = require("pulumi-voice-agent/provider/${kind}");`);
        expect(same).toBe(true);
      }
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  }, 60_000);

  test("in a checkout: loads the provider of its kind from the project folder, as the provider process does", () => {
    const project = mkdtempSync(path.join(ROOT, ".tmp", "project-"));
    try {
      // What @pulumi/pulumi's dynamic-provider process does with the text, in the project's folder.
      const out = execFileSync(
        process.execPath,
        [
          "-e",
          `const { providerText } = require(${JSON.stringify(path.join(ROOT, "dist/resources/providerText.js"))});
const text = providerText("widget");
const provider = require("require-from-string")(text).handler();
console.log(JSON.stringify({ text, methods: Object.keys(provider) }));`,
        ],
        { cwd: project, encoding: "utf8" },
      );
      const { text, methods } = JSON.parse(out);
      expect(text).toContain('require(require("node:path").resolve("../../dist/resources/widget/kind.js"))');
      expect(methods).toEqual(["configure", "check", "diff", "create", "read", "update", "delete"]);
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });
});
