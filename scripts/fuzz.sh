#!/usr/bin/env bash
# Runs every libFuzzer target (fuzz/) for MINUTES each, one after another (one core), and prints
# per target: executions, exec/s, corpus size and findings (crash / oom / timeout / leak files).
#   bash scripts/fuzz.sh [MINUTES_PER_TARGET=1] [TARGET...]
# Builds with clang-14 in $BUILD_DIR (default build-fuzz; -DLLMWB_FUZZ=ON instruments the whole
# build with ASan + UBSan + coverage). Seeds come from the project's writers and test data
# (make_fuzz_corpus); the growing corpus stays in $BUILD_DIR/corpus/<target> between runs, and
# findings go to $BUILD_DIR/findings/<target>/. Reproducers of past findings in
# fuzz/regressions/<target>/ are run first. Not part of CI. Exit status: 1 when anything was found.
# Needs: apt-get install -y clang-14 libclang-rt-14-dev
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
MINUTES=${1:-1}
shift || true
SECONDS_PER_TARGET=$(awk -v m="$MINUTES" 'BEGIN { s = int(m * 60); if (s < 1) exit 1; print s }') ||
  { echo "fuzz.sh: MINUTES_PER_TARGET must be a positive number" >&2; exit 2; }
BUILD_DIR=${BUILD_DIR:-build-fuzz}
JOBS=${JOBS:-2}
TOKENIZERS=${LLMWB_TEST_ASSETS:-$HOME/.cache/llmwb/test-assets}/tokenizers
ALL_TARGETS=(fuzz_gguf fuzz_safetensors fuzz_tokenizer_json fuzz_chat_template fuzz_prompts_jsonl
  fuzz_chat_messages fuzz_report_files)
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=("${ALL_TARGETS[@]}")

# max_len per target: room for the seeds that matter (small models, cut-down tokenizers).
max_len() {
  case $1 in
    fuzz_gguf) echo 131072 ;;
    fuzz_safetensors) echo 65536 ;;
    fuzz_tokenizer_json) echo 65536 ;;
    fuzz_chat_template) echo 16384 ;;
    fuzz_prompts_jsonl) echo 4096 ;;
    fuzz_chat_messages) echo 16384 ;;
    fuzz_report_files) echo 65536 ;;
    *) echo 16384 ;;
  esac
}

command -v clang++-14 >/dev/null || { echo "fuzz.sh: clang++-14 not found (apt-get install -y clang-14 libclang-rt-14-dev)" >&2; exit 2; }
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/llmwb/ccache} CCACHE_BASEDIR=${CCACHE_BASEDIR:-$ROOT} CCACHE_NOHASHDIR=1
if [ "${LLMWB_SKIP_BUILD:-0}" != 1 ]; then
  mkdir -p "$BUILD_DIR"
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DLLMWB_FUZZ=ON -DLLMWB_WITH_QT=OFF -DLLMWB_BUILD_TESTS=OFF -DLLMWB_CUDA=OFF >"$BUILD_DIR/cmake.log" 2>&1 ||
    { cat "$BUILD_DIR/cmake.log"; exit 2; }
  cmake --build "$BUILD_DIR" -j"$JOBS" --target make_fuzz_corpus "${TARGETS[@]}" >"$BUILD_DIR/build.log" 2>&1 ||
    { tail -40 "$BUILD_DIR/build.log"; exit 2; }
fi
B=$ROOT/$BUILD_DIR
SEEDS=$B/seeds
if [ ! -d "$SEEDS/report_files" ]; then
  rm -rf "$SEEDS"
  TOKDIRS=()
  for t in llama2 llama3_1 qwen3; do [ -d "$TOKENIZERS/$t" ] && TOKDIRS+=("$TOKENIZERS/$t"); done
  ASAN_OPTIONS=detect_leaks=0 "$B/fuzz/make_fuzz_corpus" "$SEEDS" "$ROOT" "${TOKDIRS[@]}" || exit 2
fi
MODEL=""
[ -f "$SEEDS/models/qwen3.gguf" ] && MODEL=$SEEDS/models/qwen3.gguf
export LLMWB_FUZZ_MODEL=$MODEL
# The demo model (when no qwen3 model) goes into a scratch data folder, not the user's.
export XDG_DATA_HOME=$B/xdg-data

status=0
printf '\n%-22s %10s %9s %8s %9s %8s  %s\n' target executions exec/s corpus new_cov rss_mb findings
for t in "${TARGETS[@]}"; do
  exe=$B/fuzz/$t
  seed_dir=$SEEDS/${t#fuzz_}
  corpus=$B/corpus/$t
  findings=$B/findings/$t
  mkdir -p "$corpus" "$findings" "$seed_dir"
  log=$B/logs/$t.log
  mkdir -p "$B/logs"
  opts=(-rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=20 -max_len="$(max_len "$t")"
    -artifact_prefix="$findings/" -print_final_stats=1)
  # Past findings first: each must now run clean.
  reg=$ROOT/fuzz/regressions/$t
  regress="-"
  if [ -d "$reg" ] && [ -n "$(ls -A "$reg" 2>/dev/null)" ]; then
    if "$exe" "${opts[@]}" "$reg"/* >"$B/logs/$t.regressions.log" 2>&1; then
      regress="$(ls "$reg" | wc -l) ok"
    else
      regress="FAILED (see $B/logs/$t.regressions.log)"
      status=1
    fi
  fi
  before=$(ls "$findings" | wc -l)
  timeout $((SECONDS_PER_TARGET + 120)) "$exe" "${opts[@]}" -max_total_time=$SECONDS_PER_TARGET \
    "$corpus" "$seed_dir" >"$log" 2>&1
  rc=$?
  execs=$(awk '/^stat::number_of_executed_units:/ { v = $2 } END { print v }' "$log")
  rate=$(awk '/^stat::average_exec_per_sec:/ { v = $2 } END { print v }' "$log")
  newu=$(awk '/^stat::new_units_added:/ { v = $2 } END { print v }' "$log")
  rss=$(awk '/^stat::peak_rss_mb:/ { v = $2 } END { print v }' "$log")
  size=$(ls "$corpus" | wc -l)
  after=$(ls "$findings" | wc -l)
  found=$((after - before))
  what="none"
  if [ "$found" -gt 0 ] || [ $rc -ne 0 ]; then
    status=1
    what="$found new: $(ls -t "$findings" | head -$((found > 0 ? found : 1)) | tr '\n' ' ')(rc $rc, log $log)"
  fi
  printf '%-22s %10s %9s %8s %9s %8s  %s; regressions %s\n' "$t" "${execs:-?}" "${rate:-?}" "$size" \
    "${newu:-?}" "${rss:-?}" "$what" "$regress"
done
echo
echo "minutes per target: $MINUTES; corpus: $B/corpus; findings: $B/findings; logs: $B/logs"
exit $status
