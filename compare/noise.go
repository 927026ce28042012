package compare

import (
	"fmt"
	"math"

	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/sample"
	"github.com/apiperf/apiperf/stats"
)

// Bounds of the history the gate learns run-to-run noise from.
const (
	MinNoiseRuns = 5  // fewer comparable runs: no noise band, budgets alone
	MaxNoiseRuns = 20 // only the newest runs count: machines and code change
)

// noiseZ is the two-sided 95% normal quantile: a band that an A/A difference of two runs
// exceeds one time in twenty.
const noiseZ = 1.959964

// NoiseBand is the run-to-run noise of one metric at one level, learned from the history of
// the baseline: how far apart two runs of the same code typically are.
type NoiseBand struct {
	Level  string `json:"level"`
	Metric string `json:"metric"`
	Runs   int    `json:"runs"` // comparable history runs it was learned from
	// Band is the change (percent, or percentage points for the error rate) that the
	// difference of two runs of unchanged code stays within 95% of the time.
	Band float64 `json:"band"`
}

// LearnNoise estimates, for every level of like and every gated metric, the noise between
// runs from history (oldest first): runs of the same URL, method and load shape (duration,
// threads, timeout, connections or rate) that have the level. The newest MaxNoiseRuns count.
// Each run gives the median of its repetitions; the noise is 1.4826 x the median absolute
// difference of successive runs, which a one-off shift in the history (a past regression)
// moves little. A level with fewer than MinNoiseRuns runs gets no band and a warning.
func LearnNoise(history []*result.Run, like *result.Run) ([]NoiseBand, []string) {
	var bands []NoiseBand
	var warns []string
	for _, l := range gateLevels(like) {
		var series [][]float64 // per metric, one median per comparable run
		series = make([][]float64, len(gateMetrics))
		runs := 0
		for i := len(history) - 1; i >= 0 && runs < MaxNoiseRuns; i-- {
			h := history[i]
			if !sameShape(h, like) {
				continue
			}
			hl := gateFind(gateLevels(h), l.label)
			if hl == nil {
				continue
			}
			runs++
			for m, gm := range gateMetrics {
				if v := gm.samples(hl.steps); len(v) > 0 {
					series[m] = append(series[m], sample.Median(v))
				}
			}
		}
		if runs < MinNoiseRuns {
			warns = append(warns, fmt.Sprintf("%s: only %d comparable run(s) of the baseline in the history (need %d): "+
				"run-to-run noise not learned, the gate uses the budgets alone", l.label, runs, MinNoiseRuns))
			continue
		}
		for m, gm := range gateMetrics {
			v := series[m]
			if len(v) < MinNoiseRuns {
				continue
			}
			bands = append(bands, NoiseBand{Level: l.label, Metric: gm.name, Runs: len(v), Band: successiveBand(v, gm.name != MetricErrorRate)})
		}
	}
	return bands, warns
}

// successiveBand is the 95% band of the difference of two runs, from the successive
// differences of v (logs of v when ratio), in percent (ratio) or in v's unit.
func successiveBand(v []float64, ratio bool) float64 {
	if ratio {
		if v = stats.LogValues(v); v == nil {
			return 0
		}
	}
	d := make([]float64, 0, len(v)-1)
	for i := 1; i < len(v); i++ {
		d = append(d, math.Abs(v[i]-v[i-1]))
	}
	band := noiseZ * 1.4826 * sample.Median(d)
	if ratio {
		return stats.LogToPercent(band)
	}
	return band
}

// sameShape says whether h measured the same URL under the same load as like (levels are
// matched by label separately).
func sameShape(h, like *result.Run) bool {
	if h == nil || like == nil {
		return false
	}
	a, b := h.Load, like.Load
	return h.Scenario.URL == like.Scenario.URL && h.Scenario.Method == like.Scenario.Method &&
		a.Duration == b.Duration && a.Threads == b.Threads && a.Timeout == b.Timeout && a.Requests == b.Requests &&
		(a.Rate > 0) == (b.Rate > 0)
}

func findBand(bands []NoiseBand, level, metric string) *NoiseBand {
	for i := range bands {
		if bands[i].Level == level && bands[i].Metric == metric {
			return &bands[i]
		}
	}
	return nil
}
