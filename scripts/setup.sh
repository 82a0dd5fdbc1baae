#!/usr/bin/env bash
# Installs every Debian 12 package that icewarden's build, tests and lab need.
# Idempotent: when everything is already installed it changes nothing and touches no
# network. Run as root (or with sudo available).
set -euo pipefail

packages=(
  # toolchain
  g++ cmake ninja-build ccache pkg-config clang-format
  # the linker CMakeLists.txt prefers: links the test binaries several times faster than GNU ld
  lld
  # libraries
  libboost-dev libboost-system-dev libssl-dev libsqlite3-dev sqlite3 libyaml-cpp-dev
  libspdlog-dev libfmt-dev nlohmann-json3-dev libcli11-dev libcpp-httplib-dev libldns-dev
  libsimdjson-dev
  # drill schedules in a time zone (date/tz over the OS's tzdata; GCC 12 has no <chrono> tz)
  libhowardhinnant-date-dev tzdata
  libgtest-dev libgmock-dev libbenchmark-dev
  # real servers and checkers the lab and tests start: Prometheus and the blackbox exporter
  # of the alerting loop (examples/alerting/, run with their own config, data folder and
  # port, not as the system services these packages install), promtool checks the /metrics
  # format, and tests/bench/probe_cost_bench compares icewarden's probe CPU against blackbox
  prometheus prometheus-blackbox-exporter
  # BIND 9 for the dns probe's integration test (named), and dig to wait until it serves
  bind9 bind9-dnsutils
  # the lab and tests use these to drive and inspect processes (jq: docs/lab.md's commands)
  curl procps openssl jq
  # Prometheus Alertmanager: the lab's, the alert.alertmanager action's integration test and
  # the alerting loop's, which posts to icewarden's webhook (amtool: docs/webhooks.md)
  prometheus-alertmanager
  # the dashboard's browser tests (tests/ui/): Playwright drives Debian's chromium, with a font
  chromium fonts-dejavu-core
  # etcd members for the etcd state backend's tests (tests/etcd/), each started by the test on
  # its own loopback ports and data folder, not as the system service the package installs
  etcd-server
  # ip netns, veth pairs and bridges: the partition tests (tests/etcd/netns_*) build a network
  # of namespaces for etcd members, replicas and catalogs, and cut it (they need root)
  iproute2
  # the shells whose completion scripts `icewarden completion` prints, tested by sourcing them
  # (tests/e2e/shell_completion_test.cpp)
  bash zsh
  # systemd-analyze verify checks the example units (tests/e2e/systemd_units_test.cpp)
  systemd
  # libfaketime: tests/etcd/skewed_replica_test.cpp and tests/chaos/ run a replica with its clock
  # 30 s off (LD_PRELOAD of libfaketime.so.1 with FAKETIME="+30s") to show that no timestamp is
  # compared across replicas
  faketime
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

# Node.js runs Stoplight Prism, the validating proxy of the conformance tests, and Playwright.
if ! command -v npm >/dev/null 2>&1; then missing+=(nodejs npm); fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} Debian packages already installed"
else
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# npm packages, pinned by each folder's package-lock.json (Stoplight Prism for the
# conformance tests; playwright-core and axe-core for the dashboard's; iceberg-js for the
# gateway's client test); reinstalled only when the lock file changed since the last install.
for dir in tests/conformance tests/ui tests/gateway/js; do
  folder="$(dirname "$0")/../$dir"
  stamp="$folder/node_modules/.icewarden-lock"
  if [ ! -f "$stamp" ] || ! cmp -s "$folder/package-lock.json" "$stamp"; then
    echo "setup: npm install in $dir"
    (cd "$folder" && npm ci --no-audit --no-fund --loglevel=error)
    cp "$folder/package-lock.json" "$stamp"
  fi
done
