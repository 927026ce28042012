#!/usr/bin/env bash
# busy-ci.sh: issue 44's check that `make test` is green on a busy machine: RUNS times in a row,
# a fresh clone of this checkout's HEAD (test cache cleared) runs `CI=true bash .ci/run` (the
# installs, then `make test`) while `stress-ng --cpu 2` keeps both cores busy. Each run's log and
# its load average every 30 s land beside OUT; a line per run (tree, exit code, seconds) goes to
# OUT.summary. Stops at the first failure. About 35-45 minutes a run on a 2-core machine.
#
# Usage:  sudo scripts/busy-ci.sh OUT [RUNS]      e.g. scripts/busy-ci.sh /tmp/busy 3
# Needs:  stress-ng (installed with apt-get when missing), root (as .ci/run does).
set -uo pipefail
repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
out=${1:?usage: busy-ci.sh OUT [RUNS]}; runs=${2:-3}
command -v stress-ng >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq stress-ng >/dev/null; }
for i in $(seq "$runs"); do
  rm -rf "$out" && git clone -q "$repo" "$out" || exit 2
  go clean -testcache
  stress-ng --cpu 2 --timeout 3h >/dev/null 2>&1 &
  hog=$!
  (while sleep 30; do echo "$(date +%T) $(cut -d' ' -f1-3 /proc/loadavg)"; done) >"$out.$i.load" &
  mon=$!
  start=$(date +%s)
  (cd "$out" && CI=true bash .ci/run) >"$out.$i.log" 2>&1
  rc=$?
  kill "$mon" "$hog" 2>/dev/null; wait 2>/dev/null
  echo "run $i tree $(git -C "$out" rev-parse --short HEAD) rc=$rc secs=$(($(date +%s) - start)) $(date +%T)" | tee -a "$out.summary"
  ((rc == 0)) || exit "$rc"
done
