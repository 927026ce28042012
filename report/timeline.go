package report

import (
	"html/template"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/report/chart"
	"github.com/apiperf/apiperf/result"
)

// timelineTmpl is the "Over time" section: the interval stream of every step as charts.
var timelineTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("timeline").Parse(`{{range .}}<figure class="chart" id="chart-{{.ID}}">
<img alt="{{.Title}}" src="{{.Src}}" width="{{.Width}}" height="{{.Height}}">
<figcaption>{{.Title}}</figcaption>
</figure>
{{end}}<p class="note">One point per second of each level (its intervals), on one time axis from the start of the first level; gaps separate levels. Latency is corrected in open loop.</p>`))
})

// stepSeconds is one step's timeline as points on the run's time axis.
type stepSeconds struct {
	x, qps, errs, p50, p99 []float64
}

// runTimeline puts every step's intervals on one axis: seconds since t0 (the first step's
// start), each point at the end of its interval.
func runTimeline(r *result.Run, t0 time.Time) []stepSeconds {
	var out []stepSeconds
	for _, s := range r.Steps {
		if len(s.Timeline) == 0 {
			continue
		}
		base := s.Start.Sub(t0).Seconds()
		var ss stepSeconds
		inWindow(s, func(sec measure.Second, end, length float64) {
			ss.x = append(ss.x, base+end)
			ss.qps = append(ss.qps, float64(sec.Requests)/length)
			ss.errs = append(ss.errs, float64(sec.Errors)/length)
			p50, p99 := latencyOf(sec)
			ss.p50, ss.p99 = append(ss.p50, p50), append(ss.p99, p99)
		})
		out = append(out, ss)
	}
	return out
}

// inWindow calls f for each interval of s inside its measured window, with when it ends
// (seconds since the step's start; the last one cut short by the window's end) and its
// length. The requests drained after the window (sealed as one more interval) and slivers
// too short to be a rate are left out: they are no second of the load.
func inWindow(s *measure.Step, f func(sec measure.Second, end, length float64)) {
	every := time.Duration(s.Interval)
	if every <= 0 {
		every = measure.DefaultInterval
	}
	window := time.Duration(s.Elapsed).Seconds()
	for _, sec := range s.Timeline {
		length := every.Seconds()
		end := float64(sec.T+1) * length
		if end > window {
			length -= end - window
			end = window
		}
		if length <= 0.05 {
			continue
		}
		f(sec, end, length)
	}
}

// latencyOf is an interval's p50 and p99, NaN (no point) when it had no response.
func latencyOf(sec measure.Second) (p50, p99 float64) {
	if sec.Requests == 0 {
		return math.NaN(), math.NaN()
	}
	return sec.P50, sec.P99
}

// firstStart is when the run's first step started.
func firstStart(r *result.Run) time.Time {
	var t0 time.Time
	for _, s := range r.Steps {
		if t0.IsZero() || s.Start.Before(t0) {
			t0 = s.Start
		}
	}
	return t0
}

// timelineSections charts QPS, errors and p50/p99 per second over the whole run.
func timelineSections(r *result.Run) []Section {
	steps := runTimeline(r, firstStart(r))
	var x, qps, errs, p50, p99 []float64
	points := 0
	for i, ss := range steps {
		if i > 0 && len(x) > 0 {
			last := x[len(x)-1]
			x, qps, errs, p50, p99 = append(x, last), append(qps, math.NaN()), append(errs, math.NaN()), append(p50, math.NaN()), append(p99, math.NaN())
		}
		x, qps, errs = append(x, ss.x...), append(qps, ss.qps...), append(errs, ss.errs...)
		p50, p99 = append(p50, ss.p50...), append(p99, ss.p99...)
		points += len(ss.x)
	}
	if points < 2 {
		return nil
	}
	var charts []htmlChart
	add := func(id, title string, c chart.Chart) {
		if c.Validate() != nil {
			return
		}
		if hc, err := embedChart(id, title, c); err == nil {
			charts = append(charts, hc)
		}
	}
	add("timeline_qps", "Requests/sec and errors/sec over time", chart.Chart{
		Title: "Requests/sec and errors/sec", XLabel: "seconds", YLabel: "Requests/sec", YRightLabel: "errors/sec", XNum: x,
		Series: []chart.Series{{Name: "Requests/sec", Y: qps}, {Name: "errors/sec", Y: errs, Right: true}},
	})
	add("timeline_latency", "Latency over time (p50 and p99 of each second)", chart.Chart{
		Title: "Latency per second", XLabel: "seconds", YLabel: "latency (ms)", XNum: x,
		Series: []chart.Series{{Name: "p50", Y: p50}, {Name: "p99", Y: p99}},
	})
	if len(charts) == 0 {
		return nil
	}
	var b strings.Builder // its String is no copy: the section is MBs for a long sweep
	if err := timelineTmpl().Execute(&b, charts); err != nil {
		return []Section{{Title: "Over time", Body: template.HTML(template.HTMLEscapeString(err.Error()))}}
	}
	return []Section{{Title: "Over time", Body: template.HTML(b.String())}}
}

// qpsAt samples the run's requests/sec at the times x (seconds since t0): the rate of the
// interval holding each time, NaN between levels.
func qpsAt(r *result.Run, t0 time.Time, x []float64) []float64 {
	steps := runTimeline(r, t0)
	out := make([]float64, len(x))
	for i, t := range x {
		out[i] = math.NaN()
		for _, ss := range steps {
			for j, end := range ss.x {
				start := end - 1
				if j > 0 {
					start = ss.x[j-1]
				}
				if t > start && t <= end {
					out[i] = ss.qps[j]
				}
			}
		}
	}
	return out
}
