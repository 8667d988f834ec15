#!/usr/bin/env bash
# A/B speed comparison of two builds on this machine, interleaved (A B A B ...) so that drifts of
# the machine's bandwidth hit both alike: single-stream decode (llmwb-bench-decode) and the
# serving benchmark under every policy (llmwb bench --policy continuous,static,sequential).
# Prints every run and the medians with new/old ratios. A command that prints figures; it
# asserts nothing.
#
#   bench/scripts/ab-compare.sh OLD_DIR NEW_DIR [ROUNDS (5)] [THREADS (2)]
# OLD_DIR / NEW_DIR hold llmwb and llmwb-bench-decode (e.g. build/app/cli + build/bench/engine
# copied into one folder). Models are written once under $AB_DIR (default /tmp/llmwb-ab) by
# NEW_DIR's llmwb make-model.
set -euo pipefail
OLD="$1"; NEW="$2"; ROUNDS="${3:-5}"; THREADS="${4:-2}"
WORK="${AB_DIR:-/tmp/llmwb-ab}"
mkdir -p "$WORK"
MODEL="$WORK/qwen2.5-0.5b-q8_0.gguf"
[ -f "$MODEL" ] || "$NEW/llmwb" make-model --arch qwen2 --shape qwen2.5-0.5b --type q8_0 --out "$MODEL" >/dev/null
# The README's serving workload; AB_PROMPTS / AB_IN / AB_OUT shorten it.
BENCH=(bench --model "$MODEL" --num-prompts "${AB_PROMPTS:-32}" --input-len "${AB_IN:-128}"
       --output-len "${AB_OUT:-128}" --range-ratio 0.9
       --policy continuous,static,sequential --threads "$THREADS")
for r in $(seq 1 "$ROUNDS"); do
  for side in old new; do
    dir=$OLD; [ $side = new ] && dir=$NEW
    "$dir/llmwb-bench-decode" --shape qwen2.5-0.5b --type q8_0 --cache-dir "$WORK" \
      --threads "$THREADS" --json > "$WORK/decode-$side-$r.json" 2>/dev/null
    "$dir/llmwb" "${BENCH[@]}" --json "$WORK/bench-$side-$r.json" >/dev/null 2>&1
    echo "round $r $side done" >&2
  done
done
python3 - "$WORK" "$ROUNDS" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
def load(kind, side, r):
    with open(f"{work}/{kind}-{side}-{r}.json") as f:
        return json.load(f)
rows = [("decode tokens/s", lambda s, r: load("decode", s, r)["decode_tokens_per_s"]),
        ("decode / roofline", lambda s, r: load("decode", s, r)["roofline_ratio"]),
        ("prefill tokens/s", lambda s, r: load("decode", s, r)["pp_tokens_per_s"])]
for pol in ("continuous", "static", "sequential"):
    rows.append((f"bench {pol} output tok/s",
                 lambda s, r, p=pol: load("bench", s, r)["results"][p]["output_throughput"]))
print(f"{'figure':34} {'old runs':>40} {'new runs':>40} {'old med':>9} {'new med':>9} {'new/old':>8}")
for name, get in rows:
    old = [get("old", r) for r in range(1, rounds + 1)]
    new = [get("new", r) for r in range(1, rounds + 1)]
    mo, mn = statistics.median(old), statistics.median(new)
    fmt = lambda v: " ".join(f"{x:.4g}" for x in v)
    print(f"{name:34} {fmt(old):>40} {fmt(new):>40} {mo:9.4g} {mn:9.4g} {mn / mo:8.3f}")
PY
