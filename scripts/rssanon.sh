#!/usr/bin/env bash
# rssanon.sh BIN: private memory (RssAnon: the process's own pages, not the binary's text mapped
# from the page cache) of `run -t1 -cCONNS -dDURs` against wrk's, side by side.
#
# nginx (one worker, pinned to CPU 0) serves /healthz on loopback; wrk and apiperf alternate
# (wrk, apiperf, wrk, ...), each pinned to CPU 1 with one thread, REPS times. Each run's
# RssAnon is read from /proc/PID/status after 1, 2, 3 and 4 s. Prints every rep, then the
# median of the reps at each second and apiperf's ratio to wrk.
#
# Usage:  scripts/rssanon.sh [APIPERF_BINARY]
# Env:    REPS=5 CONNS=50 DUR=6 EXTRA="--traceparent" (apiperf flags)
# Needs:  wrk, nginx-light (installed with apt-get when missing), taskset.
set -euo pipefail
. "$(dirname "$0")/nginx-target.sh"
BIN=$(realpath "${1:-./apiperf}")
REPS=${REPS:-5}; CONNS=${CONNS:-50}; DUR=${DUR:-6}; EXTRA=${EXTRA:-}
[[ -x $BIN ]] || { echo "rssanon: no apiperf binary at $BIN (make build)" >&2; exit 2; }
(( DUR >= 6 && DUR <= 30 && REPS >= 1 )) || { echo "rssanon: want 6 <= DUR <= 30 and REPS >= 1" >&2; exit 2; }
need=()
command -v wrk >/dev/null || need+=(wrk)
command -v nginx >/dev/null || need+=(nginx-light)
if (( ${#need[@]} )); then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}") >/dev/null
fi
W=$(mktemp -d /tmp/rssanon.XXXXXX)
SRV=
cleanup() { [[ -n $SRV ]] && kill "$SRV" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$W"; }
trap cleanup EXIT
start_nginx "$W" 30000 8192 0
cd "$W"
# sample CMD...: runs CMD on CPU 1 and prints its RssAnon (KB) after 1, 2, 3, 4 s.
sample() {
  taskset -c 1 "$@" >"$W/out.txt" 2>&1 &
  local pid=$! t
  sleep 0.2
  for t in 1 2 3 4; do sleep 1; awk '/^RssAnon/{printf "%s ", $2}' "/proc/$pid/status" 2>/dev/null || printf "? "; done
  wait "$pid" || true
  echo
}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "rep tool     RssAnon KB at 1s 2s 3s 4s"
: >"$W/wrk.txt"; : >"$W/apiperf.txt"
for r in $(seq "$REPS"); do
  w=$(sample wrk -t1 -c"$CONNS" -d"${DUR}s" "$URL"); echo "$r   wrk      $w"; echo "$w" >>"$W/wrk.txt"
  # shellcheck disable=SC2086
  a=$(sample "$BIN" run -t1 -c"$CONNS" -d"${DUR}s" --no-history $EXTRA "$URL"); echo "$r   apiperf  $a"; echo "$a" >>"$W/apiperf.txt"
done
median() { sort -n | awk '{v[NR]=$1} END{print (NR%2)? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
echo "median of $REPS reps (MB) at 1s 2s 3s 4s, and apiperf/wrk:"
for col in 1 2 3 4; do
  wm=$(awk -v c=$col '{print $c}' "$W/wrk.txt" | median)
  am=$(awk -v c=$col '{print $c}' "$W/apiperf.txt" | median)
  awk -v s=$col -v w="$wm" -v a="$am" 'BEGIN{printf "  %ds: wrk %.2f MB, apiperf %.2f MB, ratio %.2f\n", s, w/1024, a/1024, a/w}'
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
