package sweep

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
)

// fakeStep is a measured step of `attempts` attempts over one second, of which `failed`
// got a bad status, all with latency lat.
func fakeStep(label string, rep int, attempts, failed int64, lat time.Duration) *measure.Step {
	h := measure.NewHistogram()
	h.RecordN(lat, attempts)
	return &measure.Step{Label: label, Rep: rep, Elapsed: measure.Duration(time.Second),
		Attempts: attempts, Requests: attempts, Successes: attempts - failed,
		Errors: measure.Errors{Status: failed}, Latency: h}
}

func near(a, b time.Duration) bool { return math.Abs(float64(a-b)) <= 0.002*float64(b) }

func TestPoints(t *testing.T) {
	plan := Plan{Levels: []int{10, 50, 100, 200}, Count: 3}
	steps := []*measure.Step{
		fakeStep("c=10", 0, 900, 0, 2*time.Millisecond),
		fakeStep("c=10", 1, 1000, 10, 3*time.Millisecond),
		fakeStep("c=10", 2, 5000, 0, 1*time.Millisecond), // an outlier the median ignores
		fakeStep("c=100", 0, 400, 100, 50*time.Millisecond),
		fakeStep("c=100", 1, 600, 100, 70*time.Millisecond),
		fakeStep("other", 0, 1, 0, time.Millisecond), // not a level of the plan
	}
	pts := Points(plan, steps)
	if len(pts) != 2 || pts[0].Label != "c=10" || pts[1].Label != "c=100" {
		t.Fatalf("Points = %+v; want c=10 and c=100 only (c=50 and c=200 were not measured)", pts)
	}
	p := pts[0]
	// Three repetitions: the median of each metric, not the mean.
	if p.QPS != 1000 || p.Level != 10 || !reflect.DeepEqual(p.Steps, []int{0, 1, 2}) || p.Errors != 10 {
		t.Errorf("c=10 point = %+v; want QPS 1000 (median), level 10, steps [0 1 2], 10 errors", p)
	}
	if p.Success != 100 || !near(p.P99.Duration(), 2*time.Millisecond) {
		t.Errorf("c=10 success %v p99 %v; want the medians 100%% and 2ms", p.Success, p.P99)
	}
	q := pts[1]
	// Two repetitions: the mean of the middle two.
	if q.QPS != 500 || !near(q.P50.Duration(), 60*time.Millisecond) || math.Abs(q.Success-79.1667) > 0.001 || math.Abs(q.ErrorRate-20.8333) > 0.001 {
		t.Errorf("c=100 point = %+v; want QPS 500, p50 60ms, success 79.17%%, errors 20.83%%", q)
	}
	if q.Achieved != 0 {
		t.Errorf("closed-loop point has achieved rate %v; want 0 (open loop only)", q.Achieved)
	}
	open := Points(Plan{Rates: []float64{800}}, []*measure.Step{fakeStep("rate=800/s", 0, 790, 0, time.Millisecond)})
	if len(open) != 1 || open[0].Achieved != 790 || open[0].Level != 800 {
		t.Errorf("open-loop Points = %+v; want level 800 with an achieved rate of 790/s", open)
	}
}

// pt is a point with the given QPS, success rate and p99.
func pt(label string, qps, success float64, p99 time.Duration) Point {
	return Point{Label: label, QPS: qps, Success: success, ErrorRate: 100 - success, P99: measure.Duration(p99)}
}

func TestAnalyze(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name       string
		points     []Point
		peak, knee int
		warn       string // substring of the warnings; "" for none
	}{
		{"empty sweep: neither peak nor knee", nil, -1, -1, ""},
		{"rising then falling: peak in the middle, knee before latency blows up",
			[]Point{pt("c=10", 1000, 100, 5*ms), pt("c=50", 3000, 100, 80*ms), pt("c=100", 3500, 99.95, 400*ms), pt("c=200", 3200, 99, 900*ms)}, 2, 2, ""},
		{"knee below peak: the peak level misses p99",
			[]Point{pt("c=10", 1000, 100, 5*ms), pt("c=50", 3000, 100, 600*ms), pt("c=100", 2000, 100, 800*ms)}, 1, 0, ""},
		{"no level meets the objective",
			[]Point{pt("c=10", 1000, 90, 5*ms), pt("c=50", 900, 80, 5*ms)}, 0, -1, ""},
		{"ties keep the smaller level as the peak",
			[]Point{pt("c=10", 1000, 100, ms), pt("c=50", 1000, 100, ms), pt("c=100", 500, 100, ms)}, 0, 2, ""},
		{"a level with nothing completed is neither peak nor knee",
			[]Point{pt("c=10", 0, 0, 0)}, -1, -1, ""},
		{"a miss below a passing level makes the knee uncertain",
			[]Point{pt("c=10", 1000, 100, ms), pt("c=50", 2000, 99, ms), pt("c=100", 2500, 100, ms), pt("c=200", 2400, 100, ms)}, 2, 3, "c=50 misses the objective (success 99% < 99.9%) but the larger c=200 meets it"},
		{"peak at the last level: the target may go higher",
			[]Point{pt("c=10", 1000, 100, ms), pt("c=50", 2000, 100, ms)}, 1, 1, "the peak is at the largest level run (c=50)"},
	}
	obj, _ := ParseObjective(DefaultObjective)
	for _, tt := range tests {
		a := Analyze(tt.points, obj)
		w := strings.Join(a.Warnings, "\n")
		if a.Peak != tt.peak || a.Knee != tt.knee || (tt.warn == "") != (w == "") || !strings.Contains(w, tt.warn) {
			t.Errorf("%s: Analyze = peak %d knee %d warnings %q; want peak %d knee %d warning %q", tt.name, a.Peak, a.Knee, w, tt.peak, tt.knee, tt.warn)
		}
	}
}

func TestSummaries(t *testing.T) {
	obj, _ := ParseObjective(DefaultObjective)
	pts := []Point{pt("c=10", 12345.4, 100, 3200*time.Microsecond), pt("c=50", 42.25, 99, 812*time.Millisecond)}
	tests := []struct {
		got, want string
	}{
		// The peak names the level, QPS, p99 and success.
		{PeakSummary(pts, 0), "peak: c=10, 12345 req/s (p99 3.2ms, success 100%)"},
		// Below 100 req/s QPS keeps a decimal.
		{PeakSummary(pts, 1), "peak: c=50, 42.3 req/s (p99 812ms, success 99%)"},
		{PeakSummary(pts, -1), "peak: none (no level completed a request)"},
		// The knee names the objective it met.
		{KneeSummary(pts, 0, obj), "knee: c=10, the largest level meeting p99<=500ms,success>=99.9% (12345 req/s, p99 3.2ms)"},
		// No knee: say why the first level failed.
		{KneeSummary(pts[1:], -1, obj), "knee: none: no level met p99<=500ms,success>=99.9% (c=50: p99 812ms > 500ms)"},
		{KneeSummary(nil, -1, obj), "knee: none (no level was measured)"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q\nwant %q", tt.got, tt.want)
		}
	}
}

func TestRulesAfter(t *testing.T) {
	ms := time.Millisecond
	up := []Point{pt("c=10", 1000, 100, ms), pt("c=50", 2000, 100, ms)}
	tests := []struct {
		name   string
		rules  Rules
		points []Point
		want   string // the rule that fires; "" for none
		reason string // substring of the reason
	}{
		{"nothing measured yet", DefaultRules, nil, "", ""},
		{"rising QPS, all successful: go on", DefaultRules, up, "", ""},
		{"success below the floor stops at once",
			DefaultRules, append(up[:2:2], pt("c=100", 2500, 31.25, ms)), RuleSuccess, "success rate 31.25% at c=100 is below the 50% floor"},
		{"exactly on the floor goes on", DefaultRules, []Point{pt("c=10", 10, 50, ms)}, "", ""},
		{"one level below the best is not enough",
			DefaultRules, append(up[:2:2], pt("c=100", 1900, 100, ms)), "", ""},
		{"two levels in a row below the best stop",
			DefaultRules, append(up[:2:2], pt("c=100", 1900, 100, ms), pt("c=200", 1950, 100, ms)), RuleDecline, "below the best (2000 req/s at c=50) for 2 levels in a row"},
		{"a new best in between resets the count",
			DefaultRules, append(up[:2:2], pt("c=100", 1900, 100, ms), pt("c=200", 2100, 100, ms), pt("c=300", 2000, 100, ms)), "", ""},
		{"equal to the best is not a decline",
			DefaultRules, append(up[:2:2], pt("c=100", 2000, 100, ms), pt("c=200", 2000, 100, ms)), "", ""},
		{"the zero rules never stop",
			Rules{}, []Point{pt("c=10", 1000, 1, ms), pt("c=50", 10, 1, ms), pt("c=100", 5, 1, ms)}, "", ""},
		{"a one-level decline rule",
			Rules{MaxDeclines: 1}, append(up[:2:2], pt("c=100", 1999, 100, ms)), RuleDecline, "for 1 levels in a row"},
	}
	for _, tt := range tests {
		s := tt.rules.After(tt.points)
		switch {
		case tt.want == "" && s != nil:
			t.Errorf("%s: After = %+v; want no stop", tt.name, s)
		case tt.want != "" && (s == nil || s.Rule != tt.want || !strings.Contains(s.Reason, tt.reason) || s.After != tt.points[len(tt.points)-1].Label):
			t.Errorf("%s: After = %+v; want rule %q after the last level, reason containing %q", tt.name, s, tt.want, tt.reason)
		}
	}
}

func TestRulesValidateAndString(t *testing.T) {
	if err := DefaultRules.Validate(); err != nil {
		t.Errorf("DefaultRules.Validate() = %v", err)
	}
	if err := (Rules{MinSuccess: 101, MaxDeclines: -1}).Validate(); err == nil || !strings.Contains(err.Error(), "success floor") || !strings.Contains(err.Error(), "declining") {
		t.Errorf("bad rules Validate() = %v; want both problems", err)
	}
	if got := DefaultRules.String(); got != "stop below 50% success, after 2 declining levels, before the open-file limit" {
		t.Errorf("DefaultRules.String() = %q", got)
	}
	if got := (Rules{}).String(); got != "no early stop" {
		t.Errorf("Rules{}.String() = %q", got)
	}
}

func TestCompare(t *testing.T) {
	ms := time.Millisecond
	api := []Point{pt("c=10", 500, 100, ms), pt("c=50", 1370, 100, ms)}
	tests := []struct {
		name       string
		native     []Point
		nativePeak int
		ok         bool
		ratio      float64
		headline   string
	}{
		{"same peak level", []Point{pt("c=10", 5000, 100, ms), pt("c=50", 10000, 100, ms)}, 1, true, 0.137,
			"peak QPS is 13.7% of plain net/http at c=50 (1370 vs 10000 req/s)"},
		{"different peak levels name both", []Point{pt("c=10", 10000, 100, ms), pt("c=50", 9000, 100, ms)}, 0, true, 0.137,
			"peak QPS is 13.7% of plain net/http (1370 req/s at c=50; plain net/http 10000 req/s at c=10)"},
		{"native without a peak: no comparison", []Point{pt("c=10", 0, 0, 0)}, -1, false, 0, ""},
	}
	for _, tt := range tests {
		c, ok := Compare(api, 1, tt.native, tt.nativePeak)
		if ok != tt.ok || math.Abs(c.Ratio-tt.ratio) > 1e-9 || (ok && c.String() != tt.headline) {
			t.Errorf("%s: Compare = %+v %v (%q); want ok %v ratio %v %q", tt.name, c, ok, c.String(), tt.ok, tt.ratio, tt.headline)
		}
	}
}

func TestStops(t *testing.T) {
	pts := []Point{pt("c=10", 1, 100, time.Millisecond)}
	s := FileLimitStop(pts, "c=50000", errString("cannot open 50000 connections: the open-file limit is 1024"))
	if s.Rule != RuleFileLimit || s.After != "c=10" || !strings.Contains(s.String(), "stopped: before c=50000: cannot open 50000 connections: the open-file limit is 1024") {
		t.Errorf("FileLimitStop = %+v (%q)", s, s)
	}
	if s := Interrupted(nil, "c=10"); s.Rule != RuleInterrupted || s.After != "" || s.Reason != "interrupted during c=10" {
		t.Errorf("Interrupted before any level = %+v", s)
	}
}

type errString string

func (e errString) Error() string { return string(e) }
