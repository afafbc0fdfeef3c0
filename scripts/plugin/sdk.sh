#!/usr/bin/env bash
# npm run plugin:sdk [-- --version V] [OUT]: the Go and Python SDKs of the provider plugin, generated
# from schema.json by `pulumi package gen-sdk` (Pulumi's Go and Python language hosts generate them;
# they come from ../shared/pulumi-stock, through scripts/stock-host.sh), written to OUT/go and
# OUT/python (default: the repository's sdk/, whose go.mod and go.sum are kept by hand and left alone).
#
# schema.json carries no version (every commit builds another: scripts/version.js), so neither does
# the committed sdk/: the Go SDK's version is its module's (the tag `sdk/vX.Y.Z`, which Pulumi's Go
# host reads with `go list`), and the Python package says 0.0.0. `--version V` generates from the
# schema stamped with V instead (a release does: scripts/release/dry-run.js): the Python package is
# V (setup.py, pulumi-plugin.json); the Go SDK is the same either way (the schema asks no
# respectSchemaVersion of Go).
# test/plugin/sdk.e2e.test.ts regenerates into a temporary folder and fails when sdk/ differs.
# Exits 3 when ../shared/pulumi-stock holds no hosts (as scripts/stock-host.sh does).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
version=""
if [ "${1:-}" = "--version" ]; then
  version="${2:?--version needs a version}"
  shift 2
fi
out="$(realpath -m "${1:-$PVA_ROOT/sdk}")"
cd "$PVA_ROOT"
bin="$(bash scripts/stock-host.sh)"
for host in pulumi-language-go pulumi-language-python; do
  [ -x "$bin/$host" ] || { echo "[sdk] $host not found in ../shared/pulumi-stock" >&2; exit 3; }
done
gen="$(mktemp -d)"
trap 'rm -rf "$gen"' EXIT
schema="schema.json"
if [ -n "$version" ]; then
  schema="$gen/schema.json"
  # The schema as the plugin serves it (src/plugin/server.ts, stampedSchema): `version` after `displayName`.
  node -e '
    const fs = require("node:fs");
    const { name, displayName, version: _, ...rest } = JSON.parse(fs.readFileSync("schema.json", "utf8"));
    fs.writeFileSync(process.argv[2], `${JSON.stringify({ name, displayName, version: process.argv[1], ...rest }, null, 2)}\n`);
  ' "$version" "$schema"
fi
for language in go python; do
  if ! log="$(PATH="$bin:$PATH" pulumi package gen-sdk "$schema" --language "$language" --out "$gen/out" 2>&1)"; then
    printf '%s\n' "$log" >&2
    exit 1
  fi
  mkdir -p "$out"
  rm -rf "${out:?}/$language"
  mv "$gen/out/$language" "$out/$language"
done
echo "wrote $out/go and $out/python${version:+ (version $version)}"
