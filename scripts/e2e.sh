#!/usr/bin/env bash
# e2e.sh BIN: runs the built binary for real against `apiperf serve` on loopback, bounded in
# time, and checks the summary and run.json. Part of `make test`.
set -euo pipefail
BIN=${1:-./apiperf}
W=$(mktemp -d)
SRV=
cleanup() { [[ -n $SRV ]] && kill "$SRV" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$W"; }
trap cleanup EXIT

"$BIN" serve --addr 127.0.0.1:0 >"$W/serve.out" 2>"$W/serve.err" &
SRV=$!
for _ in $(seq 1 100); do grep -q 'listening on' "$W/serve.out" 2>/dev/null && break; sleep 0.05; done
URL=$(sed -n 's/^apiperf serve: listening on //p' "$W/serve.out")
[[ -n $URL ]] || { echo "e2e: apiperf serve did not start:"; cat "$W/serve.err"; exit 1; }

fail() { echo "e2e: $*"; exit 1; }

# A closed-loop run with an exact request count and a saved run.json.
timeout 60 "$BIN" run -c 8 -n 2000 --latency -o "$W/run.json" --db "$W/history.db" "$URL/healthz" >"$W/run.txt" 2>"$W/run.err" || fail "run failed: $(cat "$W/run.err")"
grep -q '^  2000 requests in ' "$W/run.txt" || fail "want exactly 2000 requests: $(cat "$W/run.txt")"
grep -q '^Requests/sec: ' "$W/run.txt" || fail "no Requests/sec line"
grep -q 'Latency Distribution' "$W/run.txt" || fail "no latency distribution"
grep -q '"version": [1-9]' "$W/run.json" || fail "run.json has no version"
# The run was recorded in the history (by the `apiperf history record` child), once.
timeout 20 "$BIN" history --db "$W/history.db" --json >"$W/history.json" 2>&1 || fail "history failed: $(cat "$W/history.json")"
[[ $(grep -c '"kind": "run"' "$W/history.json") == 1 ]] || fail "want the run recorded once in the history: $(cat "$W/history.json")"
! grep -q 'warning' "$W/run.err" || fail "run warned: $(cat "$W/run.err")"

# The closed loop on each I/O path (the default io_uring event loops, the epoll event loops
# they fall back to, goroutines): exact counts on each. (Where io_uring is refused, the
# uring run warns and runs on epoll; load's TestRingPathTaken checks the ring is used here.)
for io in uring evloop goroutines; do
  APIPERF_IO=$io timeout 60 "$BIN" run --no-history -c 8 -n 2000 "$URL/healthz" >"$W/io.txt" 2>&1 || fail "APIPERF_IO=$io run failed: $(cat "$W/io.txt")"
  grep -q '^  2000 requests in ' "$W/io.txt" || fail "APIPERF_IO=$io: want exactly 2000 requests: $(cat "$W/io.txt")"
done

# An open-loop run.
timeout 60 "$BIN" run -R 500 -d 2s -c 4 --latency "$URL/healthz" >"$W/open.txt" 2>&1 || fail "open loop failed: $(cat "$W/open.txt")"
grep -q 'HdrHistogram - Recorded Latency' "$W/open.txt" || fail "open loop has no wrk2 block"
# The open loop on each I/O path (the default event loops waiting in epoll_pwait2, the
# netpoller and timerfd they fall back to, goroutines): exact counts on each.
for io in auto netpoll goroutines; do
  APIPERF_IO=$io timeout 60 "$BIN" run --no-history -R 2000 -n 1000 -c 4 "$URL/healthz" >"$W/oio.txt" 2>&1 || fail "APIPERF_IO=$io open loop failed: $(cat "$W/oio.txt")"
  grep -q '^  1000 requests in ' "$W/oio.txt" || fail "APIPERF_IO=$io: want exactly 1000 open-loop requests: $(cat "$W/oio.txt")"
done

# HTTP/2 with prior knowledge (h2c): the same target, streams per connection, exact count.
timeout 60 "$BIN" run --no-history --http2 --streams 10 -c 4 -n 2000 "$URL/healthz" >"$W/h2.txt" 2>&1 || fail "HTTP/2 run failed: $(cat "$W/h2.txt")"
grep -q '^  2000 requests in ' "$W/h2.txt" || fail "HTTP/2: want exactly 2000 requests: $(cat "$W/h2.txt")"
grep -q 'Protocol: HTTP/2 (h2c), 10 streams per connection' "$W/h2.txt" || fail "HTTP/2: no Protocol line: $(cat "$W/h2.txt")"

# Bad input: exit code 2, one line, no traffic.
set +e
"$BIN" run -c 0 "$URL/healthz" >/dev/null 2>"$W/bad.err"; rc=$?
set -e
[[ $rc == 2 ]] || fail "bad input exit code $rc, want 2"
[[ $(wc -l <"$W/bad.err") == 1 ]] || fail "bad input printed more than one line: $(cat "$W/bad.err")"

# Exit codes CI can trust: a target nobody listens on stops within 2 s, exit 1, and says why.
set +e
start=$SECONDS
timeout 20 "$BIN" run --no-history -d3s http://127.0.0.1:1/ >/dev/null 2>"$W/dead.err"; rc=$?
set -e
[[ $rc == 1 ]] || fail "unreachable target: exit code $rc, want 1"
(( SECONDS - start <= 2 )) || fail "unreachable target: took $((SECONDS - start)) s, want at most 2"
grep -q 'unable to connect to 127.0.0.1:1: connection refused' "$W/dead.err" || fail "unreachable target: $(cat "$W/dead.err")"

# Secrets: a URL password and a ?token= value are in no output.
timeout 60 "$BIN" run --no-history -c 2 -n 100 -o "$W/secret.json" "${URL/http:\/\//http://u:E2EPASS@}/healthz?token=E2ETOKEN" >"$W/secret.txt" 2>&1 || fail "run with secrets failed: $(cat "$W/secret.txt")"
grep -q 'u:REDACTED@.*token=REDACTED' "$W/secret.json" || fail "run.json does not show the redacted URL: $(grep -m1 '"url"' "$W/secret.json")"
! grep -q 'E2EPASS\|E2ETOKEN' "$W/secret.json" "$W/secret.txt" || fail "a secret was written: $(grep -h 'E2EPASS\|E2ETOKEN' "$W/secret.json" "$W/secret.txt")"

echo "e2e: ok (run, exact count, run.json, history, open loop, HTTP/2, bad input, unreachable, secrets)"
# Every check above ends in `|| fail` and runs unconditionally: reaching here means each passed.
echo "e2e: $(grep -c '|| fail "' "$0") passed, 0 failed"
