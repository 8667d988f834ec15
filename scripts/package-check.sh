#!/usr/bin/env bash
# The package as a user gets it: builds the .deb files and the .tar.gz (cpack), checks them
# (lintian, appstreamcli, desktop-file-validate), then installs the .deb with apt in a clean
# Debian 12 root (mmdebstrap, unpacked fresh each run) and runs, inside it: llmwb --version,
# llmwb generate on the demo model, the tarball's llmwb, and the desktop app started with a
# .gguf path under the host's Xvfb with LANG=zh_CN.UTF-8 (screenshot taken with xwd).
#
#   sudo scripts/package-check.sh [BUILD_DIR]     (default: build; configured with Qt)
#
# Needs root (chroot, mounts), mmdebstrap, lintian, appstream, desktop-file-utils, Xvfb, xwd
# and python3 on the host, and a Debian mirror (LLMWB_DEBIAN_MIRROR, default
# deb.debian.org). The base root is made once and kept as a tarball
# (LLMWB_DEB12_BASE, default ~/.cache/llmwb/deb12-base.tar). Results go to
# BUILD_DIR/package-check (packages/, lintian.txt, screenshot-zh_CN.png, ...).
# Not part of CI: it takes several minutes (apt downloads Qt and the CJK fonts).
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
OUT=$BUILD/package-check
MIRROR=${LLMWB_DEBIAN_MIRROR:-http://deb.debian.org}
BASE=${LLMWB_DEB12_BASE:-$HOME/.cache/llmwb/deb12-base.tar}
DISPLAY_NUM=${LLMWB_PKG_DISPLAY:-87}
START=$(date +%s)
FAILURES=()

step() { printf '\n== %s (%ds)\n' "$*" $(($(date +%s) - START)); }
check() { # check NAME COMMAND...: runs it, records a failure instead of stopping
    local name=$1
    shift
    if "$@"; then echo "PASS $name"; else echo "FAIL $name"; FAILURES+=("$name"); fi
}

[ "$(id -u)" = 0 ] || { echo "package-check: needs root (chroot, mount)" >&2; exit 2; }
for tool in cpack lintian appstreamcli desktop-file-validate mmdebstrap Xvfb xwd python3; do
    command -v "$tool" >/dev/null || { echo "package-check: $tool not found" >&2; exit 2; }
done
rm -rf "$OUT"
mkdir -p "$OUT/packages"

step "build and package"
cmake --build "$BUILD" -j2 --target llmwb llm-workbench llmwb_package_docs
(cd "$BUILD" && cpack -G "DEB;TGZ" -B "$OUT/packages" >"$OUT/cpack.log" 2>&1) ||
    { cat "$OUT/cpack.log"; exit 1; }
rm -rf "$OUT/packages/_CPack_Packages"
ls -l "$OUT/packages"
MAIN_DEB=$(ls "$OUT"/packages/llm-workbench_*.deb)
CUDA_DEB=$(ls "$OUT"/packages/llm-workbench-cuda_*.deb 2>/dev/null || true)
TGZ=$(ls "$OUT"/packages/llm-workbench-*.tar.gz)
dpkg-deb -I "$MAIN_DEB" | sed -n '/Package:/,$p'

step "lintian, appstreamcli, desktop-file-validate"
# lintian exits non-zero on errors only (warnings are listed in lintian.txt).
check lintian bash -c "lintian --info --display-experimental --tag-display-limit 0 \
    '$OUT'/packages/*.deb '$OUT'/packages/*.ddeb >'$OUT/lintian.txt' 2>&1"
cat "$OUT/lintian.txt"
check appstreamcli appstreamcli validate --no-net \
    "$SRC/packaging/io.github.llmwb.LlmWorkbench.metainfo.xml"
check desktop-file-validate desktop-file-validate "$SRC/packaging/llm-workbench.desktop"
check stripped bash -c "dpkg-deb --fsys-tarfile '$MAIN_DEB' | tar -xO ./usr/bin/llmwb |
    file - | grep -q ', stripped'"

step "clean Debian 12 root"
if [ ! -f "$BASE" ]; then
    mkdir -p "$(dirname "$BASE")"
    mmdebstrap --variant=apt --mode=root --format=tar bookworm "$BASE.tmp" \
        "deb $MIRROR/debian bookworm main" "deb $MIRROR/debian bookworm-updates main" \
        "deb $MIRROR/debian-security bookworm-security main"
    mv "$BASE.tmp" "$BASE"
fi
ROOT=$(mktemp -d /var/tmp/llmwb-deb12.XXXXXX)
XVFB_PID=
APP_PID=
cleanup() {
    if [ -n "$APP_PID" ]; then kill "$APP_PID" 2>/dev/null || true; fi
    if [ -n "$XVFB_PID" ]; then kill "$XVFB_PID" 2>/dev/null || true; fi
    for m in tmp/.X11-unix var/cache/apt/archives dev/pts dev proc; do
        mountpoint -q "$ROOT/$m" && umount -l "$ROOT/$m"
    done
    rm -rf --one-file-system "$ROOT"
}
trap cleanup EXIT
tar -C "$ROOT" -xf "$BASE"
mount -t proc proc "$ROOT/proc"
mount --bind /dev "$ROOT/dev"
mount --bind /dev/pts "$ROOT/dev/pts"
# Downloaded .deb files are kept between runs (LLMWB_DEB12_APT_CACHE); the root stays fresh.
APT_CACHE=${LLMWB_DEB12_APT_CACHE:-$HOME/.cache/llmwb/deb12-apt-archives}
mkdir -p "$APT_CACHE/partial" "$ROOT/var/cache/apt/archives"
mount --bind "$APT_CACHE" "$ROOT/var/cache/apt/archives"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
mkdir -p "$ROOT/tmp/pkgs"
cp "$OUT"/packages/*.deb "$TGZ" "$ROOT/tmp/pkgs/"
# An xwd dump (ZPixmap, 24/32 bits per pixel, as Xvfb's root window is) as an RGB PNG.
xwd_to_png() {
    python3 - "$1" "$2" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
h = struct.unpack(">25I", data[:100])
size, fmt, width, height, order, bpp, stride = h[0], h[2], h[4], h[5], h[7], h[11], h[12]
masks, ncolors = h[14:17], h[19]
if fmt != 2 or bpp not in (24, 32):
    sys.exit(f"xwd_to_png: unsupported xwd (format {fmt}, {bpp} bits per pixel)")
shifts = [(m & -m).bit_length() - 1 for m in masks]
pixels = data[size + 12 * ncolors:]
step, endian = bpp // 8, "little" if order == 0 else "big"
rows = bytearray()
for y in range(height):
    rows.append(0)
    line = pixels[y * stride:y * stride + width * step]
    for x in range(0, width * step, step):
        v = int.from_bytes(line[x:x + step], endian)
        rows += bytes(((v & m) >> s) & 0xFF for m, s in zip(masks, shifts))
def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
png += chunk(b"IDAT", zlib.compress(bytes(rows), 6)) + chunk(b"IEND", b"")
open(sys.argv[2], "wb").write(png)
PY
}
in_root() { chroot "$ROOT" env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root "$@"; }

step "apt install"
in_root apt-get update -q >/dev/null
DEBS=("/tmp/pkgs/$(basename "$MAIN_DEB")")
[ -n "$CUDA_DEB" ] && DEBS+=("/tmp/pkgs/$(basename "$CUDA_DEB")")
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${DEBS[@]}" \
    >"$OUT/apt-install.log" 2>&1 || { tail -30 "$OUT/apt-install.log"; exit 1; }
grep -m3 -E '^(Setting up|The following NEW)' "$OUT/apt-install.log" || true
echo "$(grep -c '^Setting up' "$OUT/apt-install.log") packages set up"

step "in the root: CLI"
check version bash -c "chroot '$ROOT' llmwb --version | tee '$OUT/version.txt' | grep -qx 'llmwb [0-9.]*'"
cat "$OUT/version.txt"
check generate bash -c "chroot '$ROOT' env HOME=/root XDG_DATA_HOME=/tmp/xdg llmwb generate \
    --prompt 'The engine' --max-tokens 24 --ignore-eos --seed 1 | tee '$OUT/generate.txt' | grep -q ."
check man-pages test -s "$ROOT/usr/share/man/man1/llmwb.1.gz" -a \
    -s "$ROOT/usr/share/man/man1/llm-workbench.1.gz"
check qt-translations test -s "$ROOT/usr/share/qt6/translations/qtbase_zh_CN.qm"
check sqlite-driver test -s "$ROOT/usr/lib/x86_64-linux-gnu/qt6/plugins/sqldrivers/libqsqlite.so"
check mime-type test -s "$ROOT/usr/share/mime/application/x-gguf.xml"
in_root mkdir -p /opt/llmwb-tgz
in_root tar -C /opt/llmwb-tgz --strip-components=1 -xzf "/tmp/pkgs/$(basename "$TGZ")"
check tarball-llmwb bash -c "chroot '$ROOT' /opt/llmwb-tgz/bin/llmwb --version | grep -q llmwb"
in_root llmwb make-model --out /tmp/tiny.gguf >/dev/null

step "in the root: the app under Xvfb, zh_CN, opening /tmp/tiny.gguf"
Xvfb ":$DISPLAY_NUM" -screen 0 1280x800x24 -nolisten tcp >"$OUT/xvfb.log" 2>&1 &
XVFB_PID=$!
mkdir -p "$ROOT/tmp/.X11-unix"
mount --bind /tmp/.X11-unix "$ROOT/tmp/.X11-unix"
sleep 2
chroot "$ROOT" env -i PATH=/usr/bin:/bin HOME=/root DISPLAY=":$DISPLAY_NUM" \
    LANG=zh_CN.UTF-8 XDG_DATA_HOME=/tmp/xdg XDG_CONFIG_HOME=/tmp/xdg-config \
    llm-workbench /tmp/tiny.gguf >"$OUT/app.log" 2>&1 &
APP_PID=$!
sleep "${LLMWB_PKG_APP_WAIT:-15}"
check app-running kill -0 "$APP_PID"
xwd -root -display ":$DISPLAY_NUM" -silent >"$OUT/screenshot-zh_CN.xwd"
xwd_to_png "$OUT/screenshot-zh_CN.xwd" "$OUT/screenshot-zh_CN.png"
rm -f "$OUT/screenshot-zh_CN.xwd"
check screenshot test -s "$OUT/screenshot-zh_CN.png"
kill "$APP_PID" 2>/dev/null || true
wait "$APP_PID" 2>/dev/null || true
APP_PID=
echo "app log:"
sed 's/^/  /' "$OUT/app.log" | tail -15

step "done"
echo "outputs: $OUT (screenshot: $OUT/screenshot-zh_CN.png)"
echo "run time: $(($(date +%s) - START)) s"
if [ ${#FAILURES[@]} -gt 0 ]; then
    echo "FAILED: ${FAILURES[*]}"
    exit 1
fi
echo "all checks passed"
