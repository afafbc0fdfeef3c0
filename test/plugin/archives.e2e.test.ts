/**
 * The plugin as a release ships it (`npm run plugin:pack`, run once here from the repository):
 * - six archives, linux, darwin and windows × amd64 and arm64, and a SHA256SUMS whose sums verify;
 *   each archive holds at its root the executable (`.exe` on Windows) and LICENSE; each executable
 *   is the platform's Node.js binary (ELF, PE or Mach-O header, for its architecture) with the SEA
 *   fuse flipped and the plugin inside (its version); the darwin ones signed ad hoc, every page's
 *   hash verifying;
 * - the version in the names is scripts/version.js's, and another commit builds another version;
 * - the linux-arm64 executable answers GetPluginInfo under `qemu-aarch64` (Debian's qemu-user,
 *   with the arm64 C libraries of the cross toolchain packages);
 * - a YAML program naming the version and the download URL deploys against the emulator with an
 *   empty PULUMI_HOME, the archives served by a loopback server (PULUMI_PLUGIN_DOWNLOAD_URL_OVERRIDES),
 *   no `pulumi plugin install`, and no `node` anywhere on PATH.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import * as path from "node:path";
import type * as grpcTypes from "@grpc/grpc-js";
import type * as pluginTypes from "@pulumi/pulumi/proto/plugin_pb";
import type * as provRpcTypes from "@pulumi/pulumi/proto/provider_grpc_pb";
import type * as emptyTypes from "google-protobuf/google/protobuf/empty_pb";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { DEFAULT_API_KEY, startEmulator } from "../../src/emulator";
import { PulumiProject, REPO_ROOT, toolchainBin } from "../support/pulumi";
import { machOSignature } from "./machO";

const fromSdk = createRequire(require.resolve("@pulumi/pulumi/package.json"));
const grpc = fromSdk("@grpc/grpc-js") as typeof grpcTypes;
const emptypb = fromSdk("google-protobuf/google/protobuf/empty_pb") as typeof emptyTypes;
const provrpc = require("@pulumi/pulumi/proto/provider_grpc_pb") as typeof provRpcTypes;

const NAME = "pulumi-resource-voice-agent";
const PLATFORMS = [
  "darwin-amd64",
  "darwin-arm64",
  "linux-amd64",
  "linux-arm64",
  "windows-amd64",
  "windows-arm64",
] as const;
const SEA_FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";
/** The pack's output, copied away as soon as it is written (a `npm run build` elsewhere empties dist/). */
let OUT: string;

/** The version the checkout at `root` builds from git (not the run's PVA_VERSION, which scripts/test.sh pins). */
const versionOf = (root: string): string =>
  (
    require(path.join(REPO_ROOT, "scripts", "version.js")) as {
      version: (root: string, env: Record<string, string | undefined>) => string;
    }
  ).version(root, {});

let version: string;
const archive = (platform: string) => path.join(OUT, `${NAME}-v${version}-${platform}.tar.gz`);
const exeName = (platform: string) => (platform.startsWith("windows") ? `${NAME}.exe` : NAME);
/** An archive's executable, read whole. */
const executable = (platform: string): Buffer =>
  execFileSync("tar", ["-xzOf", archive(platform), exeName(platform)], { maxBuffer: 512 * 1024 * 1024 });

const cleanup: (() => unknown)[] = [];
afterAll(async () => {
  for (const f of cleanup.reverse()) await f();
});

beforeAll(() => {
  const printed = execFileSync("bash", ["scripts/plugin/pack.sh"], { cwd: REPO_ROOT, encoding: "utf8" });
  const files = printed
    .trim()
    .split("\n")
    .map((line) => path.join(REPO_ROOT, line.split(" ")[0] as string));
  OUT = mkdtempSync(path.join(tmpdir(), "pva-archives-"));
  cleanup.push(() => rmSync(OUT, { recursive: true, force: true }));
  for (const file of files) copyFileSync(file, path.join(OUT, path.basename(file)));
  // The version the pack named the archives with (the host's first).
  const host = /^pulumi-resource-voice-agent-v(.+)-(linux|darwin|windows)-(amd64|arm64)\.tar\.gz$/;
  version = (host.exec(path.basename(files[0] as string)) ?? [])[1] as string;
  expect(version).toBeTruthy();
}, 1_200_000);

describe("npm run plugin:pack", () => {
  test("six archives and SHA256SUMS, whose sums verify; each holds the executable and LICENSE at its root", () => {
    const names = PLATFORMS.map((p) => path.basename(archive(p)));
    const sums = readFileSync(path.join(OUT, "SHA256SUMS"), "utf8");
    const lines = sums.trimEnd().split("\n");
    expect(lines.map((l) => l.slice(66)).sort()).toEqual([...names].sort());
    for (const line of lines) {
      const m = /^([0-9a-f]{64}) {2}(\S+)$/.exec(line);
      expect(m, line).not.toBeNull();
      const [, sum, name] = m as RegExpExecArray;
      expect(
        createHash("sha256")
          .update(readFileSync(path.join(OUT, name as string)))
          .digest("hex"),
        name,
      ).toBe(sum);
    }
    for (const p of PLATFORMS) {
      const listing = execFileSync("tar", ["-tzf", archive(p)], { encoding: "utf8" })
        .trim()
        .split("\n");
      expect(listing.sort(), p).toEqual([exeName(p), "LICENSE"].sort());
    }
  });

  test("each executable is its platform's Node.js with the plugin injected; the darwin ones signed ad hoc", () => {
    for (const p of PLATFORMS) {
      const exe = executable(p);
      const arm = p.endsWith("arm64");
      if (p.startsWith("linux")) {
        // ELF, 64-bit, e_machine: EM_X86_64 (62) or EM_AARCH64 (183).
        expect(exe.subarray(0, 4).toString("latin1"), p).toBe("\x7fELF");
        expect(exe[4], p).toBe(2);
        expect(exe.readUInt16LE(18), p).toBe(arm ? 183 : 62);
      } else if (p.startsWith("windows")) {
        // MZ, then the PE header's machine: IMAGE_FILE_MACHINE_AMD64 or _ARM64.
        expect(exe.subarray(0, 2).toString("latin1"), p).toBe("MZ");
        const pe = exe.readUInt32LE(0x3c);
        expect(exe.subarray(pe, pe + 4).toString("latin1"), p).toBe("PE\0\0");
        expect(exe.readUInt16LE(pe + 4), p).toBe(arm ? 0xaa64 : 0x8664);
      } else {
        // Mach-O 64-bit, cputype CPU_TYPE_X86_64 or CPU_TYPE_ARM64.
        expect(exe.readUInt32LE(0), p).toBe(0xfeedfacf);
        expect(exe.readUInt32LE(4), p).toBe(arm ? 0x0100000c : 0x01000007);
        const signature = machOSignature(exe);
        expect(signature, p).toMatchObject({ id: NAME, adhoc: true, mismatches: [] });
        // The check can fail: a byte changed in a signed page is found.
        exe[0x2000] = (exe[0x2000] as number) ^ 0xff;
        expect(machOSignature(exe)?.mismatches, p).toEqual(["page 2"]);
      }
      // The SEA fuse flipped (Node runs the blob), and the plugin's code inside, with its version.
      expect(exe.includes(`${SEA_FUSE}:1`), `${p}: fuse`).toBe(true);
      expect(exe.includes(JSON.stringify(version)), `${p}: version`).toBe(true);
    }
  });

  test("the version in the names is scripts/version.js's; another commit builds another version", () => {
    const printed = execFileSync("node", ["scripts/version.js"], { cwd: REPO_ROOT, encoding: "utf8" }).trim();
    expect(printed).toBe(version);
    const clone = mkdtempSync(path.join(tmpdir(), "pva-version-"));
    cleanup.push(() => rmSync(clone, { recursive: true, force: true }));
    execFileSync("git", ["clone", "--quiet", "--shared", REPO_ROOT, clone]);
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
        cwd: clone,
        encoding: "utf8",
      });
    const before = versionOf(clone);
    writeFileSync(path.join(clone, "CHANGELOG.md"), "a change\n", { flag: "a" });
    git("commit", "--quiet", "-am", "a second commit");
    const after = versionOf(clone);
    expect(after).not.toBe(before);
    expect(after).toContain(git("rev-parse", "--short=7", "HEAD").trim());
  });
});

/** The first line of `child`'s stdout that is a port, within `ms`. */
function portOf(child: ChildProcess, ms: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    const timer = setTimeout(() => reject(new Error(`no port within ${ms} ms; stderr: ${err}`)), ms);
    child.stderr?.on("data", (d: Buffer) => {
      err += d.toString();
    });
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /^(\d+)\s*$/m.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`exited ${code} before its port; stderr: ${err}`));
    });
  });
}

/**
 * Debian's qemu-user and the arm64 C and C++ runtime libraries (the cross toolchain's), installed
 * when missing and allowed (root, apt-get); the sysroot for `qemu-aarch64 -L`, or why not.
 */
function arm64Emulation(): { sysroot: string } | { why: string } {
  const sysroot = "/usr/aarch64-linux-gnu";
  const ready = () =>
    spawnOk("qemu-aarch64", ["--version"]) && existsSync(path.join(sysroot, "lib", "libstdc++.so.6"));
  if (ready()) return { sysroot };
  // As root, or through passwordless sudo (a CI runner).
  const sudo = process.getuid?.() === 0 ? [] : spawnOk("sudo", ["-n", "true"]) ? ["sudo", "-n"] : undefined;
  if (!sudo || !spawnOk("apt-get", ["--version"])) {
    return { why: "qemu-aarch64 or the arm64 libraries are missing, and apt-get cannot install them here" };
  }
  try {
    execFileSync(
      sudo[0] ?? "apt-get",
      [
        ...sudo.slice(1),
        ...(sudo.length > 0 ? ["DEBIAN_FRONTEND=noninteractive", "apt-get"] : []),
        "install",
        "-y",
        "--no-install-recommends",
        "qemu-user",
        "libc6-arm64-cross",
        "libstdc++6-arm64-cross",
        "libgcc-s1-arm64-cross",
      ],
      { stdio: "pipe", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } },
    );
  } catch (err) {
    return { why: `apt-get install qemu-user failed: ${(err as { stderr?: Buffer }).stderr?.toString()}` };
  }
  return ready()
    ? { sysroot }
    : { why: "qemu-user installed, but qemu-aarch64 or the libraries are not there" };
}

function spawnOk(command: string, args: string[]): boolean {
  try {
    execFileSync(command, args, { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

test("the linux-arm64 executable answers GetPluginInfo under qemu-aarch64", async (ctx) => {
  const emulation = arm64Emulation();
  if ("why" in emulation) {
    console.warn(`not run: ${emulation.why}`);
    ctx.skip();
    return;
  }
  const dir = mkdtempSync(path.join(tmpdir(), "pva-arm64-"));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  execFileSync("tar", ["-xzf", archive("linux-arm64"), "-C", dir]);
  const child = spawn("qemu-aarch64", ["-L", emulation.sysroot, path.join(dir, NAME), "127.0.0.1:1"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  cleanup.push(() => {
    if (child.exitCode === null) child.kill("SIGKILL");
  });
  const port = await portOf(child, 150_000);
  const rpc = new provrpc.ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  try {
    const info = await new Promise<pluginTypes.PluginInfo>((resolve, reject) =>
      rpc.getPluginInfo(new emptypb.Empty(), (e, r) => (e ? reject(e) : resolve(r))),
    );
    expect(info.getVersion()).toBe(version);
  } finally {
    rpc.close();
  }
}, 240_000);

test("a YAML program naming the version deploys with an empty PULUMI_HOME, the plugin downloaded through the override, and no node on PATH", async () => {
  // The release's archives on a loopback server, as a mirror would serve them.
  const served: string[] = [];
  const server: Server = createServer((req, res) => {
    const name = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname).replace(
      /^\/releases\//,
      "",
    );
    served.push(name);
    const file = path.join(OUT, name);
    if (!/^[\w.+-]+\.tar\.gz$/.test(name) || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/gzip", "content-length": statSync(file).size });
    res.end(readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanup.push(() => new Promise((r) => server.close(r)));
  const port = (server.address() as AddressInfo).port;

  // PATH: the Pulumi CLI and the YAML language host only (setup.sh puts them side by side), no node.
  const bin = mkdtempSync(path.join(tmpdir(), "pva-nonode-"));
  cleanup.push(() => rmSync(bin, { recursive: true, force: true }));
  for (const tool of ["pulumi", "pulumi-language-yaml"]) {
    const target = path.join(toolchainBin(), tool);
    if (!existsSync(target)) throw new Error(`${target} is missing: run \`npm run setup\``);
    symlinkSync(target, path.join(bin, tool));
  }
  expect(readdirSync(bin).sort()).toEqual(["pulumi", "pulumi-language-yaml"]);

  const emu = await startEmulator({ port: 0 });
  cleanup.push(() => emu.close());
  const source = mkdtempSync(path.join(tmpdir(), "pva-nonode-src-"));
  cleanup.push(() => rmSync(source, { recursive: true, force: true }));
  writeFileSync(
    path.join(source, "Pulumi.yaml"),
    `name: no-node
runtime: yaml
resources:
  host:
    type: voice-agent:index:Agent
    properties:
      name: Downloaded plugin
      systemPrompt: You answer questions about orders.
    options:
      version: ${version}
      pluginDownloadURL: github://api.github.com/pulumi-voice-agent
outputs:
  agentId: \${host.agentId}
`,
  );
  const project = await PulumiProject.fromDirectory(source, {
    stack: "dev",
    passphrase: "no-node",
    config: { "voice-agent:baseUrl": emu.url },
    secrets: { "voice-agent:apiKey": DEFAULT_API_KEY },
    env: {
      PATH: bin,
      PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "false",
      PULUMI_PLUGIN_DOWNLOAD_URL_OVERRIDES: `^github://api\\.github\\.com/pulumi-voice-agent=http://127.0.0.1:${port}/releases`,
    },
  });
  cleanup.push(() => project.cleanup());
  const home = project.env.PULUMI_HOME as string;
  expect(existsSync(path.join(home, "plugins")) ? readdirSync(path.join(home, "plugins")) : []).toEqual([]);

  await project.pulumi(["up", "--yes", "--skip-preview"]);
  const { agentId } = await project.outputs();
  const res = await fetch(`${emu.url}/v1/agents/${agentId}`, {
    headers: { authorization: `Bearer ${DEFAULT_API_KEY}` },
  });
  expect(((await res.json()) as { name: string }).name).toBe("Downloaded plugin");
  expect(served).toContain(path.basename(archive("linux-amd64")));
  const installed = path.join(home, "plugins", `resource-voice-agent-v${version}`, NAME);
  expect(existsSync(installed)).toBe(true);
  expect(readFileSync(installed).subarray(0, 4).toString("latin1")).toBe("\x7fELF");
}, 600_000);
