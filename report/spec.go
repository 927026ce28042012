package report

import (
	"fmt"
	"strings"

	"github.com/apiperf/apiperf/report/chart"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/sweep"
)

// specLoad describes the load of r for the report's Spec: the load config of a single run,
// or for a plan of several levels the range it swept (its load config names only the
// connections of the command line, which no level used).
func specLoad(r *result.Run, rec *sweep.Record) string {
	plan := rec.Plan
	if plan.Len() < 2 {
		return r.Load.String()
	}
	vals := make([]string, plan.Len())
	for i := range vals {
		vals[i] = sweep.FormatValue(plan.Level(i))
	}
	first, last := vals[0], vals[len(vals)-1]
	var b strings.Builder
	if plan.Open() {
		fmt.Fprintf(&b, "open loop: %s to %s req/s in %d levels (%s)", first, last, len(vals), strings.Join(vals, ", "))
	} else {
		fmt.Fprintf(&b, "closed loop: %s to %s connections in %d levels (%s)", first, last, len(vals), strings.Join(vals, ", "))
	}
	fmt.Fprintf(&b, " on up to %s", Plural(r.Load.Threads, "thread"))
	switch l := r.Load; {
	case l.Requests > 0 && l.Duration > 0:
		fmt.Fprintf(&b, ", %s or %v per level, whichever comes first", Plural(int(l.Requests), "request"), l.Duration)
	case l.Requests > 0:
		fmt.Fprintf(&b, ", %s per level", Plural(int(l.Requests), "request"))
	default:
		fmt.Fprintf(&b, ", %v per level", l.Duration)
	}
	if plan.Warmup > 0 {
		fmt.Fprintf(&b, " after %v of warmup", plan.Warmup)
	}
	if plan.Reps() > 1 {
		fmt.Fprintf(&b, ", %d repetitions", plan.Reps())
	}
	fmt.Fprintf(&b, ", timeout %v", r.Load.Timeout)
	return b.String()
}

// levelMarks marks the peak and the knee of a sweep on its charts (nothing for one level).
func levelMarks(rec *sweep.Record) []chart.Mark {
	if rec == nil || len(rec.Levels) < 2 {
		return nil
	}
	var marks []chart.Mark
	switch {
	case rec.Peak >= 0 && rec.Peak == rec.Knee:
		marks = append(marks, chart.Mark{At: float64(rec.Peak), Label: "peak = knee"})
	default:
		if rec.Knee >= 0 {
			marks = append(marks, chart.Mark{At: float64(rec.Knee), Label: "knee"})
		}
		if rec.Peak >= 0 {
			marks = append(marks, chart.Mark{At: float64(rec.Peak), Label: "peak"})
		}
	}
	return marks
}

// successRange zooms a success-rate axis to the data with 100% in view, so that a flat line
// at 100% is not drawn on a 0-100 axis and a dip to 99.5% shows.
func successRange(series ...[]float64) *chart.Range {
	lo := 100.0
	for _, s := range series {
		for _, v := range s {
			if v == v && v < lo { // not NaN
				lo = v
			}
		}
	}
	pad := max((100-lo)*0.08, 0.05)
	return &chart.Range{Min: max(0, lo-pad), Max: 100 + pad/4}
}
