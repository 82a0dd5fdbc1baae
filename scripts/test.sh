#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12 machine: installs what it needs, builds, and
# runs every ctest label (unit, integration, crash, e2e, ...). Extra arguments go to ctest,
# e.g. `scripts/test.sh -L unit`. With CI=true it also builds the executable in Release
# (-O3) into build-release: GCC warns differently at -O3, and packagers build that way.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# The benchmarks are built in CI (so they keep compiling), not on a first run by hand: no test
# runs them. `scripts/build.sh` builds them.
if [ "${CI:-}" = true ]; then bench=ON; else bench=OFF; fi
ICEWARDEN_BENCH="${ICEWARDEN_BENCH:-$bench}" scripts/build.sh
if [ "${CI:-}" = true ]; then
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"
  cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release -DICEWARDEN_WERROR=ON \
    -DBUILD_TESTING=OFF -DICEWARDEN_BENCH=OFF
  cmake --build build-release --target icewarden -- -j"${JOBS:-$(nproc)}"
fi
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure --timeout 300 -j"${JOBS:-2}" "$@"
