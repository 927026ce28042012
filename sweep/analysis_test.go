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

func TestLevels(t *testing.T) {
	steps := []*measure.Step{
		fakeStep("c=100", 0, 400, 100, 50*time.Millisecond), // out of order: levels sort by value
		fakeStep("c=10", 0, 900, 0, 2*time.Millisecond),
		fakeStep("c=10", 1, 1000, 10, 3*time.Millisecond),
		fakeStep("c=10", 2, 5000, 0, 1*time.Millisecond), // an outlier the median QPS ignores
		fakeStep("c=100", 1, 600, 100, 70*time.Millisecond),
	}
	lv := Levels(steps)
	if len(lv) != 2 || lv[0].Label != "c=10" || lv[1].Label != "c=100" {
		t.Fatalf("Levels = %+v; want c=10 then c=100", lv)
	}
	p := lv[0]
	// Three repetitions: the median QPS; counts summed; latency from the pooled histogram.
	if p.QPS != 1000 || p.Value != 10 || p.Reps != 3 || !reflect.DeepEqual(p.Steps, []int{1, 2, 3}) || p.Errors.Total() != 10 || p.Attempts != 6900 {
		t.Errorf("c=10 level = %+v; want QPS 1000 (median), value 10, 3 reps, steps [1 2 3], 10 errors, 6900 attempts", p)
	}
	if math.Abs(p.Success-100*6890.0/6900) > 1e-9 || !near(p.P50.Duration(), time.Millisecond) || !near(p.P99.Duration(), 3*time.Millisecond) {
		t.Errorf("c=10 success %v p50 %v p99 %v; want pooled 99.855%%, 1ms and 3ms", p.Success, p.P50, p.P99)
	}
	q := lv[1]
	// Two repetitions: the mean of the middle two for QPS; pooled counts for the rates.
	if q.QPS != 500 || math.Abs(q.Success-80) > 1e-9 || math.Abs(q.ErrorRate-20) > 1e-9 || !near(q.P50.Duration(), 70*time.Millisecond) {
		t.Errorf("c=100 level = %+v; want QPS 500, success 80%%, errors 20%%, pooled p50 70ms", q)
	}
	if q.Achieved != 0 || q.Open {
		t.Errorf("closed-loop level has achieved rate %v, open %v; want 0 and false", q.Achieved, q.Open)
	}
	open := Levels([]*measure.Step{fakeStep("rate=800/s", 0, 790, 0, time.Millisecond)})
	if len(open) != 1 || open[0].Achieved != 790 || open[0].Value != 800 || !open[0].Open {
		t.Errorf("open-loop Levels = %+v; want rate 800 with an achieved rate of 790/s", open)
	}
}

func TestReduceSlowRepetition(t *testing.T) {
	// [normal, normal, slow]: the median QPS is a normal one's; the pooled p99 holds the
	// slow repetition's responses (a third of them), so the level does not hide them.
	steps := []*measure.Step{
		fakeStep("c=10", 0, 1000, 0, 10*time.Millisecond),
		fakeStep("c=10", 1, 1000, 0, 12*time.Millisecond),
		fakeStep("c=10", 2, 500, 0, 900*time.Millisecond),
	}
	l := Levels(steps)[0]
	if l.QPS != 1000 || !near(l.P99.Duration(), 900*time.Millisecond) || !near(l.P50.Duration(), 12*time.Millisecond) {
		t.Errorf("level = QPS %v p50 %v p99 %v; want 1000, 12ms, 900ms", l.QPS, l.P50, l.P99)
	}
}

func TestLabels(t *testing.T) {
	tests := []struct {
		open  bool
		value float64
		label string
	}{
		{false, 200, "c=200"},
		{true, 1000, "rate=1000/s"},
		{true, 2500.5, "rate=2500.5/s"}, // no exponent, no rounding
		{true, 93.8, "rate=93.8/s"},
	}
	for _, tt := range tests {
		if got := Label(tt.open, tt.value); got != tt.label {
			t.Errorf("Label(%v, %v) = %q; want %q", tt.open, tt.value, got, tt.label)
		}
		v, open, ok := ParseLabel(tt.label)
		if !ok || v != tt.value || open != tt.open {
			t.Errorf("ParseLabel(%q) = %v %v %v; want %v %v true", tt.label, v, open, ok, tt.value, tt.open)
		}
	}
	for _, bad := range []string{"", "c=", "c=-1", "rate=5", "x=1", "c=abc"} {
		if _, _, ok := ParseLabel(bad); ok {
			t.Errorf("ParseLabel(%q) ok; want not a label", bad)
		}
	}
}

// pt is a level with the given QPS, success rate and p99.
func pt(label string, qps, success float64, p99 time.Duration) Level {
	return Level{Label: label, QPS: qps, Success: success, ErrorRate: 100 - success, P99: measure.Duration(p99), Responses: 1}
}

func TestAnalyze(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name       string
		points     []Level
		peak, knee int
		limit      int    // the largest level meeting the objective, wherever it is
		warn       string // substring of the warnings; "" for none
	}{
		{"empty sweep: neither peak nor knee", nil, -1, -1, -1, ""},
		{"rising then falling: peak in the middle, knee before latency blows up",
			[]Level{pt("c=10", 1000, 100, 5*ms), pt("c=50", 3000, 100, 80*ms), pt("c=100", 3500, 99.95, 400*ms), pt("c=200", 3200, 99, 900*ms)}, 2, 2, 2, ""},
		{"knee below peak: the peak level misses p99",
			[]Level{pt("c=10", 1000, 100, 5*ms), pt("c=50", 3000, 100, 600*ms), pt("c=100", 2000, 100, 800*ms)}, 1, 0, 0, ""},
		{"no level meets the objective",
			[]Level{pt("c=10", 1000, 90, 5*ms), pt("c=50", 900, 80, 5*ms)}, 0, -1, -1, ""},
		{"ties keep the smaller level as the peak; the knee is never after it, the limit may be",
			[]Level{pt("c=10", 1000, 100, ms), pt("c=50", 1000, 100, ms), pt("c=100", 500, 100, ms)}, 0, 0, 2, ""},
		{"a level with nothing completed is neither peak nor knee",
			[]Level{pt("c=10", 0, 0, 0)}, -1, -1, -1, ""},
		{"a miss below a passing level makes the knee uncertain; past the peak only the limit goes on",
			[]Level{pt("c=10", 1000, 100, ms), pt("c=50", 2000, 99, ms), pt("c=100", 2500, 100, ms), pt("c=200", 2400, 100, ms)}, 2, 2, 3, "c=50 misses the objective (success 99% < 99.9%) but the larger c=100 meets it"},
		{"peak at the last level: the target may go higher",
			[]Level{pt("c=10", 1000, 100, ms), pt("c=50", 2000, 100, ms)}, 1, 1, 1, "the peak is at the largest level run (c=50)"},
	}
	obj, _ := ParseObjective(DefaultObjective)
	for _, tt := range tests {
		a := Analyze(tt.points, obj)
		w := strings.Join(a.Warnings, "\n")
		if a.Peak != tt.peak || a.Knee != tt.knee || a.Limit != tt.limit || (tt.warn == "") != (w == "") || !strings.Contains(w, tt.warn) {
			t.Errorf("%s: Analyze = peak %d knee %d limit %d warnings %q; want %d %d %d warning %q", tt.name, a.Peak, a.Knee, a.Limit, w, tt.peak, tt.knee, tt.limit, tt.warn)
		}
		if a.Knee > a.Peak {
			t.Errorf("%s: knee %d after the peak %d", tt.name, a.Knee, a.Peak)
		}
	}
}

func TestSummaries(t *testing.T) {
	obj, _ := ParseObjective(DefaultObjective)
	pts := []Level{pt("c=10", 12345.4, 100, 3200*time.Microsecond), pt("c=50", 42.25, 99, 812*time.Millisecond)}
	tests := []struct {
		got, want string
	}{
		// The peak names the level, QPS, p99 and success.
		{PeakSummary(pts, 0), "peak: c=10, 12345 req/s (p99 3.2ms, success 100%)"},
		// Below 100 req/s QPS keeps a decimal.
		{PeakSummary(pts, 1), "peak: c=50, 42.3 req/s (p99 812ms, success 99%)"},
		{PeakSummary(pts, -1), "peak: none (no level completed a request)"},
		// The knee names the objective it met.
		{KneeSummary(pts, Analysis{Peak: 0, Knee: 0, Limit: 0}, obj), "knee: c=10, the largest level up to the peak meeting p99<=500ms,success>=99.9% (12345 req/s, p99 3.2ms)"},
		// No knee: say why the first level failed.
		{KneeSummary(pts[1:], Analysis{Peak: 0, Knee: -1, Limit: -1}, obj), "knee: none: no level met p99<=500ms,success>=99.9% (c=50: p99 812ms > 500ms)"},
		{KneeSummary(nil, Analysis{Peak: -1, Knee: -1, Limit: -1}, obj), "knee: none (no level was measured)"},
		// A level beyond the peak meets the objective: named apart from the knee.
		{LimitSummary([]Level{pt("c=10", 100, 100, time.Millisecond), pt("c=50", 90, 100, time.Millisecond)}, Analysis{Peak: 0, Knee: 0, Limit: 1}, obj),
			"largest level meeting p99<=500ms,success>=99.9%: c=50, beyond the peak (90 req/s, p99 1ms): more load, less throughput"},
		{LimitSummary(pts, Analysis{Peak: 0, Knee: 0, Limit: 0}, obj), ""},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q\nwant %q", tt.got, tt.want)
		}
	}
}

func TestRulesAfter(t *testing.T) {
	ms := time.Millisecond
	up := []Level{pt("c=10", 1000, 100, ms), pt("c=50", 2000, 100, ms)}
	tests := []struct {
		name   string
		rules  Rules
		points []Level
		want   string // the rule that fires; "" for none
		reason string // substring of the reason
	}{
		{"nothing measured yet", DefaultRules, nil, "", ""},
		{"rising QPS, all successful: go on", DefaultRules, up, "", ""},
		{"success below the floor stops at once",
			DefaultRules, append(up[:2:2], pt("c=100", 2500, 31.25, ms)), RuleSuccess, "success rate 31.25% at c=100 is below the 50% floor"},
		{"exactly on the floor goes on", DefaultRules, []Level{pt("c=10", 10, 50, ms)}, "", ""},
		{"one level below the best is not enough",
			DefaultRules, append(up[:2:2], pt("c=100", 1900, 100, ms)), "", ""},
		{"two levels in a row below the best stop",
			DefaultRules, append(up[:2:2], pt("c=100", 1900, 100, ms), pt("c=200", 1950, 100, ms)), RuleDecline, "below the best (2000 req/s at c=50) for 2 levels in a row"},
		{"a new best in between resets the count",
			DefaultRules, append(up[:2:2], pt("c=100", 1900, 100, ms), pt("c=200", 2100, 100, ms), pt("c=300", 2000, 100, ms)), "", ""},
		{"equal to the best is not a decline",
			DefaultRules, append(up[:2:2], pt("c=100", 2000, 100, ms), pt("c=200", 2000, 100, ms)), "", ""},
		{"the zero rules never stop",
			Rules{}, []Level{pt("c=10", 1000, 1, ms), pt("c=50", 10, 1, ms), pt("c=100", 5, 1, ms)}, "", ""},
		{"a one-level decline rule",
			Rules{MaxDeclines: 1}, append(up[:2:2], pt("c=100", 1999, 100, ms)), RuleDecline, "for 1 level in a row"}, // one decline: "1 level"
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
	api := []Level{pt("c=10", 500, 100, ms), pt("c=50", 1370, 100, ms)}
	tests := []struct {
		name       string
		native     []Level
		nativePeak int
		ok         bool
		ratio      float64
		headline   string
	}{
		{"same peak level", []Level{pt("c=10", 5000, 100, ms), pt("c=50", 10000, 100, ms)}, 1, true, 0.137,
			"peak QPS is 13.7% of plain net/http at c=50 (1370 vs 10000 req/s)"},
		{"different peak levels name both", []Level{pt("c=10", 10000, 100, ms), pt("c=50", 9000, 100, ms)}, 0, true, 0.137,
			"peak QPS is 13.7% of plain net/http (1370 req/s at c=50; plain net/http 10000 req/s at c=10)"},
		{"native without a peak: no comparison", []Level{pt("c=10", 0, 0, 0)}, -1, false, 0, ""},
	}
	for _, tt := range tests {
		c, ok := Compare(api, 1, tt.native, tt.nativePeak)
		if ok != tt.ok || math.Abs(c.Ratio-tt.ratio) > 1e-9 || (ok && c.String() != tt.headline) {
			t.Errorf("%s: Compare = %+v %v (%q); want ok %v ratio %v %q", tt.name, c, ok, c.String(), tt.ok, tt.ratio, tt.headline)
		}
	}
}

func TestStops(t *testing.T) {
	pts := []Level{pt("c=10", 1, 100, time.Millisecond)}
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

func TestPeak(t *testing.T) {
	tests := []struct {
		qps         []float64
		interrupted int // index of an interrupted level, -1 for none
		want        int
	}{
		{nil, -1, -1},                     // no levels, no peak
		{[]float64{0, 0}, -1, -1},         // nothing completed: no peak
		{[]float64{10, 30, 20}, -1, 1},    // the highest QPS
		{[]float64{30, 30}, -1, 0},        // the first on ties
		{[]float64{10, 30, 20}, 1, 2},     // an interrupted level is never the peak
		{[]float64{math.NaN(), 5}, -1, 1}, // a NaN QPS is never the peak
	}
	for _, tt := range tests {
		levels := make([]Level, len(tt.qps))
		for i, q := range tt.qps {
			levels[i] = Level{QPS: q, Interrupted: i == tt.interrupted}
		}
		if got := Peak(levels); got != tt.want {
			t.Errorf("Peak(%v, interrupted %d) = %d; want %d", tt.qps, tt.interrupted, got, tt.want)
		}
	}
}

// An open-loop level's achieved rate is what the generator sent in the window (the run
// summary's "achieved"), answered in it or not: against a slow target it differs from the
// QPS of responses, instead of repeating it.
func TestLevelAchievedIsSendRate(t *testing.T) {
	s := fakeStep("rate=800/s", 0, 600, 0, time.Millisecond) // 600 responses in a second
	s.Open = &measure.OpenLoop{TargetRate: 800, Scheduled: 800, Sent: 795}
	lv := Levels([]*measure.Step{s})
	if len(lv) != 1 || lv[0].QPS != 600 || lv[0].Achieved != 795 {
		t.Errorf("Levels = %+v; want QPS 600 (responses) and achieved 795/s (sent)", lv)
	}
}
