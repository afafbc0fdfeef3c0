#!/usr/bin/env bash
# npm run plugin:pack: the provider plugin as Pulumi installs it,
#   dist/plugin/pulumi-resource-voice-agent-v<version>-linux-amd64.tar.gz
# (`pulumi plugin install resource voice-agent <version> --file <it>`). It holds the compiled
# package, schema.json, the launcher `pulumi-resource-voice-agent` (Node.js >= 22 on PATH runs it)
# and the few modules the plugin process loads: zod, undici, fast-json-patch, @grpc/grpc-js and
# google-protobuf, and @pulumi/pulumi's generated gRPC stubs (its `proto/` folder, nothing else).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
cd "$PVA_ROOT"
version="$(node -p 'require("./package.json").version')"
out="dist/plugin/pulumi-resource-voice-agent-v${version}-linux-amd64.tar.gz"
[ -f dist/plugin/main.js ] || npx tsc -p tsconfig.build.json
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/node_modules/@pulumi/pulumi"
cp -R dist "$stage/dist"
rm -f "$stage"/dist/plugin/*.tar.gz*
cp package.json schema.json LICENSE "$stage/"
for module in zod undici fast-json-patch google-protobuf @grpc/grpc-js @js-sdsl/ordered-map; do
  mkdir -p "$stage/node_modules/$(dirname "$module")"
  cp -R "node_modules/$module" "$stage/node_modules/$module"
done
cp node_modules/@pulumi/pulumi/package.json "$stage/node_modules/@pulumi/pulumi/"
cp -R node_modules/@pulumi/pulumi/proto "$stage/node_modules/@pulumi/pulumi/proto"
cat >"$stage/pulumi-resource-voice-agent" <<'SH'
#!/bin/sh
# The voice-agent resource provider plugin: runs on Node.js >= 22 found on PATH.
exec node "$(dirname "$0")/dist/plugin/main.js" "$@"
SH
chmod +x "$stage/pulumi-resource-voice-agent"
mkdir -p dist/plugin
# Written aside, then moved into place: tests that pack at the same time never read half a tarball.
tar -czf "$out.tmp.$$" -C "$stage" .
mv -f "$out.tmp.$$" "$out"
echo "$out ($(du -k "$out" | cut -f1) KB)"
