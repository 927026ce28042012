#!/usr/bin/env bash
# syscalls.sh: system calls per completed request, apiperf against wrk and wrk2, same target.
#
# Each generator runs once with one thread against the same loopback target (apiperf serve, or
# URL=...) under `perf stat` with the kernel's syscall tracepoints, which count every entry of
# every thread of the process without slowing it the way strace does. The count is divided by
# the requests the generator itself reports (completed responses, startup included), so the
# figure is deterministic enough to compare on a busy machine, unlike CPU time.
#
# Usage:  scripts/syscalls.sh [APIPERF_BINARY]
# Env:    CONNS=50 DUR=3 RATE=20000 URL=http://127.0.0.1:PORT/healthz (default: starts apiperf serve)
#         WRK=wrk WRK2=path/to/wrk2 (../shared/bench/peers/build-wrk2.sh builds it; skipped if absent)
# Needs:  perf (linux-perf) with tracepoints readable (root or perf_event_paranoid <= -1).
set -euo pipefail
APIPERF=${1:-${APIPERF:-./apiperf}}
CONNS=${CONNS:-50}; DUR=${DUR:-3}; RATE=${RATE:-20000}
WRK=${WRK:-$(command -v wrk || true)}; WRK2=${WRK2:-}
(( DUR <= 30 )) || { echo "DUR must be <= 30 seconds" >&2; exit 2; }
[[ -x $APIPERF ]] || { echo "no apiperf binary at $APIPERF (go build -o apiperf ./cmd/apiperf)" >&2; exit 2; }
command -v perf >/dev/null || { echo "perf is missing (apt-get install linux-perf)" >&2; exit 2; }

tmp=$(mktemp -d); pid=
cleanup() { [[ -n $pid ]] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
URL=${URL:-}
if [[ -z $URL ]]; then
  "$APIPERF" serve --addr 127.0.0.1:0 >"$tmp/serve" 2>&1 & pid=$!
  for _ in $(seq 50); do grep -q 'listening on' "$tmp/serve" && break; sleep 0.1; done
  URL="$(grep -o 'http://127.0.0.1:[0-9]*' "$tmp/serve" | tail -1)/healthz"
fi

calls=(read write epoll_wait epoll_pwait epoll_ctl futex nanosleep sched_yield)
events="-e raw_syscalls:sys_enter"
for c in "${calls[@]}"; do events+=" -e syscalls:sys_enter_$c"; done

# measure NAME CMD...: one row: requests, then per request the total and each call.
measure() {
  local name=$1; shift
  # shellcheck disable=SC2086
  perf stat -x, $events -o "$tmp/stat" -- "$@" >"$tmp/out" 2>&1 || true
  local reqs
  reqs=$(grep -oE '^ *[0-9]+ requests in' "$tmp/out" | grep -oE '[0-9]+' | head -1)
  [[ -n $reqs && $reqs -gt 0 ]] || { echo "$name: no request count in its output:" >&2; cat "$tmp/out" >&2; return; }
  grep -hE 'connections used|late sends|requests in' "$tmp/out" | sed "s/^ */    $name: /" >>"$tmp/notes" || true
  awk -F, -v name="$name" -v reqs="$reqs" '
    $3 == "raw_syscalls:sys_enter" { total = $1 }
    $3 ~ /^syscalls:sys_enter_/ { sub("syscalls:sys_enter_", "", $3); n[$3] = $1 }
    END {
      ep = n["epoll_wait"] + n["epoll_pwait"]
      other = total - n["read"] - n["write"] - ep - n["epoll_ctl"] - n["futex"] - n["nanosleep"] - n["sched_yield"]
      printf "| %s | %d | **%.3f** | %.3f | %.3f | %.3f | %.4f | %.4f | %.4f | %.4f | %.4f |\n", name, reqs,
        total/reqs, n["read"]/reqs, n["write"]/reqs, ep/reqs, n["epoll_ctl"]/reqs, n["futex"]/reqs,
        n["nanosleep"]/reqs, n["sched_yield"]/reqs, other/reqs
    }' "$tmp/stat"
}

echo "- target: $URL, $CONNS connections, ${DUR}s, one generator thread; $(date -u +%Y-%m-%dT%H:%MZ)"
echo
echo "| generator | requests | syscalls/req | read | write | epoll_wait | epoll_ctl | futex | nanosleep | sched_yield | other |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
[[ -n $WRK ]] && measure "wrk (closed)" "$WRK" -t1 -c"$CONNS" -d"${DUR}s" "$URL"
measure "apiperf (closed)" "$APIPERF" run -t1 -c"$CONNS" -d"${DUR}s" --no-history "$URL"
[[ -n $WRK2 && -x $WRK2 ]] && measure "wrk2 (open, -R $RATE)" "$WRK2" -t1 -c"$CONNS" -d"${DUR}s" -R"$RATE" "$URL"
measure "apiperf (open, -R $RATE)" "$APIPERF" run -t1 -c"$CONNS" -d"${DUR}s" -R"$RATE" --no-history "$URL"
echo
[[ -s $tmp/notes ]] && { echo "What each generator said:"; echo; echo '```'; cat "$tmp/notes"; echo '```'; }
