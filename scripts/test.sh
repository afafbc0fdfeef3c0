#!/usr/bin/env bash
# npm test: install what is missing, check that package-lock.json is in step with package.json, then
# lint, type-check and run every test in one vitest run of three projects (vitest.config.mts):
# `unit` (emulator, client, provider, report; no Pulumi CLI), `e2e` (end-to-end through the real
# Pulumi CLI, under this project's Node.js language host) and `stock` (what users run: the examples,
# the starter template, the packed tarball in fresh projects, the tutorial, YAML, the export, the
# policy pack, under Pulumi's own Node.js language host from ../shared/pulumi-stock, as users run
# them; scripts/stock-host.sh). Each file runs in one lane; the longest start first.
#
#   scripts/test.sh [VITEST_ARGS...]        all of the above (npm test)
#   scripts/test.sh unit [VITEST_ARGS...]   the unit project alone (npm run test:unit)
#   scripts/test.sh e2e [VITEST_ARGS...]    the e2e project alone (npm run test:e2e)
#   scripts/test.sh stock [VITEST_ARGS...]  the stock lane alone (npm run test:stock)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
project=""
case "${1:-}" in
  unit | e2e | stock) project="$1"; shift ;;
esac
bash "$PVA_ROOT/scripts/setup.sh"
source "$PVA_ROOT/scripts/env.sh"
cd "$PVA_ROOT"
# One version for the whole run (scripts/version.js): a file a test leaves in the tree must not turn
# the build's version into another (`.dirty`) between the archive packed and the program asking.
PVA_VERSION="${PVA_VERSION:-$(node scripts/version.js)}"
export PVA_VERSION

# The stock lane. Where ../shared/pulumi-stock is absent (a user's clone) it says it did not run, and
# its files run under this project's host instead; in CI (CI=true), which always has it, its absence
# fails.
stock_host() {
  local rc=0
  bash scripts/stock-host.sh >/dev/null || rc=$?
  if [ "$rc" -eq 3 ]; then
    if [ "${CI:-}" = "true" ]; then
      echo "stock lane: ../shared/pulumi-stock not found, and CI must run this lane" >&2
      return 1
    fi
    echo "stock lane: did not run: ../shared/pulumi-stock not found (its files run under this project's host)"
    export PVA_STOCK_LANE=off
    return 0
  fi
  return "$rc"
}

case "$project" in
  unit) exec npx vitest run --project unit "$@" ;;
  e2e | stock)
    stock_host
    if [ "$project" = stock ] && [ "${PVA_STOCK_LANE:-}" = off ]; then exit 0; fi
    exec npx vitest run --project "$project" "$@"
    ;;
esac
# The lock must satisfy `npm ci` (offline, nothing installed): it fails when package.json changed
# without the lock, or the lock lost entries npm ci expects (biome's packages for other platforms).
if ! lock_check="$(npm ci --dry-run --offline --ignore-scripts --no-audit --no-fund 2>&1 >/dev/null)"; then
  printf '%s\n' "$lock_check" | grep -v '^npm warn' | sed '/Clean install a project/,$d' | head -30 >&2
  echo "[test] package-lock.json is out of step with package.json: npm ci would refuse it (see above)" >&2
  exit 1
fi
npx biome check .
npx tsc -p tsconfig.json --noEmit
stock_host
start=$(date +%s)
npx vitest run "$@"
echo "[test] every test passed in $(( $(date +%s) - start )) s"
