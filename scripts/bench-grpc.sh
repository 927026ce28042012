#!/usr/bin/env bash
# bench-grpc.sh: apiperf's CPU per gRPC call against grpc-go's own client, side by side, on
# the built-in gRPC target (loopback). The target runs on CPU 0, each client on CPU 1 in turn;
# CPU time (user + system) is read by /usr/bin/time. Usage: scripts/bench-grpc.sh [CALLS]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-100000}
bin=$(mktemp -d)
trap 'kill $srv 2>/dev/null || true; rm -rf "$bin"' EXIT
CGO_ENABLED=0 go build -o "$bin/apiperf" ./cmd/apiperf
go build -o "$bin/grpcclient" ./scripts/grpcclient
taskset -c 0 "$bin/apiperf" serve --grpc 127.0.0.1:0 >"$bin/serve.out" 2>/dev/null &
srv=$!
for _ in $(seq 50); do grep -q listening "$bin/serve.out" && break; sleep 0.1; done
addr=$(sed -n 's|.*grpc://||p' "$bin/serve.out")
cpu() { /usr/bin/time -f '%U %S' "$@" 2>&1 >/dev/null | tail -1 | awk '{print $1 + $2}'; }
a=$(cpu taskset -c 1 "$bin/apiperf" run -q --no-history -c 16 -n "$n" --body '{"name":"x"}' "grpc://$addr/apiperf.demo.Demo/Echo")
g=$(cpu taskset -c 1 "$bin/grpcclient" -addr "$addr" -c 16 -n "$n")
awk -v n="$n" -v a="$a" -v g="$g" 'BEGIN {
	printf "%d unary calls, 16 connections, one call in flight on each\n", n
	printf "apiperf:         %.2f s CPU, %.0f calls per CPU-second\n", a, n / a
	printf "grpc-go client:  %.2f s CPU, %.0f calls per CPU-second\n", g, n / g
	printf "apiperf / grpc-go: %.2fx calls per CPU-second\n", g / a
}'
