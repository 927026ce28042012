#!/usr/bin/env bash
# worker-efficiency.sh BIN: CPU time per request of one scale-out worker against a plain
# `apiperf run` of the same share, side by side. Both load the same loopback target
# (`apiperf serve`); the worker is the only worker of `run --workers 1`, so its share is the
# whole load. Each rep runs both (order alternating, ABBA), CPU is user+sys of the generator
# process alone (the coordinator is shown apart); the medians of REPS reps are compared.
# Exit 1 when the worker needs more than LIMIT (default 1.05) times run's CPU per request.
# Env: REPS=7 N=100000 CONNS=8 RATE=4000 RN=16000 LIMIT=1.05 PORT=18601 JOIN=18602
# Run it under the measurement lock: flock /tmp/apiperf-bench.lock scripts/worker-efficiency.sh BIN
set -euo pipefail
BIN=$(realpath "${1:-./apiperf}")
REPS=${REPS:-7}; N=${N:-100000}; CONNS=${CONNS:-8}; RATE=${RATE:-4000}; RN=${RN:-16000}
LIMIT=${LIMIT:-1.05}; PORT=${PORT:-18601}; JOIN=${JOIN:-18602}
URL="http://127.0.0.1:$PORT/healthz"
export APIPERF_TOKEN=${APIPERF_TOKEN:-efficiency-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')}
W=$(mktemp -d)
"$BIN" serve --addr "127.0.0.1:$PORT" >/dev/null 2>&1 &
SERVE=$!
trap 'kill $SERVE 2>/dev/null; wait $SERVE 2>/dev/null; rm -rf "$W"' EXIT
for _ in $(seq 50); do curl -fs "$URL" >/dev/null 2>&1 && break; sleep 0.1; done

# cpu CMD...: runs CMD (output to $W/out) and prints its user+sys CPU seconds (bash's times).
cpu() {
  bash -c '"$@" >"'"$W"'/out" 2>&1; rc=$?; times >"'"$W"'/times"; exit $rc' _ "$@" || true
  awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, a, /m|s/); s += a[1]*60 + a[2] } } END { printf "%.3f", s }' "$W/times"
}

# one KIND ARGS...: KIND run prints the plain run's CPU; KIND worker prints the worker's and
# the coordinator's CPU (coordinator in the background, the worker measured).
one() {
  local kind=$1; shift
  if [[ $kind == run ]]; then
    cpu "$BIN" run -t 2 "$@" "$URL"
  else
    bash -c '"$@" >"'"$W"'/coord.out" 2>&1; times >"'"$W"'/coord.times"' _ "$BIN" run --workers 1 --join-addr "127.0.0.1:$JOIN" -t 2 "$@" "$URL" &
    local coord=$!
    sleep 0.3
    local w
    w=$(cpu "$BIN" worker --join "127.0.0.1:$JOIN")
    wait $coord || true
    grep -q "requests in" "$W/coord.out" || { echo "worker-efficiency: the coordinator failed:" >&2; cat "$W/coord.out" >&2; exit 1; }
    printf "%s %s" "$w" "$(awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, a, /m|s/); s += a[1]*60 + a[2] } } END { printf "%.3f", s }' "$W/coord.times")"
  fi
}

med() { sort -g | awk '{a[NR]=$1} END{print (NR%2)? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "# worker-efficiency: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $("$BIN" --version 2>&1 | head -1)"
fail=0
for mode in closed open; do
  if [[ $mode == closed ]]; then args=(-n "$N" -c "$CONNS"); reqs=$N; else args=(-R "$RATE" -n "$RN" -c "$CONNS"); reqs=$RN; fi
  echo
  echo "## $mode loop: ${args[*]} $URL, $REPS reps (CPU us per request)"
  echo "rep  run  worker  (coordinator)"
  : >"$W/run.$mode"; : >"$W/worker.$mode"; : >"$W/coord.$mode"
  for rep in $(seq "$REPS"); do
    if (( rep % 2 )); then order="run worker"; else order="worker run"; fi
    for kind in $order; do
      out=$(one "$kind" "${args[@]}")
      if [[ $kind == run ]]; then
        r=$(awk -v c="$out" -v n="$reqs" 'BEGIN{printf "%.3f", c/n*1e6}'); echo "$r" >>"$W/run.$mode"
      else
        read -r wc cc <<<"$out"
        w=$(awk -v c="$wc" -v n="$reqs" 'BEGIN{printf "%.3f", c/n*1e6}'); echo "$w" >>"$W/worker.$mode"
        c=$(awk -v c="$cc" -v n="$reqs" 'BEGIN{printf "%.3f", c/n*1e6}'); echo "$c" >>"$W/coord.$mode"
      fi
    done
    echo "$rep  $r  $w  ($c)"
  done
  mr=$(med <"$W/run.$mode"); mw=$(med <"$W/worker.$mode"); mc=$(med <"$W/coord.$mode")
  ratio=$(awk -v a="$mw" -v b="$mr" 'BEGIN{printf "%.3f", a/b}')
  # The same ratio paired within each rep (both ran back to back), to see the spread.
  paired=$(paste "$W/worker.$mode" "$W/run.$mode" | awk '{printf "%.3f\n", $1/$2}' | sort -g)
  pmed=$(med <<<"$paired")
  echo "median: run $mr us/req, worker $mw us/req (coordinator $mc us/req): worker/run = $ratio"
  echo "paired worker/run per rep: median $pmed, range $(head -1 <<<"$paired")..$(tail -1 <<<"$paired")"
  awk -v r="$ratio" -v l="$LIMIT" 'BEGIN{exit !(r > l)}' && { echo "over the limit $LIMIT"; fail=1; }
done
echo
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $fail
