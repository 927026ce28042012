#!/usr/bin/env bash
# tuning-demo.sh BIN OUT [DOC]: the demo tuning story of docs/TUNING.md, regenerated. On
# loopback, it starts the demo API with every middleware and with none, sweeps each with
# profiles, metrics and the plain net/http yardstick, diffs the two, and writes every command
# and its output into DOC (default docs/TUNING.md) and its charts under docs/img. About 40 s.
# QUICK=1 shortens each level to 2 s, with a shorter warmup (for the test that checks DOC's
# blocks keep their shape; the charts are not copied then).
set -euo pipefail
BIN=$(realpath "${1:-./apiperf}")
OUT=${2:-tuning-out}
DOC=${3:-docs/TUNING.md}
IMG=$(dirname "$DOC")/img
D=3s WARM=1s
if [ "${QUICK:-}" = 1 ]; then D=2s WARM=200ms; fi
mkdir -p "$OUT" "$IMG"
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
general() { sed -E "s#http://127\\.0\\.0\\.1:[0-9]+#http://127.0.0.1:PORT#g; s#$OUT#tuning-out#g; s#-d $D --warmup $WARM#-d 3s --warmup 1s#"; }
# run ARGS...: the command (ports generalised) as an indented block, then its output, fenced.
run() {
  local shown="${*/#$BIN/apiperf}"
  { echo; echo "    $(general <<<"$shown")"; echo; echo '```'; "$@" 2>&1 | general; echo '```'; } >>"$DOC.tmp"
}
text() { printf '%s\n' "$@" >>"$DOC.tmp"; }

start all
start none --middleware none
: >"$DOC.tmp"
text "# Tuning story: what the middleware chain costs" "" \
  "A real session on the development machine: 2 shared cores, apiperf and the target on the same" \
  "machine, so absolute numbers are low and move by 10-20% between runs; read the ratios and the" \
  "profile shares. Everything below is written by one command," "" \
  "    make build && ./scripts/tuning-demo.sh ./apiperf tuning-out" "" \
  "which starts the demo API twice on loopback (every middleware; none), sweeps each with" \
  "profiles, metrics and the plain net/http yardstick, diffs the two, and writes this page. It" \
  "takes about 40 s. A test (\`TestTuningDocShape\`) runs it with 1 s levels and checks that every" \
  "block below still has the shape of what the commands print today." "" \
  "## 1. The demo API" "" \
  "    apiperf serve --demo                       # middleware request-id,logger,dump,recovery" \
  "    apiperf serve --demo --middleware none" "" \
  "\`GET /api/users/{id}\` answers a 1.1 KB JSON user. \`dump\` does what request-dump middlewares" \
  "do: it reads the body, dumps the request head, records the response and pretty-prints both" \
  "with \`json.Indent\`; \`logger\` writes one line per request. The log is discarded unless" \
  "\`--log FILE\` is given, so what is measured is the formatting, not a disk. \`--demo\` also mounts" \
  "net/http/pprof under \`/debug/pprof/\` and Prometheus metrics at \`/metrics\`." "" \
  "## 2. Sweep it with every middleware on"
sweep() { # sweep SIDE: the demo API of that side, swept with profiles, metrics and the yardstick
  local url_var="URL_$1"
  local url=${!url_var}
  run "$BIN" sweep --levels 5,20 -d "$D" --warmup "$WARM" --no-stop -t 1 --vs-native --no-history -q \
    --dir "$OUT" --name "demo-$1" --pprof "$url/debug/pprof" --metrics "$url/metrics" "$url/api/users/7"
}
sweep all
text "" "At each level apiperf profiled the target's CPU inside the measured window, took heap and" \
  "goroutine profiles near its end and scraped \`/metrics\` every second; \`--profile-levels\`" \
  "(default \`peak,last\`) chose which profiles are kept. The table gives the target's CPU and" \
  "memory beside QPS, the last line how the peak compares with plain net/http on the same plan," \
  "then the top of the CPU profile as \`go tool pprof -top -cum\` would show it, the target's" \
  "runtime metrics, and the verdict on what limited the run." "" \
  "The dump middleware and the \`json.Indent\` it calls are the largest shares of the target's" \
  "CPU that belong to the API rather than to net/http (\`logger\` and \`request-id\` include the" \
  "dump in their cumulative share because they wrap it); net/http's own work (reading requests," \
  "\`syscall.write\` of the responses) is the rest." "" \
  "![QPS and latency, every middleware](img/tuning-demo-all_qps_ttlb.png)" "" \
  "## 3. The same sweep with the middleware off"
sweep none
text "" "Without the chain, the handler's own JSON encoding (\`apiUser\`, \`writeJSON\`) and net/http's" \
  "write path are what is left, and the API gets closer to plain net/http." "" \
  "## 4. Diff the two runs"
run "$BIN" diff --dir "$OUT/diff" -q "$OUT/demo-all" "$OUT/demo-none"
text "" "The profile part of the diff names the cause: the middleware functions' shares of the" \
  "target's CPU go to nothing, and the peak rises with them." "" \
  "![QPS and latency, every middleware vs none](img/tuning-diff_qps_ttlb.png)" "" \
  "Caveats: the plain net/http yardstick moves between two sweeps too, so compare runs made back" \
  "to back, repeat levels with \`--count\`, and trust the profile shares more than single QPS" \
  "figures on a busy machine."
if [ "${QUICK:-}" != 1 ]; then
  cp "$OUT/demo-all/demo-all_qps_ttlb.png" "$IMG/tuning-demo-all_qps_ttlb.png"
  cp "$OUT/diff/demo-all_demo-none.qps.ttlb.diff.png" "$IMG/tuning-diff_qps_ttlb.png"
fi
# The execution trace's tuning steps are written by scripts/tuning-trace.sh between its markers
# in docs/TUNING.md; keep that block as it is.
REPO_DOC=$(dirname "$0")/../docs/TUNING.md
if grep -q '<!-- tuning-trace:begin -->' "$REPO_DOC" 2>/dev/null; then
  text ""
  sed -n '/<!-- tuning-trace:begin -->/,/<!-- tuning-trace:end -->/p' "$REPO_DOC" >>"$DOC.tmp"
fi
mv "$DOC.tmp" "$DOC"
echo "wrote $DOC"
