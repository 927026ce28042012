package sweep

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/apiperf/apiperf/load"
)

// Capacity search defaults.
const (
	DefaultCapacityStart     = 100.0 // req/s of the first probe
	DefaultCapacityFactor    = 2.0   // growth between probes until one fails
	DefaultCapacityPrecision = 0.05  // stop when the bracket is within 5% of the answer
	DefaultCapacityMaxProbes = 20
)

// Probe timing defaults: shorter than a run's, since a search runs many probes.
const (
	DefaultProbeDuration = 5 * time.Second // measured time of each probe
	DefaultProbeWarmup   = time.Second     // unmeasured load before each probe
)

// Search finds the highest rate that meets an objective: it grows the rate geometrically
// from Start until a probe fails (or shrinks it until one passes), then bisects between the
// highest passing and the lowest failing rate until they are within Precision of each other.
// Its zero value is completed with the defaults above.
type Search struct {
	Start     float64 `json:"start"`     // rate of the first probe
	Factor    float64 `json:"factor"`    // growth (and shrink) factor before the bracket is found
	Precision float64 `json:"precision"` // relative width of the final bracket, e.g. 0.05
	Max       float64 `json:"max,omitempty"`
	MaxProbes int     `json:"max_probes"`
}

// Decision is a rate the search has decided: met, or failed (confirmed by a second probe).
type Decision struct {
	Rate float64 `json:"rate"`
	Met  bool    `json:"met"`
}

// WithDefaults fills zero fields with the defaults.
func (s Search) WithDefaults() Search {
	if s.Start == 0 {
		s.Start = DefaultCapacityStart
	}
	if s.Factor == 0 {
		s.Factor = DefaultCapacityFactor
	}
	if s.Precision == 0 {
		s.Precision = DefaultCapacityPrecision
	}
	if s.MaxProbes == 0 {
		s.MaxProbes = DefaultCapacityMaxProbes
	}
	return s
}

// Validate reports every problem at once.
func (s Search) Validate() error {
	var errs []error
	if s.Start <= 0 {
		errs = append(errs, fmt.Errorf("start rate must be positive, got %s", load.FormatRate(s.Start)))
	}
	if s.Factor <= 1 {
		errs = append(errs, fmt.Errorf("growth factor must be above 1, got %g", s.Factor))
	}
	if s.Precision <= 0 || s.Precision >= 1 {
		errs = append(errs, fmt.Errorf("precision must be between 0 and 1 (e.g. 0.05 for 5%%), got %g", s.Precision))
	}
	if s.Max < 0 || (s.Max > 0 && s.Max < s.Start) {
		errs = append(errs, fmt.Errorf("max rate %s must be at least the start rate %s", load.FormatRate(s.Max), load.FormatRate(s.Start)))
	}
	if s.MaxProbes < 2 {
		errs = append(errs, fmt.Errorf("max probes must be at least 2, got %d", s.MaxProbes))
	}
	return errors.Join(errs...)
}

// minRate is the lowest rate a search probes before it gives up.
const minRate = 0.1

// Bracket returns the highest passing rate (0 if none) and the lowest failing rate above
// it (+Inf if none).
func Bracket(probes []Decision) (pass, fail float64) {
	fail = math.Inf(1)
	for _, p := range probes {
		if p.Met && p.Rate > pass {
			pass = p.Rate
		}
	}
	for _, p := range probes {
		if !p.Met && p.Rate > pass && p.Rate < fail {
			fail = p.Rate
		}
	}
	return pass, fail
}

// Next returns the rate to probe after probes, or done when the answer is known to the
// search's precision (or it cannot go further).
func (s Search) Next(probes []Decision) (rate float64, done bool) {
	if len(probes) == 0 {
		return s.Start, false
	}
	if len(probes) >= s.MaxProbes {
		return 0, true
	}
	pass, fail := Bracket(probes)
	switch {
	case pass == 0: // nothing passed yet: go down
		next := roundRate(fail / s.Factor)
		if next < minRate {
			return 0, true
		}
		return next, false
	case math.IsInf(fail, 1): // nothing failed yet: go up
		if s.Max > 0 && pass >= s.Max {
			return 0, true
		}
		next := roundRate(pass * s.Factor)
		if s.Max > 0 {
			next = math.Min(next, s.Max)
		}
		return next, false
	case (fail-pass)/pass <= s.Precision:
		return 0, true
	}
	return roundRate((pass + fail) / 2), false
}

// roundRate keeps probe rates readable: three significant digits, without binary noise
// (93.8, never 93.80000000000001).
func roundRate(r float64) float64 {
	if r <= 0 {
		return r
	}
	return roundSig(r, 3)
}

// String describes the search, e.g. "from 100 req/s, x2 until a probe fails, then bisect to 5%".
func (s Search) String() string {
	str := fmt.Sprintf("from %s req/s, x%g until a rate fails twice, then bisect to %g%%", load.FormatRate(s.Start), s.Factor, roundSig(s.Precision*100, 4))
	if s.Max > 0 {
		str += ", at most " + load.FormatRate(s.Max) + " req/s"
	}
	return str
}
