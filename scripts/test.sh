#!/usr/bin/env bash
# npm test: install what is missing, check that package-lock.json is in step with package.json, then
# lint, type-check and run every test: the `unit` project (emulator, client, provider, report; no
# Pulumi CLI) and the `e2e` project (end-to-end through the real Pulumi CLI).
#
#   scripts/test.sh [VITEST_ARGS...]        all of the above (npm test)
#   scripts/test.sh unit [VITEST_ARGS...]   the unit project alone (npm run test:unit)
#   scripts/test.sh e2e [VITEST_ARGS...]    the e2e project alone (npm run test:e2e)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
project=""
case "${1:-}" in
  unit | e2e) project="$1"; shift ;;
esac
bash "$PVA_ROOT/scripts/setup.sh"
source "$PVA_ROOT/scripts/env.sh"
cd "$PVA_ROOT"
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
