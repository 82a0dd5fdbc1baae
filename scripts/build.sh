#!/usr/bin/env bash
# Configures and builds icewarden, its tests and benchmarks into ./build (Release with
# debug info), with warnings as errors. Safe to run repeatedly: ninja and ccache only redo
# what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
# ccache keys on paths relative to the checkout, so clones in other folders (CI, worktrees)
# share hits. With -g, ccache also hashes the working directory unless told not to (hash_dir),
# which made every other folder miss; the price is that debug info names the folder that
# first compiled a file.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"
# The benchmarks (tests/bench/) are built unless ICEWARDEN_BENCH=OFF: scripts/test.sh leaves
# them out outside CI, since no test runs them and they are a tenth of a first build.
BENCH=${ICEWARDEN_BENCH:-ON}
# A build dir is configured once. One configured without -Werror (by a plain `cmake`, where
# ICEWARDEN_WERROR defaults to OFF), or with the benchmarks the other way, is reconfigured:
# developers and CI fail on warnings.
if [ ! -f "$BUILD_DIR/build.ninja" ] ||
  ! grep -qx 'ICEWARDEN_WERROR:BOOL=ON' "$BUILD_DIR/CMakeCache.txt" ||
  ! grep -qx "ICEWARDEN_BENCH:BOOL=$BENCH" "$BUILD_DIR/CMakeCache.txt"; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DICEWARDEN_WERROR=ON \
    -DICEWARDEN_BENCH="$BENCH"
fi
cmake --build "$BUILD_DIR" -- -j"${JOBS:-$(nproc)}"
