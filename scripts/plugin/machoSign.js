/**
 * An ad-hoc code signature for a thin 64-bit Mach-O executable, written from any OS: what
 * `codesign --sign - --force` does on macOS. macOS on Apple silicon runs no unsigned code, and
 * injecting the plugin's SEA blob into Node's binary invalidates Node's own signature (which stays
 * in place as the last thing of `__LINKEDIT`: postject keeps it there).
 *
 * The new signature takes the old one's place: a superblob holding a code directory (SHA-256,
 * 4 KiB pages, ad hoc: no certificate, no team) and an empty requirement set. The load commands it
 * covers (`__LINKEDIT`'s size, `LC_CODE_SIGNATURE`'s) are updated first, then every page up to the
 * signature is hashed. Entitlements and the hardened runtime of Node's own signature are not kept
 * (without the hardened runtime, V8's JIT needs no entitlement).
 */
"use strict";
const crypto = require("node:crypto");

const MH_MAGIC_64 = 0xfeedfacf;
const MH_EXECUTE = 0x2;
const LC_SEGMENT_64 = 0x19;
const LC_CODE_SIGNATURE = 0x1d;
const PAGE = 4096;
const HASH = 32;

/** `buf` (a Buffer of the executable) signed ad hoc under `identifier`: a new Buffer. */
function adhocSign(input, identifier) {
  if (input.readUInt32LE(0) !== MH_MAGIC_64)
    throw new Error("machoSign: not a thin 64-bit little-endian Mach-O");
  let { linkedit, text, sigCmd, firstSection } = loadCommands(input);
  let buf = input;
  let codeLimit;
  if (sigCmd === undefined) {
    // postject's rewrite dropped the signature's load command: one more, in the room the load
    // commands leave before the first section.
    const sizeofcmds = input.readUInt32LE(20);
    if (32 + sizeofcmds + 16 > firstSection) throw new Error("machoSign: no room for LC_CODE_SIGNATURE");
    codeLimit = Math.ceil((linkedit.fileoff + linkedit.filesize) / 16) * 16;
    buf = Buffer.alloc(codeLimit);
    input.copy(buf, 0, 0, Math.min(input.length, codeLimit));
    buf.writeUInt32LE(LC_CODE_SIGNATURE, 32 + sizeofcmds);
    buf.writeUInt32LE(16, 32 + sizeofcmds + 4);
    buf.writeUInt32LE(codeLimit, 32 + sizeofcmds + 8);
    buf.writeUInt32LE(input.readUInt32LE(16) + 1, 16);
    buf.writeUInt32LE(sizeofcmds + 16, 20);
    ({ linkedit, text, sigCmd } = loadCommands(buf));
  } else {
    codeLimit = buf.readUInt32LE(sigCmd + 8);
    if (codeLimit % 16 !== 0 || codeLimit < linkedit.fileoff) {
      throw new Error(`machoSign: the old signature is not at the end of __LINKEDIT (at ${codeLimit})`);
    }
  }
  const filetype = buf.readUInt32LE(12);

  // The requirement set: empty (what an ad-hoc signature has).
  const requirements = Buffer.alloc(12);
  requirements.writeUInt32BE(0xfade0c01, 0);
  requirements.writeUInt32BE(12, 4);
  requirements.writeUInt32BE(0, 8);

  // The code directory, version 0x20400 (with the executable segment's bounds).
  const ident = Buffer.from(`${identifier}\0`, "utf8");
  const nSpecial = 2; // -1: Info.plist (none), -2: requirements
  const nCode = Math.ceil(codeLimit / PAGE);
  const headerSize = 88;
  const hashOffset = headerSize + ident.length + nSpecial * HASH;
  const cdLength = hashOffset + nCode * HASH;
  const cd = Buffer.alloc(cdLength);
  cd.writeUInt32BE(0xfade0c02, 0);
  cd.writeUInt32BE(cdLength, 4);
  cd.writeUInt32BE(0x20400, 8);
  cd.writeUInt32BE(0x2, 12); // CS_ADHOC
  cd.writeUInt32BE(hashOffset, 16);
  cd.writeUInt32BE(headerSize, 20);
  cd.writeUInt32BE(nSpecial, 24);
  cd.writeUInt32BE(nCode, 28);
  cd.writeUInt32BE(codeLimit, 32);
  cd.writeUInt8(HASH, 36);
  cd.writeUInt8(2, 37); // SHA-256
  cd.writeUInt8(0, 38);
  cd.writeUInt8(Math.log2(PAGE), 39);
  // spare2, scatterOffset, teamOffset, spare3: 0; codeLimit64: 0 (codeLimit fits 32 bits)
  cd.writeBigUInt64BE(BigInt(text.fileoff), 64);
  cd.writeBigUInt64BE(BigInt(text.filesize), 72);
  cd.writeBigUInt64BE(filetype === MH_EXECUTE ? 1n : 0n, 80); // CS_EXECSEG_MAIN_BINARY
  ident.copy(cd, headerSize);
  sha256(requirements).copy(cd, hashOffset - 2 * HASH);

  // The superblob: the code directory, then the requirements.
  const count = 2;
  const sbHeader = 12 + count * 8;
  const sbLength = sbHeader + cd.length + requirements.length;
  const sb = Buffer.alloc(sbLength);
  sb.writeUInt32BE(0xfade0cc0, 0);
  sb.writeUInt32BE(sbLength, 4);
  sb.writeUInt32BE(count, 8);
  sb.writeUInt32BE(0, 12); // CSSLOT_CODEDIRECTORY
  sb.writeUInt32BE(sbHeader, 16);
  sb.writeUInt32BE(2, 20); // CSSLOT_REQUIREMENTS
  sb.writeUInt32BE(sbHeader + cd.length, 24);

  // The load commands first (the pages hashed include them), then the hashes.
  const dataSize = Math.ceil(sbLength / 16) * 16;
  const out = Buffer.alloc(codeLimit + dataSize);
  buf.copy(out, 0, 0, codeLimit);
  out.writeUInt32LE(dataSize, sigCmd + 12);
  const linkeditSize = codeLimit + dataSize - linkedit.fileoff;
  out.writeBigUInt64LE(BigInt(linkeditSize), linkedit.at + 48); // filesize
  const vmsize = Math.max(linkedit.vmsize, Math.ceil(linkeditSize / 0x4000) * 0x4000);
  out.writeBigUInt64LE(BigInt(vmsize), linkedit.at + 32);
  for (let i = 0; i < nCode; i++) {
    sha256(out.subarray(i * PAGE, Math.min((i + 1) * PAGE, codeLimit))).copy(cd, hashOffset + i * HASH);
  }
  cd.copy(sb, sbHeader);
  requirements.copy(sb, sbHeader + cd.length);
  sb.copy(out, codeLimit);
  return out;
}

/** `__TEXT`, `__LINKEDIT`, where `LC_CODE_SIGNATURE` is, and the file offset of the first section. */
function loadCommands(buf) {
  const ncmds = buf.readUInt32LE(16);
  let at = 32;
  let linkedit;
  let text;
  let sigCmd;
  let firstSection = Number.POSITIVE_INFINITY;
  for (let i = 0; i < ncmds; i++) {
    const cmd = buf.readUInt32LE(at);
    if (cmd === LC_SEGMENT_64) {
      const name = buf.toString("latin1", at + 8, at + 24).replace(/\0+$/, "");
      const seg = {
        at,
        vmsize: Number(buf.readBigUInt64LE(at + 32)),
        fileoff: Number(buf.readBigUInt64LE(at + 40)),
        filesize: Number(buf.readBigUInt64LE(at + 48)),
      };
      if (name === "__LINKEDIT") linkedit = seg;
      if (name === "__TEXT") text = seg;
      for (let k = 0; k < buf.readUInt32LE(at + 64); k++) {
        const offset = buf.readUInt32LE(at + 72 + k * 80 + 48);
        if (offset > 0) firstSection = Math.min(firstSection, offset);
      }
    } else if (cmd === LC_CODE_SIGNATURE) {
      sigCmd = at;
    }
    at += buf.readUInt32LE(at + 4);
  }
  if (!linkedit || !text) throw new Error("machoSign: no __TEXT or __LINKEDIT segment");
  return { linkedit, text, sigCmd, firstSection };
}

function sha256(data) {
  return crypto.createHash("sha256").update(data).digest();
}

module.exports = { adhocSign };
