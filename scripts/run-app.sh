#!/usr/bin/env bash
# Builds the desktop app (like scripts/test.sh: dependencies, cmake, ninja) and starts it.
# Environment: LLMWB_SKIP_DEPS=1 skips apt-get, BUILD_DIR (default build), JOBS.
# Arguments are passed to llm-workbench (e.g. --model PATH, --data-dir DIR).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
BUILD_DIR="${BUILD_DIR:-build}"
JOBS="${JOBS:-$(nproc)}"
[ "${LLMWB_SKIP_DEPS:-0}" = 1 ] || bash scripts/install-deps.sh
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/llmwb/ccache}"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLLMWB_BUILD_GUI=ON
cmake --build "$BUILD_DIR" --target llm-workbench -j "$JOBS"
exec "$BUILD_DIR/app/gui/llm-workbench" "$@"
