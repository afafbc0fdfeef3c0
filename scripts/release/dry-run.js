#!/usr/bin/env node
/**
 * `npm run release:dry-run [-- --host] [-- --reuse-dist]`: every step of a release but the upload,
 * into dist/release/, for the build's one version (scripts/version.js; PVA_VERSION overrides):
 *
 *   pulumi-resource-voice-agent-v<ver>-<os>-<arch>.tar.gz   the plugin, per platform (`npm run plugin:pack`)
 *   pulumi-voice-agent-<ver>.tgz                          the npm package (`npm pack` of a staged copy
 *                                                         whose package.json says <ver>)
 *   pulumi-voice-agent-schema-v<ver>.json                 the schema, stamped with <ver> (as GetSchema serves it)
 *   pulumi_voice_agent-<pep440 ver>.tar.gz (and a wheel   the Python SDK, generated from that schema:
 *     where `python3 -m build` is installed)              an sdist (setuptools), offline
 *   go-sdk-v<ver>/                                        the Go module as the tag `sdk/v<ver>` holds it
 *                                                         (sdk/go.mod, go.sum, go/): its version is the tag's
 *   SHA256SUMS                                            sha256sum's format, every file above
 *   release.json                                          version, tags, module, download URL, files and sha256s
 *
 * The Go SDK generated from the stamped schema must be the committed sdk/go byte for byte (the tag
 * holds the committed code): the dry run fails otherwise (`npm run plugin:sdk`, commit).
 * `--host`: the plugin for this machine's platform only (tests). `--reuse-dist`: skip the build when
 * dist/version.json already records this version (tests; a release builds).
 * .github/workflows/release.yml runs it on a `v*` tag, then uploads what it wrote.
 */
"use strict";
const { execFileSync } = require("node:child_process");
const crypto = require("node:crypto");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { version: buildVersion, writeVersion } = require("../version.js");

const ROOT = path.resolve(__dirname, "../..");
const OUT = path.join(ROOT, "dist", "release");
const PLUGIN = "pulumi-resource-voice-agent";

function run(cmd, args, opts = {}) {
  return execFileSync(cmd, args, {
    cwd: ROOT,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 64 * 1024 * 1024,
    ...opts,
  });
}
const sha256 = (file) => crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");
const log = (line) => process.stderr.write(`[release] ${line}\n`);

function main(argv) {
  const host = argv.includes("--host");
  const reuseDist = argv.includes("--reuse-dist");
  const version = buildVersion();
  // Every step below (the build, the pack) records this one version, even if a file changes meanwhile.
  process.env.PVA_VERSION = version;
  log(
    `version ${version}${/-/.test(version) ? " (a pre-release: only a tagged commit vX.Y.Z builds a release)" : ""}`,
  );
  fs.rmSync(OUT, { recursive: true, force: true });
  fs.mkdirSync(OUT, { recursive: true });

  // 1. The build (dist/, its version recorded in dist/version.json).
  const recorded = path.join(ROOT, "dist", "version.json");
  const built = () => fs.existsSync(recorded) && JSON.parse(fs.readFileSync(recorded, "utf8")).version;
  if (!(reuseDist && built() === version)) {
    log("npm run build");
    run("npm", ["run", "--silent", "build"], { stdio: ["ignore", "inherit", "inherit"] });
  }
  if (built() !== version) throw new Error(`dist/version.json says ${built()}, the release is ${version}`);

  // 2. The plugin's archives.
  log(`npm run plugin:pack${host ? " -- --host" : ""}`);
  const packed = run("npm", ["run", "--silent", "plugin:pack", ...(host ? ["--", "--host"] : [])])
    .split("\n")
    .map((l) => l.trim().split(" ")[0])
    .filter((p) => p?.endsWith(".tar.gz"));
  const archive = new RegExp(
    `^${PLUGIN}-v${escapeRegExp(version)}-(linux|darwin|windows)-(amd64|arm64)\\.tar\\.gz$`,
  );
  if (packed.length === 0) throw new Error("npm run plugin:pack printed no archive");
  for (const p of packed) {
    const name = path.basename(p);
    if (!archive.test(name))
      throw new Error(`plugin:pack wrote ${name}, not ${PLUGIN}-v${version}-<os>-<arch>.tar.gz`);
    fs.copyFileSync(path.resolve(ROOT, p), path.join(OUT, name));
  }

  // 3. The npm package: a staged copy of what `npm pack` takes, its package.json at this version.
  const stage = fs.mkdtempSync(path.join(os.tmpdir(), "pva-release-"));
  try {
    const [listing] = JSON.parse(run("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"]));
    for (const { path: file } of listing.files) {
      if (file.startsWith("dist/release/")) continue;
      fs.mkdirSync(path.join(stage, path.dirname(file)), { recursive: true });
      fs.copyFileSync(path.join(ROOT, file), path.join(stage, file));
    }
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));
    pkg.version = version;
    fs.writeFileSync(path.join(stage, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
    writeVersion(path.join(stage, "dist"), version);
    const tgz = run("npm", ["pack", "--silent", "--ignore-scripts", "--pack-destination", OUT], {
      cwd: stage,
    })
      .trim()
      .split("\n")
      .pop();
    if (tgz !== `pulumi-voice-agent-${version}.tgz`) throw new Error(`npm pack wrote ${tgz}`);
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }

  // 4. The schema, stamped.
  const schema = JSON.parse(fs.readFileSync(path.join(ROOT, "schema.json"), "utf8"));
  const { name, displayName, version: _unstamped, ...rest } = schema;
  const stamped = { name, displayName, version, ...rest };
  fs.writeFileSync(
    path.join(OUT, `pulumi-voice-agent-schema-v${version}.json`),
    `${JSON.stringify(stamped, null, 2)}\n`,
  );

  // 5. The SDKs, generated from the stamped schema.
  const gen = fs.mkdtempSync(path.join(os.tmpdir(), "pva-release-sdk-"));
  let python;
  try {
    log("npm run plugin:sdk -- --version");
    run("bash", ["scripts/plugin/sdk.sh", "--version", version, gen]);
    // Go: the module folder; the code the tag holds is the committed code.
    const goMod = fs.readFileSync(path.join(ROOT, "sdk", "go.mod"), "utf8");
    const modulePath = /^module\s+(\S+)/m.exec(goMod)?.[1];
    const importBase = schema.language?.go?.importBasePath;
    if (!modulePath || importBase !== `${modulePath}/go/voiceagent`) {
      throw new Error(
        `schema.json's Go importBasePath ${importBase} is not in sdk/go.mod's module ${modulePath}`,
      );
    }
    const differs = diffTrees(path.join(gen, "go"), path.join(ROOT, "sdk", "go"));
    if (differs.length > 0) {
      throw new Error(
        `the Go SDK generated for ${version} is not the committed sdk/go (${differs.slice(0, 5).join(", ")}): run \`npm run plugin:sdk\` and commit`,
      );
    }
    const goDir = path.join(OUT, `go-sdk-v${version}`);
    fs.mkdirSync(goDir);
    fs.copyFileSync(path.join(ROOT, "sdk", "go.mod"), path.join(goDir, "go.mod"));
    fs.copyFileSync(path.join(ROOT, "sdk", "go.sum"), path.join(goDir, "go.sum"));
    fs.cpSync(path.join(gen, "go"), path.join(goDir, "go"), { recursive: true });
    // Python: an sdist (and a wheel where `build` is installed), offline.
    python = pythonDist(path.join(gen, "python"));
  } finally {
    fs.rmSync(gen, { recursive: true, force: true });
  }

  // 6. Checksums and the manifest.
  const files = fs
    .readdirSync(OUT, { withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => d.name)
    .sort();
  const sums = files.map((f) => ({
    name: f,
    bytes: fs.statSync(path.join(OUT, f)).size,
    sha256: sha256(path.join(OUT, f)),
  }));
  fs.writeFileSync(path.join(OUT, "SHA256SUMS"), sums.map((s) => `${s.sha256}  ${s.name}\n`).join(""));
  const manifest = {
    version,
    tag: `v${version}`,
    pluginDownloadURL: schema.pluginDownloadURL,
    plugin: {
      name: "voice-agent",
      archives: sums.filter((s) => s.name.startsWith(PLUGIN)).map((s) => s.name),
    },
    npm: { package: "pulumi-voice-agent", tarball: `pulumi-voice-agent-${version}.tgz` },
    go: {
      module: /^module\s+(\S+)/m.exec(fs.readFileSync(path.join(ROOT, "sdk", "go.mod"), "utf8"))[1],
      tag: `sdk/v${version}`,
      folder: `go-sdk-v${version}`,
    },
    python,
    files: sums,
  };
  fs.writeFileSync(path.join(OUT, "release.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  for (const s of sums) process.stdout.write(`dist/release/${s.name} (${Math.ceil(s.bytes / 1024)} KB)\n`);
  process.stdout.write(
    `dist/release/go-sdk-v${version}/ (tag sdk/v${version})\ndist/release/SHA256SUMS\ndist/release/release.json\n`,
  );
}

/** The Python SDK at `src` built into OUT: its package version and what was built. */
function pythonDist(src) {
  const setup = fs.readFileSync(path.join(src, "setup.py"), "utf8");
  const pyVersion = /^VERSION = "([^"]+)"/m.exec(setup)?.[1];
  if (!pyVersion) throw new Error("the generated setup.py names no VERSION");
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "pva-release-py-"));
  try {
    fs.cpSync(src, work, { recursive: true });
    let built;
    try {
      run("python3", ["-m", "build", "--no-isolation", "--outdir", OUT, work], { stdio: "ignore" });
      built = ["sdist", "wheel"];
    } catch {
      // No `build` (nor wheel) installed, and no registry to fetch them: setuptools' own sdist.
      run("python3", ["setup.py", "-q", "sdist", "--formats=gztar", "--dist-dir", OUT], {
        cwd: work,
        stdio: "ignore",
      });
      built = ["sdist"];
    }
    return { package: "pulumi_voice_agent", version: pyVersion, built };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** Files (relative paths) that differ between two trees, or are in one only. */
function diffTrees(a, b) {
  const list = (root) =>
    fs.existsSync(root)
      ? fs
          .readdirSync(root, { recursive: true, withFileTypes: true })
          .filter((d) => d.isFile())
          .map((d) => path.relative(root, path.join(d.parentPath, d.name)))
      : [];
  const names = new Set([...list(a), ...list(b)]);
  return [...names].filter((n) => {
    const [x, y] = [path.join(a, n), path.join(b, n)];
    return !fs.existsSync(x) || !fs.existsSync(y) || !fs.readFileSync(x).equals(fs.readFileSync(y));
  });
}

function escapeRegExp(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

module.exports = { diffTrees };

if (require.main === module) {
  try {
    main(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`[release] ${err.message}\n`);
    process.exit(1);
  }
}
