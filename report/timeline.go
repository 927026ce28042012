package report

import (
	"bytes"
	"html/template"
	"math"
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
		every := time.Duration(s.Interval)
		if every <= 0 {
			every = measure.DefaultInterval
		}
		base := s.Start.Sub(t0).Seconds()
		var ss stepSeconds
		for _, sec := range s.Timeline {
			length := every.Seconds()
			x := base + float64(sec.T+1)*length
			if end := base + time.Duration(s.Elapsed).Seconds(); x > end {
				// The last interval is cut short by the end of the window.
				length -= x - end
				x = end
			}
			if length <= 0.05 {
				continue // a sliver after the window: too short to be a rate
			}
			ss.x = append(ss.x, x)
			ss.qps = append(ss.qps, float64(sec.Requests)/length)
			ss.errs = append(ss.errs, float64(sec.Errors)/length)
			p50, p99 := sec.P50, sec.P99
			if sec.Requests == 0 {
				p50, p99 = math.NaN(), math.NaN()
			}
			ss.p50, ss.p99 = append(ss.p50, p50), append(ss.p99, p99)
		}
		out = append(out, ss)
	}
	return out
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
	var b bytes.Buffer
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
