#!/usr/bin/env bash
# Writes reference token ids / decoded text computed by the real Hugging Face tokenizers
# (Rust, via the @anush008/tokenizers node binding) for the corpus in gen-reference.js, into
# $LLMWB_TEST_ASSETS/reference/tokenizer/<model>.json, and NFC references from Python's
# unicodedata into nfc.json. Run by scripts/fetch-test-assets.sh (which sets NODE_PATH).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ASSETS="${LLMWB_TEST_ASSETS:-$HOME/.cache/llmwb/test-assets}"
OUT="$ASSETS/reference/tokenizer"
mkdir -p "$OUT"
export NODE_PATH="${NODE_PATH:-$ASSETS/npm/node_modules}"
node "$HERE/gen-reference.js" "$ASSETS/tokenizers" "$OUT"
python3 "$HERE/gen-nfc-reference.py" "$OUT/nfc.json"
