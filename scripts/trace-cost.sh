#!/usr/bin/env bash
# trace-cost.sh BIN [REPS]: what recording an execution trace costs a Go target, on
# loopback: the demo API (/api/users/7, a middleware chain) and a CPU-bound handler (/hot),
# each loaded for 5 s at -c 8, with and without /debug/pprof/trace recording the whole
# window, alternating, REPS times (default 5). Prints per case the mean req/s and the
# target's CPU per request (utime+stime from /proc: steadier than req/s on a shared
# machine). Then why the trace does not overlap the CPU profile: the share of a 2 s CPU
# profile of the demo API spent in the tracer's functions, taken alone and while a trace
# runs (needs go for go tool pprof). Run it alone on the machine (e.g. under flock
# /tmp/apiperf-bench.lock).
set -euo pipefail
BIN=$(realpath "${1:-./apiperf}")
REPS=${2:-5}
OUT=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$OUT"; }
trap cleanup EXIT
"$BIN" serve --demo --addr 127.0.0.1:0 >"$OUT/serve" 2>/dev/null &
pid=$!
for _ in $(seq 1 100); do grep -q 'listening on' "$OUT/serve" 2>/dev/null && break; sleep 0.05; done
URL=$(sed -n 's/^apiperf serve: listening on //p' "$OUT/serve")
HZ=$(getconf CLK_TCK)
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
# one URL: prints "req/s cpu_us_per_request"
one() {
  local t0 t1 out
  t0=$(ticks)
  out=$("$BIN" run -c 8 -t 1 -d 5s "$1" 2>/dev/null)
  t1=$(ticks)
  awk -v t="$((t1 - t0))" -v hz="$HZ" '/^ *[0-9]+ requests in/ {n = $1} /^Requests\/sec:/ {q = $2}
    END {printf "%.0f %.1f\n", q, 1e6 * t / hz / n}' <<<"$out"
}
for path in /api/users/7 /hot; do
  : >"$OUT/off"; : >"$OUT/on"
  for _ in $(seq 1 "$REPS"); do
    one "$URL$path" >>"$OUT/off"
    curl -s -o "$OUT/trace.out" "$URL/debug/pprof/trace?seconds=6" &
    c=$!
    one "$URL$path" >>"$OUT/on"
    wait $c
  done
  bytes=$(stat -c %s "$OUT/trace.out")
  paste "$OUT/off" "$OUT/on" | awk -v p="$path" -v b="$bytes" '{
      qo += $1; co += $2; qn += $3; cn += $4; n++; runs = runs sprintf(" %s/%s", $2, $4) }
    END { printf "%-13s without trace %7.0f req/s %6.1f us CPU/req | with trace %7.0f req/s %6.1f us CPU/req | CPU/req %+.0f%%, req/s %+.0f%%; trace %.1f MB/s (CPU/req runs off/on:%s)\n",
      p, qo / n, co / n, qn / n, cn / n, 100 * (cn - co) / co, 100 * (qn - qo) / qo, b / 6 / 1e6, runs }'
done

# The tracer inside a CPU profile: alone, then with a trace running at the same time.
tracer='runtime\.trace|traceReader|traceAdvance|traceWriter|traceLocker|runtime/trace\.'
for mode in alone overlapped; do
  "$BIN" run -c 8 -t 1 -d 4s "$URL/api/users/7" >/dev/null 2>&1 &
  l=$!
  sleep 1
  c=
  if [ $mode = overlapped ]; then curl -s -o "$OUT/t.out" "$URL/debug/pprof/trace?seconds=2" & c=$!; fi
  curl -s -o "$OUT/cpu.pb.gz" "$URL/debug/pprof/profile?seconds=2"
  [ -n "$c" ] && wait $c
  wait $l
  share=$(go tool pprof -top -focus="$tracer" "$OUT/cpu.pb.gz" 2>/dev/null | sed -n 's/.*accounting for .*, \([0-9.]*%\) of .*/\1/p')
  echo "CPU profile of /api/users/7, $mode: ${share:-0%} of its samples in the tracer's functions"
done
