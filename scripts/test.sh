#!/usr/bin/env bash
# npm test: install what is missing, then lint, type-check and run every test (unit, emulator,
# client, provider and end-to-end through the real Pulumi CLI).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
bash "$PVA_ROOT/scripts/setup.sh"
source "$PVA_ROOT/scripts/env.sh"
cd "$PVA_ROOT"
npx biome check .
npx tsc -p tsconfig.json --noEmit
npx vitest run "$@"
