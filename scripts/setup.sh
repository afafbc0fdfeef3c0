#!/usr/bin/env bash
# Installs everything the project needs, idempotently: Node >= 22, the npm dependencies, the Pulumi
# CLI and its Node.js language host built from Go modules (cached outside the repo, keyed by
# version), and the compiled package. Safe to run concurrently: the Pulumi build holds a lock.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$PVA_ROOT"
log() { printf '[setup] %s\n' "$*" >&2; }

# 1. Node >= 22 (the machines ship 20): the npm registry's `node` package carries the binary.
if [ "$(pva_node_major)" -lt 22 ]; then
  if [ ! -x "$PVA_NODE_DIR/node_modules/node/bin/node" ]; then
    log "installing Node $PVA_NODE_VERSION into $PVA_NODE_DIR"
    tmp="$PVA_NODE_DIR.tmp.$$"
    rm -rf "$tmp" && mkdir -p "$tmp"
    npm install --no-save --no-package-lock --no-audit --no-fund --loglevel=error --prefix "$tmp" "node@$PVA_NODE_VERSION" >&2
    "$tmp/node_modules/node/bin/node" --version >/dev/null
    rm -rf "$PVA_NODE_DIR" && mv "$tmp" "$PVA_NODE_DIR"
  fi
  export PATH="$PVA_NODE_DIR/node_modules/node/bin:$PATH"
fi
log "node $(node --version)"

# 2. npm dependencies exactly as the lock file pins them (`npm ci`), when the lock changed since the
#    last install. npm ci refuses a lock that is out of step with package.json; scripts/test.sh checks
#    that too, so a drifted lock fails `npm test` even where nothing needs installing.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  log "installing npm dependencies (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error >&2
fi

# 3. The Pulumi CLI and language host, built once per version and cached.
build_pulumi() {
  local gomod_version
  gomod_version="$(sed -n 's/^[[:space:]]*github.com\/pulumi\/pulumi\/pkg\/v3 v\([0-9.]*\).*/\1/p' toolchain/go.mod)"
  if [ "$gomod_version" != "$PVA_PULUMI_VERSION" ]; then
    log "toolchain/go.mod pins pulumi $gomod_version but package.json pins @pulumi/pulumi $PVA_PULUMI_VERSION"
    exit 1
  fi
  command -v go >/dev/null || { log "Go is needed to build the Pulumi CLI"; exit 1; }
  log "building Pulumi v$PVA_PULUMI_VERSION from Go modules into $PVA_PULUMI_DIR (first run only: about 5 minutes on 2 cores, plus module downloads)"
  local tmp="$PVA_PULUMI_DIR.tmp.$$" ldflags
  rm -rf "$tmp" && mkdir -p "$tmp/bin"
  ldflags="-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$PVA_PULUMI_VERSION"
  (
    cd toolchain
    export CGO_ENABLED=0 GOFLAGS=-mod=readonly
    go build -trimpath -ldflags "$ldflags" -o "$tmp/bin/pulumi" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi
    go build -trimpath -ldflags "$ldflags" -o "$tmp/bin/pulumi-language-nodejs" ./langhost
  )
  cp toolchain/pulumi-resource-pulumi-nodejs toolchain/lazy-sdk.js "$tmp/bin/"
  "$tmp/bin/pulumi" version >/dev/null
  rm -rf "$PVA_PULUMI_DIR" && mv "$tmp" "$PVA_PULUMI_DIR"
}
mkdir -p "$PVA_CACHE_DIR"
if [ ! -x "$PVA_PULUMI_DIR/bin/pulumi" ] || [ ! -x "$PVA_PULUMI_DIR/bin/pulumi-language-nodejs" ]; then
  exec 9>"$PVA_CACHE_DIR/pulumi-v$PVA_PULUMI_VERSION.lock"
  flock 9
  if [ ! -x "$PVA_PULUMI_DIR/bin/pulumi" ] || [ ! -x "$PVA_PULUMI_DIR/bin/pulumi-language-nodejs" ]; then
    start=$(date +%s)
    build_pulumi
    log "built Pulumi in $(( $(date +%s) - start ))s"
  fi
  exec 9>&-
fi
# The language host is ours (toolchain/langhost): rebuild it alone when its sources changed since the
# cached build (seconds with Go's build cache), so a change to it never runs stale.
langhost_hash="$(cat toolchain/go.mod toolchain/go.sum toolchain/langhost/*.go | sha256sum | cut -c1-16)"
if [ "$(cat "$PVA_PULUMI_DIR/bin/.langhost-hash" 2>/dev/null)" != "$langhost_hash" ]; then
  exec 9>"$PVA_CACHE_DIR/pulumi-v$PVA_PULUMI_VERSION.lock"
  flock 9
  if [ "$(cat "$PVA_PULUMI_DIR/bin/.langhost-hash" 2>/dev/null)" != "$langhost_hash" ]; then
    log "building the language host (its sources changed)"
    (
      cd toolchain
      export CGO_ENABLED=0 GOFLAGS=-mod=readonly
      go build -trimpath -ldflags "-s -w" -o "$PVA_PULUMI_DIR/bin/pulumi-language-nodejs.tmp" ./langhost
    )
    mv "$PVA_PULUMI_DIR/bin/pulumi-language-nodejs.tmp" "$PVA_PULUMI_DIR/bin/pulumi-language-nodejs"
    echo "$langhost_hash" >"$PVA_PULUMI_DIR/bin/.langhost-hash"
  fi
  exec 9>&-
fi
# The dynamic-provider plugin and the preload both Node.js processes get are kept in the repo:
# refresh them when they changed.
for file in pulumi-resource-pulumi-nodejs lazy-sdk.js; do
  cmp -s "toolchain/$file" "$PVA_PULUMI_DIR/bin/$file" || cp "toolchain/$file" "$PVA_PULUMI_DIR/bin/"
done
log "$(pulumi version) at $PVA_PULUMI_DIR/bin"

# 3b. Pulumi's YAML language host (pulumi-yaml v1.25.0, which pins pulumi v3.206.0: the newest the Go
#     module proxy serves that builds), placed beside the CLI as a user's installation has it, for
#     YAML programs on the provider plugin (docs/plugin.md). Built once (about 90 s) and reused;
#     without Go it is left out, and the YAML tests say so.
PVA_YAML_VERSION="1.25.0"
if [ ! -x "$PVA_PULUMI_DIR/bin/pulumi-language-yaml" ]; then
  if command -v go >/dev/null; then
    exec 9>"$PVA_CACHE_DIR/pulumi-v$PVA_PULUMI_VERSION.lock"
    flock 9
    if [ ! -x "$PVA_PULUMI_DIR/bin/pulumi-language-yaml" ]; then
      log "building pulumi-language-yaml v$PVA_YAML_VERSION from Go modules (first run only: about 90 s)"
      yaml_tmp="$(mktemp -d)"
      (
        cd "$yaml_tmp"
        CGO_ENABLED=0 GOBIN="$yaml_tmp/bin" go install -trimpath -ldflags "-s -w" \
          "github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml@v$PVA_YAML_VERSION"
      )
      mv "$yaml_tmp/bin/pulumi-language-yaml" "$PVA_PULUMI_DIR/bin/pulumi-language-yaml"
      rm -rf "$yaml_tmp"
    fi
    exec 9>&-
  else
    log "Go not found: pulumi-language-yaml left out (YAML programs and their tests need it)"
  fi
fi

# 4. The package itself, and its commands on node_modules/.bin (npm links a package's bins for its
#    dependents, not for itself), so `npx voice-agent-emulator` works in this repository too. Built
#    into a fresh folder that then replaces dist/, so dist/ holds nothing a removed source left
#    behind (npm pack packs all of it); `npm pack` outside the tests does the same (`prepack`).
rm -rf dist.build
npx tsc -p tsconfig.build.json --outDir dist.build
node scripts/legacy-kinds.js dist.build
node scripts/version.js --write dist.build >/dev/null
rm -rf dist.old
[ ! -d dist ] || mv dist dist.old
mv dist.build dist
rm -rf dist.old
node -e 'for (const [name, file] of Object.entries(require("./package.json").bin)) console.log(name, file)' |
  while read -r name file; do
    chmod +x "$file"
    ln -sf "../../$file" "node_modules/.bin/$name"
  done
