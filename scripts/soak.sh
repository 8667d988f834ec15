#!/usr/bin/env bash
# Engine soak: llmwb-soak (bench/engine/soak_engine.cpp) keeps the serving engine busy for
# MINUTES with random requests, random aborts and live re-plans (max_num_seqs,
# max_num_batched_tokens, gpu_memory_utilization budgets, block counts, speculative k), prints
# RSS every minute and at the end: RSS after warm-up vs at the end (flat within 5%?), every KV
# block back in the pool, requests completed / aborted. Exit status 1 when a check fails.
#   bash scripts/soak.sh [MINUTES=60] [extra llmwb-soak options, e.g. --model PATH --threads 2]
# Builds llmwb-soak in $BUILD_DIR (default build) unless LLMWB_SKIP_BUILD=1. Runs under a 4 GB
# address-space cap. Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
MINUTES=${1:-60}
shift || true
BUILD_DIR=${BUILD_DIR:-build}
if [ "${LLMWB_SKIP_BUILD:-0}" != 1 ]; then
  export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/llmwb/ccache} CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(pwd)} CCACHE_NOHASHDIR=1
  [ -f "$BUILD_DIR/build.ninja" ] || cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLLMWB_CUDA=OFF >/dev/null
  cmake --build "$BUILD_DIR" -j"${JOBS:-2}" --target llmwb-soak >/dev/null
fi
# Warm-up: the first minute, or a fifth of a shorter run.
(
  ulimit -v 4000000
  exec timeout $((MINUTES * 60 + 600)) "$BUILD_DIR/bench/engine/llmwb-soak" --minutes "$MINUTES" "$@"
)
