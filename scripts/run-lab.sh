#!/usr/bin/env bash
# The main job: installs what it needs, builds, starts the local two-region lab
# (examples/lab: Iceberg REST catalogs for us-east-1 and eu-central-1 with replication,
# a workload and fault injection), a BIND 9 serving the writers' name and a Prometheus
# Alertmanager for the failover runbook (examples/runbooks/lab-failover.yaml), runs
# `icewarden serve` on examples/local.yaml against them, and Prometheus with the blackbox
# exporter (examples/alerting/) probing both catalogs: a catalog that stops answering fires
# IcebergCatalogDown, which Alertmanager posts to icewarden's webhook, which proposes a
# failover; and a catalog gateway per region (`icewarden gateway`), through which the lab's
# workload commits. Shows live status until Ctrl-C.
#
# Ports, all on 127.0.0.1: catalogs :18181 (us-east-1) and :18182 (eu-central-1), lab admin
# :18180, BIND 9 :18153 (UDP and TCP; zone lake.lab.), Alertmanager :19093, Prometheus
# :19090, blackbox exporter :19115, icewarden API :8480, gateways :18281 (us-east-1) and
# :18282 (eu-central-1). State and logs go to build/lab/;
# `rm -rf build/lab` starts a fresh lab. Prometheus, the blackbox exporter and Alertmanager
# run here with their own config, data folder and port, not as the system services their
# Debian packages install (which need not run, nor systemd at all).
#
# API tokens for the four roles come from ICEWARDEN_{VIEWER,OPERATOR,APPROVER,ADMIN}_TOKEN,
# the TSIG secret that signs the runbook's DNS updates from DNS_TSIG_SECRET, and the
# webhooks' secrets from ICEWARDEN_WEBHOOK_TOKEN and CI_WEBHOOK_SECRET; any that
# are unset get a random value, written to build/lab/tokens.env (mode 600) so that another
# shell can `source build/lab/tokens.env` and use the CLI.
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
# BIND's TSIG key for RFC 2136 updates (hmac-sha256: 32 random bytes, base64).
if [ -z "${DNS_TSIG_SECRET:-}" ]; then
  DNS_TSIG_SECRET=$(head -c 32 /dev/urandom | base64)
  export DNS_TSIG_SECRET
fi
echo "export DNS_TSIG_SECRET=$DNS_TSIG_SECRET" >> "$tokens"
# The webhooks' secrets (examples/local.yaml, docs/webhooks.md): Alertmanager's bearer token
# and the HMAC secret of the generic endpoint `ci`.
for var in ICEWARDEN_WEBHOOK_TOKEN CI_WEBHOOK_SECRET; do
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

# wait_until NAME LOG COMMAND...: polls COMMAND for up to 20 s while the process started
# last is alive; on failure shows LOG and exits.
wait_until() {
  local name=$1 log=$2 pid=${pids[-1]}
  shift 2
  for _ in $(seq 200); do
    "$@" >/dev/null 2>&1 && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "$name did not start; $log:"
  tail -n 30 "$log"
  exit 1
}

# BIND 9: zone lake.lab. with the writers' name pointing at the default owner's catalog.
# The zone file is written once; later runs keep what failovers changed (in its journal),
# just as the catalogs and icewarden's state are kept.
mkdir -p "$LAB_DIR/dns"
DNS_DIR=$(realpath "$LAB_DIR/dns")  # named.conf wants absolute paths
if [ ! -f "$DNS_DIR/lake.lab.zone" ]; then
  cat > "$DNS_DIR/lake.lab.zone" <<'EOZ'
$TTL 60
@                    IN SOA ns.lake.lab. admin.lake.lab. 1 60 60 600 60
@                    IN NS  ns.lake.lab.
ns                   IN A   127.0.0.1
catalog.us-east-1    IN A   127.0.0.1
catalog.eu-central-1 IN A   127.0.0.1
writer             5 IN CNAME catalog.us-east-1.lake.lab.
EOZ
fi
cat > "$DNS_DIR/named.conf" <<EOC
key "icewarden-lab" { algorithm hmac-sha256; secret "$DNS_TSIG_SECRET"; };
options {
  directory "$DNS_DIR";
  pid-file "$DNS_DIR/named.pid";
  session-keyfile "$DNS_DIR/session.key";
  managed-keys-directory "$DNS_DIR";
  listen-on port 18153 { 127.0.0.1; };
  listen-on-v6 { none; };
  recursion no;
  allow-query { any; };
  dnssec-validation no;
};
controls { };
zone "lake.lab" {
  type primary;
  file "$DNS_DIR/lake.lab.zone";
  journal "$DNS_DIR/lake.lab.zone.jnl";
  allow-update { key "icewarden-lab"; };
};
EOC
# -g: foreground, log to stderr. Run as root, named keeps root (no -u): nothing of it is
# outside $DNS_DIR.
/usr/sbin/named -g -n 1 -c "$DNS_DIR/named.conf" > "$LAB_DIR/named.log" 2>&1 &
pids+=($!)
wait_until "BIND 9" "$LAB_DIR/named.log" \
  sh -c 'dig @127.0.0.1 -p 18153 writer.lake.lab CNAME +short +time=1 +tries=1 | grep -q .'

# Alertmanager: no clustering (empty cluster listener). examples/alerting/alertmanager.yml
# posts IcebergCatalogDown to icewarden's webhook with the bearer token in webhook-token
# beside it (mode 600), and keeps every other alert (icewarden's own pages) to itself.
AM_DIR="$LAB_DIR/alertmanager"
mkdir -p "$AM_DIR"
sed "s/127.0.0.1:8480/127.0.0.1:$PORT/" examples/alerting/alertmanager.yml > "$AM_DIR/alertmanager.yml"
printf '%s' "$ICEWARDEN_WEBHOOK_TOKEN" > "$AM_DIR/webhook-token"
/usr/bin/prometheus-alertmanager --config.file="$AM_DIR/alertmanager.yml" \
  --storage.path="$AM_DIR/data" --web.listen-address=127.0.0.1:19093 \
  --cluster.listen-address= > "$LAB_DIR/alertmanager.log" 2>&1 &
pids+=($!)
wait_until "Alertmanager" "$LAB_DIR/alertmanager.log" curl -sf http://127.0.0.1:19093/-/ready

build/examples/lab/icewarden-lab --data "$LAB_DIR/data" --admin 127.0.0.1:18180 \
  --region us-east-1=127.0.0.1:18181 --region eu-central-1=127.0.0.1:18182 \
  --default-owner us-east-1 --owner 'eu[.].*=eu-central-1' \
  --replication-lag-ms 2000 --workload-interval-ms 3000 \
  --workload-via us-east-1=http://127.0.0.1:18281 \
  --workload-via eu-central-1=http://127.0.0.1:18282 > "$LAB_DIR/lab.log" 2>&1 &
pids+=($!)
wait_until "the lab" "$LAB_DIR/lab.log" grep -q '^lab: ready' "$LAB_DIR/lab.log"

# DNS_TSIG_SECRET is in serve's environment: the runbook reads ${env.DNS_TSIG_SECRET}.
# ICEWARDEN_DASHBOARD_DIR=orchestrator/dashboard/www serves the dashboard's files from there,
# so a change to them shows on reload (development; serve --dashboard-dir).
build/icewarden serve --config examples/local.yaml --listen "127.0.0.1:$PORT" \
  --state "$LAB_DIR/icewarden.db" ${ICEWARDEN_DASHBOARD_DIR:+--dashboard-dir "$ICEWARDEN_DASHBOARD_DIR"} \
  > "$LAB_DIR/icewarden.out" 2> "$LAB_DIR/icewarden.log" &
pids+=($!)
wait_until "icewarden serve" "$LAB_DIR/icewarden.log" grep -q 'serving' "$LAB_DIR/icewarden.out"

# A catalog gateway per region (examples/local.yaml's gateways:, docs/gateway.md), on serve's
# state file; the lab's workload commits through them (--workload-via above), so its commits
# are refused while a failover fences their tables.
for gw in gw-us-east-1 gw-eu-central-1; do
  build/icewarden gateway --config examples/local.yaml --name "$gw" --state "$LAB_DIR/icewarden.db" \
    > "$LAB_DIR/$gw.out" 2> "$LAB_DIR/$gw.log" &
  pids+=($!)
  wait_until "icewarden gateway $gw" "$LAB_DIR/$gw.log" grep -q 'icewarden gateway' "$LAB_DIR/$gw.out"
done

# The blackbox exporter and Prometheus (examples/alerting/, copied afresh on every start
# like Alertmanager's config): each catalog probed every second, IcebergCatalogDown after
# 3 s of failed probes, sent to Alertmanager. The external URL makes the alerts'
# generatorURL a link to this Prometheus.
/usr/bin/prometheus-blackbox-exporter --config.file=examples/alerting/blackbox.yml \
  --web.listen-address=127.0.0.1:19115 > "$LAB_DIR/blackbox.log" 2>&1 &
pids+=($!)
wait_until "the blackbox exporter" "$LAB_DIR/blackbox.log" curl -sf http://127.0.0.1:19115/-/healthy
PROM_DIR="$LAB_DIR/prometheus"
mkdir -p "$PROM_DIR"
sed "s/127.0.0.1:8480/127.0.0.1:$PORT/" examples/alerting/prometheus.yml > "$PROM_DIR/prometheus.yml"
cp examples/alerting/rules.yml "$PROM_DIR/rules.yml"
/usr/bin/prometheus --config.file="$PROM_DIR/prometheus.yml" \
  --storage.tsdb.path="$PROM_DIR/data" --storage.tsdb.retention.time=1d \
  --web.listen-address=127.0.0.1:19090 --web.external-url=http://127.0.0.1:19090/ \
  > "$LAB_DIR/prometheus.log" 2>&1 &
pids+=($!)
wait_until "Prometheus" "$LAB_DIR/prometheus.log" curl -sf http://127.0.0.1:19090/-/ready

cat <<EOT
lab: catalogs us-east-1 http://127.0.0.1:18181  eu-central-1 http://127.0.0.1:18182
lab: fault injection http://127.0.0.1:18180 (docs/lab.md), e.g.
       curl -X POST http://127.0.0.1:18180/lab/regions/us-east-1/stop
dns: BIND 9 127.0.0.1:18153 (UDP+TCP), zone lake.lab., TSIG key icewarden-lab:
       dig @127.0.0.1 -p 18153 writer.lake.lab CNAME +short
alerts: Alertmanager http://127.0.0.1:19093 (curl -s http://127.0.0.1:19093/api/v2/alerts)
       Prometheus http://127.0.0.1:19090 (curl -s http://127.0.0.1:19090/api/v1/alerts),
       blackbox exporter http://127.0.0.1:19115; a stopped catalog proposes a failover
icewarden: http://127.0.0.1:$PORT; in another shell: source $tokens && build/icewarden status
gateways: us-east-1 http://127.0.0.1:18281  eu-central-1 http://127.0.0.1:18282 (engines'
       uri, warehouse lab; the lab's workload commits through them)
logs: $LAB_DIR/lab.log $LAB_DIR/icewarden.log $LAB_DIR/named.log $LAB_DIR/alertmanager.log
      $LAB_DIR/prometheus.log $LAB_DIR/blackbox.log $LAB_DIR/gw-*.log
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
