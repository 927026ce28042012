package compare

import (
	"fmt"

	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/sample"
	"github.com/apiperf/apiperf/stats"
)

// Bounds of the history the gate learns run-to-run noise from.
const (
	MinNoiseRuns = 5  // fewer comparable runs: no noise band, budgets alone
	MaxNoiseRuns = 20 // only the newest runs count: machines and code change
)

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
// Each run gives the median of its repetitions; the band is stats.SuccessiveBand of those
// medians. A level with fewer than MinNoiseRuns runs gets no band and a warning.
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
			bands = append(bands, NoiseBand{Level: l.label, Metric: gm.name, Runs: len(v), Band: stats.SuccessiveBand(v, gm.name != MetricErrorRate)})
		}
	}
	return bands, warns
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
