#!/usr/bin/env bash
# Installs the build and test dependencies on Debian 12 (run as root, or with sudo available).
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
PKGS=(
  build-essential cmake ninja-build ccache pkg-config git
  qt6-base-dev qt6-charts-dev qt6-tools-dev qt6-tools-dev-tools qt6-l10n-tools
  qt6-httpserver-dev libqt6sql6-sqlite libquazip1-qt6-dev libsqlite3-dev libgl-dev
  libqt6opengl6-dev
  nlohmann-json3-dev libcpp-httplib-dev libpcre2-dev libxxhash-dev libicu-dev
  clang-14 clang-format-14 libclang-rt-14-dev
  xvfb xauth fonts-noto-cjk
  qt6-translations-l10n
  nodejs npm python3 python3-jinja2
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js and npm may come from elsewhere than Debian's packages on developer machines.
if command -v node >/dev/null && command -v npm >/dev/null; then
  missing=("${missing[@]/nodejs}"); missing=("${missing[@]/npm}")
fi
read -r -a missing <<<"${missing[*]:-}"
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all packages present"
fi
