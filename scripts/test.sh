#!/usr/bin/env bash
# npm test: install what is missing, check that package-lock.json is in step with package.json, then
# lint, type-check and run every test: the `unit` project (emulator, client, provider, report; no
# Pulumi CLI) and the `e2e` project (end-to-end through the real Pulumi CLI).
#
# Then the stock lane: the e2e tests of what users run (the examples, the starter template, the
# packed tarball in fresh projects (on the newest SDK, the README's quick install, the emulator in a
# user's tests), the policy packs, the interruption test), again, under Pulumi's
# own Node.js language host (../shared/pulumi-stock; scripts/stock-host.sh), as users run them.
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

# The stock lane. Where ../shared/pulumi-stock is absent (a user's clone) it says it did not run and
# passes; in CI (CI=true), which always has it, its absence fails.
stock_lane() {
  local bin rc=0 start files
  bin="$(bash scripts/stock-host.sh)" || rc=$?
  if [ "$rc" -eq 3 ]; then
    if [ "${CI:-}" = "true" ]; then
      echo "stock lane: ../shared/pulumi-stock not found, and CI must run this lane" >&2
      return 1
    fi
    echo "stock lane: did not run: ../shared/pulumi-stock not found"
    return 0
  fi
  [ "$rc" -eq 0 ] || return "$rc"
  shopt -s nullglob
  # The policy pack's tests may not exist in every checkout: a glob that matches nothing adds nothing.
  files=(
    test/e2e/examples.e2e.test.ts
    test/e2e/template.e2e.test.ts
    test/e2e/upgrade.e2e.test.ts
    test/e2e/freshProject.e2e.test.ts
    test/e2e/firstHour.e2e.test.ts
    test/e2e/tutorial.e2e.test.ts
    test/e2e/emulatorInUserTests.e2e.test.ts
    test/e2e/promoteWorkspaces.e2e.test.ts
    test/e2e/verifiedGoLive.e2e.test.ts
    test/e2e/heldBack.e2e.test.ts
    test/e2e/watch.e2e.test.ts
    test/e2e/evidenceValues.e2e.test.ts
    test/e2e/yaml.e2e.test.ts
    test/e2e/pluginImport.e2e.test.ts
    test/export/export.e2e.test.ts
    test/reliability/interruption.test.ts
    test/policy/*.e2e.test.ts
  )
  shopt -u nullglob
  echo "stock lane: ${#files[@]} files under Pulumi's stock language host ($bin)"
  start=$(date +%s)
  PVA_PULUMI_HOST=stock npx vitest run --project e2e "$@" "${files[@]}"
  echo "stock lane: passed in $(( $(date +%s) - start )) s"
}

if [ "$project" = stock ]; then
  stock_lane "$@"
  exit
fi
if [ -n "$project" ]; then
  exec npx vitest run --project "$project" "$@"
fi
# The lock must satisfy `npm ci` (offline, nothing installed): it fails when package.json changed
# without the lock, or the lock lost entries npm ci expects (biome's packages for other platforms).
if ! lock_check="$(npm ci --dry-run --offline --ignore-scripts --no-audit --no-fund 2>&1 >/dev/null)"; then
  printf '%s\n' "$lock_check" | grep -v '^npm warn' | sed '/Clean install a project/,$d' | head -30 >&2
  echo "[test] package-lock.json is out of step with package.json: npm ci would refuse it (see above)" >&2
  exit 1
fi
npx biome check .
npx tsc -p tsconfig.json --noEmit
npx vitest run "$@"
stock_lane
