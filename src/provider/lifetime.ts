/**
 * The provider process ends with its engine. Pulumi starts the dynamic provider for a deployment
 * and stops it at the end; when the engine is killed instead (a CI runner preempted, a job timed
 * out: `SIGKILL`), nothing stops it, and it would stay alive forever, re-parented to init, holding
 * about 160 MB. This watch exits the process when the engine is gone.
 *
 * The engine is the parent, or, where a launcher script stands between them (Pulumi's own
 * `pulumi-resource-pulumi-nodejs` runs `node` without `exec`), the nearest ancestor that is not a
 * shell (read from `/proc` on Linux). A script run through its `#!/bin/sh` line has its own file
 * name as command name (`pulumi-resource`, truncated), so a shell is known by the program its
 * process runs (`/proc/<pid>/exe`: `/usr/bin/dash`, `/bin/busybox`), and by its command name only
 * where that link cannot be read.
 */
import { readFileSync, readlinkSync } from "node:fs";
import * as path from "node:path";

/** How often the engine is looked for (a signal-0 `kill`: nothing measurable). */
export const WATCH_INTERVAL_MS = 500;

const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ash", "busybox"]);

/**
 * Whether process `pid` is a shell, and its parent (Linux `/proc`), or undefined elsewhere. The
 * shell is recognised by its executable's file name, or by its command name when the executable
 * cannot be read (another user's process).
 */
function procInfo(pid: number): { shell: boolean; ppid: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // `pid (comm) state ppid ...`: comm may hold spaces and parentheses.
    const close = stat.lastIndexOf(")");
    const ppid = Number(stat.slice(close + 2).split(" ")[1]);
    if (!Number.isInteger(ppid)) return undefined;
    let name: string;
    try {
      // A binary replaced since the process started (a package upgrade) reads "<path> (deleted)".
      name = path.basename(readlinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, ""));
    } catch {
      name = stat.slice(stat.indexOf("(") + 1, close);
    }
    return { shell: SHELLS.has(name), ppid };
  } catch {
    return undefined;
  }
}

/** The engine's process id: the parent, or past launcher shells, the nearest ancestor that is not one. */
export function enginePid(parent: number = process.ppid): number {
  let pid = parent;
  for (let i = 0; i < 4; i++) {
    const info = procInfo(pid);
    if (!info?.shell || info.ppid <= 1) return pid;
    pid = info.ppid;
  }
  return pid;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

let watching = false;

/**
 * Exits the process (code 1) as soon as the engine that started it is gone: its parent changed, or
 * the engine's process no longer exists. Runs only in a provider process, once, and never keeps the
 * process alive: the dynamic provider's (the entry script of `@pulumi/pulumi/cmd/dynamic-provider`,
 * which a program's process loading the handlers is not), or, with `always`, the process of the
 * entry point that calls it (the provider plugin's `main.ts`).
 */
export function exitWithEngine(argv: readonly string[] = process.argv, always = false): void {
  if (watching || process.platform === "win32") return;
  if (!always && !/dynamic-provider/.test(argv[1] ?? "")) return;
  watching = true;
  const parent = process.ppid;
  const engine = enginePid(parent);
  setInterval(() => {
    if (process.ppid === parent && alive(engine)) return;
    process.stderr.write(
      `pulumi-voice-agent: the Pulumi engine (process ${engine}) is gone: the provider process exits\n`,
    );
    process.exit(1);
  }, WATCH_INTERVAL_MS).unref();
}
