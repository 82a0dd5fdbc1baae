#!/usr/bin/env bash
# Fuzzes icewarden's parsers and API router (tests/fuzz/, docs/fuzzing.md) with libFuzzer,
# ASan and UBSan, built by clang into ./build-fuzz. Installs clang and its runtime libraries
# (Debian packages clang, libclang-rt-14-dev) and the build's packages when missing.
#
#   scripts/fuzz.sh                      # ctest -L fuzz: every target for 60 s
#   FUZZ_SECONDS=3600 scripts/fuzz.sh    # every target for an hour, one after the other
#   scripts/fuzz.sh runbook config       # only these targets
#
# What a target finds stays in build-fuzz/tests/fuzz/fuzz-corpus/NAME (the next run starts
# from it); a crash leaves crash-* in the folder ctest ran in (build-fuzz/tests/fuzz/): copy it
# to tests/fuzz/regressions/NAME/ and fix it, and the unit suite replays it from then on.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
need=()
for p in clang libclang-rt-14-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${need[@]}"
fi
BUILD_DIR=${BUILD_DIR:-build-fuzz}
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER=clang++ -DICEWARDEN_FUZZ=ON -DICEWARDEN_BENCH=OFF \
  -DICEWARDEN_FUZZ_SECONDS="${FUZZ_SECONDS:-60}" >/dev/null
cmake --build "$BUILD_DIR" --target fuzz_targets -- -j"${JOBS:-$(nproc)}"
filter=()
if [ $# -gt 0 ]; then
  filter=(-R "^fuzz\\.($(IFS='|'; echo "$*"))\$")
fi
ctest --test-dir "$BUILD_DIR" -L fuzz --output-on-failure "${filter[@]}"
