#!/usr/bin/env bash
# Installs mpix's Debian 12 dependencies (with apt-get, when run as root or with sudo) and
# builds into build/. Usage: scripts/build.sh [extra cmake args]
set -euo pipefail
cd "$(dirname "$0")/.."
# nvcc lives outside PATH on stock CUDA installs; the CUDA backend builds when it is found.
[ -x /usr/local/cuda/bin/nvcc ] && export PATH="$PATH:/usr/local/cuda/bin"
PKGS="build-essential cmake ninja-build pkg-config libopenmpi-dev openmpi-bin libfabric-dev \
libfabric-bin catch2 libamdhip64-dev clang python3-matplotlib libmpich-dev mpich clang-format iproute2"
if [ "${MPIX_SKIP_APT:-0}" != 1 ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  missing=$(for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
  if [ -n "$missing" ]; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
  fi
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
cmake --build build -j "$(nproc)"
