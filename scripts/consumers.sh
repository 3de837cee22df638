#!/usr/bin/env bash
# Builds programs against an installed mpix, as users do: installs the build with
# `cmake --install --prefix`, moves the install elsewhere (both routes must be relocatable),
# then builds the consumers in test/consumers/ by pkg-config (C, C++) and by find_package(mpix)
# (C, C++, and a `LANGUAGES CXX CUDA` project where nvcc exists: configured and built only),
# and runs the C and C++ ones on 2 ranks with the build's MPI launcher. Called by
# scripts/test.sh after the normal build; fails on the first error, saying which step.
# Usage: scripts/consumers.sh [build-dir]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD/test/consumers
build=$(cd "${1:-build}" && pwd)
work=$(mktemp -d /tmp/mpix-consumers.XXXXXX)
trap 'rm -rf "$work"' EXIT
step=""
trap 'echo "=== consumers: FAILED at: $step ===" >&2' ERR
say() { step=$*; echo "--- consumers: $*"; }
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
mpiexec=$(cache MPIEXEC_EXECUTABLE)
launch=("$mpiexec" -n 2)
if [ "$(cache MPIX_MPI_IS_OPENMPI)" = 1 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_btl_vader_single_copy_mechanism=none
  launch+=(--oversubscribe --bind-to none)
fi

say "install $build into a prefix, then move it"
cmake --install "$build" --prefix "$work/staged" >/dev/null
mv "$work/staged" "$work/prefix"
prefix=$work/prefix
pc=$(find "$prefix" -name mpix.pc)
export PKG_CONFIG_PATH=$(dirname "$pc")

say "pkg-config: flags point into the moved prefix"
libdir=$(pkg-config --variable=libdir mpix)
[ "$(cd "$libdir" && pwd -P)" = "$(cd "$(dirname "$(find "$prefix" -name 'libmpix.so')")" && pwd -P)" ]
pkg-config --cflags mpix | grep -q -- "-I$prefix/"

say "pkg-config: C consumer"
cc "$src/consumer.c" $(pkg-config --cflags --libs mpix) -Wl,-rpath,"$libdir" -o "$work/c_pc"
say "pkg-config: C++ consumer"
c++ "$src/consumer.cpp" $(pkg-config --cflags --libs mpix) -Wl,-rpath,"$libdir" -o "$work/cxx_pc"

for lang in C CXX CUDA; do
  if [ $lang = CUDA ] && ! command -v nvcc >/dev/null; then
    echo "--- consumers: find_package, CUDA project: skipped (no nvcc)"
    continue
  fi
  say "find_package(mpix): $lang project"
  cmake -S "$src" -B "$work/cm_$lang" -G Ninja -DCONSUMER_LANG=$lang \
    -DCMAKE_PREFIX_PATH="$prefix" >"$work/cm_$lang.log" 2>&1 \
    || { cat "$work/cm_$lang.log"; false; }
  cmake --build "$work/cm_$lang" >>"$work/cm_$lang.log" 2>&1 || { cat "$work/cm_$lang.log"; false; }
done

# libmpix must come before libmpi in the dynamic linker's order, or its MPI_Init loses.
for exe in "$work/c_pc" "$work/cxx_pc" "$work/cm_C/consumer" "$work/cm_CXX/consumer"; do
  say "libmpix before libmpi in $(basename "$(dirname "$exe")")/$(basename "$exe")"
  readelf -d "$exe" | awk '/NEEDED/ {print $NF}' | grep -E 'libmpix|libmpi' | head -1 | grep -q libmpix
done

for exe in "$work/c_pc" "$work/cxx_pc" "$work/cm_C/consumer" "$work/cm_CXX/consumer"; do
  say "run $(basename "$(dirname "$exe")")/$(basename "$exe") on 2 ranks"
  "${launch[@]}" "$exe"
done
trap - ERR
echo "=== consumers: all passed ==="
