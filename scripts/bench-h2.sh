#!/usr/bin/env bash
# bench-h2.sh: apiperf's HTTP/2 engine against h2load (nghttp2's load generator), side by side.
#
# Both generators load the same h2c target (nghttpd --no-tls serving a 16-byte file, or the
# built-in target with TARGET=apiperf) with the same clients and streams (h2load -c C -m M,
# apiperf -c C --streams M --http2) for the same duration, in turn (h2load, apiperf, ...).
# The target is pinned to CPU 0 and each generator to CPU 1 with one thread (GOMAXPROCS=1),
# so each figure is the work one core of generator buys:
#   efficiency = completed requests / generator CPU seconds (user+sys)
#   ratio      = apiperf efficiency / h2load efficiency   (>= 1.0 means at least as lean)
#
# Usage:  scripts/bench-h2.sh [APIPERF_BINARY]        (make bench-h2 writes docs/PERFORMANCE.md)
# Env:    CONNS=10 STREAMS=10 DUR=10 REPS=5 TARGET=nghttpd|nghttpd-tls|apiperf
#         (nghttpd-tls: h2 over TLS, an ECDSA P-256 certificate made for the run; apiperf gets -k)
#         OUT=docs/PERFORMANCE.md: also write the result as that file's HTTP/2 section
#         NOTE="...": a line about the conditions, printed in that section
# Needs:  h2load, nghttpd (nghttp2-client, nghttp2-server) and GNU time; apt-get installs them.
set -euo pipefail
APIPERF=${1:-${APIPERF:-./apiperf}}
CONNS=${CONNS:-10}; STREAMS=${STREAMS:-10}; DUR=${DUR:-10}; REPS=${REPS:-5}; TARGET=${TARGET:-nghttpd}
(( DUR <= 30 )) || { echo "DUR must be <= 30 seconds" >&2; exit 2; }
[[ -x $APIPERF ]] || { echo "no apiperf binary at $APIPERF (build it: go build -o apiperf ./cmd/apiperf)" >&2; exit 2; }

need=()
command -v h2load >/dev/null || need+=(nghttp2-client)
command -v nghttpd >/dev/null || need+=(nghttp2-server)
[[ -x /usr/bin/time ]] || need+=(time)
if (( ${#need[@]} )); then
  echo "installing ${need[*]} ..." >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}") >/dev/null
fi

W=$(mktemp -d /tmp/bench-h2.XXXXXX)
SRV_PID=
cleanup() { [[ -n $SRV_PID ]] && kill "$SRV_PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$W"; }
trap cleanup EXIT

free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
PIN_SRV=(); PIN_GEN=()
if (( $(nproc) >= 2 )); then PIN_SRV=(taskset -c 0); PIN_GEN=(taskset -c 1); fi

CURL=(curl -fsS --http2-prior-knowledge); K=()
if [[ $TARGET == nghttpd-tls ]]; then
  PORT=$(free_port)
  mkdir -p "$W/htdocs" && printf '{"status":"ok"}\n' >"$W/htdocs/healthz"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$W/key.pem" -out "$W/cert.pem" \
    -days 2 -subj /CN=localhost 2>/dev/null
  "${PIN_SRV[@]}" nghttpd -a 127.0.0.1 -d "$W/htdocs" "$PORT" "$W/key.pem" "$W/cert.pem" >/dev/null 2>&1 &
  SRV_PID=$!
  URL="https://127.0.0.1:$PORT/healthz"
  CURL=(curl -fsS -k --http2); K=(-k)
elif [[ $TARGET == nghttpd ]]; then
  PORT=$(free_port)
  mkdir -p "$W/htdocs" && printf '{"status":"ok"}\n' >"$W/htdocs/healthz"
  "${PIN_SRV[@]}" nghttpd -a 127.0.0.1 --no-tls -d "$W/htdocs" "$PORT" >/dev/null 2>&1 &
  SRV_PID=$!
  URL="http://127.0.0.1:$PORT/healthz"
elif [[ $TARGET == apiperf ]]; then
  GOMAXPROCS=1 "${PIN_SRV[@]}" "$APIPERF" serve --addr 127.0.0.1:0 >"$W/serve.out" 2>/dev/null &
  SRV_PID=$!
  for _ in $(seq 1 50); do grep -q 'listening on' "$W/serve.out" 2>/dev/null && break; sleep 0.1; done
  URL="$(sed -n 's/.*listening on //p' "$W/serve.out")/healthz"
else
  echo "TARGET must be nghttpd, nghttpd-tls or apiperf" >&2; exit 2
fi
for _ in $(seq 1 50); do "${CURL[@]}" -o /dev/null "$URL" 2>/dev/null && break; sleep 0.1; done
"${CURL[@]}" -o /dev/null "$URL" || { echo "target did not come up at $URL" >&2; exit 1; }

# run_one TOOL REP -> prints "requests cpu_seconds rss_kb rps"
run_one() {
  local tool=$1 out=$W/$1.$2.out tm=$W/$1.$2.time req rps
  if [[ $tool == h2load ]]; then
    /usr/bin/time -f '%U %S %M' -o "$tm" "${PIN_GEN[@]}" h2load -t1 -c"$CONNS" -m"$STREAMS" -D"$DUR" "$URL" >"$out" 2>&1 || true
    req=$(awk '/^requests:/ {for (i=1;i<=NF;i++) if ($(i+1) ~ /^succeeded/) {print $i; exit}}' "$out")
    rps=$(awk '/^finished in/ {print $4; exit}' "$out")
  else
    GOMAXPROCS=1 /usr/bin/time -f '%U %S %M' -o "$tm" "${PIN_GEN[@]}" "$APIPERF" run --no-history "${K[@]}" -t1 -c"$CONNS" \
      --http2 --streams "$STREAMS" -d"${DUR}s" "$URL" >"$out" 2>&1 || true
    req=$(awk '/requests in/ {print $1; exit}' "$out")
    rps=$(awk '/^Requests\/sec:/ {print $2; exit}' "$out")
  fi
  if [[ -z $req || -z $rps ]]; then echo "could not read the summary of $tool:" >&2; tail -n 20 "$out" >&2; exit 1; fi
  read -r u s m <"$tm"
  echo "$req $(awk -v u="$u" -v s="$s" 'BEGIN{print u+s}') $m $rps"
}

bench() {
  printf 'target=%s url=%s clients=%s streams=%s dur=%ss reps=%s pinned=%s\n' "$TARGET" "$URL" "$CONNS" "$STREAMS" "$DUR" "$REPS" \
    "$([[ ${#PIN_GEN[@]} -gt 0 ]] && echo yes || echo no)"
  printf '%-4s %-8s %12s %10s %14s %10s\n' rep tool requests/s cpu_s req/cpu_s rss_MB
  ratios=()
  for rep in $(seq 1 "$REPS"); do
    read -r rq1 c1 m1 r1 < <(run_one h2load "$rep")
    read -r rq2 c2 m2 r2 < <(run_one apiperf "$rep")
    e1=$(awk -v r="$rq1" -v c="$c1" 'BEGIN{printf "%.0f", r/c}')
    e2=$(awk -v r="$rq2" -v c="$c2" 'BEGIN{printf "%.0f", r/c}')
    printf '%-4s %-8s %12s %10s %14s %10.1f\n' "$rep" h2load "$r1" "$c1" "$e1" "$(awk -v m="$m1" 'BEGIN{print m/1024}')"
    printf '%-4s %-8s %12s %10s %14s %10.1f\n' "$rep" apiperf "$r2" "$c2" "$e2" "$(awk -v m="$m2" 'BEGIN{print m/1024}')"
    ratios+=("$(awk -v a="$e2" -v b="$e1" 'BEGIN{printf "%.3f", a/b}')")
    echo "     ratio efficiency=${ratios[-1]}"
  done
  med=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{a[NR]=$1} END{print (NR%2)? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}')
  echo "median efficiency ratio apiperf/h2load: $med"
}
bench | tee "$W/raw.txt"

# write_section FILE: the result as FILE's HTTP/2 section, between markers that
# scripts/bench.sh keeps when it regenerates the rest of the file.
write_section() {
  local out=$1 sec=$W/section.md med
  med() { sort -n | awk '{a[NR]=$1} END{print (NR%2)? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
  {
    echo "<!-- bench-h2: generated by scripts/bench-h2.sh (make bench-h2); do not edit by hand -->"
    echo "## HTTP/2: apiperf against h2load"
    echo
    echo "- date: $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(h2load --version 2>&1 | head -n1)"
    echo "- method: $TARGET target ($( [[ $TARGET == nghttpd-tls ]] && echo 'h2 over TLS' || echo h2c)) pinned to CPU 0, each generator pinned to CPU 1 with one thread (GOMAXPROCS=1),"
    echo "  h2load \`-c $CONNS -m $STREAMS\` and apiperf \`-c $CONNS --http2 --streams $STREAMS\` alternating, $REPS reps of ${DUR}s."
    echo "  Efficiency is completed requests per generator CPU-second (user+sys); the ratio is apiperf's over h2load's,"
    echo "  rep by rep, and the median is shown."
    if [[ -n ${NOTE:-} ]]; then echo "- note: $NOTE"; fi
    echo
    echo "| clients x streams | h2load req/CPU-s | apiperf req/CPU-s | efficiency ratio (median) |"
    echo "|---:|---:|---:|---:|"
    echo "| $CONNS x $STREAMS | $(awk '$2=="h2load" {print $5}' "$W/raw.txt" | med) | $(awk '$2=="apiperf" {print $5}' "$W/raw.txt" | med) | **$(awk '/^median efficiency ratio/ {print $NF}' "$W/raw.txt")** |"
    echo
    echo '```'
    cat "$W/raw.txt"
    echo '```'
    echo "<!-- /bench-h2 -->"
  } >"$sec"
  if grep -q '^<!-- bench-h2' "$out"; then
    awk -v f="$sec" '/^<!-- bench-h2/ {while ((getline l < f) > 0) print l; skip=1; next}
      /^<!-- \/bench-h2 -->/ {skip=0; next} !skip' "$out" >"$out.tmp" && mv "$out.tmp" "$out"
  else
    { echo; cat "$sec"; } >>"$out"
  fi
  echo "bench-h2: wrote the HTTP/2 section of $out" >&2
}
if [[ -n ${OUT:-} ]]; then write_section "$OUT"; fi
