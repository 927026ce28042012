package sweep

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
)

func TestPlanValidate(t *testing.T) {
	tests := []struct {
		plan Plan
		want []string // substrings of the error; none for a valid plan
	}{
		// The classic levels are a valid plan.
		{Plan{Levels: DefaultLevels}, nil},
		// So is a rate plan repeated three times with a warmup.
		{Plan{Rates: []float64{0.5, 100, 2500}, Warmup: measure.Duration(time.Second), Count: 3}, nil},
		// Nothing to run.
		{Plan{}, []string{"no levels to run"}},
		// Both kinds at once.
		{Plan{Levels: []int{1}, Rates: []float64{1}}, []string{"not both"}},
		// Every problem is reported at once: a zero level, a descent, a negative warmup and count.
		{Plan{Levels: []int{0, 50, 10}, Warmup: -1, Count: -2}, []string{"level 0 must be at least 1", "levels must ascend: 10 after 50", "warmup must not be negative", "count must not be negative"}},
		// A repeated level is not ascending either.
		{Plan{Levels: []int{10, 10}}, []string{"levels must ascend: 10 after 10"}},
		// Rates must be positive and ascend.
		{Plan{Rates: []float64{-1, 5, 5}}, []string{"rate -1 must be positive", "rates must ascend: 5 after 5"}},
	}
	for _, tt := range tests {
		err := tt.plan.Validate()
		if len(tt.want) == 0 {
			if err != nil {
				t.Errorf("%+v.Validate() = %v; want nil", tt.plan, err)
			}
			continue
		}
		for _, w := range tt.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%+v.Validate() = %v; want it to say %q", tt.plan, err, w)
			}
		}
	}
}

func TestPlanString(t *testing.T) {
	tests := []struct {
		plan Plan
		want string
	}{
		// Concurrency levels, no extras.
		{Plan{Levels: []int{200, 500, 1000}}, "c=200,500,1000"},
		// Warmup and repetitions are said when set.
		{Plan{Levels: []int{10}, Warmup: measure.Duration(2 * time.Second), Count: 3}, "c=10 (warmup 2s, 3 runs each)"},
		// Rates print with their unit; a count of 1 is not mentioned.
		{Plan{Rates: []float64{500, 2500}, Count: 1}, "rate=500,2500/s"},
	}
	for _, tt := range tests {
		if got := tt.plan.String(); got != tt.want {
			t.Errorf("%+v.String() = %q; want %q", tt.plan, got, tt.want)
		}
	}
}

func TestPlanConfig(t *testing.T) {
	base := load.Config{Connections: 10, Threads: 4, Duration: measure.Duration(2 * time.Second), Requests: 500, Timeout: measure.Duration(time.Second)}
	closed := Plan{Levels: []int{2, 50}, Warmup: measure.Duration(100 * time.Millisecond)}
	tests := []struct {
		name string
		got  load.Config
		want load.Config
	}{
		// A concurrency level sets the connections and caps threads at them.
		{"closed level 0", closed.Config(base, 0), load.Config{Connections: 2, Threads: 2, Duration: base.Duration, Requests: 500, Timeout: base.Timeout}},
		// A larger level keeps the threads.
		{"closed level 1", closed.Config(base, 1), load.Config{Connections: 50, Threads: 4, Duration: base.Duration, Requests: 500, Timeout: base.Timeout}},
		// A rate level keeps the initial pool and sets the rate.
		{"open level 1", Plan{Rates: []float64{100, 250}}.Config(base, 1), load.Config{Connections: 10, Threads: 4, Duration: base.Duration, Requests: 500, Timeout: base.Timeout, Rate: 250}},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: Config = %+v; want %+v", tt.name, tt.got, tt.want)
		}
	}
	w, ok := closed.WarmupConfig(base, 1)
	if !ok || w.Duration.Duration() != 100*time.Millisecond || w.Requests != 0 || w.Connections != 50 {
		t.Errorf("WarmupConfig(level 1) = %+v, %v; want 50 connections for 100ms and no request limit", w, ok)
	}
	if _, ok := (Plan{Levels: []int{1}}).WarmupConfig(base, 0); ok {
		t.Error("WarmupConfig without a warmup = true; want false")
	}
	if got := (Plan{Rates: []float64{10}}).Connections(base, 0); got != load.DefaultMaxConnections {
		t.Errorf("open-loop Connections = %d; want the pool limit %d", got, load.DefaultMaxConnections)
	}
}

func TestPlanLabelsAndTruncate(t *testing.T) {
	p := Plan{Levels: []int{10, 50, 100}}
	if got := []string{p.Label(0), p.Label(2)}; !reflect.DeepEqual(got, []string{"c=10", "c=100"}) {
		t.Errorf("labels = %q; want c=10, c=100", got)
	}
	if got := (Plan{Rates: []float64{2.5, 1000}}).Label(0); got != "rate=2.5/s" {
		t.Errorf("rate label = %q; want rate=2.5/s", got)
	}
	q := p.Truncate(2)
	if !reflect.DeepEqual(q.Levels, []int{10, 50}) || len(p.Levels) != 3 {
		t.Errorf("Truncate(2) = %v (original %v); want [10 50] and the original untouched", q.Levels, p.Levels)
	}
	b, err := json.Marshal(Plan{Levels: []int{10}, Warmup: measure.Duration(time.Second), Count: 2})
	if err != nil || string(b) != `{"levels":[10],"warmup":"1s","count":2}` {
		t.Errorf("json.Marshal(plan) = %s, %v", b, err)
	}
}
