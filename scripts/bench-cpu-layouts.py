#!/usr/bin/env python3
"""Issue 22's figures: the CPU weight layouts (rows as stored vs the panel layout the runtime
packs at load) measured side by side, INTERLEAVED (rows, panels, rows, panels, ...), on models
the project writes (random weights, real shapes).

  python3 scripts/bench-cpu-layouts.py [--build build] [--cache-dir /tmp/llmwb-bench]
      [--shapes qwen2.5-0.5b,qwen2.5-1.5b] [--types q8_0,q4_0,q4_k,q5_k,q6_k,f16,bf16]
      [--repeats 2] [--threads 2] [--simd avx512|avx2] [--pp 128] [--batched]

Decode: llmwb-bench-decode --json per (shape, type, layout); the best of the repeats of each
layout is printed with the rate at which the same run read the step's own weight bytes (before
each decode round) and the decode / roofline ratio (median over the rounds of the round's weight
traffic / that read's rate). Prefill: the same runs' prompt processing (--pp).
--batched: `llmwb bench` with the issue's workload (32 prompts of 128 +- 10% tokens, 128 output
tokens, continuous vs sequential, seed 1) per layout: the continuous / sequential ratio.
"""
import argparse
import json
import os
import subprocess
import sys


def run_json(cmd, env=None):
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.stderr.write(out.stdout + out.stderr)
        raise SystemExit("failed: " + " ".join(cmd))
    for line in reversed(out.stdout.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise SystemExit("no JSON from: " + " ".join(cmd))


def decode_run(a, shape, typ, layout):
    cmd = [os.path.join(a.build, "bench/engine/llmwb-bench-decode"), "--shape", shape, "--type",
           typ, "--cache-dir", a.cache_dir, "--threads", str(a.threads), "--tokens", str(a.tokens),
           "--rounds", "5", "--pp", str(a.pp), "--weight-layout", layout, "--json"]
    if a.simd:
        cmd += ["--simd", a.simd]
    return run_json(cmd)


def batched_run(a, model, layout):
    env = dict(os.environ, LLMWB_WEIGHT_LAYOUT=layout)
    if a.simd:
        env["LLMWB_SIMD"] = a.simd
    report = os.path.join(a.cache_dir, "bench-%s.json" % layout)
    cmd = [os.path.join(a.build, "app/cli/llmwb"), "bench", "--model", model, "--num-prompts", "32",
           "--input-len", "128", "--output-len", str(a.output_len), "--range-ratio", "0.9", "--seed",
           "1", "--policy", "continuous,sequential", "--threads", str(a.threads), "--json", report]
    subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    with open(report) as f:
        return json.load(f)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default="build")
    p.add_argument("--cache-dir", default="/tmp/llmwb-bench")
    p.add_argument("--shapes", default="qwen2.5-0.5b,qwen2.5-1.5b")
    p.add_argument("--types", default="q8_0,q4_0,q4_k,q5_k,q6_k,f16,bf16")
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--tokens", type=int, default=16)
    p.add_argument("--pp", type=int, default=128)
    p.add_argument("--simd", default="")
    p.add_argument("--batched", action="store_true")
    p.add_argument("--output-len", type=int, default=128)
    a = p.parse_args()
    os.makedirs(a.cache_dir, exist_ok=True)

    print("| shape | type | layout | read of the weights GB/s | decode tok/s | decode / roofline | "
          "prefill tok/s (%d) |" % a.pp)
    print("|---|---|---|---|---|---|---|")
    for shape in a.shapes.split(","):
        for typ in a.types.split(","):
            best = {}
            for _ in range(a.repeats):
                for layout in ("rows", "panels"):
                    r = decode_run(a, shape, typ, layout)
                    b = best.get(layout)
                    if b is None or r["roofline_ratio"] > b["roofline_ratio"]:
                        pp = max(r["pp_tokens_per_s"], b["pp_tokens_per_s"] if b else 0)
                        best[layout] = dict(r, pp_tokens_per_s=pp)
                    elif r["pp_tokens_per_s"] > b["pp_tokens_per_s"]:
                        b["pp_tokens_per_s"] = r["pp_tokens_per_s"]
            for layout in ("rows", "panels"):
                r = best[layout]
                print("| %s | %s | %s | %.1f | %.2f | %.3f | %.1f |" %
                      (shape, typ, r["weight_layout"], r["round_bandwidth_gbs"],
                       r["decode_tokens_per_s"], r["roofline_ratio"], r["pp_tokens_per_s"]))
            sys.stdout.flush()

    if not a.batched:
        return
    print()
    print("| shape | type | layout | continuous tok/s | sequential tok/s | continuous / sequential |")
    print("|---|---|---|---|---|---|")
    for shape in a.shapes.split(","):
        for typ in a.types.split(","):
            model = os.path.join(a.cache_dir, "%s-%s.gguf" % (shape, typ))
            if not os.path.exists(model):
                decode_run(a, shape, typ, "rows")  # writes the model file
            for layout in ("rows", "panels"):
                rep = batched_run(a, model, layout)
                res = rep["results"]
                c = res["continuous"]["output_throughput"]
                s = res["sequential"]["output_throughput"]
                print("| %s | %s | %s | %.1f | %.1f | %.2fx |" % (shape, typ, layout, c, s, c / s))
                sys.stdout.flush()


if __name__ == "__main__":
    main()
