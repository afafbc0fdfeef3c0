#!/usr/bin/env bash
# The plugin's archives (scripts/plugin/pack.js, which says what they hold), with this project's
# toolchain on PATH: `bash scripts/plugin/pack.sh [--host]`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
exec node "$PVA_ROOT/scripts/plugin/pack.js" "$@"
