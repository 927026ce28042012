#!/usr/bin/env bash
# api-vs-cli.sh BIN: the Go package (loadtest.Run, scripts/loadtestrun) against the CLI
# (`BIN run`) on the same target and load, alternating, REPS times: requests per second and
# the responses' p99 of each, then the medians and the package's ratio to the CLI (issue 37:
# within 5%). nginx (one worker) on CPU 0 serves /healthz; each generator runs on CPU 1.
# Env: REPS=5 CONNS=50 DUR=5. Needs nginx-light (installed with apt-get when missing), taskset.
set -euo pipefail
. "$(dirname "$0")/nginx-target.sh"
TOP=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
BIN=$(realpath "${1:-./apiperf}")
REPS=${REPS:-5}; CONNS=${CONNS:-50}; DUR=${DUR:-5}
command -v nginx >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null; }
W=$(mktemp -d)
trap 'kill $SRV 2>/dev/null; rm -rf "$W"' EXIT
(cd "$TOP" && go build -o "$W/loadtestrun" ./scripts/loadtestrun)
start_nginx "$W" 4096 4096 0
# p99 of `apiperf run`: the "Latency (responses): ... p99 X" field, in µs.
cli_p99() { sed -n 's/.*Latency (responses):.* p99 \([0-9.]*\)\(us\|ms\|s\),.*/\1 \2/p' | awk '{u=$2=="ms"?1000:($2=="s"?1e6:1); printf "%d\n", $1*u}'; }
printf '%-4s %-8s %12s %10s\n' rep tool req/s p99_us
for i in $(seq "$REPS"); do
  out=$(taskset -c 1 "$BIN" run -q -t1 -c"$CONNS" -d"${DUR}s" --no-history "$URL")
  printf '%-4s %-8s %12s %10s\n' "$i" cli "$(sed -n 's/^Requests\/sec: *//p' <<<"$out")" "$(cli_p99 <<<"$out")"
  out=$(taskset -c 1 "$W/loadtestrun" -t 1 -c "$CONNS" -d "${DUR}s" "$URL")
  printf '%-4s %-8s %12s %10s\n' "$i" package "$(sed -n 's/^Requests\/sec: *//p' <<<"$out")" "$(sed -n 's/^p99_us: *//p' <<<"$out")"
done | tee "$W/table"
med() { sort -n | awk '{a[NR]=$1} END{print (NR%2)? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
for col in 3 4; do
  c=$(awk -v k=$col '$2=="cli" {print $k}' "$W/table" | med)
  p=$(awk -v k=$col '$2=="package" {print $k}' "$W/table" | med)
  name=$([[ $col == 3 ]] && echo "req/s" || echo "p99")
  echo "median $name: cli $c, package $p, package/cli $(awk -v a="$p" -v b="$c" 'BEGIN{printf "%.3f", a/b}')"
done
