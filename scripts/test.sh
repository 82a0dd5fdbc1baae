#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12 machine: installs what it needs, builds, and
# runs every ctest label (unit, integration, crash, e2e, ...). Extra arguments go to ctest,
# e.g. `scripts/test.sh -L unit`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure --timeout 300 -j"${JOBS:-2}" "$@"
