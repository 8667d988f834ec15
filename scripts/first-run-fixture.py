#!/usr/bin/env python3
"""A fixture HOME for the first run's CLI sample and screenshots: models of real shapes in the
places LM Studio, GPT4All, Ollama and the Hugging Face cache keep them, written as SPARSE files
(the header is real, the weights are holes), so that a 70B model costs a few KiB of disk.
Discovery reads headers only, so these list like the real files would. Not loadable (the
weights are zeros and there is no tokenizer). Usage: first-run-fixture.py HOME"""
import json
import os
import struct
import sys

GGML = {"F32": (0, 1, 4), "F16": (1, 1, 2), "Q8_0": (8, 32, 34), "Q4_K": (12, 256, 144),
        "Q6_K": (14, 256, 210), "BF16": (30, 1, 2)}


def gguf_str(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def kv(key, value):
    if isinstance(value, str):
        return gguf_str(key) + struct.pack("<I", 8) + gguf_str(value)
    if isinstance(value, float):
        return gguf_str(key) + struct.pack("<If", 6, value)
    return gguf_str(key) + struct.pack("<II", 4, value)


def shape_tensors(s, qwen):
    """(name, dims (contiguous first), kind) of a llama/qwen2 GGUF."""
    h, f, v, hd = s["hidden"], s["ffn"], s["vocab"], s["hidden"] // s["heads"]
    kvd = s["kv_heads"] * hd
    t = [("token_embd.weight", [h, v], "embd"), ("output_norm.weight", [h], "norm"),
         ("output.weight", [h, v], "out")]
    for l in range(s["layers"]):
        p = "blk.%d." % l
        t += [(p + "attn_norm.weight", [h], "norm"), (p + "attn_q.weight", [h, h], "mat"),
              (p + "attn_k.weight", [h, kvd], "mat"), (p + "attn_v.weight", [h, kvd], "v"),
              (p + "attn_output.weight", [h, h], "mat"), (p + "ffn_norm.weight", [h], "norm"),
              (p + "ffn_gate.weight", [h, f], "mat"), (p + "ffn_up.weight", [h, f], "mat"),
              (p + "ffn_down.weight", [f, h], "down")]
        if qwen:
            t += [(p + "attn_q.bias", [h], "norm"), (p + "attn_k.bias", [kvd], "norm"),
                  (p + "attn_v.bias", [kvd], "norm")]
    return t


def write_gguf(path, arch, name, s, types):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    meta = [kv("general.architecture", arch), kv("general.name", name),
            kv(arch + ".block_count", s["layers"]), kv(arch + ".embedding_length", s["hidden"]),
            kv(arch + ".feed_forward_length", s["ffn"]),
            kv(arch + ".attention.head_count", s["heads"]),
            kv(arch + ".attention.head_count_kv", s["kv_heads"]),
            kv(arch + ".context_length", s["context"]),
            kv(arch + ".rope.freq_base", float(s.get("theta", 10000.0)))]
    infos, offset = [], 0
    for tname, dims, kind in shape_tensors(s, arch == "qwen2"):
        ty = "F32" if kind == "norm" else types.get(kind, types["mat"])
        tid, block, bsize = GGML[ty]
        n = 1
        for d in dims:
            n *= d
        nbytes = n // block * bsize
        infos.append(gguf_str(tname) + struct.pack("<I", len(dims)) +
                     b"".join(struct.pack("<Q", d) for d in dims) + struct.pack("<IQ", tid, offset))
        offset += (nbytes + 31) // 32 * 32
    head = b"GGUF" + struct.pack("<IQQ", 3, len(infos), len(meta)) + b"".join(meta) + b"".join(infos)
    head += b"\0" * ((32 - len(head) % 32) % 32)
    with open(path, "wb") as fh:
        fh.write(head)
        fh.truncate(len(head) + offset)


def write_hf(folder, config, s):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as fh:
        json.dump(config, fh)
    h, f, v, hd = s["hidden"], s["ffn"], s["vocab"], s["hidden"] // s["heads"]
    kvd = s["kv_heads"] * hd
    t = [("model.embed_tokens.weight", [v, h]), ("model.norm.weight", [h]), ("lm_head.weight", [v, h])]
    for l in range(s["layers"]):
        p = "model.layers.%d." % l
        t += [(p + "input_layernorm.weight", [h]), (p + "self_attn.q_proj.weight", [h, h]),
              (p + "self_attn.k_proj.weight", [kvd, h]), (p + "self_attn.v_proj.weight", [kvd, h]),
              (p + "self_attn.o_proj.weight", [h, h]), (p + "post_attention_layernorm.weight", [h]),
              (p + "mlp.gate_proj.weight", [f, h]), (p + "mlp.up_proj.weight", [f, h]),
              (p + "mlp.down_proj.weight", [h, f])]
    header, off = {"__metadata__": {"format": "pt"}}, 0
    for name, shape in t:
        n = 1
        for d in shape:
            n *= d
        header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [off, off + 2 * n]}
        off += 2 * n
    hb = json.dumps(header).encode()
    hb += b" " * ((8 - len(hb) % 8) % 8)
    with open(os.path.join(folder, "model.safetensors"), "wb") as fh:
        fh.write(struct.pack("<Q", len(hb)) + hb)
        fh.truncate(8 + len(hb) + off)


def hf_cache(hub, repo, rev, config, s):
    base = os.path.join(hub, "models--" + repo.replace("/", "--"))
    blobs = os.path.join(base, "blobs")
    tmp = os.path.join(base, "tmp-" + rev)
    write_hf(tmp, config, s)
    snap = os.path.join(base, "snapshots", rev)
    os.makedirs(snap, exist_ok=True)
    os.makedirs(blobs, exist_ok=True)
    for i, fname in enumerate(sorted(os.listdir(tmp))):
        blob = "%s%02d" % (rev, i)
        os.rename(os.path.join(tmp, fname), os.path.join(blobs, blob))
        os.symlink(os.path.join("..", "..", "blobs", blob), os.path.join(snap, fname))
    os.rmdir(tmp)
    os.makedirs(os.path.join(base, "refs"), exist_ok=True)
    with open(os.path.join(base, "refs", "main"), "w") as fh:
        fh.write(rev)


def main():
    home = sys.argv[1]
    llama8 = dict(layers=32, hidden=4096, ffn=14336, heads=32, kv_heads=8, vocab=128256,
                  context=131072, theta=500000.0)
    llama70 = dict(layers=80, hidden=8192, ffn=28672, heads=64, kv_heads=8, vocab=128256,
                   context=131072, theta=500000.0)
    qwen05 = dict(layers=24, hidden=896, ffn=4864, heads=14, kv_heads=2, vocab=151936,
                  context=32768, theta=1000000.0)
    qwen7 = dict(layers=28, hidden=3584, ffn=18944, heads=28, kv_heads=4, vocab=152064,
                 context=32768, theta=1000000.0)
    q4km = {"mat": "Q4_K", "v": "Q6_K", "down": "Q6_K", "embd": "Q4_K", "out": "Q6_K"}
    write_gguf(os.path.join(home, ".lmstudio/models/lmstudio-community/Meta-Llama-3.1-8B-Instruct-GGUF/"
                            "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf"),
               "llama", "Meta Llama 3.1 8B Instruct", llama8, q4km)
    write_gguf(os.path.join(home, ".local/share/nomic.ai/GPT4All/qwen2.5-0.5b-instruct-q8_0.gguf"),
               "qwen2", "Qwen2.5 0.5B Instruct", qwen05, {"mat": "Q8_0"})
    store = os.path.join(home, ".ollama/models")
    digest = "6a0746a1ec1aef3e7ec53868f220ff6e389f6f8ef87a01d77c96807de94ca2aa"
    write_gguf(os.path.join(store, "blobs", "sha256-" + digest), "qwen2", "Qwen2.5 7B Instruct",
               qwen7, q4km)
    manifest = {"schemaVersion": 2,
                "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
                "config": {"mediaType": "application/vnd.docker.container.image.v1+json",
                           "digest": "sha256:" + "d" * 64, "size": 487},
                "layers": [{"mediaType": "application/vnd.ollama.image.model",
                            "digest": "sha256:" + digest, "size": 4683073184}]}
    mdir = os.path.join(store, "manifests/registry.ollama.ai/library/qwen2.5")
    os.makedirs(mdir, exist_ok=True)
    with open(os.path.join(mdir, "7b"), "w") as fh:
        json.dump(manifest, fh)
    hub = os.path.join(home, ".cache/huggingface/hub")
    def cfg(s):
        return {"model_type": "llama", "hidden_size": s["hidden"], "intermediate_size": s["ffn"],
                "num_hidden_layers": s["layers"], "num_attention_heads": s["heads"],
                "num_key_value_heads": s["kv_heads"], "max_position_embeddings": s["context"],
                "vocab_size": s["vocab"], "rms_norm_eps": 1e-5, "rope_theta": s["theta"],
                "tie_word_embeddings": False}
    hf_cache(hub, "meta-llama/Llama-3.1-8B-Instruct", "0e9e39f249a16976918f6564b8830bc894c89659",
             cfg(llama8), llama8)
    hf_cache(hub, "meta-llama/Llama-3.3-70B-Instruct", "6f6073b423013f6a7d4d9f39144961bfbfbc386b",
             cfg(llama70), llama70)
    # A download that stopped after 1 KiB, in a folder the user adds.
    mine = os.path.join(home, "Models")
    os.makedirs(mine, exist_ok=True)
    src = os.path.join(home, ".local/share/nomic.ai/GPT4All/qwen2.5-0.5b-instruct-q8_0.gguf")
    with open(src, "rb") as fh, open(os.path.join(mine, "partial-download.gguf"), "wb") as out:
        out.write(fh.read(1024))


main()
