#!/usr/bin/env bash
# footprint.sh BIN: peak resident memory of `apiperf run` against wrk and wrk2, side by side.
#
# Each scenario runs REPS times, the generators alternating (wrk, apiperf, wrk, apiperf, ...),
# against one loopback nginx (one worker). The figure is the peak resident set of the whole
# process over the whole run as a user sees it (GNU time's %M, the kernel's VmHWM at exit):
# startup, the load, the report and the history recording (apiperf's default) included. The
# recording runs in a short-lived child (`apiperf history record`); %M is the largest of the
# process and its waited-for children, so the child (and the `git rev-parse` for labels) counts.
# Scenarios (connections and duration from the env):
#   closed  wrk  -t2 -cCONNS -dDURs           apiperf run -t2 -cCONNS -dDURs
#   open    wrk2 -t2 -cCONNS -dDURs -RRATE    apiperf run -t2 -cCONNS -dDURs -RRATE
#   big     wrk  -t2 -cBIG   -dDURs           apiperf run -t2 -cBIG   -dDURs
# Prints one line per rep and a table of medians (MB) with the ratio apiperf/peer.
#
# Usage:  scripts/footprint.sh [APIPERF_BINARY]
# Env:    REPS=5 DUR=2 CONNS=50 BIG=10000 RATE=2000 SCENARIOS="closed open big"
#         WRK=wrk WRK2=path/to/wrk2 (default: ../shared/bench/peers/build-wrk2.sh builds it)
#         OUT=docs/PERFORMANCE.md writes the table between <!-- footprint --> markers there.
# Needs:  wrk, nginx-light and GNU time (installed with apt-get when missing).
set -euo pipefail
. "$(dirname "$0")/nginx-target.sh"
BIN=$(realpath "${1:-./apiperf}")
TOP=$(git rev-parse --show-toplevel 2>/dev/null || pwd)
REPS=${REPS:-5}; DUR=${DUR:-2}; CONNS=${CONNS:-50}; BIG=${BIG:-10000}; RATE=${RATE:-2000}
SCENARIOS=${SCENARIOS:-closed open big}; OUT=${OUT:-}
WRK=${WRK:-wrk}; WRK2=${WRK2:-}
[[ -x $BIN ]] || { echo "footprint: no apiperf binary at $BIN (make build)" >&2; exit 2; }
(( DUR <= 30 && REPS >= 1 )) || { echo "footprint: DUR must be <= 30 and REPS >= 1" >&2; exit 2; }

need=()
command -v "$WRK" >/dev/null || need+=(wrk)
command -v nginx >/dev/null || need+=(nginx-light)
[[ -x /usr/bin/time ]] || need+=(time)
if (( ${#need[@]} )); then
  echo "footprint: installing ${need[*]} ..." >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}") >/dev/null
fi
if [[ " $SCENARIOS " == *" open "* && -z $WRK2 ]]; then
  peers=$TOP/../shared/bench/peers/build-wrk2.sh
  [[ -x $peers ]] && WRK2=$("$peers") || { echo "footprint: no wrk2 (set WRK2=path): skipping open" >&2; SCENARIOS=${SCENARIOS//open/}; }
fi
# 10,000 connections need as many descriptors in the generator and in nginx.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if (( $(ulimit -n) < BIG + 100 )) && [[ " $SCENARIOS " == *" big "* ]]; then
  echo "footprint: ulimit -n is $(ulimit -n), too low for $BIG connections: skipping big" >&2
  SCENARIOS=${SCENARIOS//big/}
fi

W=$(mktemp -d /tmp/footprint.XXXXXX)
SRV=
cleanup() { [[ -n $SRV ]] && kill "$SRV" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$W"; }
trap cleanup EXIT
mkdir -p "$W/run"
start_nginx "$W" 30000 8192
curl -fsS -o /dev/null "$URL" || { echo "footprint: nginx did not come up" >&2; exit 1; }

# one NAME CMD...: runs CMD in the run directory (apiperf records its history there, as a user's
# would accumulate it) and prints its peak RSS in KB; a run that completes no request is an error.
one() {
  local name=$1; shift
  (cd "$W/run" && /usr/bin/time -f %M -o "$W/time" "$@" >"$W/out" 2>&1) || true
  if ! grep -qE '^ *[1-9][0-9]* requests in' "$W/out"; then
    echo "footprint: $name completed no request:" >&2; tail -n 20 "$W/out" >&2; exit 1
  fi
  tail -n 1 "$W/time"
}
med() { sort -n | awk '{a[NR]=$1} END{print (NR%2)? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
mb() { awk '{printf "%.1f", $1/1024}'; }
mb_list() { awk '{printf "%s%.1f", (NR>1?" ":""), $1/1024}'; }

rows=()
for sc in $SCENARIOS; do
  case $sc in
    closed) peer=wrk; pcmd=("$WRK" -t2 -c"$CONNS" -d"${DUR}s" "$URL"); acmd=("$BIN" run -t2 -c"$CONNS" -d"${DUR}s" "$URL"); what="closed loop, $CONNS connections" ;;
    open) peer=wrk2; pcmd=("$WRK2" -t2 -c"$CONNS" -d"${DUR}s" -R"$RATE" "$URL"); acmd=("$BIN" run -t2 -c"$CONNS" -d"${DUR}s" -R"$RATE" "$URL"); what="open loop -R $RATE, $CONNS connections" ;;
    big) peer=wrk; pcmd=("$WRK" -t2 -c"$BIG" -d"${DUR}s" "$URL"); acmd=("$BIN" run -t2 -c"$BIG" -d"${DUR}s" "$URL"); what="closed loop, $BIG connections" ;;
    *) echo "footprint: unknown scenario $sc (closed, open, big)" >&2; exit 2 ;;
  esac
  : >"$W/$sc.peer"; : >"$W/$sc.api"
  for rep in $(seq "$REPS"); do
    p=$(one "$peer" "${pcmd[@]}"); a=$(one apiperf "${acmd[@]}")
    echo "$p" >>"$W/$sc.peer"; echo "$a" >>"$W/$sc.api"
    printf 'footprint: %-6s rep %d  %-4s %6s MB  apiperf %6s MB\n' "$sc" "$rep" "$peer" "$(echo "$p" | mb)" "$(echo "$a" | mb)" >&2
  done
  pm=$(med <"$W/$sc.peer"); am=$(med <"$W/$sc.api")
  rows+=("| $what | $peer | $(echo "$pm" | mb) | $(echo "$am" | mb) | **$(awk -v a="$am" -v b="$pm" 'BEGIN{printf "%.2f", a/b}')** | $(sort -n "$W/$sc.peer" | mb_list) | $(sort -n "$W/$sc.api" | mb_list) |")
done

table() {
  echo "Peak RSS in MB, median of $REPS runs of ${DUR}s each (\`scripts/footprint.sh\`, $(date -u +%Y-%m-%d), commit $(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo '?'), load average $(cut -d' ' -f1-3 /proc/loadavg)):"
  echo
  echo "| scenario | peer | peer MB | apiperf MB | apiperf/peer | peer, all runs | apiperf, all runs |"
  echo "|---|---|---:|---:|---:|---|---|"
  printf '%s\n' "${rows[@]}"
}
table
if [[ -n $OUT ]]; then
  grep -q '^<!-- footprint -->' "$OUT" || { echo "footprint: no <!-- footprint --> marker in $OUT" >&2; exit 1; }
  table >"$W/table"
  awk -v f="$W/table" '/^<!-- footprint -->/ {print; while ((getline l < f) > 0) print l; skip=1; next}
    /^<!-- \/footprint -->/ {skip=0} !skip' "$OUT" >"$W/new" && cat "$W/new" >"$OUT"
  echo "footprint: wrote the table to $OUT" >&2
fi
