#!/usr/bin/env bash
# Configures and builds icewarden, its tests and benchmarks into ./build (Release with
# debug info). Safe to run repeatedly: ninja and ccache only redo what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
# ccache keys on paths relative to the checkout, so clones in other folders (CI) share hits.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build "$BUILD_DIR" -- -j"${JOBS:-$(nproc)}"
