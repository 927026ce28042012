package verdict

import (
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
)

// timing builds a level's Server-Timing: n responses, per metric the same dur except the
// slowest 2% at tail (so the metric's p99 is tail).
func timing(n int64, metrics map[string][2]time.Duration) *measure.ServerTiming {
	st := &measure.ServerTiming{Responses: n, Unaccounted: measure.NewHistogram()}
	st.Unaccounted.RecordN(time.Millisecond, n)
	for name, d := range metrics {
		h := measure.NewHistogram()
		h.RecordN(d[0], n-n/50)
		h.RecordN(d[1], n/50)
		st = st.Merge(&measure.ServerTiming{Metrics: []measure.MetricTiming{{Name: name, Responses: n, Histogram: h}}})
	}
	return st
}

// withKept gives l kept requests: the one at p99 and the 5 slowest took lat, db of it.
func withKept(l Level, lat, db time.Duration) Level {
	e := measure.Exemplar{Latency: measure.Duration(lat), Status: 200,
		Timing: []measure.MetricDur{{Name: "db", Dur: measure.Duration(db)}, {Name: "app", Dur: measure.Duration(500 * time.Microsecond)}}}
	x := &measure.Exemplars{Keep: 5, Bands: []measure.Band{{Percentile: 50}, {Percentile: 99, Exemplar: e}}}
	for range 5 {
		x.Slowest = append(x.Slowest, e)
	}
	l.Exemplars = x
	return l
}

func TestServerTimingClaim(t *testing.T) {
	lvl := func(label string, p99 time.Duration, attempts int64, st *measure.ServerTiming) Level {
		return Level{Label: label, Load: 10, QPS: 1000, Mean: time.Millisecond, P99: p99, Attempts: attempts, ServerTiming: st}
	}
	for _, tc := range []struct {
		name    string
		in      Input
		want    string // summary; "" for no claim
		conf    Confidence
		atLevel string
	}{
		{"no Server-Timing: no claim", Input{Levels: []Level{lvl("c=10", 30*time.Millisecond, 5000, nil)}, Peak: 0}, "", "", ""},
		{"db holds the tail",
			Input{Levels: []Level{lvl("c=10", 32*time.Millisecond, 5000, timing(5000, map[string][2]time.Duration{"db": {2 * time.Millisecond, 30 * time.Millisecond}, "app": {time.Millisecond, time.Millisecond}}))}, Peak: 0},
			"p99 is 32ms, of which db 30ms (its p99 over all responses, by the target's Server-Timing): the tail is in db", Medium, "c=10"},
		{"the tail is outside the server's metrics",
			Input{Levels: []Level{lvl("c=10", 40*time.Millisecond, 5000, timing(5000, map[string][2]time.Duration{"db": {2 * time.Millisecond, 3 * time.Millisecond}}))}, Peak: 0},
			"p99 is 40ms, of which db 3ms (its p99 over all responses, by the target's Server-Timing): most of the tail is outside what the server times (network, queueing, untimed work)", Medium, "c=10"},
		{"few responses sent it: low confidence",
			Input{Levels: []Level{lvl("c=10", 32*time.Millisecond, 5000, timing(500, map[string][2]time.Duration{"db": {2 * time.Millisecond, 30 * time.Millisecond}}))}, Peak: 0},
			"p99 is 32ms, of which db 30ms (its p99 over all responses, by the target's Server-Timing): the tail is in db", Low, "c=10"},
		{"the request at p99 is decomposed: 1% slow in db, so db's own p99 is 2ms but the p99 request spent 60ms there",
			Input{Levels: []Level{withKept(lvl("c=16", 61*time.Millisecond, 5000, timing(5000, map[string][2]time.Duration{"db": {2 * time.Millisecond, 2 * time.Millisecond}})), 61*time.Millisecond, 60*time.Millisecond)}, Peak: 0},
			"p99 is 61ms, of which db 60ms (the request at p99 took 61ms, by the target's Server-Timing): the tail is in db", Medium, "c=16"},
		{"the request at p99 spent little in the server",
			Input{Levels: []Level{withKept(lvl("c=16", 61*time.Millisecond, 5000, timing(5000, map[string][2]time.Duration{"db": {2 * time.Millisecond, 2 * time.Millisecond}})), 61*time.Millisecond, 2*time.Millisecond)}, Peak: 0},
			"p99 is 61ms, of which db 2ms (the request at p99 took 61ms, by the target's Server-Timing): most of the tail is outside what the server times (network, queueing, untimed work)", Medium, "c=16"},
		{"the peak level is judged, not the last",
			Input{Levels: []Level{
				lvl("c=10", 32*time.Millisecond, 5000, timing(5000, map[string][2]time.Duration{"db": {2 * time.Millisecond, 30 * time.Millisecond}})),
				lvl("c=50", 90*time.Millisecond, 5000, timing(5000, map[string][2]time.Duration{"db": {2 * time.Millisecond, 3 * time.Millisecond}}))}, Peak: 0},
			"p99 is 32ms, of which db 30ms (its p99 over all responses, by the target's Server-Timing): the tail is in db", Medium, "c=10"},
	} {
		v := Judge(tc.in)
		c := v.Claim(ServerTimed)
		if tc.want == "" {
			if c != nil {
				t.Errorf("%s: Judge made a server-timing claim %q, want none", tc.name, c.Summary)
			}
			continue
		}
		if c == nil {
			t.Errorf("%s: Judge made no server-timing claim, want %q", tc.name, tc.want)
			continue
		}
		if c.Summary != tc.want || c.Confidence != tc.conf || c.Level != tc.atLevel {
			t.Errorf("%s: claim = %q (%s, at %s), want %q (%s, at %s)", tc.name, c.Summary, c.Confidence, c.Level, tc.want, tc.conf, tc.atLevel)
		}
		if len(c.Evidence) == 0 || !strings.Contains(c.Evidence[0], "Server-Timing p99 over all responses: ") {
			t.Errorf("%s: evidence %q lacks the metrics' p99", tc.name, c.Evidence)
		}
		if in := tc.in.Levels[0]; in.Exemplars != nil {
			want := "db took most of the time in 5 of the 5 slowest requests"
			if !strings.HasSuffix(tc.want, "the tail is in db") {
				want = "db took most of the time in 0 of the 5 slowest requests"
			}
			if !strings.Contains(strings.Join(c.Evidence, "\n"), want) {
				t.Errorf("%s: evidence %q lacks %q", tc.name, c.Evidence, want)
			}
		}
	}
}

// The tail outside the server's metrics on a machine whose CPUs others held: the untimed
// part may be waits for a CPU, and the fix is to measure where the target has the machine.
func TestServerTimingOnASharedMachine(t *testing.T) {
	l := Level{Label: "c=10", Load: 10, QPS: 1000, Mean: time.Millisecond, P99: 40 * time.Millisecond, Attempts: 5000,
		ServerTiming: timing(5000, map[string][2]time.Duration{"db": {2 * time.Millisecond, 3 * time.Millisecond}}),
		Target:       &Usage{CPUCores: 0.3}, Generator: &Usage{CPUCores: 0.2}, Machine: &Machine{CPUs: 2, Busy: 2}}
	v := Judge(Input{Levels: []Level{l}, Peak: 0, MachineCores: 2, SameMachine: true})
	c := v.Claim(ServerTimed)
	if c == nil || !strings.Contains(c.Summary, "other processes took 1.50 cores at c=10, so much of the untimed part may be waits for a CPU") ||
		!strings.HasPrefix(c.Fix, "measure again on a machine the target has to itself") {
		t.Errorf("server-timing on a shared machine: %+v, want the CPU waits said and no call for more instrumentation first", c)
	}
}
