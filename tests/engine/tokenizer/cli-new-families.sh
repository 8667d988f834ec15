#!/usr/bin/env bash
# Manual end-to-end check (not run by ctest; needs the llmwb CLI built): tiny models written
# with the DeepSeek-V3 / Gemma 3 tokenizers (GGUF and safetensors) by make-model, tokenized and
# chat-rendered through the CLI, ids against the Hugging Face reference.
# Usage: tests/engine/tokenizer/cli-new-families.sh [BUILD_DIR]
set -u
BUILD="${1:-build}"
B="$BUILD/app/cli/llmwb"
[ -x "$B" ] || { echo "build the llmwb target first ($B)"; exit 1; }
A="${LLMWB_TEST_ASSETS:-$HOME/.cache/llmwb/test-assets}"
T=$(mktemp -d)
status=0
printf '[{"role":"system","content":"Rule."},{"role":"user","content":"Hi 12345 你好"}]' > $T/msgs.json
for tk in deepseek_v3 gemma3; do
  for fmt in gguf safetensors; do
    out=$T/$tk-$fmt; [ $fmt = gguf ] && out=$out.gguf
    $B make-model --out $out --arch llama --format $fmt --tokenizer $A/tokenizers/$tk > $T/mk.log 2>&1 || { echo "make-model $tk $fmt failed"; tail -3 $T/mk.log; status=1; continue; }
    python3 - "$B" "$out" "$A/reference/tokenizer/$tk.json" <<'PY'
import json, subprocess, sys
b, model, ref = sys.argv[1:4]
cases = json.load(open(ref))["cases"]
ok = n = 0
for c in cases[::25]:
    if "\x00" in c["text"] or not c["text"]:
        continue
    n += 1
    r = subprocess.run([b, "tokenize", "--model", model, "--text", c["text"], "--json", "--no-special"], capture_output=True, text=True)
    if r.returncode == 0 and json.loads(r.stdout)["ids"] == c["ids"]:
        ok += 1
    elif n - ok < 3:
        print("  differs:", repr(c["text"])[:60], r.stderr[:200])
print(f"{model}: {ok}/{n} CLI tokenize ids equal to HF")
sys.exit(0 if ok == n and n > 0 else 1)
PY
    [ $? = 0 ] || status=1
    $B render-chat --model $out --messages $T/msgs.json --add-generation-prompt 2>&1 | head -c 300; echo
  done
done
rm -rf $T
exit $status
