#!/usr/bin/env bash
# tuning-demo.sh BIN OUT: the demo tuning story of docs/TUNING.md, on loopback: the demo API
# with every middleware and with none, each swept with profiles, metrics and the plain
# net/http yardstick, then diffed. Prints every command and its output (about 1 minute).
set -euo pipefail
BIN=$(realpath "${1:-./apiperf}")
OUT=${2:-tuning-out}
mkdir -p "$OUT"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
start() { # start NAME ARGS...: a demo target on a free port; sets URL_NAME
  local name=$1; shift
  "$BIN" serve --demo --addr 127.0.0.1:0 "$@" >"$OUT/$name.serve" 2>/dev/null &
  pids+=($!)
  for _ in $(seq 1 100); do grep -q 'listening on' "$OUT/$name.serve" 2>/dev/null && break; sleep 0.05; done
  printf -v "URL_$name" '%s' "$(sed -n 's/^apiperf serve: listening on //p' "$OUT/$name.serve")"
}
show() { echo; echo "\$ ${*/#$BIN/apiperf}"; "$@"; }

start all
start none --middleware none
for side in all none; do
  url_var="URL_$side"; url=${!url_var}
  show "$BIN" sweep --levels 5,20 -d 3s --warmup 1s --no-stop -t 1 --vs-native --no-history -q \
    --dir "$OUT" --name "demo-$side" --pprof "$url/debug/pprof" --metrics "$url/metrics" "$url/api/users/7"
done
show "$BIN" diff --dir "$OUT/diff" -q "$OUT/demo-all" "$OUT/demo-none"
