#!/usr/bin/env python3
"""Assembles the device check's JSON files (scripts/device-check.sh) into a Markdown report."""
import json
import os
import sys

out = sys.argv[1]


def load(name):
    p = os.path.join(out, name)
    try:
        return json.load(open(p))
    except Exception:
        return None


def fmt(v, spec=".1f"):
    return "n/a" if v is None else format(v, spec)


rates = load("rates.json") or {}
bw = rates.get("copy_gbs")
gemm = rates.get("bf16_gemm_tflops")
print("# Device check report\n")
print(f"Device: {rates.get('device', '?')}; measured copy bandwidth {fmt(bw)} GB/s; "
      f"measured bf16 GEMM {fmt(gemm)} TFLOP/s (torch, 8192^3).\n")
print("## Single stream (decode 128 tokens after a 128-token prompt; prefill of 2,048 tokens)\n")
print("| model | weights/token | roofline tok/s | decode graphs | decode eager | "
      "fraction (graphs) | prefill tok/s | prefill vs bf16 GEMM |")
print("|---|---|---|---|---|---|---|---|")
for m in ("q05", "q7"):
    for t in ("bf16", "q4_k"):
        info = load(f"info-{m}-{t}.json")
        if not info:
            continue
        tt = info.get("tensor_types", {})
        g = lambda k: tt.get(k, {}).get("bytes", 0)
        per_tok = g("attention") + g("ffn") + g("norm") + (g("output") or g("embedding"))
        roof = bw * 1e9 / per_tok if bw and per_tok else None
        dg = (load(f"decode-{m}-{t}-graphs.json") or {}).get("decode_tokens_per_s")
        de = (load(f"decode-{m}-{t}-eager.json") or {}).get("decode_tokens_per_s")
        pf = (load(f"prefill-{m}-{t}.json") or {}).get("prefill_tokens_per_s")
        params = info.get("parameters")
        pf_frac = pf * 2 * params / (gemm * 1e12) if pf and params and gemm else None
        print(f"| {m} {t} ({info.get('layers')} layers) | {per_tok / 2**20:.0f} MiB | {fmt(roof)} | "
              f"{fmt(dg)} | {fmt(de)} | {fmt(dg / roof if dg and roof else None, '.2f')} | "
              f"{fmt(pf)} | {fmt(pf_frac, '.2f')} |")
print("\n## Serving: 256 requests, input 512, output 256 (bf16 safetensors)\n")
print("| model | llmwb output tok/s | transformers output tok/s | ratio | llmwb mean TTFT ms |")
print("|---|---|---|---|---|")
for m in ("q05", "q7"):
    ours = load(f"serve-llmwb-{m}.json") or {}
    res = (ours.get("results") or {}).get("continuous", {})
    hf = load(f"serve-hf-{m}.json") or {}
    a, b = res.get("output_throughput"), hf.get("output_throughput")
    print(f"| {m} | {fmt(a)} | {fmt(b)} (batch {hf.get('batch', '?')}, "
          f"{hf.get('num_prompts', '?')} prompts) | {fmt(a / b if a and b else None, '.2f')} | "
          f"{fmt(res.get('mean_ttft_ms'))} |")
host = ((load("serve-llmwb-q05-host-sampling.json") or {}).get("results") or {}).get("continuous", {})
dev = ((load("serve-llmwb-q05.json") or {}).get("results") or {}).get("continuous", {})
print(f"\nq05 greedy on the device (argmax kernel, ids copied back): "
      f"{fmt(dev.get('output_throughput'))} tok/s; logits copied to pinned memory and sampled on "
      f"the CPU: {fmt(host.get('output_throughput'))} tok/s.")
print("\n## Agreement with transformers (256 tokens, log p of each next token)\n")
print("| model | max abs diff | mean abs diff | ppl llmwb | ppl transformers |")
print("|---|---|---|---|---|")
for m in ("q05", "q7"):
    lp = load(f"logprobs-{m}.json") or {}
    print(f"| {m} | {fmt(lp.get('max_abs_logprob_diff'), '.4f')} | "
          f"{fmt(lp.get('mean_abs_logprob_diff'), '.5f')} | {fmt(lp.get('ppl_llmwb'), '.3f')} | "
          f"{fmt(lp.get('ppl_transformers'), '.3f')} |")
print("\nRandom-weight models written by `llmwb make-model`; q7 keeps the number of layers shown.")
