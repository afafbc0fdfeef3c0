/**
 * Runs the real Pulumi CLI on a throwaway project: a local file backend, an isolated PULUMI_HOME,
 * a passphrase secrets provider, no network. Projects live under `<repo>/.tmp/`, inside the package,
 * so their programs import `pulumi-voice-agent` (the compiled `dist/`) by the package's own name.
 * With `installed: true` a project lives instead in a folder where the package is installed from
 * its packed tarball, as in a user's project (`node_modules/pulumi-voice-agent`).
 */

import { execFile, execFileSync } from "node:child_process";
import { createCipheriv, createDecipheriv, createHash, pbkdf2Sync, randomBytes } from "node:crypto";
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import * as path from "node:path";
import * as ts from "typescript";

export const REPO_ROOT = path.resolve(__dirname, "../..");

/**
 * A new empty folder `<base>/<prefix>XXXXXX`, `base` by default `<repo>/.tmp/` (made first: a fresh
 * clone has none). Every test's temporary folder is taken here.
 */
export function tempDir(prefix: string, base = path.join(REPO_ROOT, ".tmp")): string {
  mkdirSync(base, { recursive: true });
  return mkdtempSync(path.join(base, prefix));
}

/**
 * The Node.js language host the tests run Pulumi programs with: this project's (`toolchain/`, the
 * default), or Pulumi's stock one as users have it (`PVA_PULUMI_HOST=stock`: the stock lane of
 * scripts/test.sh), with its own dynamic-provider launcher, no preload and no compile cache.
 */
export function pulumiHost(): "ours" | "stock" {
  return process.env.PVA_PULUMI_HOST === "stock" ? "stock" : "ours";
}

/**
 * The folder put first on PATH: the Pulumi toolchain setup.sh builds (the same computation as
 * scripts/env.sh), or under the stock host the one scripts/stock-host.sh makes (our CLI, Pulumi's
 * language host and launcher).
 */
export function toolchainBin(): string {
  const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));
  const version = pkg.devDependencies["@pulumi/pulumi"];
  const cache =
    process.env.PVA_CACHE_DIR ??
    path.join(process.env.XDG_CACHE_HOME ?? path.join(homedir(), ".cache"), "pulumi-voice-agent");
  if (pulumiHost() === "ours") return path.join(cache, `pulumi-v${version}`, "bin");
  const bin = path.join(cache, `stock-v${version}`, "bin");
  if (!existsSync(path.join(bin, "pulumi-language-nodejs"))) {
    throw new Error(`PVA_PULUMI_HOST=stock: ${bin} holds no language host: run scripts/stock-host.sh`);
  }
  return bin;
}

/**
 * The environment every Pulumi command of the tests gets on top of the caller's: the toolchain
 * first on PATH, no update check, no plugin download. TypeScript programs run transpile-only under
 * either host: each is type-checked once where it is made (`tsc` in `npm test` for examples/, in
 * the template's and the export's tests for theirs), and a type-check at every command would
 * almost double the stock lane (docs/performance.md). `PVA_STOCK_TYPECHECK=true` type-checks at
 * every run under the stock host, Pulumi's default for a user.
 */
export function pulumiEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${toolchainBin()}:${path.dirname(process.execPath)}:${process.env.PATH}`,
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    PULUMI_NODEJS_TRANSPILE_ONLY: "true",
    ...extra,
  };
  if (
    pulumiHost() === "stock" &&
    process.env.PVA_STOCK_TYPECHECK === "true" &&
    !extra.PULUMI_NODEJS_TRANSPILE_ONLY
  ) {
    delete env.PULUMI_NODEJS_TRANSPILE_ONLY;
  }
  return env;
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface ProjectOptions {
  /**
   * The program (TypeScript). In a project of this repository it is transpiled once, here, and run
   * as JavaScript (what ts-node's transpile-only mode does at every run, for 0.4 s of each command);
   * with `installed` or `base` it is written to index.ts and run through ts-node, as a user's is.
   */
  program: string;
  /** Plain stack configuration. */
  config?: Record<string, string>;
  /** Secret stack configuration. */
  secrets?: Record<string, string>;
  /** Extra environment for every command. */
  env?: Record<string, string>;
  name?: string;
  /** Run against the package installed from its tarball, as a user's project does. Default false. */
  installed?: boolean;
  /** The folder to make the project in (one where a package is installed); overrides `installed`. */
  base?: string;
}

/**
 * A folder where this package (as `npm pack` makes it from the current `dist/`) is installed with
 * `npm install`, next to TypeScript, as in a user's project: `<repo>/.tmp/installed-<tarball hash>`,
 * made once per build (about 5 s from npm's cache) and shared by every project that asks for it.
 */
export function installedPackageDir(): string {
  const base = path.join(REPO_ROOT, ".tmp");
  const packDir = tempDir("pack-", base);
  try {
    const tarball = packTarball(packDir);
    const bytes = readFileSync(path.join(packDir, tarball));
    const dir = path.join(base, `installed-${createHash("sha256").update(bytes).digest("hex").slice(0, 12)}`);
    if (existsSync(dir)) return dir;
    // Installs of earlier builds (about 120 MB each), unless one may still be in use.
    for (const name of readdirSync(base)) {
      const old = path.join(base, name);
      if (name.startsWith("installed-") && Date.now() - statSync(old).mtimeMs > 3_600_000) {
        rmSync(old, { recursive: true, force: true });
      }
    }
    const building = `${dir}.${process.pid}`;
    mkdirSync(building, { recursive: true });
    installTarball(building, path.join(packDir, tarball));
    try {
      renameSync(building, dir);
    } catch {
      rmSync(building, { recursive: true, force: true }); // another process finished first
    }
    return dir;
  } finally {
    rmSync(packDir, { recursive: true, force: true });
  }
}

/**
 * Packs this package (`npm pack`) from the `dist/` scripts/setup.sh built into `dest`; returns the
 * tarball's file name. `--ignore-scripts`: the `prepack` build (clean, then compile) would replace
 * `dist/` under the tests that run from it at the same time.
 */
export function packTarball(dest: string): string {
  return execFileSync("npm", ["pack", "--silent", "--ignore-scripts", "--pack-destination", dest], {
    cwd: REPO_ROOT,
    encoding: "utf8",
  })
    .trim()
    .split("\n")
    .pop() as string;
}

/**
 * The provider plugin's archive for this machine's platform, packed from the sources
 * (`scripts/plugin/pack.sh --host`: the single executable), for
 * `pulumi plugin install resource voice-agent <version> --file`: its path. Refuses a toolchain
 * without Pulumi's YAML host (`npm run setup` builds it).
 */
export function packedPlugin(): string {
  if (!existsSync(path.join(toolchainBin(), "pulumi-language-yaml"))) {
    throw new Error(`${toolchainBin()} holds no pulumi-language-yaml: run \`npm run setup\``);
  }
  const out = execFileSync("bash", ["scripts/plugin/pack.sh", "--host"], {
    cwd: REPO_ROOT,
    encoding: "utf8",
  });
  return path.join(REPO_ROOT, out.trim().split(" ")[0] as string);
}

/** The package's policy pack as a user's project has it: `node_modules/pulumi-voice-agent/policy`. */
export function installedPolicyPack(): string {
  return path.join(installedPackageDir(), "node_modules", "pulumi-voice-agent", "policy");
}

/**
 * The files a Markdown page shows in full: each fenced code block whose first line is a comment
 * naming it (`// emulator.setup.ts`), by that name, without the comment line. Tests write them into
 * a fresh project and run them, so the page stays true.
 */
export function filesOfPage(page: string): Map<string, string> {
  const text = readFileSync(path.join(REPO_ROOT, page), "utf8");
  const files = new Map<string, string>();
  for (const m of text.matchAll(/```[a-z]*\n\/\/ ([\w.-]+)\n([\s\S]*?)```/g)) {
    files.set(m[1] as string, m[2] as string);
  }
  return files;
}

/** The fenced code blocks of a Markdown page of the given language, in order. */
export function blocksOfPage(page: string, language: string): string[] {
  const text = readFileSync(path.join(REPO_ROOT, page), "utf8");
  return [...text.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, "g"))].map(
    (m) => m[1] as string,
  );
}

/** Output lines that are warnings nobody asked for: Node.js's own, or Pulumi's `warning:` diagnostics. */
export function unaskedWarnings(output: string): string[] {
  return output.split("\n").filter((line) => /\(node:\d+\)|ExperimentalWarning|\bwarning:/i.test(line));
}

/** Fails when a command's output holds a warning nobody asked for. */
export function expectQuiet(result: RunResult): void {
  const found = unaskedWarnings(`${result.stdout}\n${result.stderr}`);
  if (found.length > 0) throw new Error(`unexpected warnings in the output:\n${found.join("\n")}`);
}

/**
 * Makes `dir` a user's project with the package installed from `tarball` (copied in), next to
 * `@pulumi/pulumi` (the package's peer dependency) and the TypeScript and Node.js types, as
 * `npm install` does for a user. The SDK is the version this repository builds its CLI from unless
 * `pulumi` names another (`"latest"`: the newest in the registry).
 */
export function installTarball(
  dir: string,
  tarball: string,
  opts: { pulumi?: string; others?: string[] } = {},
): void {
  cpSync(tarball, path.join(dir, "pulumi-voice-agent.tgz"));
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "installed", private: true }));
  const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));
  const others = [
    `@pulumi/pulumi@${opts.pulumi ?? pkg.devDependencies["@pulumi/pulumi"]}`,
    `typescript@${pkg.devDependencies.typescript}`,
    `@types/node@${pkg.devDependencies["@types/node"]}`,
    ...(opts.others ?? []),
  ];
  execFileSync(
    "npm",
    ["install", "--no-audit", "--no-fund", "--prefer-offline", "./pulumi-voice-agent.tgz", ...others],
    {
      cwd: dir,
      stdio: "ignore",
    },
  );
}

/** A resource as the state holds it. */
export interface StateResource {
  urn: string;
  type: string;
  id?: string;
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
  /** Where the program made the resource (`project:///index.ts#line,column`), as Pulumi records it. */
  sourcePosition?: string;
  /** The program's stack when it made the resource, as Pulumi records it. */
  stackTrace?: { sourcePosition?: string }[];
}

export class PulumiProject {
  readonly dir: string;
  readonly env: NodeJS.ProcessEnv;
  /** The stack every command runs on. */
  readonly stack: string;
  readonly commands: string[] = [];

  /** How setProgram writes the program: TypeScript run by ts-node, or transpiled here to JavaScript. */
  private readonly language: "typescript" | "javascript";

  private constructor(
    dir: string,
    env: NodeJS.ProcessEnv,
    stack: string,
    language: "typescript" | "javascript" = "typescript",
  ) {
    this.dir = dir;
    this.env = env;
    this.stack = stack;
    this.language = language;
  }

  private static environment(
    dir: string,
    passphrase: string,
    extra: Record<string, string> = {},
  ): NodeJS.ProcessEnv {
    return pulumiEnvironment({
      PULUMI_HOME: path.join(dir, ".home"),
      // metadata=skip: no `.attrs` sidecar next to each checkpoint. fileblob writes the sidecar in
      // place (not atomically), and a kill in that instant leaves a state Pulumi cannot load
      // ("failed to load checkpoint: EOF"): docs/reliability.md.
      PULUMI_BACKEND_URL: `file://${path.join(dir, ".state")}?metadata=skip`,
      PULUMI_CONFIG_PASSPHRASE: passphrase,
      // Credentials come from stack config in these tests, never from the environment.
      VOICE_AGENT_API_KEY: "",
      VOICE_AGENT_BASE_URL: "",
      ...extra,
    });
  }

  private static newDir(installed = false, under?: string): string {
    const dir = tempDir("e2e-", under ?? (installed ? installedPackageDir() : undefined));
    mkdirSync(path.join(dir, ".state"));
    return dir;
  }

  /** A new project holding `opts.program`, on a stack `test`. */
  static async create(opts: ProjectOptions): Promise<PulumiProject> {
    const dir = PulumiProject.newDir(opts.installed, opts.base);
    const language = opts.installed || opts.base ? "typescript" : "javascript";
    writeFileSync(
      path.join(dir, "Pulumi.yaml"),
      language === "typescript"
        ? `name: ${opts.name ?? "e2e"}\nruntime: nodejs\nmain: index.ts\n`
        : `name: ${opts.name ?? "e2e"}\nruntime:\n  name: nodejs\n  options:\n    typescript: false\nmain: index.js\n`,
    );
    const project = new PulumiProject(
      dir,
      PulumiProject.environment(dir, "e2e-passphrase", opts.env),
      "test",
      language,
    );
    project.setProgram(opts.program);
    // The stack's configuration file written here, as `pulumi config set-all` would write it (one
    // CLI launch fewer per project); `pulumi stack init` then adopts it.
    const { state, key } = passphraseSalt("e2e-passphrase");
    const entries = [
      ...Object.entries(opts.config ?? {}).map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`),
      ...Object.entries(opts.secrets ?? {}).map(
        ([k, v]) => `  ${JSON.stringify(k)}:\n    secure: ${sealPassphraseValue(key, v)}`,
      ),
    ];
    writeFileSync(
      path.join(dir, `Pulumi.${project.stack}.yaml`),
      `encryptionsalt: ${state}\n${entries.length > 0 ? `config:\n${entries.join("\n")}\n` : ""}`,
    );
    await project.pulumi(["stack", "init", project.stack], { noStack: true });
    return project;
  }

  /**
   * A copy of an example project, its Pulumi.<stack>.yaml files included (their encrypted secrets
   * decrypt with the example's passphrase), on stack `stack`, with `config` and `secrets` set on top
   * (one launch). With `installed`, the copy lives where the packed package is installed, as in a
   * user's project.
   */
  static async fromDirectory(
    source: string,
    opts: {
      stack: string;
      passphrase: string;
      config?: Record<string, string>;
      secrets?: Record<string, string>;
      installed?: boolean;
      /** The folder to make the copy in (one where a package is installed); overrides `installed`. */
      base?: string;
      /** Extra environment for every command (e.g. a PATH with other language hosts first). */
      env?: Record<string, string>;
    },
  ): Promise<PulumiProject> {
    const dir = PulumiProject.newDir(opts.installed, opts.base);
    cpSync(source, dir, { recursive: true, filter: (f) => !f.includes("node_modules") });
    const project = new PulumiProject(
      dir,
      PulumiProject.environment(dir, opts.passphrase, opts.env),
      opts.stack,
    );
    await project.initStack(opts.config, opts.secrets);
    return project;
  }

  /** The same project on another stack (created from its Pulumi.<stack>.yaml when present). */
  async withStack(stack: string, config: Record<string, string> = {}): Promise<PulumiProject> {
    const project = new PulumiProject(this.dir, this.env, stack, this.language);
    await project.initStack(config);
    return project;
  }

  private async initStack(
    config: Record<string, string> = {},
    secrets: Record<string, string> = {},
  ): Promise<void> {
    await this.pulumi(["stack", "init", this.stack], { noStack: true });
    // One launch for the whole configuration.
    const pairs = [
      ...Object.entries(config).flatMap(([k, v]) => ["--plaintext", `${k}=${v}`]),
      ...Object.entries(secrets).flatMap(([k, v]) => ["--secret", `${k}=${v}`]),
    ];
    if (pairs.length > 0) await this.pulumi(["config", "set-all", ...pairs]);
  }

  /** Replaces the program (TypeScript; see {@link ProjectOptions.program}). */
  setProgram(program: string): void {
    if (this.language === "typescript") {
      writeFileSync(path.join(this.dir, "index.ts"), program);
      return;
    }
    const { outputText, diagnostics } = ts.transpileModule(program, {
      fileName: "index.ts",
      reportDiagnostics: true,
      compilerOptions: {
        module: ts.ModuleKind.CommonJS,
        target: ts.ScriptTarget.ES2023,
        esModuleInterop: true,
      },
    });
    if (diagnostics?.length) {
      throw new Error(
        `the test's program does not parse: ${diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n")).join("; ")}`,
      );
    }
    writeFileSync(path.join(this.dir, "index.js"), outputText);
  }

  /** Runs `pulumi <args>`; fails the test on a non-zero exit unless `allowFailure`. */
  pulumi(
    args: string[],
    opts: { allowFailure?: boolean; env?: Record<string, string>; noStack?: boolean } = {},
  ): Promise<RunResult> {
    this.commands.push(`pulumi ${args.join(" ")}`);
    const t0 = performance.now();
    const caller = process.env.PVA_COMMAND_LOG ? new Error().stack : undefined;
    return new Promise((resolve, reject) => {
      execFile(
        "pulumi",
        [...args, "--non-interactive", ...(opts.noStack ? [] : ["--stack", this.stack])],
        { cwd: this.dir, env: { ...this.env, ...opts.env }, maxBuffer: 64 * 1024 * 1024 },
        (err, stdout, stderr) => {
          const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
          const result = { code, stdout, stderr };
          if (process.env.PVA_COMMAND_LOG) {
            logCommand(process.env.PVA_COMMAND_LOG, caller, args, performance.now() - t0);
          }
          if (code !== 0 && !opts.allowFailure) {
            reject(new Error(`pulumi ${args.join(" ")} exited ${code}\n${stdout}\n${stderr}`));
          } else {
            resolve(result);
          }
        },
      );
    });
  }

  /** `pulumi up --yes --skip-preview`, plus `args` (e.g. `--policy-pack <dir>`). */
  up(opts: { allowFailure?: boolean; args?: string[] } = {}): Promise<RunResult> {
    return this.pulumi(["up", "--yes", "--skip-preview", ...(opts.args ?? [])], opts);
  }

  preview(opts: { expectNoChanges?: boolean; allowFailure?: boolean } = {}): Promise<RunResult> {
    return this.pulumi(["preview", "--diff", ...(opts.expectNoChanges ? ["--expect-no-changes"] : [])], opts);
  }

  /**
   * `pulumi refresh --yes --skip-preview`: the refresh itself, without the preview pass `--yes` runs
   * first (the same reads; half the time). `--expect-no-changes` fails it when the reads changed
   * anything, as it fails the preview pass.
   */
  refresh(opts: { expectNoChanges?: boolean; allowFailure?: boolean } = {}): Promise<RunResult> {
    return this.pulumi(
      ["refresh", "--yes", "--skip-preview", ...(opts.expectNoChanges ? ["--expect-no-changes"] : [])],
      opts,
    );
  }

  destroy(opts: { allowFailure?: boolean } = {}): Promise<RunResult> {
    return this.pulumi(["destroy", "--yes"], opts);
  }

  /**
   * `up`, then the no-change preview and refresh every configuration must pass. With `quiet`, none
   * of the three may print a warning or a diagnostic the user did not ask for (a Node.js warning,
   * a Pulumi `warning:`). `upArgs` go to the `up` (e.g. `--policy-pack <dir>`).
   */
  async upAndSettle(opts: { quiet?: boolean; upArgs?: string[] } = {}): Promise<RunResult> {
    const result = await this.up({ args: opts.upArgs });
    const preview = await this.preview({ expectNoChanges: true });
    const refresh = await this.refresh({ expectNoChanges: true });
    if (opts.quiet) for (const r of [result, preview, refresh]) expectQuiet(r);
    return result;
  }

  /**
   * The stack's outputs, secrets shown, read from the checkpoint (no CLI launch): a secret is
   * decrypted here with the stack's passphrase, as `pulumi stack output --json --show-secrets` does
   * (which runs for any other secrets provider).
   */
  async outputs(): Promise<Record<string, any>> {
    const deployment = this.deployment();
    const plain = stackOutputs(deployment);
    // A secret value is stored as an object carrying Pulumi's secret signature.
    if (!JSON.stringify(plain).includes(SECRET_SIG)) return plain;
    const salt = deployment.secrets_providers?.state?.salt;
    const passphrase = this.env.PULUMI_CONFIG_PASSPHRASE;
    if (deployment.secrets_providers?.type !== "passphrase" || !salt || passphrase === undefined) {
      const { stdout } = await this.pulumi(["stack", "output", "--json", "--show-secrets"]);
      return JSON.parse(stdout);
    }
    const key = passphraseKey(passphrase, salt);
    const reveal = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(reveal);
      if (value === null || typeof value !== "object") return value;
      const record = value as Record<string, unknown>;
      if (record[SECRET_SIG] === SECRET_VALUE && typeof record.ciphertext === "string") {
        return reveal(JSON.parse(openPassphraseValue(key, record.ciphertext)));
      }
      return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, reveal(v)]));
    };
    return reveal(plain) as Record<string, any>;
  }

  /**
   * The stack's deployment (resources, pending operations) read from the file backend's checkpoint:
   * what `pulumi stack export` prints under `deployment`, without launching the CLI.
   */
  deployment(): {
    resources?: StateResource[];
    pending_operations?: { type: string; resource: StateResource }[];
    secrets_providers?: { type?: string; state?: { salt?: string } };
  } {
    const project = /^name:\s*(\S+)/m.exec(readFileSync(path.join(this.dir, "Pulumi.yaml"), "utf8"))?.[1];
    const file = path.join(this.dir, ".state", ".pulumi", "stacks", project ?? "", `${this.stack}.json`);
    return JSON.parse(readFileSync(file, "utf8")).checkpoint.latest ?? {};
  }

  /** The stack's outputs from the checkpoint, without launching the CLI (a secret output stays encrypted). */
  stateOutputs(): Record<string, any> {
    return stackOutputs(this.deployment());
  }

  async exportState(showSecrets = false): Promise<string> {
    const { stdout } = await this.pulumi(["stack", "export", ...(showSecrets ? ["--show-secrets"] : [])]);
    return stdout;
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The outputs of a deployment's stack resource, as the checkpoint holds them. */
function stackOutputs(deployment: { resources?: StateResource[] }): Record<string, any> {
  return deployment.resources?.find((r) => r.type === "pulumi:pulumi:Stack")?.outputs ?? {};
}

/**
 * With PVA_COMMAND_LOG=<file>, every command a project runs appends a JSON line to that file: the
 * test file that ran it, the command's first words and its wall time (how docs/performance.md
 * counts the suite's CLI launches per file).
 */
function logCommand(file: string, stack: string | undefined, args: string[], ms: number): void {
  const frame = stack?.split("\n").find((line) => /\.test\.ts:|\/bench\//.test(line));
  const from = /((?:\/[^:()\s]+)+):\d+:\d+/.exec(frame ?? "")?.[1];
  const entry = {
    file: from ? path.relative(REPO_ROOT, from) : "?",
    args: args.slice(0, 3),
    ms: Math.round(ms),
  };
  appendFileSync(file, `${JSON.stringify(entry)}\n`);
}

/** Pulumi's marker of a secret value in a checkpoint: `{ [SECRET_SIG]: SECRET_VALUE, ciphertext }`. */
const SECRET_SIG = "4dabf18193072939515e22adb298388d";
const SECRET_VALUE = "1b47061264138c4ac30d75fd1eb44270";

/*
 * Pulumi's passphrase secrets provider (pkg/secrets/passphrase and sdk/go/common/resource/config):
 * a key from PBKDF2-SHA256 of the passphrase (1,000,000 rounds, an 8-byte salt), values sealed with
 * AES-256-GCM as `v1:<nonce>:<ciphertext and tag>` (base64), and the stack's `encryptionsalt`
 * `v1:<salt>:<"pulumi" sealed>`. The harness writes new stacks' configuration and reads secret
 * outputs with it, deriving each key once per test process instead of once per CLI launch.
 */
const passphraseKeys = new Map<string, Buffer>();

/** The key of `passphrase` with `salt` (base64), derived once per test process. */
function derivedKey(passphrase: string, salt: string): Buffer {
  const id = `${passphrase}\u0000${salt}`;
  let key = passphraseKeys.get(id);
  if (!key) {
    key = pbkdf2Sync(passphrase, Buffer.from(salt, "base64"), 1_000_000, 32, "sha256");
    passphraseKeys.set(id, key);
  }
  return key;
}

/** The key of `passphrase` for a stack's salt state `v1:<salt>:<"pulumi" sealed>`, checked against it. */
function passphraseKey(passphrase: string, state: string): Buffer {
  const key = derivedKey(passphrase, state.split(":")[1] ?? "");
  if (openPassphraseValue(key, state.slice(state.indexOf(":", 3) + 1)) !== "pulumi") {
    throw new Error("the passphrase does not open this stack's secrets");
  }
  return key;
}

const newSalts = new Map<string, { state: string; key: Buffer }>();

/** An `encryptionsalt` for new stacks with `passphrase` (one per process and passphrase), and its key. */
function passphraseSalt(passphrase: string): { state: string; key: Buffer } {
  let made = newSalts.get(passphrase);
  if (!made) {
    const salt = randomBytes(8).toString("base64");
    const key = derivedKey(passphrase, salt);
    made = { state: `v1:${salt}:${sealPassphraseValue(key, "pulumi")}`, key };
    newSalts.set(passphrase, made);
  }
  return made;
}

function sealPassphraseValue(key: Buffer, plaintext: string): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  const sealed = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]);
  return `v1:${nonce.toString("base64")}:${sealed.toString("base64")}`;
}

function openPassphraseValue(key: Buffer, value: string): string {
  const [version, nonce, sealed] = value.split(":");
  if (version !== "v1" || !nonce || !sealed) throw new Error(`not a passphrase-sealed value: ${value}`);
  const bytes = Buffer.from(sealed, "base64");
  const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(nonce, "base64"));
  decipher.setAuthTag(bytes.subarray(bytes.length - 16));
  return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString(
    "utf8",
  );
}
