#!/usr/bin/env bash
# KV-cache fidelity and capacity per --kv-cache-dtype (issue 16), on demand (not CI):
#   fidelity  the same weights with each KV type against an f32 KV cache (`llmwb kld --model M
#             --kv-cache-dtype T`: the base runs with f32 KV), over the first 2,048 tokens of a
#             real text (README.md) in windows of CTX (default 512: the portable attention path
#             of the non-f32 types makes 2,048-token windows slow on 2 cores) on a Qwen2.5-0.5B-shaped F16 model with peaked
#             distributions (make-model --embedding-std 0.3, random weights): mean / p99 KLD,
#             top-1 agreement over all positions and where the f32 run's top-2 margin > 0.1.
#             Types: f16, bf16, fp8_e4m3 (scales 1.0 and --calculate-kv-scales), fp8_e5m2
#             (both), int8 (one scale per token and KV head), and the int8 variants simulated
#             on an f32 cache (--kv-int8-experiment, measurement only: quantize-dequantize in
#             place when a block fills, the model run one block per forward; fidelity depends
#             only on the values attention reads): tokenhead (the built-in grouping, to show
#             what the simulation itself changes), token (one scale per token over all KV
#             heads) and kchannel (keys: one scale per channel over each full block, values per
#             token and head; KIVI / KVQuant).
#             kout:RUN runs RUN on a copy of the model whose layers' K bias has a key-outlier
#             channel pair in KV head 0 (+-KOUT, default 20, in the two lowest-frequency RoPE
#             channels, so the outlier stays put): a constant K offset leaves attention, and so
#             the f32 outputs, unchanged (softmax is shift-invariant), but it is what trained
#             models' per-channel key outliers (KIVI, KVQuant) do to a per-token int8 scale.
#   capacity  bytes per block of 16 and tokens in the same budget per type, from `llmwb info`
#             on the 0.5B shape, and the same formula for a Qwen2.5-7B shape at 32k context
#             (checked against info's figures on the 0.5B).
#   usage: scripts/kv-fidelity.sh [OUTDIR] [TYPE ...]   (TYPE: a --kv-cache-dtype value, fp8c /
#          fp8_e5m2c for the calibrated fp8 runs, sim-tokenhead / sim-token / sim-kchannel)
# Env: BUILD_DIR (default build), TOKENS (default 2048), CTX (default 512). Takes ~30 minutes
# on 2 shared cores.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${BUILD_DIR:-build}/app/cli/llmwb
OUT=${1:-/tmp/llmwb-kv-fidelity}
shift || true
RUNS=("$@")
[ ${#RUNS[@]} -gt 0 ] ||
    RUNS=(int8 sim-token sim-kchannel sim-tokenhead f16 bf16 fp8_e4m3 fp8c fp8_e5m2 fp8_e5m2c
        kout:int8 kout:sim-token kout:sim-kchannel kout:sim-tokenhead)
TOKENS=${TOKENS:-2048}
CTX=${CTX:-512}
mkdir -p "$OUT"
M="$OUT/qwen2.5-0.5b-f16.gguf"
[ -f "$M" ] || "$B" make-model --shape qwen2.5-0.5b --type f16 --embedding-std 0.3 \
    --out "$M" >/dev/null
TEXT=README.md
MK="$OUT/qwen2.5-0.5b-f16-kout.gguf"
# The K-outlier copy: GGUF read by hand (no Python packages needed), attn_k.bias patched.
[ -f "$MK" ] || python3 - "$M" "$MK" "${KOUT:-20}" 64 <<'PY'
import shutil, struct, sys
src, dst, value, head_dim = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
shutil.copyfile(src, dst)
f = open(dst, 'r+b')
def rd(fmt):
    return struct.unpack('<' + fmt, f.read(struct.calcsize('<' + fmt)))[0]
def rstr():
    return f.read(rd('Q')).decode('utf-8', 'replace')
SCALAR = {0: 'B', 1: 'b', 2: 'H', 3: 'h', 4: 'I', 5: 'i', 6: 'f', 7: '?', 10: 'Q', 11: 'q', 12: 'd'}
def rval(t):
    if t in SCALAR:
        return rd(SCALAR[t])
    if t == 8:
        return rstr()
    assert t == 9, t
    et, n = rd('I'), rd('Q')
    if et in SCALAR:
        f.seek(struct.calcsize('<' + SCALAR[et]) * n, 1)
        return None
    return [rval(et) for _ in range(n)]
assert f.read(4) == b'GGUF'
_, n_tensors, n_kv = rd('I'), rd('Q'), rd('Q')
align = 32
for _ in range(n_kv):
    k = rstr()
    v = rval(rd('I'))
    if k == 'general.alignment':
        align = v
tensors = []
for _ in range(n_tensors):
    name = rstr()
    dims = [rd('Q') for _ in range(rd('I'))]
    tensors.append((name, rd('I'), rd('Q')))
data = (f.tell() + align - 1) // align * align
n = 0
for name, typ, off in tensors:
    if name.endswith('attn_k.bias'):
        assert typ == 0, 'attn_k.bias is not F32'
        for d, v in ((head_dim // 2 - 1, -value), (head_dim - 1, value)):  # KV head 0
            f.seek(data + off + 4 * d)
            f.write(struct.pack('<f', v))
        n += 1
assert n > 0
PY

printf '%-22s %10s %10s %8s %16s %10s %7s\n' "KV cache" "mean KLD" "p99 KLD" "top1 %" \
    "top1 m>0.1 (n)" "PPL ratio" "s"
for run in "${RUNS[@]}"; do
    model=$M
    name=$run
    if [ "${run#kout:}" != "$run" ]; then
        model=$MK
        run=${run#kout:}
        name=kout-$run
    fi
    case "$run" in
    fp8c) args=(--kv-cache-dtype fp8_e4m3 --calculate-kv-scales) ;;
    fp8_e5m2c) args=(--kv-cache-dtype fp8_e5m2 --calculate-kv-scales) ;;
    sim-*) args=(--kv-cache-dtype f32 --kv-int8-experiment "${run#sim-}") ;;
    *) args=(--kv-cache-dtype "$run") ;;
    esac
    "$B" kld --model "$model" "${args[@]}" --device cpu --file "$TEXT" --max-tokens "$TOKENS" \
        --ctx "$CTX" --json >"$OUT/kld-$name.json"
    python3 - "$OUT/kld-$name.json" "$name" <<'PY'
import json, sys
k = json.load(open(sys.argv[1]))
print('%-22s %10.3e %10.3e %8.2f %8.2f (%5d) %10.5f %7.1f' % (sys.argv[2], k['mean_kld'],
      k['p99_kld'], k['top1_agreement_pct'], k['top1_agreement_confident_pct'],
      k['confident_positions'], k['ppl_ratio'], k['seconds']))
PY
done

echo
echo "Capacity (blocks of 16 tokens; int8 with an fp32 scale per token and KV head):"
"$B" info --model "$M" --json >"$OUT/info.json"
python3 - "$OUT/info.json" <<'PY'
import json, sys
info = json.load(open(sys.argv[1]))
elem = {'f32': 4, 'f16': 2, 'bf16': 2, 'fp8_e4m3': 1, 'fp8_e5m2': 1, 'int8': 1}
def per_block(layers, kv_heads, head_dim, t, bs=16):
    scales = 4 * bs * kv_heads if t == 'int8' else 0
    return 2 * layers * (bs * kv_heads * head_dim * elem[t] + scales)
rows = {r['kv_cache_dtype']: r for r in info['kv_cache_by_dtype']}
for t, r in rows.items():  # the formula is the engine's kv_bytes_per_block
    assert per_block(info['layers'], info['kv_heads'], info['head_dim'], t) == r['bytes_per_block'], t
f32 = rows['f32']['bytes_per_block']
f16 = rows['f16']['bytes_per_block']
print('%-10s %16s %14s %9s %9s | %-28s' % ('type', '0.5B bytes/block', 'tokens/GiB', 'x f32',
      'x f16', '7B (28 x 4 x 128): 32k ctx'))
for t, r in rows.items():
    b7 = per_block(28, 4, 128, t)
    print('%-10s %16d %14d %9.2f %9.2f | %8.2f GiB, %6d tok/GiB' % (t, r['bytes_per_block'],
          r['tokens_per_gib'], f32 / r['bytes_per_block'], f16 / r['bytes_per_block'],
          b7 * 32768 / 16 / 2**30, 2**30 // b7 * 16))
PY
