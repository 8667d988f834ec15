#!/usr/bin/env bash
# Fidelity of `llmwb quantize` as the field measures it (issue 15): a Qwen2.5-0.5B-shaped F16
# model (random weights, written by make-model) quantized to each preset, with and without
# --calibration, compared to the F16 base by `llmwb kld` over the same text.
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
[ -f "$BASE" ] || "$B" make-model --shape qwen2.5-0.5b --type f16 --out "$BASE" >/dev/null
# Calibration and evaluation texts are different files (the README and DESIGN notes).
CAL="$OUT/calibration.txt"
EVAL="$OUT/eval.txt"
head -c 6000 README.md >"$CAL"
head -c 4000 docs/*.md 2>/dev/null >"$EVAL" || true
[ -s "$EVAL" ] || tail -c 4000 README.md >"$EVAL"
printf '%-8s %-6s %10s %10s %10s %9s %9s %9s\n' preset calib "mean KLD" "p99 KLD" "top1 %" "top1>0.1" "PPL ratio" "bpw"
for p in "${PRESETS[@]}"; do
    for cal in no yes; do
        M="$OUT/q-$p-$cal.gguf"
        args=("$BASE" "$M" --type "$p")
        [ "$cal" = yes ] && args+=(--calibration "$CAL")
        "$B" quantize "${args[@]}" --json >"$OUT/quantize-$p-$cal.json" 2>/dev/null
        "$B" kld --base "$BASE" --model "$M" --file "$EVAL" --json >"$OUT/kld-$p-$cal.json"
        python3 - "$OUT/kld-$p-$cal.json" "$OUT/quantize-$p-$cal.json" "$p" "$cal" <<'PY'
import json, sys
k = json.load(open(sys.argv[1])); q = json.load(open(sys.argv[2]))
def g(d, *names):
    for n in names:
        if n in d: return d[n]
    return float('nan')
print('%-8s %-6s %10.5f %10.5f %10.2f %9.2f %9.4f %9.3f' % (sys.argv[3], sys.argv[4],
      g(k, 'mean_kld'), g(k, 'p99_kld'), g(k, 'top1_agreement_pct'),
      g(k, 'top1_agreement_margin_pct'), g(k, 'ppl_ratio'), g(q, 'bits_per_weight')))
PY
    done
done
