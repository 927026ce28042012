// Package sweep runs loads over levels: the one Level model (a level's numbers, its
// repetitions reduced one way) and its labels, the plan of levels (concurrency or rate), the
// stop rules, the objective (SLO), the analysis (peak; knee, never after the peak; limit),
// and the runtime of sweeps, repetitions, capacity searches and A/B runs, driven by a step
// function it is given (the engine in the CLI, a fake in tests).
package sweep

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
)

// DefaultLevels are the classic sweep script's concurrency levels.
var DefaultLevels = []int{200, 500, 1000, 3000, 5000, 10000, 15000, 20000, 25000, 50000}

// DefaultWarmup is the unmeasured load before each level of a sweep.
const DefaultWarmup = 2 * time.Second

// QuickPlan is the short plan run against the built-in target when no URL is given: it suits
// a laptop and takes well under a minute.
func QuickPlan() Plan {
	return Plan{Levels: []int{10, 50, 100, 200}, Warmup: measure.Duration(time.Second), Count: 1}
}

// QuickDuration is the measured time per level of QuickPlan.
const QuickDuration = 3 * time.Second

// Plan is which levels a sweep runs and how: either concurrency levels (closed loop) or
// rates (open loop), each run Count times after an unmeasured warmup. The measured duration
// and everything else about the load come from the base load.Config.
type Plan struct {
	Levels []int            `json:"levels,omitempty"` // concurrency levels, ascending
	Rates  []float64        `json:"rates,omitempty"`  // open loop: target rates in requests/s, ascending
	Warmup measure.Duration `json:"warmup,omitempty"` // unmeasured load before each level; 0: none
	Count  int              `json:"count,omitempty"`  // measured runs per level; 0 means 1
}

// Open reports whether the plan sweeps rates (open loop).
func (p Plan) Open() bool { return len(p.Rates) > 0 }

// Len is the number of levels.
func (p Plan) Len() int {
	if p.Open() {
		return len(p.Rates)
	}
	return len(p.Levels)
}

// Reps is the number of measured runs per level (at least 1).
func (p Plan) Reps() int { return max(p.Count, 1) }

// Level returns level i as a number: a concurrency or a rate.
func (p Plan) Level(i int) float64 {
	if p.Open() {
		return p.Rates[i]
	}
	return float64(p.Levels[i])
}

// Label names level i as steps are labelled: "c=200" or "rate=1000/s".
func (p Plan) Label(i int) string { return Label(p.Open(), p.Level(i)) }

// Config returns the load of level i: base with the level's connections or rate set.
func (p Plan) Config(base load.Config, i int) load.Config {
	cfg := base
	if p.Open() {
		cfg.Rate = p.Rates[i]
		return cfg
	}
	cfg.Rate = 0
	return cfg.WithConnections(p.Levels[i])
}

// WarmupConfig returns the unmeasured load before level i, or false when there is none.
func (p Plan) WarmupConfig(base load.Config, i int) (load.Config, bool) {
	if p.Warmup <= 0 {
		return load.Config{}, false
	}
	cfg := p.Config(base, i)
	cfg.Duration, cfg.Requests = p.Warmup, 0
	return cfg, true
}

// Connections is the most connections level i may open.
func (p Plan) Connections(base load.Config, i int) int {
	return p.Config(base, i).Conns()
}

// MaxConnections is the most connections any level of the plan may open.
func (p Plan) MaxConnections(base load.Config) int {
	n := 0
	for i := range p.Len() {
		n = max(n, p.Connections(base, i))
	}
	return n
}

// Truncate returns the plan cut to its first n levels.
func (p Plan) Truncate(n int) Plan {
	q := p
	if p.Open() {
		q.Rates = append([]float64(nil), p.Rates[:min(n, len(p.Rates))]...)
	} else {
		q.Levels = append([]int(nil), p.Levels[:min(n, len(p.Levels))]...)
	}
	return q
}

// Validate reports every problem with the plan at once.
func (p Plan) Validate() error {
	var errs []error
	switch {
	case len(p.Levels) > 0 && len(p.Rates) > 0:
		errs = append(errs, errors.New("give concurrency levels or rates, not both"))
	case len(p.Levels) == 0 && len(p.Rates) == 0:
		errs = append(errs, errors.New("no levels to run"))
	}
	for i, c := range p.Levels {
		if c < 1 {
			errs = append(errs, fmt.Errorf("level %d must be at least 1", c))
		} else if i > 0 && c <= p.Levels[i-1] {
			errs = append(errs, fmt.Errorf("levels must ascend: %d after %d", c, p.Levels[i-1]))
		}
	}
	for i, r := range p.Rates {
		if !(r > 0) {
			errs = append(errs, fmt.Errorf("rate %g must be positive", r))
		} else if i > 0 && r <= p.Rates[i-1] {
			errs = append(errs, fmt.Errorf("rates must ascend: %g after %g", r, p.Rates[i-1]))
		}
	}
	if p.Warmup < 0 {
		errs = append(errs, fmt.Errorf("warmup must not be negative, got %v", p.Warmup))
	}
	if p.Count < 0 {
		errs = append(errs, fmt.Errorf("count must not be negative, got %d", p.Count))
	}
	return errors.Join(errs...)
}

// String describes the plan in one line, e.g. "c=200,500,1000 (warmup 2s, 3 runs each)".
func (p Plan) String() string {
	var b strings.Builder
	if p.Open() {
		b.WriteString("rate=")
		for i, r := range p.Rates {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatFloat(r, 'g', -1, 64))
		}
		b.WriteString("/s")
	} else {
		b.WriteString("c=")
		for i, c := range p.Levels {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(c))
		}
	}
	var extra []string
	if p.Warmup > 0 {
		extra = append(extra, "warmup "+p.Warmup.String())
	}
	if p.Reps() > 1 {
		extra = append(extra, strconv.Itoa(p.Reps())+" runs each")
	}
	if len(extra) > 0 {
		b.WriteString(" (" + strings.Join(extra, ", ") + ")")
	}
	return b.String()
}
