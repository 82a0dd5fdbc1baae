#!/usr/bin/env bash
# The main job: installs what it needs, builds, starts the local two-region lab
# (examples/lab: Iceberg REST catalogs for us-east-1 and eu-central-1 with replication,
# a workload and fault injection), runs `icewarden serve` on examples/local.yaml against
# it, and shows live status until Ctrl-C.
#
# Ports: catalogs 127.0.0.1:18181 (us-east-1) and :18182 (eu-central-1), lab admin :18180,
# icewarden API :8480. State and logs go to build/lab/.
#
# API tokens for the four roles come from ICEWARDEN_{VIEWER,OPERATOR,APPROVER,ADMIN}_TOKEN;
# any that are unset get a random value, written to build/lab/tokens.env (mode 600) so
# that another shell can `source build/lab/tokens.env` and use the CLI.
#
# LAB_SECONDS=N stops everything after N seconds (used to smoke-test this script).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh

LAB_DIR=${LAB_DIR:-build/lab}
PORT=${ICEWARDEN_PORT:-8480}
mkdir -p "$LAB_DIR/data"
umask 077
tokens="$LAB_DIR/tokens.env"
: > "$tokens"
for role in VIEWER OPERATOR APPROVER ADMIN; do
  var="ICEWARDEN_${role}_TOKEN"
  if [ -z "${!var:-}" ]; then
    export "$var=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  fi
  echo "export $var=${!var}" >> "$tokens"
done
echo "export ICEWARDEN_TOKEN=\$ICEWARDEN_ADMIN_TOKEN" >> "$tokens"
echo "export ICEWARDEN_SERVER=http://127.0.0.1:$PORT" >> "$tokens"
# shellcheck disable=SC1090
source "$tokens"

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

build/examples/lab/icewarden-lab --data "$LAB_DIR/data" --admin 127.0.0.1:18180 \
  --region us-east-1=127.0.0.1:18181 --region eu-central-1=127.0.0.1:18182 \
  --default-owner us-east-1 --owner 'eu[.].*=eu-central-1' \
  --replication-lag-ms 2000 --workload-interval-ms 3000 > "$LAB_DIR/lab.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q '^lab: ready' "$LAB_DIR/lab.log" && break; sleep 0.1; done
grep -q '^lab: ready' "$LAB_DIR/lab.log" || { cat "$LAB_DIR/lab.log"; exit 1; }

build/icewarden serve --config examples/local.yaml --listen "127.0.0.1:$PORT" \
  --state "$LAB_DIR/icewarden.db" > "$LAB_DIR/icewarden.out" 2> "$LAB_DIR/icewarden.log" &
pids+=($!)
for _ in $(seq 100); do grep -q 'serving' "$LAB_DIR/icewarden.out" && break; sleep 0.1; done
grep -q 'serving' "$LAB_DIR/icewarden.out" || { cat "$LAB_DIR/icewarden.log"; exit 1; }

cat <<EOT
lab: catalogs us-east-1 http://127.0.0.1:18181  eu-central-1 http://127.0.0.1:18182
lab: fault injection http://127.0.0.1:18180 (docs/lab.md), e.g.
       curl -X POST http://127.0.0.1:18180/lab/regions/us-east-1/stop
icewarden: http://127.0.0.1:$PORT; in another shell: source $tokens && build/icewarden status
logs: $LAB_DIR/lab.log $LAB_DIR/icewarden.log
EOT

deadline=$(( $(date +%s) + ${LAB_SECONDS:-31536000} ))
while [ "$(date +%s)" -lt "$deadline" ]; do
  sleep 2
  for pid in "${pids[@]}"; do
    kill -0 "$pid" 2>/dev/null || { echo "a lab process exited; see $LAB_DIR/*.log"; exit 1; }
  done
  [ -t 1 ] && clear
  echo "== $(date -u +%H:%M:%S)  (Ctrl-C to stop)"
  build/icewarden status || true
  echo
  build/icewarden lag 2>/dev/null | head -20 || true
done
