#!/usr/bin/env bash
# Pulumi's stock Node.js language host next to this project's Pulumi CLI, as a user's installation
# has them: a folder whose bin/ holds our `pulumi` and Pulumi's own `pulumi-language-nodejs` and
# `pulumi-resource-pulumi-nodejs` (and its Go and Python hosts, where present) from
# ../shared/pulumi-stock (copied, as its README says), made in
# the cache ($PVA_CACHE_DIR/stock-v<version>/bin) and refreshed when a file changed. Prints that
# folder. Exits 3 when ../shared/pulumi-stock holds no host of this version, as in a user's clone
# (PVA_SHARED_DIR names another folder than ../shared, e.g. from a git worktree).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
shared="${PVA_SHARED_DIR:-$PVA_ROOT/../shared}"
from="$shared/pulumi-stock/v$PVA_PULUMI_VERSION/bin"
for file in pulumi-language-nodejs pulumi-resource-pulumi-nodejs; do
  if [ ! -x "$from/$file" ]; then
    echo "[stock] $from/$file not found" >&2
    exit 3
  fi
done
[ -x "$PVA_PULUMI_DIR/bin/pulumi" ] || { echo "[stock] no Pulumi CLI in $PVA_PULUMI_DIR/bin: run scripts/setup.sh" >&2; exit 1; }
bin="$PVA_CACHE_DIR/stock-v$PVA_PULUMI_VERSION/bin"
mkdir -p "$bin"
# Pulumi's YAML host (pulumi-yaml's own, which setup.sh builds beside the CLI) runs YAML programs there too.
yaml_host=()
[ ! -x "$PVA_PULUMI_DIR/bin/pulumi-language-yaml" ] || yaml_host=("$PVA_PULUMI_DIR/bin/pulumi-language-yaml")
# Pulumi's Go and Python hosts, where the folder has them: they run Go programs and generate the
# Go and Python SDKs (scripts/plugin/sdk.sh).
others=()
for file in pulumi-language-go pulumi-language-python pulumi-language-python-exec; do
  [ ! -x "$from/$file" ] || others+=("$from/$file")
done
for file in "$from/pulumi-language-nodejs" "$from/pulumi-resource-pulumi-nodejs" "$PVA_PULUMI_DIR/bin/pulumi" "${yaml_host[@]}" "${others[@]}"; do
  name="${file##*/}"
  if ! cmp -s "$file" "$bin/$name"; then
    cp "$file" "$bin/$name.tmp.$$" && mv "$bin/$name.tmp.$$" "$bin/$name"
  fi
done
echo "$bin"
