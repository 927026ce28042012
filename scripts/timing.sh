#!/usr/bin/env bash
# make timing: the tests named TestTiming* (they assert latencies, rates and CPU costs), one
# package at a time, without -race. A timing test that fails is run once more, alone, and
# fails the step only if it fails again: CI machines share their cores (one showed 41% steal
# during the A/B test), and one measurement in a noisy minute is not a defect; two in a row
# are. Before the second try it waits up to a minute for the load average to fall under the
# CPU count. Both outcomes are printed, and a test that passed only on its second try is named at
# the end.
set -uo pipefail
GO=${GO:-go}
rc=0
retried=()
for pkg in $($GO list ./...); do
  out=$(APIPERF_TIMING=1 $GO test -count=1 -timeout 30m -run 'TestTiming' "$pkg" 2>&1)
  code=$?
  printf '%s\n' "$out"
  (( code == 0 )) && continue
  failed=$(grep -oE '^--- FAIL: TestTiming[A-Za-z0-9_]+' <<<"$out" | awk '{print $3}' | sort -u | paste -sd'|')
  if [[ -z $failed ]]; then # a build error, a panic before any test ended, a timeout: no second try
    rc=1
    continue
  fi
  # A busy minute passes: wait (at most 60 s) for the load average to fall under the CPU count.
  for _ in $(seq 12); do
    awk -v n="$(nproc)" '{exit !($1 < n)}' /proc/loadavg && break
    sleep 5
  done
  echo "timing: $pkg: $failed failed; running once more, alone (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  if APIPERF_TIMING=1 $GO test -count=1 -timeout 30m -v -run "^($failed)\$" "$pkg"; then
    retried+=("$pkg: $failed")
  else
    echo "timing: $pkg: $failed failed twice"
    rc=1
  fi
done
for r in "${retried[@]}"; do echo "timing: passed on the second try: $r"; done
exit $rc
