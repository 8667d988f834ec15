#!/usr/bin/env bash
# The device check (issue 5): on the GPU machine (nvcc, CMake, ninja, Python + torch +
# transformers; no Qt, no network) configure and build the Qt-free targets in Release for the
# local GPU architecture, run the GPU tests (ctest -L gpu), then a short benchmark that writes a
# report to $OUT (or ./device-report):
#   - single-stream decode tok/s vs the HBM roofline (weight bytes per token / bandwidth), with
#     and without CUDA graphs;
#   - prefill tok/s of a 2,048-token prompt vs the measured bf16 GEMM rate (torch);
#   - serving throughput, 256 concurrent requests (input 512, output 256): llmwb bench --device
#     cuda vs Hugging Face transformers generate() on the same safetensors model;
#   - logprob agreement with transformers;
#   - per weight type (every type of kAllDTypes): CUDA GEMV GB/s (n = 1, 2, 4, 8) with the ratio to
#     Q4_K, and GEMM TFLOP/s, at the ffn_down shapes of Qwen2.5-0.5B/1.5B and a Qwen2.5-7B MLP
#     matrix (llmwb-bench-cuda-ops --shape all; bench-cuda-ops.txt, summarised in report.md);
#   - per KV-cache type (issue 16: f32, f16, bf16, fp8_e4m3, fp8_e5m2, int8): the KV-type tests
#     (tst_cuda_ops_kv_types, tst_cuda_model_kv_types; ctest-kv-types.txt), paged attention per
#     type (llmwb-bench-cuda-ops --kv-only: decode at 4,096 keys for 1 and 32 sequences, a
#     512-token prefill; bench-cuda-kv.txt), single-stream decode of the Qwen2.5-0.5B shape at
#     4,096 tokens of context and a 32-request bench per type (decode-kv-TYPE.json,
#     serve-kv-TYPE.json), all summarised in report.md;
#   - the newer families on CUDA (issue 18: gemma2, gemma3, phi3 with LongRoPE, mistral with its
#     sliding window, qwen3moe): their logits and greedy tokens against the CPU backend
#     (tst_cuda_model_families, tst_cuda_engine_greedy; ctest-families.txt), and decode / prefill
#     tok/s of Gemma-2-2B, Gemma-3-1B, Phi-3.5-mini, Mistral-7B and Qwen3-30B-A3B (MoE) shapes
#     with LLMWB_DC_FAMILY_LAYERS of their layers (default 4; decode-fam-*.json,
#     prefill-fam-*.json).
# Models are written by `llmwb make-model` with random weights: Qwen2.5-0.5B and Qwen2.5-7B
# shapes, bf16 (safetensors) and q4_k (GGUF). To stay well inside 10 minutes the 7B shape keeps
# LLMWB_DC_7B_LAYERS of its 28 layers (default 8; per-token figures are reported for that depth).
# Without a CUDA device it builds, runs the GPU tests (they report SKIPPED) and stops with a
# message before the benchmark.
#
# Environment: OUT (report folder), LLMWB_DC_BUILD (build folder, default build-device),
# LLMWB_DC_WORK (models, default /tmp/llmwb-device), LLMWB_DC_STAGES (default "build test bench";
# "ops" alone runs only the per-type op benchmark, which "bench" includes),
# LLMWB_DC_7B_LAYERS, LLMWB_DC_HF_PROMPTS (HF baseline prompts, default 256), CUDA_ARCH (override),
# LLMWB_NLOHMANN_INCLUDE_DIR (folder holding nlohmann/json.hpp when it is not installed).
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
OUT="${OUT:-$ROOT/device-report}"
BUILD="${LLMWB_DC_BUILD:-$ROOT/build-device}"
WORK="${LLMWB_DC_WORK:-/tmp/llmwb-device}"
STAGES="${LLMWB_DC_STAGES:-build test bench}"
LAYERS_7B="${LLMWB_DC_7B_LAYERS:-8}"
FAMILY_LAYERS="${LLMWB_DC_FAMILY_LAYERS:-4}"
HF_PROMPTS="${LLMWB_DC_HF_PROMPTS:-256}"
JOBS="$(nproc)"
mkdir -p "$OUT" "$WORK"
LOG="$OUT/device-check.log"
: > "$LOG"
T0=$(date +%s)
say() { echo "[device-check +$(( $(date +%s) - T0 ))s] $*" | tee -a "$LOG"; }
die() { say "FAILED: $*"; exit 1; }
has_stage() { [[ " $STAGES " == *" $1 "* ]]; }

# --- The GPU, if any --------------------------------------------------------------------------
HAVE_GPU=0
ARCH="${CUDA_ARCH:-}"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  HAVE_GPU=1
  GPU_LINE="$(nvidia-smi --query-gpu=name,compute_cap,memory.total --format=csv,noheader | head -1)"
  say "GPU: $GPU_LINE"
  [ -n "$ARCH" ] || ARCH="$(echo "$GPU_LINE" | awk -F', ' '{gsub(/\./, "", $2); print $2}')"
elif CAP="$(python3 -c 'import torch; assert torch.cuda.is_available(); print("%d%d" % torch.cuda.get_device_capability(0))' 2>/dev/null)"; then
  HAVE_GPU=1
  say "GPU (found by torch; no nvidia-smi): sm_$CAP"
  [ -n "$ARCH" ] || ARCH="$CAP"
else
  say "no CUDA device here (neither nvidia-smi nor torch finds one): build and GPU tests only"
fi
[ -n "$ARCH" ] || ARCH=90
say "CUDA architecture: sm_$ARCH"

# --- Build --------------------------------------------------------------------------------------
if has_stage build; then
  CMAKE_EXTRA=()
  if [ -z "${LLMWB_NLOHMANN_INCLUDE_DIR:-}" ] && [ ! -f /usr/include/nlohmann/json.hpp ]; then
    # No package registry on the GPU machine: a copy travels with the sources (shared/), or
    # one of the Python packages ships it.
    for d in "$ROOT/shared/third_party/nlohmann-include" "$ROOT/third_party/nlohmann-include" \
             $(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "include"))' 2>/dev/null); do
      if [ -f "$d/nlohmann/json.hpp" ]; then LLMWB_NLOHMANN_INCLUDE_DIR="$d"; break; fi
    done
  fi
  [ -n "${LLMWB_NLOHMANN_INCLUDE_DIR:-}" ] && CMAKE_EXTRA+=("-DLLMWB_NLOHMANN_INCLUDE_DIR=$LLMWB_NLOHMANN_INCLUDE_DIR")
  say "configure ($BUILD, Release, Qt off)"
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLLMWB_WITH_QT=OFF \
        -DLLMWB_BUILD_GUI=OFF -DLLMWB_CUDA=ON -DLLMWB_CUDASIM=OFF -DCMAKE_CUDA_ARCHITECTURES="$ARCH" \
        "${CMAKE_EXTRA[@]}" >> "$LOG" 2>&1 || die "configure (see $LOG)"
  say "build"
  cmake --build "$BUILD" -j "$JOBS" >> "$LOG" 2>&1 || die "build (see $LOG)"
  say "build done"
fi
LLMWB="$BUILD/app/cli/llmwb"
[ -x "$LLMWB" ] || die "no $LLMWB (run the build stage)"

# --- GPU tests ----------------------------------------------------------------------------------
if has_stage test; then
  say "ctest -L gpu"
  (cd "$BUILD" && ctest -L gpu --output-on-failure --timeout 300) > "$OUT/ctest-gpu.txt" 2>&1
  CTEST_RC=$?
  tail -n 15 "$OUT/ctest-gpu.txt" | tee -a "$LOG"
  (cd "$BUILD" && ctest -R tst_backend_cuda_plugin --output-on-failure) >> "$OUT/ctest-gpu.txt" 2>&1 \
    || say "tst_backend_cuda_plugin FAILED"
  [ $CTEST_RC -eq 0 ] || say "GPU tests FAILED (rc $CTEST_RC; details in $OUT/ctest-gpu.txt)"
fi
if has_stage test; then
  say "the newer families vs the CPU (gemma2, gemma3, phi3, mistral window, qwen3moe)"
  (cd "$BUILD" && ctest -L gpu -R "tst_cuda_model_families|tst_cuda_engine_greedy" \
      --output-on-failure --timeout 300 -V) > "$OUT/ctest-families.txt" 2>&1 \
      || say "family tests FAILED (see $OUT/ctest-families.txt)"
  grep -E "rel err|requests differ|released|tests passed|tests failed|SKIPPED" \
      "$OUT/ctest-families.txt" | tee -a "$LOG"
fi
if has_stage test || has_stage kv; then
  say "KV-type tests (every KV cache type vs the CPU)"
  (cd "$BUILD" && ctest -L gpu -R kv_types --output-on-failure --timeout 300 -V) \
      > "$OUT/ctest-kv-types.txt" 2>&1 || say "KV-type tests FAILED (see $OUT/ctest-kv-types.txt)"
  grep -E "largest logits rel err|requests differ|tests passed|tests failed|SKIPPED" \
      "$OUT/ctest-kv-types.txt" | tee -a "$LOG"
fi

if [ $HAVE_GPU -eq 0 ]; then
  cat > "$OUT/report.md" <<EOT
# Device check: NOT MEASURED
No CUDA device on this machine. The build and the GPU tests ran (they report SKIPPED; see
ctest-gpu.txt); the benchmark needs a GPU. GPU figures are still to be measured.
EOT
  say "stopping before the benchmark: no CUDA device (report: $OUT/report.md)"
  exit 0
fi

# --- Per weight type: the CUDA matmul ops (every type of kAllDTypes) -----------------------------
OPS_BENCH="$BUILD/bench/gpu/llmwb-bench-cuda-ops"
ops_summary() { # the per-type GEMV table of each shape
  grep -A16 "^GEMV n=1 per type" "$OUT/bench-cuda-ops.txt" 2>/dev/null
}
# Issue 17: the n = 2..8 GEMV (activations staged once per block) and the prefill GEMM on the
# bf16 weight cache against dequantizing per call, per shape.
ops_batched_summary() {
  grep -E "^shape |^[A-Z0-9_]+ +[248] |bf16 cache" "$OUT/bench-cuda-ops.txt" 2>/dev/null
}
if has_stage bench || has_stage ops; then
  if [ -x "$OPS_BENCH" ]; then
    say "llmwb-bench-cuda-ops --shape all (GEMV/GEMM per weight type, attention)"
    timeout 240 "$OPS_BENCH" --shape all > "$OUT/bench-cuda-ops.txt" 2>> "$LOG" \
      || say "llmwb-bench-cuda-ops FAILED (rc $?; see $OUT/bench-cuda-ops.txt)"
    ops_summary | tee -a "$LOG"
    ops_batched_summary | tee -a "$LOG"
  else
    say "llmwb-bench-cuda-ops FAILED: no $OPS_BENCH (run the build stage)"
  fi
fi
# --- Per KV-cache type (issue 16) ---------------------------------------------------------------
KV_TYPES="f32 f16 bf16 fp8_e4m3 fp8_e5m2 int8"
kv_bench() { # attention per KV type; decode at 4,096 tokens of context and 32 requests per type
  if [ -x "$OPS_BENCH" ]; then
    say "llmwb-bench-cuda-ops --kv-only (paged attention per KV type)"
    timeout 120 "$OPS_BENCH" --kv-only > "$OUT/bench-cuda-kv.txt" 2>> "$LOG" \
      || say "llmwb-bench-cuda-ops --kv-only FAILED (rc $?)"
    grep -A8 "^attention per KV type" "$OUT/bench-cuda-kv.txt" | tee -a "$LOG"
  fi
  local model="$WORK/q05-bf16"
  if [ ! -e "$model" ]; then
    timeout 240 "$LLMWB" make-model --shape qwen2.5-0.5b --type bf16 --format safetensors \
        --out "$model" >> "$LOG" 2>&1 || { say "make-model q05 bf16 FAILED"; return; }
  fi
  local p4096
  p4096="$(python3 -c "import random; r=random.Random(4); print(','.join(str(r.randrange(10, 151000)) for _ in range(4096)))")"
  for t in $KV_TYPES; do
    say "KV $t: single-stream decode (4,096-token prompt, 128 new tokens)"
    timeout 120 "$LLMWB" generate --model "$model" --ids "$p4096" --max-tokens 128 --temperature 0 \
        --ignore-eos --json --device cuda --kv-dtype "$t" > "$OUT/decode-kv-$t.json" 2>> "$LOG" \
        || say "decode KV $t FAILED (rc $?)"
    say "KV $t: llmwb bench (32 x 512 -> 128)"
    timeout 120 "$LLMWB" bench --model "$model" --device cuda --kv-dtype "$t" --num-prompts 32 \
        --input-len 512 --output-len 128 --max-num-seqs 32 --gpu-memory-utilization 0.85 --quiet \
        --json "$OUT/serve-kv-$t.json" >> "$LOG" 2>&1 || say "bench KV $t FAILED (rc $?)"
  done
}
kv_report() {
  echo
  echo "## KV-cache types (Qwen2.5-0.5B shape, bf16 weights)"
  echo
  echo "| KV type | decode tok/s at 4,096 context | 32-request output tok/s | mean TTFT ms |"
  echo "|---|---|---|---|"
  for t in $KV_TYPES; do
    python3 - "$OUT" "$t" <<'PY'
import json, os, sys
out, t = sys.argv[1], sys.argv[2]
def load(name):
    try:
        return json.load(open(os.path.join(out, name)))
    except Exception:
        return {}
d = load(f"decode-kv-{t}.json").get("decode_tokens_per_s")
res = (load(f"serve-kv-{t}.json").get("results") or {}).get("continuous", {})
f = lambda v: "-" if v is None else f"{v:.1f}"
print(f"| {t} | {f(d)} | {f(res.get('output_throughput'))} | {f(res.get('mean_ttft_ms'))} |")
PY
  done
  if [ -s "$OUT/bench-cuda-kv.txt" ]; then
    echo; echo '```'; grep -A8 "^attention per KV type" "$OUT/bench-cuda-kv.txt"; echo '```'
  fi
}
if has_stage kv && ! has_stage bench; then
  kv_bench
  kv_report | tee "$OUT/report-kv.md"
  say "done (kv stage)"
  exit 0
fi

has_stage bench || { say "done (no bench stage)"; exit 0; }

# --- Benchmark ----------------------------------------------------------------------------------
HF="python3 $ROOT/scripts/device/hf_baseline.py"
ids() { python3 -c "import random; r=random.Random($2); print(','.join(str(r.randrange(10, $3)) for _ in range($1)))"; }
run() { # run NAME TIMEOUT CMD...: stdout to $OUT/NAME.json, stderr to the log
  local name="$1" t="$2"; shift 2
  say "$name"
  timeout "$t" "$@" > "$OUT/$name.json" 2>> "$LOG" || say "$name FAILED (rc $?)"
}

say "rates (torch bf16 GEMM, copy bandwidth)"
timeout 120 $HF rates --out "$OUT/rates.json" >> "$LOG" 2>&1 || say "rates FAILED"

declare -A SHAPE=([q05]=qwen2.5-0.5b [q7]=qwen2.5-7b)
for m in q05 q7; do
  extra=()
  [ $m = q7 ] && extra=(--layers "$LAYERS_7B")
  say "make-model $m (bf16 safetensors, q4_k gguf)"
  timeout 240 "$LLMWB" make-model --shape "${SHAPE[$m]}" "${extra[@]}" --type bf16 --format safetensors \
      --out "$WORK/$m-bf16" >> "$LOG" 2>&1 || die "make-model $m bf16"
  timeout 300 "$LLMWB" make-model --shape "${SHAPE[$m]}" "${extra[@]}" --type q4_k --format gguf \
      --out "$WORK/$m-q4_k.gguf" >> "$LOG" 2>&1 || say "make-model $m q4_k FAILED"
done

VOCAB=151000
P128="$(ids 128 1 $VOCAB)"
P2048="$(ids 2048 2 $VOCAB)"
P256="$(ids 256 3 $VOCAB)"
echo "$P256" > "$WORK/logprob-ids.txt"
for m in q05 q7; do
  for t in bf16 q4_k; do
    model="$WORK/$m-$t"; [ $t = q4_k ] && model="$WORK/$m-q4_k.gguf"
    [ -e "$model" ] || continue
    "$LLMWB" info --model "$model" --json > "$OUT/info-$m-$t.json" 2>> "$LOG"
    run "decode-$m-$t-graphs" 120 "$LLMWB" generate --model "$model" --ids "$P128" --max-tokens 128 \
        --temperature 0 --ignore-eos --json --device cuda
    run "decode-$m-$t-eager" 120 "$LLMWB" generate --model "$model" --ids "$P128" --max-tokens 128 \
        --temperature 0 --ignore-eos --json --device cuda --no-cuda-graphs
    run "prefill-$m-$t" 120 "$LLMWB" generate --model "$model" --ids "$P2048" --max-tokens 1 \
        --temperature 0 --ignore-eos --json --device cuda
  done
  model="$WORK/$m-bf16"
  say "serving $m: llmwb bench (256 x 512 -> 256)"
  timeout 240 "$LLMWB" bench --model "$model" --device cuda --num-prompts 256 --input-len 512 \
      --output-len 256 --max-num-seqs 256 --max-num-batched-tokens 8192 \
      --gpu-memory-utilization 0.85 --quiet --json "$OUT/serve-llmwb-$m.json" >> "$LOG" 2>&1 \
      || say "llmwb bench $m FAILED"
  if [ $m = q05 ]; then
    say "serving $m: llmwb bench with logits copied back (--no-device-greedy)"
    timeout 240 "$LLMWB" bench --model "$model" --device cuda --num-prompts 256 --input-len 512 \
        --output-len 256 --max-num-seqs 256 --max-num-batched-tokens 8192 --no-device-greedy \
        --gpu-memory-utilization 0.85 --quiet --json "$OUT/serve-llmwb-$m-host-sampling.json" \
        >> "$LOG" 2>&1 || say "llmwb bench $m --no-device-greedy FAILED"
  fi
  say "serving $m: transformers generate ($HF_PROMPTS x 512 -> 256, batch 64)"
  timeout 300 $HF serve --model "$model" --num-prompts "$HF_PROMPTS" --input-len 512 --output-len 256 \
      --batch 64 --out "$OUT/serve-hf-$m.json" >> "$LOG" 2>&1 || say "transformers serve $m FAILED"
  run "perplexity-$m" 60 "$LLMWB" perplexity --model "$model" --ids "$P256" --json --device cuda \
      --kv-dtype f32
  timeout 120 $HF logprobs --model "$model" --ids "$WORK/logprob-ids.txt" \
      --llmwb "$OUT/perplexity-$m.json" --out "$OUT/logprobs-$m.json" >> "$LOG" 2>&1 \
      || say "logprob agreement $m FAILED"
done

kv_bench

# The newer dense families (issue 18): random-weight models of the real shapes, a few layers kept.
# Mistral as a bf16 Hugging Face folder (GGUF mistral files carry no window), the others q4_k GGUF.
for shape in gemma-2-2b gemma-3-1b phi-3.5-mini mistral-7b qwen3-30b-a3b-4l; do
  fam="$WORK/fam-$shape.gguf"; args=(--type q4_k --format gguf)
  [ $shape = mistral-7b ] && { fam="$WORK/fam-$shape-bf16"; args=(--type bf16 --format safetensors); }
  say "make-model $shape (${args[1]}, $FAMILY_LAYERS layers)"
  timeout 240 "$LLMWB" make-model --shape "$shape" --layers "$FAMILY_LAYERS" "${args[@]}" \
      --out "$fam" >> "$LOG" 2>&1 || { say "make-model $shape FAILED"; continue; }
  run "decode-fam-$shape" 120 "$LLMWB" generate --model "$fam" --ids "$(ids 128 5 32000)" \
      --max-tokens 128 --temperature 0 --ignore-eos --json --device cuda
  run "prefill-fam-$shape" 120 "$LLMWB" generate --model "$fam" --ids "$(ids 2048 6 32000)" \
      --max-tokens 1 --temperature 0 --ignore-eos --json --device cuda
done

python3 "$ROOT/scripts/device/report.py" "$OUT" > "$OUT/report.md" 2>> "$LOG" || say "report FAILED"
kv_report >> "$OUT/report.md"
if [ -s "$OUT/bench-cuda-ops.txt" ]; then
  { echo; echo "## CUDA GEMV per weight type (llmwb-bench-cuda-ops --shape all)"; echo
    echo '```'; ops_summary; echo '```'
    echo; echo "## CUDA GEMV n = 2, 4, 8 and GEMM on the bf16 weight cache (issue 17)"; echo
    echo '```'; ops_batched_summary; echo '```'; } >> "$OUT/report.md"
fi
cat "$OUT/report.md"
say "done in $(( $(date +%s) - T0 )) s; report: $OUT/report.md"
