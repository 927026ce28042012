#!/usr/bin/env bash
# gate-rates.sh BIN [N]: false-alarm and detection rates of `apiperf ab` and of `apiperf gate`
# over separate runs, on this machine, against two built-in targets on loopback.
#   A/A: both sides hit /knob?work=$WORK (identical targets on two ports).
#   A/B: B hits /knob?work=$WORK_B (about 15% more CPU per request, HTTP handling counted).
# ab:   N A/A and N A/B comparisons of `ab -c4 -t1 -d$D --warmup 100ms --count $COUNT
#       [--max-pairs $MAX]` (defaults: D=1s, COUNT=10, MAX: ab's default, 3 x COUNT): pairs are
#       added COUNT at a time until the comparison is settled or MAX pairs ran.
# gate: N A/A and N A/B comparisons of two `run --count 5 -d1s -c4 -t1` (5 s measured per
#       side), one after the other, then `gate` (Mann-Whitney over the repetitions).
# CPU=1: ab also compares the targets' CPU time per request (--pid-a/--pid-b).
# PIN=1: the targets run on the last CPU, apiperf on the others (taskset), as README's
#        recipe recommends.
# GATE=0: skip the gate comparisons.
# Prints one line per comparison and the rates; every load is bounded in time.
set -euo pipefail
BIN=${1:-./apiperf}
N=${2:-20}
WORK=${WORK:-100000}
WORK_B=${WORK_B:-117000}
W=$(mktemp -d)
PIDS=()
ON_TARGET=() ON_GEN=()
if [[ ${PIN:-0} == 1 ]]; then
	last=$(($(nproc) - 1))
	ON_TARGET=(taskset -c "$last") ON_GEN=(taskset -c "0-$((last - 1))")
fi
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$W"; }
trap cleanup EXIT

serve() { # serve NAME: start a target on a free port; its pid in $W/NAME.pid
	"${ON_TARGET[@]}" "$BIN" serve --addr 127.0.0.1:0 >"$W/$1.out" 2>"$W/$1.err" &
	PIDS+=($!)
	echo $! >"$W/$1.pid"
	for _ in $(seq 1 100); do grep -q 'listening on' "$W/$1.out" 2>/dev/null && break; sleep 0.05; done
}
serve a
serve b
A=$(sed -n 's/^apiperf serve: listening on //p' "$W/a.out")
B=$(sed -n 's/^apiperf serve: listening on //p' "$W/b.out")
PIDFLAGS=()
[[ ${CPU:-0} == 1 ]] && PIDFLAGS=(--pid-a "$(cat "$W/a.pid")" --pid-b "$(cat "$W/b.pid")")
[[ -n $A && -n $B ]] || { echo "targets did not start"; exit 1; }
UA="$A/knob?work=$WORK"

ab_fail=(0 0)  # A/A failures, A/B failures
gate_fail=(0 0)
ab_inc=(0 0) # inconclusive (exit 3): neither a failure nor a pass
gate_inc=(0 0)
for i in $(seq 1 "$N"); do
	for k in 0 1; do
		UB="$B/knob?work=$WORK"
		[[ $k == 1 ]] && UB="$B/knob?work=$WORK_B"
		what=$([[ $k == 0 ]] && echo A/A || echo A/B)
		set +e
		MAXFLAG=()
		[[ -n ${MAX:-} ]] && MAXFLAG=(--max-pairs "$MAX")
		timeout 300 "${ON_GEN[@]}" "$BIN" ab -q --no-history -c4 -t1 -d"${D:-1s}" --warmup 100ms --count "${COUNT:-10}" "${MAXFLAG[@]}" "${PIDFLAGS[@]}" --json "$W/ab.json" "$UA" "$UB" >"$W/ab.txt" 2>&1
		code=$?
		set -e
		[[ $code == 2 ]] && { cat "$W/ab.txt"; exit 1; }
		[[ $code == 1 ]] && ab_fail[k]=$((ab_fail[k] + 1))
		[[ $code == 3 ]] && ab_inc[k]=$((ab_inc[k] + 1))
		echo "ab   $what #$i exit $code: $(sed -n 's/^c=4 QPS: with \([0-9]*\) pairs.*/\1 pairs/p' "$W/ab.txt"); QPS B/A $(grep -E '^c=4 +QPS ' "$W/ab.txt" | awk '{print $7, $8, $9, "p=" $10}');" \
			"detectable: $(sed -n 's/^c=4 QPS: with .*(±\([0-9.]*%\)), a \([0-9.]*%\) QPS change.*/noise ±\1, \2/p' "$W/ab.txt")" \
			"$(grep -E '^c=4 +CPU/req ' "$W/ab.txt" | awk '{print "CPU/req B/A", $7, $8, $9, "p=" $10}')" \
			"$(grep -E '^c=4 .*FAIL: ' "$W/ab.txt" | awk '{printf "failed: %s ", $2}')"

		[[ ${GATE:-1} == 0 ]] && continue
		set +e
		timeout 60 "${ON_GEN[@]}" "$BIN" run -q --no-history --count 5 -c4 -t1 -d1s -o "$W/base.json" "$UA" >/dev/null 2>&1
		timeout 60 "${ON_GEN[@]}" "$BIN" run -q --no-history --count 5 -c4 -t1 -d1s -o "$W/cur.json" "$UB" >/dev/null 2>&1
		timeout 60 "$BIN" gate --allow-mismatch --baseline "$W/base.json" --current "$W/cur.json" >"$W/gate.txt" 2>&1
		code=$?
		set -e
		[[ $code == 2 ]] && { cat "$W/gate.txt"; exit 1; }
		[[ $code == 1 ]] && gate_fail[k]=$((gate_fail[k] + 1))
		[[ $code == 3 ]] && gate_inc[k]=$((gate_inc[k] + 1))
		echo "gate $what #$i exit $code: QPS $(grep -E '^c=4 +QPS ' "$W/gate.txt" | awk '{print $8, $9}')" \
			"$(grep -E '^c=4 .*FAIL: ' "$W/gate.txt" | awk '{printf "failed: %s ", $2}')"
	done
done
echo "ab:   false alarms ${ab_fail[0]}/$N A/A, detections ${ab_fail[1]}/$N A/B (inconclusive ${ab_inc[0]} A/A, ${ab_inc[1]} A/B)"
echo "gate: false alarms ${gate_fail[0]}/$N A/A, detections ${gate_fail[1]}/$N A/B (inconclusive ${gate_inc[0]} A/A, ${gate_inc[1]} A/B)"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
