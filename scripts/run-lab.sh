#!/usr/bin/env bash
# The main job: installs what it needs, builds, and runs `icewarden serve` on
# examples/local.yaml, with its state under build/lab/. Stop it with Ctrl-C.
#
# API tokens for the four roles come from ICEWARDEN_{VIEWER,OPERATOR,APPROVER,ADMIN}_TOKEN;
# any that are unset get a random value, written to build/lab/tokens.env (mode 600) so
# that another shell can `source build/lab/tokens.env` and use the CLI.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh

LAB_DIR=${LAB_DIR:-build/lab}
mkdir -p "$LAB_DIR"
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
echo "export ICEWARDEN_SERVER=http://127.0.0.1:${ICEWARDEN_PORT:-8480}" >> "$tokens"

echo "lab: tokens in $tokens; in another shell: source $tokens && build/icewarden status"
exec build/icewarden serve --config examples/local.yaml \
  --listen "127.0.0.1:${ICEWARDEN_PORT:-8480}" --state "$LAB_DIR/icewarden.db"
