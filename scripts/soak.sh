#!/usr/bin/env bash
# soak.sh BIN: the two soaks of issue 43, against nginx on loopback: a closed loop at CONNS
# connections with --traceparent for CLOSED_S seconds, then an open loop at RATE req/s for
# OPEN_S seconds. Each run's RSS and RssAnon are sampled every 30 s from /proc/PID/status; the
# script prints the samples, how long each run took against its -d, and the growth of RssAnon
# from the first minute's sample to the last.
#
# Usage:  scripts/soak.sh [APIPERF_BINARY]
# Env:    CONNS=5000 CLOSED_S=600 RATE=20000 OPEN_S=300 (defaults: the issue's)
# Needs:  nginx-light (installed with apt-get when missing).
set -euo pipefail
. "$(dirname "$0")/nginx-target.sh"
BIN=$(realpath "${1:-./apiperf}")
CONNS=${CONNS:-5000}; CLOSED_S=${CLOSED_S:-600}; RATE=${RATE:-20000}; OPEN_S=${OPEN_S:-300}
[[ -x $BIN ]] || { echo "soak: no apiperf binary at $BIN (make build)" >&2; exit 2; }
command -v nginx >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light) >/dev/null
W=$(mktemp -d /tmp/soak.XXXXXX)
SRV=
cleanup() { [[ -n $SRV ]] && kill "$SRV" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$W"; }
trap cleanup EXIT
ulimit -n "$(ulimit -Hn)"
start_nginx "$W" 20000 16384
# soak NAME DUR ARGS...: runs apiperf with ARGS, samples its memory every 30 s, reports.
soak() {
  local name=$1 dur=$2; shift 2
  local start; start=$(date +%s.%N)
  "$BIN" run --no-history "$@" "$URL" >"$W/$name.txt" 2>&1 &
  local pid=$! t=0
  echo "$name: apiperf run $* (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  echo "  t(s)  RSS(MB)  RssAnon(MB)"
  : >"$W/$name.mem"
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1; t=$((t + 1))
    if (( t % 30 == 0 )); then
      awk -v t=$t '/^VmRSS/{r=$2} /^RssAnon/{a=$2} END{if (a) printf "  %4d  %7.1f  %11.1f\n", t, r/1024, a/1024}' "/proc/$pid/status" 2>/dev/null | tee -a "$W/$name.mem" || true
    fi
  done
  local rc=0; wait "$pid" || rc=$?
  local took; took=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e-s}')
  echo "  exit $rc, took ${took} s for -d ${dur}s (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  awk 'NR==2{first=$3} {last=$3} END{if (NR>=2) printf "  RssAnon from 60 s to the end: %.1f -> %.1f MB (%+.1f MB)\n", first, last, last-first}' "$W/$name.mem"
  sed 's/^/  | /' "$W/$name.txt"
}
soak closed "$CLOSED_S" -t2 -c"$CONNS" -d"${CLOSED_S}s" --traceparent
soak open "$OPEN_S" -t2 -R"$RATE" -d"${OPEN_S}s"
