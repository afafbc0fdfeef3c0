#!/usr/bin/env node
/**
 * `npm run plugin:pack`: the provider plugin as Pulumi installs it, one archive per platform,
 *
 *   dist/plugin/pulumi-resource-voice-agent-v<version>-<os>-<arch>.tar.gz   (linux, darwin, windows × amd64, arm64)
 *   dist/plugin/SHA256SUMS                                                   (sha256sum's format)
 *
 * each holding at its root the executable `pulumi-resource-voice-agent` (`.exe` on Windows) and
 * LICENSE. The executable is a Node.js single-executable application (SEA): the plugin's code
 * bundled into one file by esbuild (schema.json and the version inside: it reads no file beside
 * itself), injected with postject into the platform's Node.js build (pinned, with each tarball's
 * sha512, in scripts/plugin/node-sea.json; fetched from the npm registry once into
 * $PVA_CACHE_DIR). The darwin executables get an ad-hoc signature (scripts/plugin/machoSign.js).
 * The version is scripts/version.js's.
 *
 * `--host`: only this machine's platform, no SHA256SUMS (tests and development). `--out DIR`: the
 * archives there instead of dist/plugin. `PVA_SEA_CODE_CACHE=off`: no V8 code cache in the
 * host's executable (bench/plugin-startup.ts compares).
 *
 * An archive is made once per key (the bundle, the Node build, these scripts and settings) into
 * $PVA_CACHE_DIR/plugin-archives (the two newest of each platform kept) and copied from there: a
 * rebuilt dist/ or a second pack of the same code costs a copy.
 *
 * Prints one line per archive: `<path> (<size> KB)`, the host's first.
 */
"use strict";
const { execFileSync } = require("node:child_process");
const crypto = require("node:crypto");
const fs = require("node:fs");
const path = require("node:path");
const { version } = require("../version.js");
const { adhocSign } = require("./machoSign.js");

const ROOT = path.resolve(__dirname, "../..");
/** `--out DIR`: where the archives go (dist/plugin by default). */
const outAt = process.argv.indexOf("--out");
const OUT = outAt > 0 ? path.resolve(process.argv[outAt + 1]) : path.join(ROOT, "dist", "plugin");
/** V8's code cache in the blob of the generator's (the host's) platform; `PVA_SEA_CODE_CACHE=off` leaves it out. */
const CODE_CACHE = process.env.PVA_SEA_CODE_CACHE !== "off";
const MANIFEST = JSON.parse(fs.readFileSync(path.join(__dirname, "node-sea.json"), "utf8"));
const NAME = "pulumi-resource-voice-agent";
/** Node's SEA fuse: the sentinel postject flips so the binary runs its blob. */
const SEA_FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";
/** Bumped when what goes into an archive changes in a way its key does not see. */
const FORMAT = 3;

const CACHE =
  process.env.PVA_CACHE_DIR ||
  path.join(
    process.env.XDG_CACHE_HOME || path.join(require("node:os").homedir(), ".cache"),
    "pulumi-voice-agent",
  );
const NODE_CACHE = path.join(CACHE, `sea-node-${MANIFEST.node}`);
/** The archives made, by platform and key. */
const ARCHIVES = path.join(CACHE, "plugin-archives");

/** This machine's platform in Pulumi's words (`linux-amd64`). */
function hostPlatform() {
  const os = { linux: "linux", darwin: "darwin", win32: "windows" }[process.platform];
  const arch = { x64: "amd64", arm64: "arm64" }[process.arch];
  if (!os || !arch) throw new Error(`plugin:pack: no plugin build for ${process.platform}-${process.arch}`);
  return `${os}-${arch}`;
}

function sha256(data) {
  return crypto.createHash("sha256").update(data).digest("hex");
}

/**
 * The platform's Node.js binary, extracted once into the cache: the npm package's tarball
 * (`npm pack`), checked against the sha512 the manifest pins before anything is extracted.
 */
function nodeBinary(platform) {
  const entry = MANIFEST.platforms[platform];
  const dir = path.join(NODE_CACHE, platform);
  const binary = path.join(dir, path.basename(entry.binary));
  const stamp = path.join(dir, ".integrity");
  if (fs.existsSync(binary) && fs.existsSync(stamp) && fs.readFileSync(stamp, "utf8") === entry.integrity) {
    return binary;
  }
  const tgzDir = path.join(NODE_CACHE, "tgz");
  fs.mkdirSync(tgzDir, { recursive: true });
  const tgz = path.join(tgzDir, `${entry.package}-${MANIFEST.node}.tgz`);
  const integrityOf = (file) =>
    `sha512-${crypto.createHash("sha512").update(fs.readFileSync(file)).digest("base64")}`;
  if (!fs.existsSync(tgz) || integrityOf(tgz) !== entry.integrity) {
    fs.rmSync(tgz, { force: true });
    execFileSync(
      "npm",
      ["pack", "--silent", `${entry.package}@${MANIFEST.node}`, "--pack-destination", tgzDir],
      {
        cwd: tgzDir,
        stdio: ["ignore", "ignore", "inherit"],
      },
    );
  }
  const got = integrityOf(tgz);
  if (got !== entry.integrity) {
    fs.rmSync(tgz, { force: true });
    throw new Error(
      `plugin:pack: ${entry.package}@${MANIFEST.node} is ${got}, scripts/plugin/node-sea.json pins ${entry.integrity}`,
    );
  }
  const tmp = fs.mkdtempSync(path.join(NODE_CACHE, `.x-${platform}-`));
  try {
    execFileSync("tar", ["-xzf", tgz, "-C", tmp, entry.binary]);
    fs.mkdirSync(dir, { recursive: true });
    fs.renameSync(path.join(tmp, entry.binary), binary);
    fs.chmodSync(binary, 0o755);
    fs.writeFileSync(stamp, entry.integrity);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return binary;
}

/**
 * The plugin's code in one CommonJS file (esbuild, from src/plugin/main.ts), the schema and the
 * version inside. The server loads grpc-js and protobuf's well-known types through the SDK's own
 * `require` (`fromSdk`): bundled, they are the same modules, so those calls become plain `require`s
 * esbuild can follow.
 */
async function bundle(ver) {
  const esbuild = require("esbuild");
  const sdkRequire = {
    name: "sdk-require",
    setup(build) {
      build.onLoad({ filter: /src[\\/]plugin[\\/]server\.ts$/ }, (args) => {
        const text = fs.readFileSync(args.path, "utf8");
        const decl = /const fromSdk = createRequire\([^\n]*\);\n/;
        if (!decl.test(text))
          throw new Error(`plugin:pack: ${args.path} no longer declares fromSdk as expected`);
        return { contents: text.replace(decl, "").replace(/\bfromSdk\(/g, "require("), loader: "ts" };
      });
    },
  };
  const result = await esbuild.build({
    entryPoints: [path.join(ROOT, "src/plugin/main.ts")],
    bundle: true,
    platform: "node",
    target: `node${MANIFEST.node.split(".")[0]}`,
    format: "cjs",
    write: false,
    outfile: "plugin.js",
    minifySyntax: true,
    minifyWhitespace: true,
    keepNames: true,
    legalComments: "none",
    logLevel: "error",
    define: {
      __PVA_BUILD_VERSION__: JSON.stringify(ver),
      __PVA_BUILD_SCHEMA__: JSON.stringify(fs.readFileSync(path.join(ROOT, "schema.json"), "utf8")),
    },
    plugins: [sdkRequire],
  });
  return Buffer.from(result.outputFiles[0].contents);
}

/**
 * The SEA blob of `code`, made by the pinned Node itself (the host's build of that version: the
 * blob's format is the version's, the same for every platform). `codeCache`: V8's compiled code
 * inside, which only the generator's own platform can use.
 */
function seaBlob(code, work, codeCache) {
  const main = path.join(work, "plugin.js");
  fs.writeFileSync(main, code);
  const output = path.join(work, codeCache ? "sea-cached.blob" : "sea.blob");
  const config = path.join(work, codeCache ? "sea-cached.json" : "sea.json");
  fs.writeFileSync(
    config,
    JSON.stringify({
      main,
      output,
      disableExperimentalSEAWarning: true,
      useSnapshot: false,
      useCodeCache: codeCache,
    }),
  );
  execFileSync(nodeBinary(hostPlatform()), ["--experimental-sea-config", config], {
    cwd: work,
    stdio: "ignore",
  });
  return fs.readFileSync(output);
}

/** Writes the executable for `platform` into `dir`: the Node build with `blob` injected (and signed, on darwin). */
async function executable(platform, blob, dir) {
  const exe = path.join(dir, platform.startsWith("windows") ? `${NAME}.exe` : NAME);
  fs.copyFileSync(nodeBinary(platform), exe);
  fs.chmodSync(exe, 0o755);
  const darwin = platform.startsWith("darwin");
  const blobFile = path.join(dir, "..", `${platform}.blob`);
  fs.writeFileSync(blobFile, blob);
  // postject's CLI in a child: LIEF's warnings on the binaries' notes are only shown when it fails.
  const args = [
    require.resolve("postject/dist/cli.js"),
    exe,
    "NODE_SEA_BLOB",
    blobFile,
    "--sentinel-fuse",
    SEA_FUSE,
    "--overwrite",
  ];
  if (darwin) args.push("--macho-segment-name", "NODE_SEA");
  try {
    execFileSync(process.execPath, args, { stdio: "pipe" });
  } catch (err) {
    throw new Error(`plugin:pack: postject on ${platform}: ${err.stderr}`, { cause: err });
  } finally {
    fs.rmSync(blobFile, { force: true });
  }
  if (darwin) fs.writeFileSync(exe, adhocSign(fs.readFileSync(exe), NAME));
  return exe;
}

/**
 * `from` copied to `to` through a temporary file beside it and a rename: a test packing at the same
 * time never reads half an archive.
 */
function place(from, to) {
  fs.mkdirSync(path.dirname(to), { recursive: true });
  const tmp = `${to}.tmp.${process.pid}`;
  fs.copyFileSync(from, tmp);
  fs.renameSync(tmp, to);
}

/** The cache keeps the two newest archives of a platform. */
function prune(platform, keep) {
  const mine = fs
    .readdirSync(ARCHIVES)
    .filter((f) => f.startsWith(`${platform}-`) && f.endsWith(".tar.gz"))
    .map((f) => path.join(ARCHIVES, f))
    .filter((f) => f !== keep)
    .sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
  for (const f of mine.slice(1)) fs.rmSync(f, { force: true });
}

async function main() {
  const host = process.argv.includes("--host");
  const ver = version(ROOT);
  const platforms = Object.keys(MANIFEST.platforms);
  const hostPlat = hostPlatform();
  const wanted = host ? [hostPlat] : [hostPlat, ...platforms.filter((p) => p !== hostPlat)];
  fs.mkdirSync(OUT, { recursive: true });
  const code = await bundle(ver);
  const work = fs.mkdtempSync(path.join(require("node:os").tmpdir(), "pva-pack-"));
  const lines = [];
  try {
    /** The blobs, made when first needed: with V8's code cache for the host's own platform. */
    const blobs = new Map();
    /** The archives of this pack, by their copy in the cache. */
    const written = new Map();
    const blobFor = (platform) => {
      const cached = CODE_CACHE && platform === hostPlat;
      if (!blobs.has(cached)) blobs.set(cached, seaBlob(code, work, cached));
      return blobs.get(cached);
    };
    for (const platform of wanted) {
      const archive = path.join(OUT, `${NAME}-v${ver}-${platform}.tar.gz`);
      const entry = MANIFEST.platforms[platform];
      const scripts = [__filename, require.resolve("./machoSign.js"), path.join(ROOT, "LICENSE")].map((f) =>
        fs.readFileSync(f, "utf8"),
      );
      const key = sha256(
        [FORMAT, platform, hostPlat, CODE_CACHE, entry.integrity, sha256(code), ...scripts].join("\0"),
      );
      // Made once per key into the cache ($PVA_CACHE_DIR/plugin-archives), then copied to dist/plugin:
      // a rebuilt dist/ costs a copy, not a pack.
      const made = path.join(ARCHIVES, `${platform}-${key.slice(0, 32)}.tar.gz`);
      if (!fs.existsSync(made)) {
        const stage = fs.mkdtempSync(path.join(work, `${platform}-`));
        await executable(platform, blobFor(platform), stage);
        fs.copyFileSync(path.join(ROOT, "LICENSE"), path.join(stage, "LICENSE"));
        const packed = path.join(work, `${platform}.tar.gz`);
        execFileSync("tar", [
          "-czf",
          packed,
          "--owner=0",
          "--group=0",
          "--numeric-owner",
          "-C",
          stage,
          ...fs.readdirSync(stage).sort(),
        ]);
        fs.rmSync(stage, { recursive: true, force: true });
        fs.mkdirSync(ARCHIVES, { recursive: true });
        place(packed, made);
        prune(platform, made);
      }
      const stampFile = path.join(OUT, `.${path.basename(archive)}.key`);
      const fresh =
        fs.existsSync(archive) && fs.existsSync(stampFile) && fs.readFileSync(stampFile, "utf8") === key;
      if (!fresh) {
        place(made, archive);
        fs.writeFileSync(stampFile, key);
      }
      written.set(archive, made);
      lines.push(`${path.relative(ROOT, archive)} (${Math.round(fs.statSync(made).size / 1024)} KB)`);
    }
    // dist/ rebuilt meanwhile (scripts/setup.sh, `npm run clean`) takes the archives with it: they
    // are put back.
    for (const [archive, made] of written) if (!fs.existsSync(archive)) place(made, archive);
    if (!host) {
      const archives = wanted.map((p) => `${NAME}-v${ver}-${p}.tar.gz`).sort();
      const sums = archives.map((a) => `${sha256(fs.readFileSync(path.join(OUT, a)))}  ${a}\n`).join("");
      fs.writeFileSync(path.join(OUT, "SHA256SUMS.tmp"), sums);
      fs.renameSync(path.join(OUT, "SHA256SUMS.tmp"), path.join(OUT, "SHA256SUMS"));
      // Archives of other versions go: one release's worth of archives in dist/plugin.
      for (const file of fs.readdirSync(OUT)) {
        const name = file.replace(/^\.(.*)\.key$/, "$1");
        if (name.startsWith(`${NAME}-v`) && name.endsWith(".tar.gz") && !archives.includes(name)) {
          fs.rmSync(path.join(OUT, file), { force: true });
        }
      }
      lines.push(`${path.relative(ROOT, path.join(OUT, "SHA256SUMS"))}`);
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  process.stdout.write(`${lines.join("\n")}\n`);
}

main().catch((err) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
