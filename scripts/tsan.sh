#!/usr/bin/env bash
# ThreadSanitizer run of the threaded code: the engine worker, chat and benchmark services,
# storage, the serving engine and the kernels' thread pool.
# Builds with clang-14 -fsanitize=thread in $BUILD_DIR (default build-tsan), runs those tests
# under ctest with TSAN_OPTIONS (suppressions: tests/tsan/suppressions.txt — Qt is not
# instrumented; each entry says why), prints per test passed / races, and a summary.
#   bash scripts/tsan.sh [ctest -R regex]     (default: the tests below)
# Exit status 1 when a test failed or a race was reported. Not part of CI.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD_DIR=${BUILD_DIR:-build-tsan}
JOBS=${JOBS:-2}
TESTS=(tst_kernels_thread_pool test_serving_engine test_serving_bench_session
  tst_app_storage tst_app_engine_worker tst_app_engine_tuning
  tst_app_chat_engine tst_app_chat_presets tst_app_bench_worker tst_app_bench_store)
# tst_app_crash_recovery is left out: clang-14's TSan runtime fails an internal check
# (tsan_rtl.cpp:234, SlotAttachAndLock after fork) when the test forks its helper process.
REGEX=${1:-^($(IFS='|'; echo "${TESTS[*]}"))\$}
command -v clang++-14 >/dev/null || { echo "tsan.sh: clang++-14 not found (apt-get install -y clang-14)" >&2; exit 2; }
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/llmwb/ccache} CCACHE_BASEDIR=${CCACHE_BASEDIR:-$ROOT} CCACHE_NOHASHDIR=1
if [ "${LLMWB_SKIP_BUILD:-0}" != 1 ]; then
  mkdir -p "$BUILD_DIR"
  F="-fsanitize=thread -fno-omit-frame-pointer"
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DLLMWB_CUDA=OFF -DLLMWB_BUILD_GUI=OFF -DCMAKE_C_FLAGS="$F" -DCMAKE_CXX_FLAGS="$F" \
    -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread \
    >"$BUILD_DIR/cmake.log" 2>&1 || { cat "$BUILD_DIR/cmake.log"; exit 2; }
  cmake --build "$BUILD_DIR" -j"$JOBS" --target "${TESTS[@]}" llmwb_stream_writer_helper \
    >"$BUILD_DIR/build.log" 2>&1 || { tail -40 "$BUILD_DIR/build.log"; exit 2; }
fi
LOGDIR=$ROOT/$BUILD_DIR/tsan-logs
rm -rf "$LOGDIR"
mkdir -p "$LOGDIR"
# log_path: one file per process (the crash-recovery test starts helper processes).
export TSAN_OPTIONS="suppressions=$ROOT/tests/tsan/suppressions.txt second_deadlock_stack=1 print_suppressions=1 history_size=4 halt_on_error=0 exitcode=66 log_path=$LOGDIR/tsan"
(cd "$BUILD_DIR" && ctest -R "$REGEX" -j"$JOBS" --timeout 1800 --output-on-failure) >"$LOGDIR/ctest.log" 2>&1
ctest_rc=$?
grep -E '^ *[0-9]+/[0-9]+ Test' "$LOGDIR/ctest.log"
races=$(cat "$LOGDIR"/tsan.* 2>/dev/null | grep -c '^WARNING: ThreadSanitizer' || true)
echo
echo "== ThreadSanitizer =="
grep -E 'tests passed|tests failed' "$LOGDIR/ctest.log"
echo "reports: $races (logs: $LOGDIR/tsan.*)"
if [ "$races" -gt 0 ]; then
  # One line per distinct report: its kind and the first frame of ours.
  cat "$LOGDIR"/tsan.* | awk '/^WARNING: ThreadSanitizer/{w=$0; getline; getline; print w " | " $0}' |
    sed 's/(.*)//' | sort | uniq -c | sort -rn | head -20
fi
[ "$ctest_rc" -eq 0 ] && [ "$races" -eq 0 ]
