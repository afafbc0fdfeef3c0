/**
 * A Mach-O executable's code signature checked from any OS, as far as it goes without Apple's
 * tools: the code directory of `LC_CODE_SIGNATURE` (its kind: ad hoc or not), each page's hash
 * against the file's bytes, and the special slots (requirements, entitlements) against their blobs.
 * What macOS checks at launch for ad-hoc-signed code is these hashes.
 */
import { createHash } from "node:crypto";

const LC_CODE_SIGNATURE = 0x1d;
const SUPERBLOB = 0xfade0cc0;
const CODE_DIRECTORY = 0xfade0c02;
const CS_ADHOC = 0x2;
const HASHES: Record<number, string> = { 1: "sha1", 2: "sha256" };

export interface CodeSignature {
  /** The code directory's identifier. */
  id: string;
  adhoc: boolean;
  pages: number;
  /** What does not match (empty: every hash verifies). */
  mismatches: string[];
}

/** The code signature of the thin 64-bit Mach-O `file`, verified; undefined when it has none. */
export function machOSignature(file: Buffer): CodeSignature | undefined {
  if (file.readUInt32LE(0) !== 0xfeedfacf) throw new Error("not a thin 64-bit little-endian Mach-O");
  const ncmds = file.readUInt32LE(16);
  let at = 32;
  let sig: { off: number; size: number } | undefined;
  for (let i = 0; i < ncmds; i++) {
    const cmd = file.readUInt32LE(at);
    if (cmd === LC_CODE_SIGNATURE) sig = { off: file.readUInt32LE(at + 8), size: file.readUInt32LE(at + 12) };
    at += file.readUInt32LE(at + 4);
  }
  if (!sig) return undefined;
  const blob = file.subarray(sig.off, sig.off + sig.size);
  if (blob.readUInt32BE(0) !== SUPERBLOB) throw new Error("LC_CODE_SIGNATURE holds no superblob");
  const slots = new Map<number, Buffer>();
  for (let i = 0; i < blob.readUInt32BE(8); i++) {
    const type = blob.readUInt32BE(12 + i * 8);
    const off = blob.readUInt32BE(16 + i * 8);
    slots.set(type, blob.subarray(off, off + blob.readUInt32BE(off + 4)));
  }
  const cd = slots.get(0);
  if (!cd || cd.readUInt32BE(0) !== CODE_DIRECTORY) throw new Error("the signature has no code directory");
  const flags = cd.readUInt32BE(12);
  const hashOffset = cd.readUInt32BE(16);
  const identOffset = cd.readUInt32BE(20);
  const nSpecial = cd.readUInt32BE(24);
  const nCode = cd.readUInt32BE(28);
  const codeLimit = cd.readUInt32BE(32);
  const hashSize = cd.readUInt8(36);
  const algorithm = HASHES[cd.readUInt8(37)];
  const pageSize = 2 ** cd.readUInt8(39);
  if (!algorithm) throw new Error(`unknown hash type ${cd.readUInt8(37)}`);
  const hash = (data: Buffer) => createHash(algorithm).update(data).digest().subarray(0, hashSize);
  const mismatches: string[] = [];
  for (let i = 0; i < nCode; i++) {
    const page = file.subarray(i * pageSize, Math.min((i + 1) * pageSize, codeLimit));
    if (!hash(page).equals(cd.subarray(hashOffset + i * hashSize, hashOffset + (i + 1) * hashSize))) {
      mismatches.push(`page ${i}`);
    }
  }
  if (Math.ceil(codeLimit / pageSize) !== nCode) mismatches.push(`${nCode} pages for ${codeLimit} bytes`);
  for (let slot = 1; slot <= nSpecial; slot++) {
    const held = cd.subarray(hashOffset - slot * hashSize, hashOffset - (slot - 1) * hashSize);
    const data = slots.get(slot);
    if (data && !hash(data).equals(held)) mismatches.push(`special slot ${slot}`);
  }
  const id = cd.subarray(identOffset, cd.indexOf(0, identOffset)).toString("utf8");
  return { id, adhoc: (flags & CS_ADHOC) !== 0, pages: nCode, mismatches };
}
