#!/usr/bin/env bash
# Installs what hcube needs on Debian 12 (run as root, or with sudo available).
# Only missing packages are installed, so a prepared machine skips apt entirely.
set -euo pipefail
packages=(g++ meson ninja-build pkg-config clang-format libtbb-dev libboost-dev libboost-context-dev
    doctest-dev libcli11-dev nlohmann-json3-dev libfmt-dev chromium-headless-shell
    openmpi-bin libopenmpi-dev)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    echo "hcube setup: installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
