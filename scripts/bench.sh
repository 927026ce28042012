#!/usr/bin/env bash
# bench.sh BIN: apiperf against wrk, side by side, at 50, 1,000 and 10,000 connections, with
# ../shared/bench/vs-wrk.sh, over HTTPS at 50 and 1,000 (scripts/vs-wrk-tls.sh), and private
# memory at 50 beside wrk's (scripts/rssanon.sh); writes the results to docs/PERFORMANCE.md's
# generated part (everything before its first <!-- marker; what follows is kept as it is).
# Each connection count runs once per I/O path of IO_LIST (APIPERF_IO values): the default
# path, then the epoll event loops it falls back to where io_uring is refused.
# Env: CONN_LIST="50 1000 10000" IO_LIST="auto evloop" REPS=5 DUR=10 EXTRA="" VS_WRK=path/to/vs-wrk.sh
#      OUT=docs/PERFORMANCE.md
# HTTPS: TLS_CONN_LIST="50 1000" (nginx with TLS 1.3, ECDSA P-256); "" skips it. Private memory:
# RSS_REPS=3 reps of scripts/rssanon.sh at 50 connections; RSS_REPS=0 skips it.
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
# The load average (1, 5, 15 min) as the runs start, for the header beside the one at the end.
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
# io_label IO: how the table names an APIPERF_IO value.
io_label() {
  case $1 in
    auto) echo "default (io_uring)" ;;
    evloop) echo "epoll (fallback)" ;;
    *) echo "$1" ;;
  esac
}
med() { sort -n | awk '{a[NR]=$1} END{print (NR%2)? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# row FILE CONNS LABEL: the table's row of one vs-wrk.sh output: the median efficiency
# ratio, and each tool's median efficiency and peak RSS.
row() {
  local f=$1 ratio rss_wrk rss_api eff_wrk eff_api
  ratio=$(awk '/^median efficiency ratio/ {print $NF}' "$f")
  rss_wrk=$(awk '$2=="wrk" {print $6}' "$f" | med)
  rss_api=$(awk '$2=="apiperf" {print $6}' "$f" | med)
  eff_wrk=$(awk '$2=="wrk" {print $5}' "$f" | med)
  eff_api=$(awk '$2=="apiperf" {print $5}' "$f" | med)
  echo "| $2 | $3 | $eff_wrk | $eff_api | **$ratio** | $rss_wrk | $rss_api | $(awk -v a="$rss_api" -v b="$rss_wrk" 'BEGIN{printf "%.2f", a/b}') |"
}
rows=()
for c in $CONN_LIST; do
  for io in $IO_LIST; do
    f=$W/$c.$io.txt
    echo "bench: $c connections, APIPERF_IO=$io, $REPS reps of ${DUR}s ..." >&2
    APIPERF_IO=$io CONNS=$c REPS=$REPS DUR=$DUR EXTRA="$EXTRA" "$VS_WRK" "$BIN" | tee "$f" >&2
    rows+=("$(row "$f" "$c" "$(io_label "$io")")")
  done
done
# HTTPS: the same method against nginx over TLS, on apiperf's default I/O path.
TLS_CONN_LIST=${TLS_CONN_LIST-50 1000}
for c in $TLS_CONN_LIST; do
  f=$W/tls.$c.txt
  echo "bench: HTTPS, $c connections, $REPS reps of ${DUR}s ..." >&2
  CONNS=$c REPS=$REPS DUR=$DUR EXTRA="$EXTRA" "$TOP/scripts/vs-wrk-tls.sh" "$BIN" | tee "$f" >&2
  rows+=("$(row "$f" "$c" "HTTPS (TLS 1.3), default")")
done
RSS_REPS=${RSS_REPS:-3}
if (( RSS_REPS > 0 )); then
  echo "bench: private memory at 50 connections, $RSS_REPS reps ..." >&2
  REPS=$RSS_REPS CONNS=50 DUR=6 EXTRA="$EXTRA" "$TOP/scripts/rssanon.sh" "$BIN" | tee "$W/rssanon.txt" >&2
fi
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

# Everything from the first "<!-- " marker line on (the HTTP/2 section scripts/bench-h2.sh writes,
# the footprint table scripts/footprint.sh writes, and the hand-kept sections) is kept as it is.
kept=$(awk '/^<!-- / {p=1} p {print}' "$OUT" 2>/dev/null || true)
{
  echo "# Performance: apiperf against wrk"
  echo
  echo "Generated by \`make bench\` (scripts/bench.sh running ../shared/bench/vs-wrk.sh); do not edit by hand."
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "- machine: $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
  echo "- commit: $(git -C "$TOP" rev-parse --short HEAD)$([[ -n $(git -C "$TOP" status --porcelain -- '*.go') ]] && echo ' (with uncommitted changes)')"
  echo "- load average (1, 5, 15 min): $LOAD_START as the runs started, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
  echo "- apiperf: $("$BIN" version 2>/dev/null || echo '?'), wrk: $(wrk -v 2>&1 | head -n1 | awk '{print $2}')"
  echo "- method: nginx target pinned to CPU 0, each generator pinned to CPU 1 with one thread (GOMAXPROCS=1),"
  echo "  wrk and apiperf alternating, $REPS reps of ${DUR}s per connection count${EXTRA:+, apiperf flags: $EXTRA}."
  echo "  Efficiency is completed requests per generator CPU-second (user+sys); the ratio is apiperf's over wrk's,"
  echo "  rep by rep, and the median is shown. RSS is the median peak resident set in MB. Each connection count"
  echo "  is measured on apiperf's default I/O path and on the epoll event loops it falls back to where io_uring"
  echo "  is unavailable or refused (APIPERF_IO=evloop), each against its own wrk runs. The HTTPS rows load nginx"
  echo "  over TLS 1.3 (ECDSA P-256, keep-alive; scripts/vs-wrk-tls.sh) on apiperf's default path."
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
  for c in $TLS_CONN_LIST; do
    echo
    echo "### HTTPS, $c connections (scripts/vs-wrk-tls.sh: nginx with TLS 1.3, ECDSA P-256)"
    echo
    echo '```'
    cat "$W/tls.$c.txt"
    echo '```'
  done
  if [[ -f $W/rssanon.txt ]]; then
    echo
    echo "## Private memory at 50 connections (scripts/rssanon.sh)"
    echo
    echo "RssAnon (the process's own pages, not the binary's text mapped from the page cache) of \`run -t1 -c50\`"
    echo "with default flags and of wrk, alternating on CPU 1 against nginx on CPU 0, read after 1, 2, 3 and 4 s."
    echo
    echo '```'
    cat "$W/rssanon.txt"
    echo '```'
  fi
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
    echo "  HTTP/2 runs the open loop on loops of its own (h2loop_linux.go); HTTP/1.1 scripts with response() or delay() on goroutines."
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
  if [[ -n $kept ]]; then
    echo
    printf '%s\n' "$kept"
  fi
} >"$OUT"
echo "bench: wrote $OUT" >&2
