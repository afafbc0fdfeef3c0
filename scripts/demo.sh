#!/usr/bin/env bash
# npm run demo: start the emulator, run a real `pulumi up` of the demo project (Pulumi.yaml at the
# repo root, program in demo/) on a local file backend, then show what went live.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
bash "$PVA_ROOT/scripts/setup.sh"
source "$PVA_ROOT/scripts/env.sh"
cd "$PVA_ROOT"

state="$PVA_ROOT/.pulumi-state"
rm -rf "$state" && mkdir -p "$state/backend"
export PULUMI_HOME="$state/home" PULUMI_BACKEND_URL="file://$state/backend?metadata=skip" PULUMI_CONFIG_PASSPHRASE="demo"
unset VOICE_AGENT_API_KEY VOICE_AGENT_BASE_URL

# The emulator, in memory, on a free port; its first line says where it listens.
node dist/emulator/cli.js --port 0 >"$state/emulator.log" 2>&1 &
emulator_pid=$!
trap 'kill "$emulator_pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  url="$(sed -n '1s/^voice-agent emulator listening on //p' "$state/emulator.log")"
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "${url:-}" ] || { cat "$state/emulator.log" >&2; echo "the emulator did not start" >&2; exit 1; }
echo "==> emulator listening on $url"

pulumi stack init demo --non-interactive >/dev/null
pulumi config set voice-agent:baseUrl "$url"
pulumi config set --secret voice-agent:apiKey va_test_local

# Runs a command and prints its output; fails when it printed a warning nobody asked for (a Node.js
# warning, a Pulumi `warning:` diagnostic): users see exactly what the demo shows.
quiet() {
  local out
  out="$("$@" 2>&1)" || { printf '%s\n' "$out"; return 1; }
  printf '%s\n' "$out"
  if grep -qiE '\(node:[0-9]+\)|ExperimentalWarning|warning:' <<<"$out"; then
    echo "demo: unexpected warning in the output of: $*" >&2
    return 1
  fi
}
no_warning_in() {
  if grep -q '"severity": *"warning"' "$1"; then echo "demo: unexpected warning in $1" >&2; return 1; fi
}

echo "==> pulumi up: publish version 0 and put it live"
quiet pulumi up --yes --non-interactive
echo "==> pulumi preview --expect-no-changes"
quiet pulumi preview --expect-no-changes --non-interactive >/dev/null && echo "no changes: the service matches the program"

echo "==> a pull request changes the prompt: the report a reviewer reads"
pulumi config set demo:exchanges true
pulumi config set demo:release 2026.11.2
pulumi preview --json --non-interactive >"$state/preview.json"
no_warning_in "$state/preview.json"
VOICE_AGENT_BASE_URL="$url" VOICE_AGENT_API_KEY=va_test_local node dist/gitops/cli.js --resolve "$state/preview.json"
echo "==> merged: pulumi up publishes version 1 and puts it live"
quiet pulumi up --yes --non-interactive --suppress-outputs | tail -n 4

echo "==> the change is reverted: the report names the version that comes back (from the preview alone)"
pulumi config rm demo:exchanges
pulumi config rm demo:release
pulumi preview --json --non-interactive >"$state/revert.json"
no_warning_in "$state/revert.json"
node dist/gitops/cli.js "$state/revert.json" | grep -A2 '^#### .* AgentVersion' | grep -v '^$'
echo "==> merged: pulumi up puts version 0 back live (nothing published)"
quiet pulumi up --yes --non-interactive --suppress-outputs | tail -n 4
quiet pulumi preview --expect-no-changes --non-interactive >/dev/null && echo "no changes: the service matches the program"

echo "==> what went live"
VOICE_AGENT_BASE_URL="$url" VOICE_AGENT_API_KEY=va_test_local node demo/show.js "$(pulumi stack output agentId)"
