#!/usr/bin/env bash
# Fidelity of `llmwb quantize` as the field measures it (issue 15): a Qwen2.5-0.5B-shaped F16
# model (random weights, written by make-model with --embedding-std 0.3 so that next-token
# distributions are peaked and top-1 agreement at a margin means something) quantized to each
# preset, with and without --calibration, compared to the F16 base by `llmwb kld` over a text
# other than the calibration text.
#   usage: scripts/quant-fidelity.sh [OUTDIR] [PRESET ...]   (default presets: Q8_0 Q4_K_M)
# Needs a build (BUILD_DIR, default build). Prints one line per run and writes OUTDIR/*.json.
# Takes minutes on 2 cores (the 0.5B shape is ~1 GB in F16); not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${BUILD_DIR:-build}/app/cli/llmwb
OUT=${1:-/tmp/llmwb-quant-fidelity}
shift || true
PRESETS=("$@")
[ ${#PRESETS[@]} -gt 0 ] || PRESETS=(Q8_0 Q4_K_M)
mkdir -p "$OUT"
BASE="$OUT/qwen2.5-0.5b-f16.gguf"
[ -f "$BASE" ] || "$B" make-model --shape qwen2.5-0.5b --type f16 --embedding-std 0.3 \
    --out "$BASE" >/dev/null
# Calibration and evaluation texts are different files (the README and DESIGN notes).
CAL="$OUT/calibration.txt"
EVAL="$OUT/eval.txt"
head -c 6000 README.md >"$CAL"
tail -c 6000 README.md >"$EVAL"
printf '%-8s %-6s %10s %10s %8s %14s %10s %7s %8s\n' preset calib "mean KLD" "p99 KLD" "top1 %" "top1 m>0.1 (n)" "PPL ratio" "bpw" "quant s"
for p in "${PRESETS[@]}"; do
    for cal in no yes; do
        M="$OUT/q-$p-$cal.gguf"
        args=("$BASE" "$M" --type "$p")
        [ "$cal" = yes ] && args+=(--calibration "$CAL" --calibration-tokens ${CAL_TOKENS:-2048})
        "$B" quantize "${args[@]}" --json --quiet >"$OUT/quantize-$p-$cal.json"
        "$B" kld --base "$BASE" --model "$M" --file "$EVAL" --max-tokens ${EVAL_TOKENS:-1024} --json \
            >"$OUT/kld-$p-$cal.json"
        python3 - "$OUT/kld-$p-$cal.json" "$OUT/quantize-$p-$cal.json" "$p" "$cal" <<'PY'
import json, sys
k = json.load(open(sys.argv[1])); q = json.load(open(sys.argv[2]))
def g(d, *names):
    for n in names:
        if n in d: return d[n]
    return float('nan')
print('%-8s %-6s %10.6f %10.6f %8.2f %8.2f (%4d) %10.5f %7.3f %8.1f' % (sys.argv[3], sys.argv[4],
      g(k, 'mean_kld'), g(k, 'p99_kld'), g(k, 'top1_agreement_pct'),
      g(k, 'top1_agreement_confident_pct'), g(k, 'confident_positions'), g(k, 'ppl_ratio'),
      g(q, 'bits_per_weight'), g(q, 'seconds')))
PY
    done
done
