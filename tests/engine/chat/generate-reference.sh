#!/usr/bin/env bash
# Expected chat-template renderings from Python Jinja2 (as Hugging Face runs it) for
# tst_chat_template: writes $LLMWB_TEST_ASSETS/reference/chat/{templates,interpreter}.json.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
ASSETS="${LLMWB_TEST_ASSETS:-$HOME/.cache/llmwb/test-assets}"
python3 -c 'import jinja2' 2>/dev/null || { echo "generate-reference (chat): python3 with jinja2 is required" >&2; exit 1; }
LLMWB_TEST_ASSETS="$ASSETS" python3 "$HERE/reference.py" "$ROOT" "$ASSETS/reference/chat"
