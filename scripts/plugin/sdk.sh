#!/usr/bin/env bash
# npm run plugin:sdk [OUT]: the Go and Python SDKs of the provider plugin, generated from schema.json
# by `pulumi package gen-sdk` (Pulumi's Go and Python language hosts generate them; they come from
# ../shared/pulumi-stock, through scripts/stock-host.sh), written to OUT/go and OUT/python
# (default: the repository's sdk/, whose go.mod and go.sum are kept by hand and left alone).
# test/plugin/sdk.e2e.test.ts regenerates into a temporary folder and fails when sdk/ differs.
# Exits 3 when ../shared/pulumi-stock holds no hosts (as scripts/stock-host.sh does).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
out="$(realpath -m "${1:-$PVA_ROOT/sdk}")"
cd "$PVA_ROOT"
bin="$(bash scripts/stock-host.sh)"
for host in pulumi-language-go pulumi-language-python; do
  [ -x "$bin/$host" ] || { echo "[sdk] $host not found in ../shared/pulumi-stock" >&2; exit 3; }
done
gen="$(mktemp -d)"
trap 'rm -rf "$gen"' EXIT
for language in go python; do
  if ! log="$(PATH="$bin:$PATH" pulumi package gen-sdk schema.json --language "$language" --out "$gen" 2>&1)"; then
    printf '%s\n' "$log" >&2
    exit 1
  fi
  mkdir -p "$out"
  rm -rf "${out:?}/$language"
  mv "$gen/$language" "$out/$language"
done
echo "wrote $out/go and $out/python"
