#!/usr/bin/env bash
# The test command (README, .ci/run): installs dependencies, builds, fetches test assets and runs
# every test; then builds the Qt-free configuration (engine, kernels, CLI and their tests) with
# ASan+UBSan and runs the engine tests (label engine) under it. The CUDA emulator tests (label
# cudasim) run in the first pass only; LLMWB_ASAN_ALL=1 runs them under the sanitizers too.
# Environment: LLMWB_SKIP_DEPS=1 skips apt-get, LLMWB_SKIP_ASAN=1 skips the sanitizer pass,
# JOBS=N sets build parallelism, LLMWB_CUDA_ARCHS the CUDA architectures compiled when nvcc is
# present (default 90 only, to keep CI short; release builds default to 80;86;89;90 + PTX).
# Both builds carry line tables only (-g1): enough for backtraces and sanitizer reports with file
# and line, and a quarter less compile time than full debug info (a build for a debugger:
# configure `build` yourself with the default RelWithDebInfo flags). The sanitizer pass builds only
# what its tests run. Both builds are unity builds (CMake joins up to 8 source files of a target
# into one translation unit: the headers are parsed once per batch instead of once per file;
# LLMWB_UNITY=0 turns it off). Unity builds need file-local names (anonymous namespaces, static
# functions, constants) to be distinct across the files of a target: a clash is a compile error
# here ("redefinition of ..."); scripts/unity-clashes.py lists them from a configured build dir.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
JOBS="${JOBS:-$(nproc)}"
UNITY=ON
[ "${LLMWB_UNITY:-1}" = 0 ] && UNITY=OFF
[ "${LLMWB_SKIP_DEPS:-0}" = 1 ] || bash scripts/install-deps.sh
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/llmwb/ccache}"
bash scripts/check-format.sh
bash scripts/fetch-test-assets.sh

# The engine tests (label engine) run in the sanitizer pass only, unless it is skipped.
ENGINE_TESTS_FIRST=OFF
[ "${LLMWB_SKIP_ASAN:-0}" = 1 ] && ENGINE_TESTS_FIRST=ON
echo "== build (RelWithDebInfo) =="
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLLMWB_ENGINE_TESTS=$ENGINE_TESTS_FIRST \
      -DCMAKE_UNITY_BUILD=$UNITY \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
      -DCMAKE_CUDA_ARCHITECTURES="${LLMWB_CUDA_ARCHS:-90}"
cmake --build build -j "$JOBS"
echo "== tests =="
(cd build && ctest --output-on-failure -j "$JOBS")

if [ "${LLMWB_SKIP_ASAN:-0}" != 1 ]; then
  echo "== engine tests under AddressSanitizer + UndefinedBehaviorSanitizer =="
  # The Qt-free configuration (what the GPU machine builds): every engine and kernel test is a
  # plain executable, so this pass also proves that they build and run without Qt.
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DLLMWB_SANITIZE=ON -DCMAKE_UNITY_BUILD=$UNITY \
        -DLLMWB_WITH_QT=OFF -DLLMWB_CUDA=OFF -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
        -DCMAKE_C_FLAGS_DEBUG="-O1 -g1"
  # CI's pass: the engine tests (parsers of untrusted input, kernels, runtime, serving, server,
  # remote client). LLMWB_ASAN_ALL=1 adds the CUDA emulator tests (label cudasim, ~7 of the
  # pass's minutes of CPU with their build; the first pass runs them) and the two whole-model
  # emulator runs.
  ASAN_LABELS='engine'
  ASAN_EXCLUDE='^$'
  [ "${LLMWB_ASAN_ALL:-0}" = 1 ] && ASAN_LABELS='engine|cudasim'
  # What those tests run: the test targets named like the tests, and every program under
  # build-asan that a test's command names (node and bash tests). Before the build ctest knows
  # no path for a command given as a target name, hence the names.
  mapfile -t asan_targets < <(cd build-asan && ctest --show-only=json-v1 -L "$ASAN_LABELS" \
      -E "$ASAN_EXCLUDE" | python3 -c '
import json, os, subprocess, sys
root = os.path.realpath(".")
targets = set(subprocess.run(["ninja", "-t", "targets", "all"], capture_output=True, text=True,
                             check=True).stdout.split())
out = set()
for t in json.load(sys.stdin)["tests"]:
    if t["name"] + ":" in targets:
        out.add(t["name"])
    for arg in t.get("command") or []:
        p = os.path.realpath(arg) if arg.startswith("/") else ""
        if p.startswith(root + "/"):
            out.add(os.path.relpath(p, root))
print("\n".join(sorted(out)))')
  [ ${#asan_targets[@]} -gt 0 ] || { echo "test.sh: no sanitizer tests found" >&2; exit 1; }
  [ "${LLMWB_ASAN_ALL:-0}" = 1 ] && asan_targets+=(llmwb_plain_tests)
  ninja -C build-asan -j "$JOBS" "${asan_targets[@]}"
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest --output-on-failure -j "$JOBS" -L "$ASAN_LABELS" -E "$ASAN_EXCLUDE")
fi
