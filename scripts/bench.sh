#!/usr/bin/env bash
# bench.sh BIN: apiperf against wrk, side by side, at 50, 1,000 and 10,000 connections, with
# ../shared/bench/vs-wrk.sh; writes the results to docs/PERFORMANCE.md (generated: do not edit).
# Each connection count runs once per I/O path of IO_LIST (APIPERF_IO values): the default
# path, then the epoll event loops it falls back to where io_uring is refused.
# Env: CONN_LIST="50 1000 10000" IO_LIST="auto evloop" REPS=5 DUR=10 EXTRA="" VS_WRK=path/to/vs-wrk.sh
#      OUT=docs/PERFORMANCE.md
# Open loop against wrk2 (built by ../shared/bench/peers/build-wrk2.sh, or WRK2=path): OPEN_RATES="40000 max"
# ("max": the highest rate of OPEN_PROBE="50000 60000 ... 120000" that wrk2 itself achieves here),
# OPEN_CONNS=50 (a fixed pool: --max-connections), OPEN_IO="auto evloop netpoll" (APIPERF_IO values); OPEN_RATES="" skips it.
set -euo pipefail
BIN=$(realpath "${1:-./apiperf}")
TOP=$(git rev-parse --show-toplevel)
VS_WRK=${VS_WRK:-$TOP/../shared/bench/vs-wrk.sh}
CONN_LIST=${CONN_LIST:-50 1000 10000}
IO_LIST=${IO_LIST:-auto evloop}
REPS=${REPS:-5}; DUR=${DUR:-10}; EXTRA=${EXTRA:-}
OUT=${OUT:-$TOP/docs/PERFORMANCE.md}
[[ -x $VS_WRK ]] || { echo "bench: no vs-wrk.sh at $VS_WRK (set VS_WRK)" >&2; exit 2; }
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
# io_label IO: how the table names an APIPERF_IO value.
io_label() {
  case $1 in
    auto) echo "default (io_uring)" ;;
    evloop) echo "epoll (fallback)" ;;
    *) echo "$1" ;;
  esac
}
med() { sort -n | awk '{a[NR]=$1} END{print (NR%2)? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
rows=()
for c in $CONN_LIST; do
  for io in $IO_LIST; do
    f=$W/$c.$io.txt
    echo "bench: $c connections, APIPERF_IO=$io, $REPS reps of ${DUR}s ..." >&2
    APIPERF_IO=$io CONNS=$c REPS=$REPS DUR=$DUR EXTRA="$EXTRA" "$VS_WRK" "$BIN" | tee "$f" >&2
    # Median efficiency ratio, and median peak RSS of each tool, from vs-wrk.sh's table.
    ratio=$(awk '/^median efficiency ratio/ {print $NF}' "$f")
    rss_wrk=$(awk '$2=="wrk" {print $6}' "$f" | med)
    rss_api=$(awk '$2=="apiperf" {print $6}' "$f" | med)
    eff_wrk=$(awk '$2=="wrk" {print $5}' "$f" | med)
    eff_api=$(awk '$2=="apiperf" {print $5}' "$f" | med)
    rows+=("| $c | $(io_label "$io") | $eff_wrk | $eff_api | **$ratio** | $rss_wrk | $rss_api | $(awk -v a="$rss_api" -v b="$rss_wrk" 'BEGIN{printf "%.2f", a/b}') |")
  done
done
# Open loop: apiperf against wrk2 at the same rate over the same fixed pool of connections
# (apiperf's pool grows when every connection is busy unless --max-connections holds it).
OPEN_RATES=${OPEN_RATES-40000 max}
OPEN_CONNS=${OPEN_CONNS:-50}
OPEN_IO=${OPEN_IO:-auto evloop netpoll}
OPEN_PROBE=${OPEN_PROBE:-50000 60000 70000 80000 90000 100000 120000}
orows=(); ofiles=()
if [[ -n $OPEN_RATES ]]; then
  WRK2=${WRK2:-$("$TOP/../shared/bench/peers/build-wrk2.sh")}
  # vs_wrk2 RATE REPS DUR: vs-wrk.sh with wrk2 and apiperf at RATE over OPEN_CONNS connections.
  vs_wrk2() {
    WRK=$WRK2 WRK_EXTRA="-R $1" EXTRA="-R $1 --max-connections $OPEN_CONNS $EXTRA" CONNS=$OPEN_CONNS \
      REPS=$2 DUR=$3 "$VS_WRK" "$BIN"
  }
  # met RATE REQ_PER_S: whether a generator achieved RATE (wrk2 counts its first, calibrating
  # second against it, so 95% is the bar).
  met() { awk -v r="$1" -v a="$2" 'BEGIN{exit !(a >= 0.95*r)}'; }
  for rate in $OPEN_RATES; do
    if [[ $rate == max ]]; then
      rate=
      for r in $OPEN_PROBE; do
        got=$(vs_wrk2 "$r" 1 5 | awk '$2=="wrk" {print $3}')
        echo "bench: wrk2 at -R $r achieved ${got:-?} req/s" >&2
        met "$r" "${got:-0}" || break
        rate=$r
      done
      [[ -n $rate ]] || { echo "bench: wrk2 achieved none of $OPEN_PROBE; no open-loop row near its maximum" >&2; continue; }
    fi
    for io in $OPEN_IO; do
      f=$W/open.$rate.$io.txt
      echo "bench: open loop -R $rate, $OPEN_CONNS connections, APIPERF_IO=$io, $REPS reps of ${DUR}s ..." >&2
      APIPERF_IO=$io vs_wrk2 "$rate" "$REPS" "$DUR" | tee "$f" >&2
      ofiles+=("$rate $io")
      ratio=$(awk '/^median efficiency ratio/ {print $NF}' "$f")
      col() { awk -v t="$1" -v c="$2" '$2==t {print $c}' "$f" | med; }
      rps_wrk=$(col wrk 3); rps_api=$(col apiperf 3)
      note=""
      met "$rate" "$rps_wrk" || note=" (wrk2 below the rate)"
      met "$rate" "$rps_api" || note="$note (apiperf below the rate)"
      case $io in
        auto) label="default (io_uring)" ;;
        evloop) label="fallback (epoll_pwait2)" ;;
        netpoll) label="fallback (netpoller + timerfd)" ;;
        *) label=$io ;;
      esac
      rows_o="| $rate$note | $label | $rps_wrk | $rps_api | $(col wrk 5) | $(col apiperf 5) | **$ratio** | $(col wrk 6) | $(col apiperf 6) |"
      orows+=("$rows_o")
    done
  done
fi

# The HTTP/2 section (scripts/bench-h2.sh) and the footprint section (scripts/footprint.sh and
# prose, between <!-- lean --> markers) are kept as they are.
h2sec=$(awk '/^<!-- bench-h2/ {p=1} p {print} /^<!-- \/bench-h2 -->/ {p=0}' "$OUT" 2>/dev/null || true)
leansec=$(awk '/^<!-- lean/ {p=1} p {print} /^<!-- \/lean -->/ {p=0}' "$OUT" 2>/dev/null || true)
# The cost of --traceparent and the exemplars (issue 30), between <!-- traceparent --> markers, too.
tpsec=$(awk '/^<!-- traceparent/ {p=1} p {print} /^<!-- \/traceparent -->/ {p=0}' "$OUT" 2>/dev/null || true)
# gRPC's CPU per call against grpc-go (scripts/bench-grpc.sh, issue 40), between <!-- grpc --> markers.
grpcsec=$(awk '/^<!-- grpc/ {p=1} p {print} /^<!-- \/grpc -->/ {p=0}' "$OUT" 2>/dev/null || true)
{
  echo "# Performance: apiperf against wrk"
  echo
  echo "Generated by \`make bench\` (scripts/bench.sh running ../shared/bench/vs-wrk.sh); do not edit by hand."
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "- machine: $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
  echo "- commit: $(git -C "$TOP" rev-parse --short HEAD)$([[ -n $(git -C "$TOP" status --porcelain -- '*.go') ]] && echo ' (with uncommitted changes)')"
  echo "- apiperf: $("$BIN" version 2>/dev/null || echo '?'), wrk: $(wrk -v 2>&1 | head -n1 | awk '{print $2}')"
  echo "- method: nginx target pinned to CPU 0, each generator pinned to CPU 1 with one thread (GOMAXPROCS=1),"
  echo "  wrk and apiperf alternating, $REPS reps of ${DUR}s per connection count${EXTRA:+, apiperf flags: $EXTRA}."
  echo "  Efficiency is completed requests per generator CPU-second (user+sys); the ratio is apiperf's over wrk's,"
  echo "  rep by rep, and the median is shown. RSS is the median peak resident set in MB. Each connection count"
  echo "  is measured on apiperf's default I/O path and on the epoll event loops it falls back to where io_uring"
  echo "  is unavailable or refused (APIPERF_IO=evloop), each against its own wrk runs."
  echo
  echo "| connections | apiperf I/O | wrk req/CPU-s | apiperf req/CPU-s | efficiency ratio (median) | wrk RSS MB | apiperf RSS MB | RSS ratio |"
  echo "|---:|---|---:|---:|---:|---:|---:|---:|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "## Raw output"
  for c in $CONN_LIST; do
    for io in $IO_LIST; do
      echo
      echo "### $c connections, $(io_label "$io")"
      echo
      echo '```'
      cat "$W/$c.$io.txt"
      echo '```'
    done
  done
  if ((${#orows[@]})); then
    echo
    echo "## Open loop: apiperf against wrk2"
    echo
    echo "- method: as above, with wrk2 (giltene/wrk2 44a94c1) as the peer: both at the same rate over $OPEN_CONNS"
    echo "  connections, apiperf's pool held there with --max-connections $OPEN_CONNS. Rates: -R 40000 and the highest"
    echo "  rate of ($OPEN_PROBE) that wrk2 itself achieved in a 5 s probe on this machine. A rate either tool fell"
    echo "  more than 5% short of is marked. apiperf's default path does its I/O on io_uring; where io_uring is"
    echo "  unavailable or refused it falls back to epoll, waiting in epoll_pwait2 (APIPERF_IO=evloop), and where"
    echo "  that is missing too, through Go's netpoller and a timerfd (APIPERF_IO=netpoll)."
    echo "  HTTP/2 and scripts with response() or delay() run the open loop on goroutines."
    echo
    echo "| rate | apiperf I/O | wrk2 req/s | apiperf req/s | wrk2 req/CPU-s | apiperf req/CPU-s | efficiency ratio (median) | wrk2 RSS MB | apiperf RSS MB |"
    echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|"
    printf '%s\n' "${orows[@]}"
    for of in "${ofiles[@]}"; do
      read -r rate io <<<"$of"
      echo
      echo "### open loop -R $rate, APIPERF_IO=$io (the \"wrk\" rows are wrk2)"
      echo
      echo '```'
      cat "$W/open.$rate.$io.txt"
      echo '```'
    done
  fi
  if [[ -n $h2sec ]]; then
    echo
    printf '%s\n' "$h2sec"
  fi
  if [[ -n $leansec ]]; then
    echo
    printf '%s\n' "$leansec"
  fi
  if [[ -n $tpsec ]]; then
    echo
    printf '%s\n' "$tpsec"
  fi
  if [[ -n $grpcsec ]]; then
    echo
    printf '%s\n' "$grpcsec"
  fi
} >"$OUT"
echo "bench: wrote $OUT" >&2
