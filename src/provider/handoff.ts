/**
 * The stack's settings, handed from the program process to the provider process of the same
 * deployment, so that the provider does not have to run `pulumi config --show-secrets` (about
 * 0.4 s with a passphrase-protected stack: the key derivation) before its first request.
 *
 * The program process already holds the stack's configuration, secrets decrypted (the language
 * host passes it in `PULUMI_CONFIG`). Each `Provider` serves its namespace's keys on a local socket
 * (a Unix socket in a directory only this user can enter; a named pipe on Windows) whose name is
 * derived from the engine's address, which the engine gives to both processes, the stack and the
 * namespace. The provider process reads it once. Nothing is written to disk, to the state or to a
 * log; the socket is removed when the program exits (one left by a killed program, after a day).
 * When no program runs (`refresh`, `destroy`) or the socket cannot be reached, the provider falls
 * back to `pulumi config` (see `context.ts`).
 *
 * What the socket serves is what the same user can already read from the program's environment
 * (`/proc/<pid>/environ` holds `PULUMI_CONFIG`), so it exposes nothing new.
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";

/** A private directory for the sockets: this user's only, refused if anyone else can enter it. */
function privateDir(): string {
  const uid = process.getuid?.();
  const dir = path.join(os.tmpdir(), `pulumi-voice-agent-${uid ?? "user"}`);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = fs.lstatSync(dir);
  if (!st.isDirectory() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o077) !== 0) {
    throw new Error(`${dir} is not a private directory`);
  }
  return dir;
}

/** Where the program of the deployment at `engine` serves `namespace`'s settings for `stack`. */
export function handoffAddress(engine: string, stack: string, namespace: string): string {
  const name = createHash("sha256").update(`${engine}\n${stack}\n${namespace}`).digest("hex").slice(0, 24);
  if (process.platform === "win32") return `\\\\.\\pipe\\pulumi-voice-agent-${name}`;
  return path.join(privateDir(), `${name}.sock`);
}

/**
 * Whether the handoff is used on this platform. Not on Windows: a named pipe made by Node.js
 * carries the default security descriptor, which lets any local user connect and read the
 * decrypted key. There the provider reads the settings with `pulumi config` instead.
 */
export function handoffSupported(platform: NodeJS.Platform = process.platform): boolean {
  return platform !== "win32";
}

/**
 * Program side: serve `values` (the namespace's stack configuration) to the provider process of this
 * deployment until the program exits. Does nothing outside a deployment, or when the socket cannot
 * be made (the provider then reads the configuration itself).
 */
export function serveSettings(stack: string, namespace: string, values: Record<string, string>): void {
  const engine = process.env.PULUMI_NODEJS_ENGINE;
  if (!engine || !handoffSupported()) return;
  let address: string;
  try {
    address = handoffAddress(engine, stack, namespace);
    if (process.platform !== "win32") removeStale(path.dirname(address), address);
  } catch {
    return;
  }
  const payload = JSON.stringify(values);
  const server = net.createServer((socket) => {
    socket.on("error", () => {});
    socket.end(payload);
  });
  server.on("error", () => {});
  server.listen(address);
  server.unref(); // the program exits when its work is done, served or not
  process.once("exit", () => {
    if (process.platform !== "win32") fs.rmSync(address, { force: true });
  });
}

/** Removes `address` and sockets a day old: left by programs that were killed before they exited. */
function removeStale(dir: string, address: string): void {
  fs.rmSync(address, { force: true });
  for (const name of fs.readdirSync(dir)) {
    const file = path.join(dir, name);
    if (name.endsWith(".sock") && Date.now() - fs.lstatSync(file).mtimeMs > 86_400_000) {
      fs.rmSync(file, { force: true });
    }
  }
}

/**
 * Provider side: the settings the program process of this deployment serves, or `undefined` when
 * none is served (no program runs, or it has exited). `engine` is the engine's address, the
 * dynamic provider's command-line argument.
 */
export function fetchSettings(
  engine: string | undefined,
  stack: string,
  namespace: string,
): Promise<Record<string, string> | undefined> {
  if (!engine || !handoffSupported() || !/^[\w.-]+:\d+$/.test(engine)) return Promise.resolve(undefined);
  let address: string;
  try {
    address = handoffAddress(engine, stack, namespace);
  } catch {
    return Promise.resolve(undefined);
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(address);
    socket.setTimeout(2_000, () => socket.destroy());
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("error", () => resolve(undefined));
    socket.on("close", () => {
      try {
        const values = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        const valid =
          values && typeof values === "object" && Object.values(values).every((v) => typeof v === "string");
        resolve(valid ? values : undefined);
      } catch {
        resolve(undefined);
      }
    });
  });
}
