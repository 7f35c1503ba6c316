#!/usr/bin/env bash
# The suite as CI runs it (a clean clone's .ci/run), with both cores loaded by two CPU hogs and a
# second Spark application analysing sample_logs/ in a loop: the load of issue 83's report.
# Usage: benchmarks/suite_under_load.sh [WORKDIR]   (default /tmp/suite-under-load)
# Prints the suite's closing line and its duration; the whole output is in WORKDIR/ci.log.
set -uo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="${1:-/tmp/suite-under-load}"
rm -rf "$work" && mkdir -p "$work"
git clone -q "$repo" "$work/clone"
load=()
cleanup() { for pid in "${load[@]}"; do pkill -P "$pid" 2>/dev/null; kill "$pid" 2>/dev/null; done; }
trap cleanup EXIT
for _ in 1 2; do python3 -c "while True: pass" & load+=($!); done
( while true; do "$repo/.venv/bin/forensics" analyze "$repo/sample_logs" --json /dev/null --quiet >/dev/null 2>&1; done ) & load+=($!)
start=$(date +%s)
(cd "$work/clone" && bash .ci/run) > "$work/ci.log" 2>&1
rc=$?
echo "exit $rc after $(( $(date +%s) - start )) s: $(grep -aE '(passed|failed|error).* in ' "$work/ci.log" | tail -1)"
exit $rc
