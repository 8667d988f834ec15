#!/usr/bin/env bash
# Renders the main window states to PNG under Xvfb: empty chat, Markdown rendering, a streaming
# answer, the finished answer with its figures, the Engine dock under a load test (block map and
# timeline; charts while the pool is shrunk through the Tuning dock; the memory panel), the
# Tuning dock, dark theme, Simplified Chinese, 1280x720 (charts and Tuning docked).
# Usage: scripts/screenshots.sh [OUT_DIR]   (default: screenshots/)
# Environment: LLMWB_SKIP_BUILD=1 uses the existing build, BUILD_DIR (default build), JOBS.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
OUT="$(realpath -m "${1:-screenshots}")"
BUILD_DIR="${BUILD_DIR:-build}"
JOBS="${JOBS:-$(nproc)}"
if [ "${LLMWB_SKIP_BUILD:-0}" != 1 ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLLMWB_BUILD_GUI=ON
  cmake --build "$BUILD_DIR" --target llm-workbench -j "$JOBS"
fi
mkdir -p "$OUT"
# A fresh temporary data folder is used (the demo model is generated into it).
xvfb-run -a -s "-screen 0 1600x900x24" "$BUILD_DIR/app/gui/llm-workbench" --screenshot "$OUT"
echo "screenshots in $OUT:"
ls -1 "$OUT"
