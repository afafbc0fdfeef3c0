# shellcheck shell=bash
# Sourced by every script: where the toolchain lives and how Pulumi runs offline.
# Computes paths only; scripts/setup.sh installs what they point at.

PVA_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PVA_ROOT

# One source of truth for the Pulumi version: the exact @pulumi/pulumi pin in package.json.
PVA_PULUMI_VERSION="$(sed -n 's/^ *"@pulumi\/pulumi": *"\([0-9.]*\)".*/\1/p' "$PVA_ROOT/package.json")"
PVA_NODE_VERSION="24.9.0"
PVA_CACHE_DIR="${PVA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-voice-agent}"
PVA_PULUMI_DIR="$PVA_CACHE_DIR/pulumi-v$PVA_PULUMI_VERSION"
PVA_NODE_DIR="$PVA_CACHE_DIR/node-$PVA_NODE_VERSION"
export PVA_PULUMI_VERSION PVA_NODE_VERSION PVA_CACHE_DIR PVA_PULUMI_DIR PVA_NODE_DIR

pva_node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

# Node >= 22: the system's when it is new enough, else the one setup.sh installs into the cache.
if [ -x "$PVA_NODE_DIR/node_modules/node/bin/node" ] && [ "$(pva_node_major)" -lt 22 ]; then
  export PATH="$PVA_NODE_DIR/node_modules/node/bin:$PATH"
fi
export PATH="$PVA_PULUMI_DIR/bin:$PVA_ROOT/node_modules/.bin:$PATH"

# Pulumi runs offline: no update checks, no plugin downloads, local secrets.
export PULUMI_SKIP_UPDATE_CHECK=true
export PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true
export PULUMI_NODEJS_TRANSPILE_ONLY="${PULUMI_NODEJS_TRANSPILE_ONLY:-true}"
