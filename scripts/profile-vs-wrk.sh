#!/usr/bin/env bash
# profile-vs-wrk.sh BIN: where a closed-loop run spends its kernel entries and CPU, apiperf
# against wrk, pinned like ../shared/bench/vs-wrk.sh (nginx on CPU 0, generator on CPU 1, one
# thread). For each connection count and tool: system calls per completed request, by call,
# from perf's syscall tracepoints; and, with PERF_RECORD=1, the top symbols of a cpu-clock
# profile. Run it under the measurement lock.
# Env: CONN_LIST="50 1000 10000" DUR=5 PERF_RECORD=0 PERF_KEEP=dir (keep perf.data files)
#      APIPERF_ENV="APIPERF_IO=..." (for apiperf)
set -euo pipefail
. "$(dirname "$0")/nginx-target.sh"
BIN=$(realpath "${1:-./apiperf}")
CONN_LIST=${CONN_LIST:-50 1000 10000}; DUR=${DUR:-5}; PERF_RECORD=${PERF_RECORD:-0}; APIPERF_ENV=${APIPERF_ENV:-}
(( DUR <= 20 )) || { echo "DUR must be <= 20 seconds" >&2; exit 2; }
for t in perf nginx wrk; do command -v $t >/dev/null || { echo "profile: needs $t" >&2; exit 2; }; done
[[ -d /sys/kernel/tracing/events ]] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

W=$(mktemp -d /tmp/profile-vs-wrk.XXXXXX)
SRV=
cleanup() { [[ -n $SRV ]] && kill "$SRV" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$W"; }
trap cleanup EXIT
start_nginx "$W" 60000 4096 0

CALLS=(write read writev readv sendto recvfrom sendmsg recvmsg epoll_wait epoll_pwait epoll_pwait2 epoll_ctl io_uring_enter futex nanosleep getsockopt connect socket close sched_yield)
EVENTS=raw_syscalls:sys_enter$(printf ',syscalls:sys_enter_%s' "${CALLS[@]}")

# gen TOOL CONNS OUT [perf args...]: one bounded run of TOOL under perf.
gen() {
  local tool=$1 c=$2 out=$3; shift 3
  if [[ $tool == wrk ]]; then
    taskset -c 1 perf "$@" -- wrk -t1 -c"$c" -d"${DUR}s" "$URL" >"$out" 2>&1 || true
  else
    # shellcheck disable=SC2086
    env GOMAXPROCS=1 $APIPERF_ENV taskset -c 1 perf "$@" -- "$BIN" run -t1 -c"$c" -d"${DUR}s" "$URL" >"$out" 2>&1 || true
  fi
}

echo "# $(date -u +%FT%TZ) $(uname -r) load: $(cut -d' ' -f1-3 /proc/loadavg) ${APIPERF_ENV:+apiperf env: $APIPERF_ENV}"
for c in $CONN_LIST; do
  for tool in wrk apiperf; do
    gen "$tool" "$c" "$W/out" stat -x, -o "$W/stat" -e "$EVENTS,task-clock"
    req=$(awk '/requests in/ {print $1; exit}' "$W/out")
    [[ -n $req ]] || { echo "profile: no summary from $tool:" >&2; tail -n5 "$W/out" >&2; continue; }
    awk -F, -v req="$req" -v tool="$tool" -v c="$c" '
      $3 == "raw_syscalls:sys_enter" { total = $1 }
      $3 == "task-clock" { cpu = $1 / 1000 }
      $3 ~ /^syscalls:sys_enter_/ && $1 > 0 { sub("syscalls:sys_enter_", "", $3); calls = calls sprintf(" %s=%.3f", $3, $1 / req) }
      END { printf "%-5d %-8s req=%d cpu_s=%.2f req/cpu_s=%.0f syscalls/req=%.3f |%s\n", c, tool, req, cpu, req / cpu, total / req, calls }' "$W/stat"
    if [[ $PERF_RECORD == 1 ]]; then
      gen "$tool" "$c" "$W/out" record -q -e cpu-clock -F 1999 -g -o "$W/perf.data"
      [[ -z ${PERF_KEEP:-} ]] || cp "$W/perf.data" "$PERF_KEEP/$tool.$c.data"
      rreq=$(awk '/requests in/ {print $1; exit}' "$W/out")
      echo "## $tool $c conns: $rreq requests while recording; per 1000 requests, samples (1999/s) under:"
      total=$(perf report -i "$W/perf.data" --stdio --no-children -g none --sort dso -q -n 2>/dev/null | awk '{t += $2} END {print t}')
      perf report -i "$W/perf.data" --stdio --children -g none --sort sym -q 2>/dev/null | awk -v r="$rreq" -v t="$total" '
        { pct[$NF] = $1 + 0 }
        END { split("do_syscall_64 tcp_sendmsg tcp_recvmsg net_rx_action __x64_sys_epoll_ctl __x64_sys_epoll_wait io_submit_sqes __io_run_local_work __schedule", k, " ")
              line = sprintf(" all=%.3f", 1000 * t / r); for (i = 1; i in k; i++) line = line sprintf(" %s=%.3f", k[i], 10 * pct[k[i]] * t / r); print line }' || true
      echo "## $tool $c conns: kernel/user split, top symbols (self)"
      perf report -i "$W/perf.data" --stdio --no-children -g none --sort dso -q 2>/dev/null | awk '$1 ~ /%$/ { v = $1 + 0; if ($2 ~ /kernel/) k += v; else u += v } END { printf "kernel %.1f%% user %.1f%%\n", k, u }' || true
      perf report -i "$W/perf.data" --stdio --no-children -g none --sort sym -q 2>/dev/null | grep -E '^ +[0-9]' | head -n 30 || true
    fi
  done
done
