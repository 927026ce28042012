package compare

import (
	"fmt"
	"strings"

	"github.com/apiperf/apiperf/stats"
)

// DefaultPower is the detection probability of the power statements: "a 4% change would be
// detected 95% of the time".
const DefaultPower = stats.DefaultPower

// powerResamples is how many simulated experiments estimate one detection rate.
const powerResamples = 200

// Power says how large a change a comparison could have seen with the noise it measured and
// the samples it had: Detect is the smallest change the test finds significant DefaultPower
// of the time; Fail the smallest change for the worse that fails the gate (significant,
// over budget and beyond any noise band) that often. Both are in the check's change unit
// (percent, or percentage points for the error rate); nil means no change of any size
// (up to ±1000%) would, typically because there are too few samples.
type Power struct {
	Samples int      `json:"samples"` // pairs, or repetitions on the smaller side
	Noise   float64  `json:"noise"`   // spread (1.4826 x MAD) of the samples around their centre, in change units
	Detect  *float64 `json:"detect,omitempty"`
	Fail    *float64 `json:"fail,omitempty"`
}

// ptr returns a pointer to v, or nil when ok is false.
func ptr(v float64, ok bool) *float64 {
	if !ok {
		return nil
	}
	return &v
}

// Sentence says the power of the check in words: "with 10 pairs at this noise (±2.1%), a
// 4.0% QPS change would be detected 95% of the time; a drop of 7.2% fails the gate that often".
func (p *Power) Sentence(metric, samples string) string {
	if p == nil {
		return ""
	}
	pct := metric != MetricErrorRate
	f := func(v float64) string {
		if pct {
			return fmt.Sprintf("%.1f%%", v)
		}
		return fmt.Sprintf("%.3f pt", v)
	}
	var b strings.Builder
	if p.Noise == 0 {
		fmt.Fprintf(&b, "with %d %s and no noise at all", p.Samples, samples)
	} else {
		fmt.Fprintf(&b, "with %d %s at this noise (±%s)", p.Samples, samples, f(p.Noise))
	}
	if p.Detect == nil {
		fmt.Fprintf(&b, ", no %s change would be detected %.0f%% of the time", metricTitle(metric), 100*DefaultPower)
		return b.String()
	}
	if p.Noise == 0 {
		fmt.Fprintf(&b, ", any %s change would be detected", metricTitle(metric))
	} else {
		fmt.Fprintf(&b, ", a %s %s change would be detected %.0f%% of the time", f(*p.Detect), metricTitle(metric), 100*DefaultPower)
	}
	if p.Fail != nil {
		word := "rise"
		if metric == MetricQPS {
			word = "drop"
		}
		fmt.Fprintf(&b, "; a %s of %s fails the gate that often", word, f(*p.Fail))
	}
	return b.String()
}
