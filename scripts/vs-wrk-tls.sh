#!/usr/bin/env bash
# vs-wrk-tls.sh: ../shared/bench/vs-wrk.sh's method over HTTPS. nginx serves /healthz over
# TLS (an ECDSA P-256 certificate made for the run, keep-alive, OpenSSL's choice of suite:
# TLS 1.3 AES-256-GCM) pinned to CPU 0; wrk and apiperf take turns on CPU 1 with one thread
# and print, rep by rep, requests per generator CPU-second and the ratio apiperf/wrk.
#
# Usage:  scripts/vs-wrk-tls.sh [APIPERF_BINARY]
# Env:    CONNS=50 DUR=10 REPS=3 EXTRA="extra apiperf run flags" WRK=wrk WRK_EXTRA=
#         APIPERF_IO=goroutines compares the goroutine path (the default is the event loops)
#         PROTO=TLSv1.2 serves TLS 1.2 (ECDHE-ECDSA-AES128-GCM-SHA256) instead
# Needs:  wrk, nginx, openssl, curl and GNU time (not installed here: see vs-wrk.sh).
set -euo pipefail
APIPERF=${1:-${APIPERF:-./apiperf}}
CONNS=${CONNS:-50}; DUR=${DUR:-10}; REPS=${REPS:-3}; EXTRA=${EXTRA:-}; PROTO=${PROTO:-TLSv1.3}
WRK=${WRK:-wrk}; WRK_EXTRA=${WRK_EXTRA:-}
(( DUR <= 30 )) || { echo "DUR must be <= 30 seconds" >&2; exit 2; }
[[ -x $APIPERF ]] || { echo "no apiperf binary at $APIPERF (build it: go build -o apiperf ./cmd/apiperf)" >&2; exit 2; }
for c in "$WRK" nginx openssl curl /usr/bin/time; do command -v "$c" >/dev/null || { echo "missing $c" >&2; exit 2; }; done

W=$(mktemp -d /tmp/vs-wrk-tls.XXXXXX)
SRV_PID=
cleanup() { [[ -n $SRV_PID ]] && kill "$SRV_PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$W"; }
trap cleanup EXIT

PORT=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
PIN_SRV=(); PIN_GEN=()
if (( $(nproc) >= 2 )); then PIN_SRV=(taskset -c 0); PIN_GEN=(taskset -c 1); fi

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=127.0.0.1 \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$W/key.pem" -out "$W/cert.pem" 2>/dev/null
ciphers=
[[ $PROTO == TLSv1.2 ]] && ciphers="ssl_ciphers ECDHE-ECDSA-AES128-GCM-SHA256;"
mkdir -p "$W/nginx/logs" "$W/nginx/tmp"
cat >"$W/nginx.conf" <<CONF
worker_processes 1;
worker_rlimit_nofile 65536;
pid $W/nginx/nginx.pid;
error_log $W/nginx/logs/error.log warn;
events { worker_connections 60000; }
http {
  access_log off;
  keepalive_requests 100000000;
  client_body_temp_path $W/nginx/tmp/body; proxy_temp_path $W/nginx/tmp/proxy;
  fastcgi_temp_path $W/nginx/tmp/fcgi; uwsgi_temp_path $W/nginx/tmp/uwsgi; scgi_temp_path $W/nginx/tmp/scgi;
  server {
    listen 127.0.0.1:$PORT ssl backlog=4096;
    ssl_certificate $W/cert.pem; ssl_certificate_key $W/key.pem; ssl_protocols $PROTO; $ciphers
    location /healthz { default_type application/json; return 200 '{"status":"ok"}'; }
  }
}
CONF
"${PIN_SRV[@]}" nginx -p "$W/nginx/" -e "$W/nginx/logs/error.log" -c "$W/nginx.conf" -g 'daemon off;' &
SRV_PID=$!
URL="https://127.0.0.1:$PORT/healthz"
for _ in $(seq 1 50); do curl -kfsS -o /dev/null "$URL" 2>/dev/null && break; sleep 0.1; done
curl -kfsS -o /dev/null "$URL" || { echo "target did not come up" >&2; exit 1; }

# run_one TOOL REP -> prints "requests cpu_seconds rss_kb rps"
run_one() {
  local tool=$1 out=$W/$1.$2.out tm=$W/$1.$2.time
  if [[ $tool == wrk ]]; then
    # shellcheck disable=SC2086
    /usr/bin/time -f '%U %S %M' -o "$tm" "${PIN_GEN[@]}" "$WRK" -t1 -c"$CONNS" -d"${DUR}s" $WRK_EXTRA "$URL" >"$out" 2>&1 || true
  else
    # shellcheck disable=SC2086
    GOMAXPROCS=1 /usr/bin/time -f '%U %S %M' -o "$tm" "${PIN_GEN[@]}" "$APIPERF" run -k -t1 -c"$CONNS" -d"${DUR}s" $EXTRA "$URL" >"$out" 2>&1 || true
  fi
  local req rps
  req=$(awk '/requests in/ {print $1; exit}' "$out")
  rps=$(awk '/^Requests\/sec:/ {print $2; exit}' "$out")
  if [[ -z $req || -z $rps ]]; then echo "could not read the summary of $tool:" >&2; tail -n 20 "$out" >&2; exit 1; fi
  read -r u s m <"$tm"
  echo "$req $(awk -v u="$u" -v s="$s" 'BEGIN{print u+s}') $m $rps"
}

printf 'target=nginx %s url=%s conns=%s dur=%ss reps=%s io=%s load=%s\n' "$PROTO" "$URL" "$CONNS" "$DUR" "$REPS" "${APIPERF_IO:-auto}" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-4s %-8s %12s %10s %14s %10s\n' rep tool requests/s cpu_s req/cpu_s rss_MB
ratios=()
for rep in $(seq 1 "$REPS"); do
  read -r rq1 c1 m1 r1 < <(run_one wrk "$rep")
  read -r rq2 c2 m2 r2 < <(run_one apiperf "$rep")
  e1=$(awk -v r="$rq1" -v c="$c1" 'BEGIN{printf "%.0f", (c > 0) ? r/c : 0}')
  e2=$(awk -v r="$rq2" -v c="$c2" 'BEGIN{printf "%.0f", (c > 0) ? r/c : 0}')
  printf '%-4s %-8s %12s %10s %14s %10.1f\n' "$rep" wrk "$r1" "$c1" "$e1" "$(awk -v m="$m1" 'BEGIN{print m/1024}')"
  printf '%-4s %-8s %12s %10s %14s %10.1f\n' "$rep" apiperf "$r2" "$c2" "$e2" "$(awk -v m="$m2" 'BEGIN{print m/1024}')"
  ratios+=("$(awk -v a="$e2" -v b="$e1" 'BEGIN{printf "%.3f", (b > 0) ? a/b : 0}')")  # 0: wrk got nothing done
  echo "     ratio efficiency=${ratios[-1]} rss=$(awk -v a="$m2" -v b="$m1" 'BEGIN{printf "%.2f", (b > 0) ? a/b : 0}') load=$(cut -d' ' -f1 /proc/loadavg)"
done
med=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{a[NR]=$1} END{print (NR%2)? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}')
echo "median efficiency ratio apiperf/wrk: $med"
