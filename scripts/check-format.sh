#!/usr/bin/env bash
# Checks that every C++ and CUDA source tracked by git follows .clang-format (clang-format 14,
# Debian 12's); `--fix` applies it. Called by scripts/test.sh before the build.
set -euo pipefail
cd "$(dirname "$0")/.."
CF="${CLANG_FORMAT:-clang-format-14}"
command -v "$CF" >/dev/null || { echo "check-format: $CF not found (apt-get install clang-format-14)" >&2; exit 1; }
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.cu' '*.cuh' '*.hpp')
if [ "${1:-}" = --fix ]; then
  "$CF" -i "${files[@]}"
  exit 0
fi
if ! "$CF" --dry-run --Werror "${files[@]}" 2>/tmp/check-format.$$; then
  grep -E '^[^ ].*: (error|warning)' /tmp/check-format.$$ | cut -d: -f1 | sort -u | head -50 >&2
  echo "check-format: the files above do not follow .clang-format; run: bash scripts/check-format.sh --fix" >&2
  rm -f /tmp/check-format.$$
  exit 1
fi
rm -f /tmp/check-format.$$
echo "check-format: ${#files[@]} files follow .clang-format"
