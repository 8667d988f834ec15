#!/usr/bin/env bash
# Renders a benchmark report's report.html in headless Chromium (Debian's `chromium`) at
# 1280 px and 800 px wide, to look at: charts drawn, nothing clipped.
# Usage: scripts/report-screenshot.sh [REPORT] [OUT_DIR]
#   REPORT: a report.html, a report .zip, or a report folder; default: a three-run sweep report
#           written by the build's write_sample_report (tests/report/write_sample_report.cpp).
#   OUT_DIR: default screenshots/report; writes report-1280.png and report-800.png.
# Environment: BUILD_DIR (default build), HEIGHT (default 2400), WIDTHS (default "1280 800"),
# LLMWB_SKIP_BUILD=1 uses the existing write_sample_report.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
REPORT="${1:-}"
OUT="$(realpath -m "${2:-screenshots/report}")"
BUILD_DIR="${BUILD_DIR:-build}"
HEIGHT="${HEIGHT:-2400}"
WIDTHS="${WIDTHS:-1280 800}"
BROWSER="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$BROWSER" ]; then
  echo "report-screenshot: chromium not found (apt-get install chromium)" >&2
  exit 1
fi
WORK="$(mktemp -d "${TMPDIR:-/tmp}/llmwb-report-shot.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
HTML="$WORK/report.html"
if [ -z "$REPORT" ]; then
  if [ "${LLMWB_SKIP_BUILD:-0}" != 1 ]; then
    cmake --build "$BUILD_DIR" --target write_sample_report >/dev/null
  fi
  "$BUILD_DIR/tests/report/write_sample_report" "$WORK"
elif [ -d "$REPORT" ]; then
  cp "$REPORT/report.html" "$HTML"
elif [[ "$REPORT" == *.zip ]]; then
  # Only report.html is taken out (by name; nothing else of the archive is written).
  python3 - "$REPORT" "$HTML" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    names = [n for n in z.namelist() if n == "report.html" or n.endswith("/report.html")]
    if not names:
        sys.exit("report-screenshot: no report.html in " + sys.argv[1])
    info = z.getinfo(sorted(names, key=len)[0])
    if info.file_size > 64 << 20:
        sys.exit("report-screenshot: report.html is larger than 64 MiB")
    with z.open(info) as src, open(sys.argv[2], "wb") as dst:
        dst.write(src.read(64 << 20))
PY
else
  cp "$REPORT" "$HTML"
fi
mkdir -p "$OUT"
for W in $WIDTHS; do
  # A throwaway profile; no network is needed (the page has no external resources).
  "$BROWSER" --headless --disable-gpu --no-sandbox --hide-scrollbars --no-first-run \
    --user-data-dir="$WORK/profile" --screenshot="$OUT/report-$W.png" \
    --window-size="$W,$HEIGHT" "file://$HTML" 2>"$WORK/chromium-$W.log" || {
      cat "$WORK/chromium-$W.log" >&2
      exit 1
    }
  echo "$OUT/report-$W.png"
done
