#!/usr/bin/env bash
# Fuzzes one target until it has used a budget of CPU time, not wall time: libFuzzer's
# -max_total_time counts wall seconds, which on a shared machine buy far less than they say.
# Restarts libFuzzer (from the kept corpus) until the budget is spent; findings stop nothing
# and go to build-fuzz/fuzz-findings/NAME/. CPU per round is summed in
# build-fuzz/fuzz-cpu/NAME.cpu, each round's log beside it.
#
#   scripts/fuzz.sh NAME                        # builds the targets first (and runs 60 s)
#   scripts/fuzz-cpu-budget.sh NAME 3600        # then: one CPU-hour of NAME
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:?usage: scripts/fuzz-cpu-budget.sh NAME CPU_SECONDS}
budget=${2:?usage: scripts/fuzz-cpu-budget.sh NAME CPU_SECONDS}
BUILD_DIR=${BUILD_DIR:-build-fuzz}
fuzz="$BUILD_DIR/tests/fuzz"
[ -x "$fuzz/fuzz_$name" ] || { echo "no $fuzz/fuzz_$name: run scripts/fuzz.sh $name first" >&2; exit 2; }
out="$BUILD_DIR/fuzz-cpu"
findings="$BUILD_DIR/fuzz-findings/$name"
mkdir -p "$out" "$findings" "$fuzz/fuzz-corpus/$name"
used=0
round=0
while [ "$used" -lt "$budget" ]; do
  round=$((round + 1))
  left=$((budget - used))
  /usr/bin/time -f "%U %S %e" -o "$out/$name.time" "$fuzz/fuzz_$name" -max_total_time="$left" \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$findings/" \
    "$fuzz/fuzz-corpus/$name" "$fuzz/fuzz-seeds/$name" > "$out/$name.round$round.log" 2>&1 || true
  read -r u s e < <(tail -1 "$out/$name.time")
  used=$((used + ${u%.*} + ${s%.*}))
  echo "round $round: user $u sys $s wall $e; cpu used $used of $budget" | tee -a "$out/$name.cpu"
done
grep -oE "cov: [0-9]+ ft: [0-9]+ corp: [0-9]+" "$out/$name".round*.log | sort -t' ' -k2 -n | tail -1
ls "$findings"
