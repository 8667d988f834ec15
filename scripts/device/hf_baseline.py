#!/usr/bin/env python3
"""Baselines measured in the same run as llmwb on the GPU machine (scripts/device-check.sh).

  hf_baseline.py rates --out FILE.json
      measured bf16 GEMM TFLOP/s (8192^3 torch.matmul) and device-to-device copy GB/s.
  hf_baseline.py serve --model DIR --num-prompts N --input-len I --output-len O --batch B
                       [--seed S] --out FILE.json
      Hugging Face transformers generate() on the same safetensors model: N random prompts of I
      tokens, O new tokens each (EOS ignored: min_new_tokens = max_new_tokens), greedy, in
      batches of B (all prompts have the same length, so the padding is trivial).
  hf_baseline.py logprobs --model DIR --ids FILE --llmwb FILE.json --out FILE.json
      log p(token i+1 | tokens <= i) from transformers vs llmwb perplexity --json: the max and
      mean absolute difference, and both perplexities.
"""
import argparse
import json
import math
import sys
import time


def need_torch():
    try:
        import torch  # noqa: F401
    except ImportError as e:
        sys.exit(f"hf_baseline.py: PyTorch is missing ({e})")
    import torch
    if not torch.cuda.is_available():
        sys.exit("hf_baseline.py: torch sees no CUDA device")
    return torch


def cmd_rates(a):
    torch = need_torch()
    n = 8192
    x = torch.randn(n, n, dtype=torch.bfloat16, device="cuda")
    y = torch.randn(n, n, dtype=torch.bfloat16, device="cuda")
    for _ in range(3):
        torch.matmul(x, y)
    torch.cuda.synchronize()
    reps = 20
    t0 = time.perf_counter()
    for _ in range(reps):
        torch.matmul(x, y)
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    tflops = 2.0 * n * n * n * reps / dt / 1e12
    del x, y
    buf = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")  # 1 GiB
    dst = torch.empty_like(buf)
    for _ in range(3):
        dst.copy_(buf)
    torch.cuda.synchronize()
    reps = 20
    t0 = time.perf_counter()
    for _ in range(reps):
        dst.copy_(buf)
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    gbs = 2.0 * buf.numel() * reps / dt / 1e9  # read + write
    out = {"bf16_gemm_tflops": tflops, "copy_gbs": gbs,
           "device": torch.cuda.get_device_name(0)}
    json.dump(out, open(a.out, "w"), indent=1)
    print(json.dumps(out))


def load_model(torch, path):
    from transformers import AutoModelForCausalLM
    m = AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch.bfloat16)
    return m.to("cuda").eval()


def cmd_serve(a):
    torch = need_torch()
    model = load_model(torch, a.model)
    g = torch.Generator().manual_seed(a.seed)
    vocab = model.config.vocab_size
    prompts = torch.randint(10, vocab - 1, (a.num_prompts, a.input_len), generator=g)
    # Warm-up (kernels, allocator) outside the timing.
    with torch.no_grad():
        model.generate(prompts[:1].cuda(), attention_mask=torch.ones_like(prompts[:1]).cuda(),
                       max_new_tokens=4, min_new_tokens=4, do_sample=False, pad_token_id=0)
    torch.cuda.synchronize()
    out_tokens = 0
    t0 = time.perf_counter()
    with torch.no_grad():
        for s in range(0, a.num_prompts, a.batch):
            ids = prompts[s:s + a.batch].cuda()
            res = model.generate(ids, attention_mask=torch.ones_like(ids),
                                 max_new_tokens=a.output_len, min_new_tokens=a.output_len,
                                 do_sample=False, pad_token_id=0)
            out_tokens += (res.shape[1] - ids.shape[1]) * ids.shape[0]
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    out = {"num_prompts": a.num_prompts, "input_len": a.input_len, "output_len": a.output_len,
           "batch": a.batch, "duration": dt, "output_throughput": out_tokens / dt,
           "total_token_throughput": (out_tokens + a.num_prompts * a.input_len) / dt}
    json.dump(out, open(a.out, "w"), indent=1)
    print(json.dumps(out))


def cmd_logprobs(a):
    torch = need_torch()
    model = load_model(torch, a.model)
    ids = [int(t) for t in open(a.ids).read().replace(",", " ").split()]
    with torch.no_grad():
        logits = model(torch.tensor([ids], device="cuda")).logits[0].float()
    lp = torch.log_softmax(logits, dim=-1)
    hf = [lp[i, ids[i + 1]].item() for i in range(len(ids) - 1)]
    ours = json.load(open(a.llmwb))["logprobs"]
    n = min(len(hf), len(ours))
    diffs = [abs(hf[i] - ours[i]) for i in range(n)]
    out = {"tokens": n, "max_abs_logprob_diff": max(diffs), "mean_abs_logprob_diff": sum(diffs) / n,
           "ppl_transformers": math.exp(-sum(hf[:n]) / n),
           "ppl_llmwb": math.exp(-sum(ours[:n]) / n)}
    json.dump(out, open(a.out, "w"), indent=1)
    print(json.dumps(out))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("rates")
    r.add_argument("--out", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--model", required=True)
    s.add_argument("--num-prompts", type=int, default=256)
    s.add_argument("--input-len", type=int, default=512)
    s.add_argument("--output-len", type=int, default=256)
    s.add_argument("--batch", type=int, default=64)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--out", required=True)
    lp = sub.add_parser("logprobs")
    lp.add_argument("--model", required=True)
    lp.add_argument("--ids", required=True)
    lp.add_argument("--llmwb", required=True)
    lp.add_argument("--out", required=True)
    a = p.parse_args()
    {"rates": cmd_rates, "serve": cmd_serve, "logprobs": cmd_logprobs}[a.cmd](a)


if __name__ == "__main__":
    main()
