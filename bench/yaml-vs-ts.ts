/**
 * The support agent in Pulumi YAML (`examples/yaml-support-agent`, on the provider plugin installed
 * from its archive, `npm run plugin:pack -- --host`: the single executable) against the same agent in TypeScript
 * (`examples/support-agent`, the package installed from its tarball), under our Node.js language
 * host and Pulumi's stock one (PVA_PULUMI_HOST=stock): `pulumi up` of a new stack (its dev stack),
 * then a no-op `pulumi preview`. The YAML program runs on pulumi-language-yaml under either host:
 * what the host changes for it is only the Pulumi CLI's other plugins on PATH (the resources are
 * served by the plugin, a Node.js process of ours, either way). The TypeScript program is
 * type-checked at each run, as Pulumi does by default for a user (and timed transpile-only too,
 * as the e2e tests run it). Also: the plugin's start (from launch to its gRPC port printed, the
 * engine's wait) and the sizes of both tarballs.
 *
 *   source scripts/env.sh && npm run build && npx ts-node --transpile-only bench/yaml-vs-ts.ts [previews=3]
 *
 * Bounded: about 5 minutes on a quiet machine. docs/benchmarks.md records a run.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { DEFAULT_API_KEY, type Emulator, fmt, median, PulumiProject, startEmulator, timed } from "./lib";

const ROOT = path.resolve(__dirname, "..");
/** The plugin's version: the build's, from git (scripts/version.js), as its archive names it. */
const VERSION = (require("../scripts/version.js") as { version: () => string }).version();
const previews = Number(process.argv[2] ?? 3);

/** `npm run plugin:pack -- --host`: this machine's archive of the plugin (the single executable) and its size in bytes. */
function pluginTarball(): { file: string; bytes: number } {
  const line = execFileSync("bash", ["scripts/plugin/pack.sh", "--host"], {
    cwd: ROOT,
    encoding: "utf8",
  }).trim();
  const file = path.join(ROOT, line.split(" ")[0] as string);
  return { file, bytes: statSync(file).size };
}

/** `npm pack`'s tarball of the package (of the dist/ built: `--ignore-scripts`, no prepack rebuild under other runs), in bytes. */
function packageTarballBytes(): number {
  const dir = mkdtempSync(path.join(tmpdir(), "va-pack-"));
  try {
    const name = execFileSync("npm", ["pack", "--silent", "--ignore-scripts", "--pack-destination", dir], {
      cwd: ROOT,
      encoding: "utf8",
    })
      .trim()
      .split("\n")
      .pop() as string;
    return statSync(path.join(dir, name)).size;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Seconds from launching the plugin (unpacked from `tarball`) to its port on stdout; `runs` times. */
async function pluginStart(tarball: string, runs: number): Promise<number[]> {
  const dir = mkdtempSync(path.join(tmpdir(), "va-plugin-"));
  execFileSync("tar", ["-xzf", tarball, "-C", dir]);
  const out: number[] = [];
  try {
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      const child = spawn(path.join(dir, "pulumi-resource-voice-agent"), ["127.0.0.1:1"], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      await new Promise<void>((resolve, reject) => {
        child.stdout.on("data", (d: Buffer) => {
          if (/^\d+\s*$/m.test(d.toString())) resolve();
        });
        child.on("exit", (code) => reject(new Error(`the plugin exited ${code} before its port`)));
      });
      out.push((performance.now() - t0) / 1000);
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

interface Row {
  program: string;
  host: string;
  up: number;
  preview: number[];
}

/** `up` of a new dev stack of `example`, then `previews` no-op previews. */
async function measure(
  emu: Emulator,
  program: "yaml" | "typescript" | "typescript (transpile-only)",
  tarball: string,
): Promise<Row> {
  const yaml = program === "yaml";
  const p = await PulumiProject.fromDirectory(
    path.join(ROOT, "examples", yaml ? "yaml-support-agent" : "support-agent"),
    {
      stack: "dev",
      passphrase: yaml ? "yaml-example" : "local-example",
      installed: !yaml,
      config: { "voice-agent:baseUrl": emu.url },
      ...(yaml ? { secrets: { "voice-agent:apiKey": DEFAULT_API_KEY } } : {}),
    },
  );
  // Type-checked at each run, as Pulumi runs a user's TypeScript by default.
  if (program === "typescript") p.env.PULUMI_NODEJS_TRANSPILE_ONLY = "false";
  try {
    if (yaml) {
      await p.pulumi(["plugin", "install", "resource", "voice-agent", VERSION, "--file", tarball], {
        noStack: true,
      });
    }
    const up = await timed(() => p.up());
    const times: number[] = [];
    for (let i = 0; i < previews; i++) {
      times.push((await timed(() => p.pulumi(["preview", "--expect-no-changes"]))).seconds);
    }
    return {
      program,
      host: process.env.PVA_PULUMI_HOST === "stock" ? "stock" : "ours",
      up: up.seconds,
      preview: times,
    };
  } finally {
    p.cleanup();
  }
}

async function main(): Promise<void> {
  const pkgBytes = packageTarballBytes();
  const plugin = pluginTarball();
  const starts = await pluginStart(plugin.file, 5);
  const emu = await startEmulator({ port: 0, rateLimitPerMinute: 0 });
  const rows: Row[] = [];
  const host = process.env.PVA_PULUMI_HOST;
  try {
    for (const h of ["ours", "stock"]) {
      if (h === "stock") process.env.PVA_PULUMI_HOST = "stock";
      else delete process.env.PVA_PULUMI_HOST;
      for (const program of ["yaml", "typescript", "typescript (transpile-only)"] as const) {
        const row = await measure(emu, program, plugin.file);
        rows.push(row);
        console.error(
          `${row.host} ${row.program}: up ${fmt(row.up)} s, previews ${row.preview.map((s) => fmt(s)).join(", ")} s`,
        );
      }
    }
  } finally {
    if (host === undefined) delete process.env.PVA_PULUMI_HOST;
    else process.env.PVA_PULUMI_HOST = host;
    await emu.close();
  }
  console.log(
    `plugin tarball: ${fmt(plugin.bytes / 1024 / 1024, 1)} MB; package tarball: ${fmt(pkgBytes / 1024 / 1024, 1)} MB`,
  );
  console.log(
    `plugin start (launch to port printed), 5 runs: median ${fmt(median(starts))} s (min ${fmt(Math.min(...starts))}, max ${fmt(Math.max(...starts))})`,
  );
  console.log("\n| program | host | `pulumi up` (new stack) | no-op `pulumi preview`, median (min–max) |");
  console.log("|---|---|---|---|");
  for (const r of rows) {
    console.log(
      `| ${r.program} | ${r.host} | ${fmt(r.up, 1)} s | ${fmt(median(r.preview), 1)} s (${fmt(Math.min(...r.preview), 1)}–${fmt(Math.max(...r.preview), 1)}) |`,
    );
  }
  console.log(
    `\nload average at the end: ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
