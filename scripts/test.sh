#!/usr/bin/env bash
# The test command (README, .ci/run): installs dependencies, builds, fetches test assets and runs
# every test; then builds the Qt-free configuration (engine, kernels, CLI, their tests and the CUDA
# backend on the CPU emulator, cudasim) with ASan+UBSan and runs the engine and cudasim tests.
# The two whole-model emulator runs (test_demo_model_cuda_sim, tst_cuda_engine_greedy_sim: ~9 of
# the sanitizer pass's 11 minutes) run in the first pass only; LLMWB_ASAN_ALL=1 adds them here too.
# Environment: LLMWB_SKIP_DEPS=1 skips apt-get, LLMWB_SKIP_ASAN=1 skips the sanitizer pass,
# JOBS=N sets build parallelism, LLMWB_CUDA_ARCHS the CUDA architectures compiled when nvcc is
# present (default 90 only, to keep CI short; release builds default to 80;86;89;90 + PTX).
# Both builds carry line tables only (-g1): enough for backtraces and sanitizer reports with file
# and line, and a quarter less compile time than full debug info (a build for a debugger:
# configure `build` yourself with the default RelWithDebInfo flags). The sanitizer pass builds only
# the executables its tests run (and what they depend on), not the CLI's own tests, the report
# tests or the benchmarks, and skips the emulator tests' _reverse twins (the same code in another
# thread order; the first pass runs them).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
JOBS="${JOBS:-$(nproc)}"
[ "${LLMWB_SKIP_DEPS:-0}" = 1 ] || bash scripts/install-deps.sh
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/llmwb/ccache}"
bash scripts/check-format.sh
bash scripts/fetch-test-assets.sh

echo "== build (RelWithDebInfo) =="
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
      -DCMAKE_CUDA_ARCHITECTURES="${LLMWB_CUDA_ARCHS:-90}"
cmake --build build -j "$JOBS"
echo "== tests =="
(cd build && ctest --output-on-failure -j "$JOBS")

if [ "${LLMWB_SKIP_ASAN:-0}" != 1 ]; then
  echo "== engine tests under AddressSanitizer + UndefinedBehaviorSanitizer =="
  # The Qt-free configuration (what the GPU machine builds): every engine and kernel test is a
  # plain executable, so this pass also proves that they build and run without Qt.
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DLLMWB_SANITIZE=ON \
        -DLLMWB_WITH_QT=OFF -DLLMWB_CUDA=OFF -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
        -DCMAKE_C_FLAGS_DEBUG="-O1 -g1"
  ASAN_LABELS='engine|cudasim'
  ASAN_EXCLUDE='^(test_demo_model_cuda_sim|tst_cuda_engine_greedy_sim|.*_sim_reverse)$'
  [ "${LLMWB_ASAN_ALL:-0}" = 1 ] && ASAN_EXCLUDE='^$'
  # What those tests run: the Qt-free test executables (llmwb_plain_tests) and every program
  # under build-asan that a test's command names (node and bash tests). Before the build ctest
  # knows no path for a command given as a target name, hence the target.
  mapfile -t asan_exes < <(cd build-asan && ctest --show-only=json-v1 -L "$ASAN_LABELS" \
      -E "$ASAN_EXCLUDE" | python3 -c '
import json, os, sys
root = os.path.realpath(".")
out = set()
for t in json.load(sys.stdin)["tests"]:
    for arg in t.get("command", []):
        p = os.path.realpath(arg) if arg.startswith("/") else ""
        if p.startswith(root + "/"):
            out.add(os.path.relpath(p, root))
print("\n".join(sorted(out)))')
  ninja -C build-asan -j "$JOBS" llmwb_plain_tests "${asan_exes[@]}"
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest --output-on-failure -j "$JOBS" -L "$ASAN_LABELS" -E "$ASAN_EXCLUDE")
fi
