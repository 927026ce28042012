package result

import (
	"fmt"

	"github.com/apiperf/apiperf/sweep"
)

// Capacity is the search of `apiperf capacity`: every probe in the order it ran and the answer.
type Capacity struct {
	Search sweep.Search    `json:"search"`
	Probes []CapacityProbe `json:"probes"`
	// Answer is the highest rate that met the objective (0 when none did).
	Answer float64 `json:"answer"`
	// Limit is the lowest rate above Answer that failed (0 when none did).
	Limit float64 `json:"limit,omitempty"`
}

// CapacityProbe is one measured rate and the verdict on it.
type CapacityProbe struct {
	Rate     float64  `json:"rate"`
	Achieved float64  `json:"achieved_rate"`
	Met      bool     `json:"met"`
	Misses   []string `json:"misses,omitempty"` // why it failed, e.g. "p99 812ms > 100ms"
	Step     int      `json:"step"`             // index into Run.Steps
}

// Headline states the answer with its bracket, for the objective obj.
func (c *Capacity) Headline(obj string) string {
	switch {
	case len(c.Probes) == 0:
		return "capacity: no probe ran"
	case c.Answer == 0:
		return fmt.Sprintf("capacity: no probed rate met %s (lowest tried: %g req/s)", obj, c.Limit)
	case c.Limit == 0:
		return fmt.Sprintf("capacity: at least %g req/s meets %s (no probe failed; raise --max-rate or --max-probes)", c.Answer, obj)
	}
	return fmt.Sprintf("capacity: %g req/s meets %s; %g req/s does not (%d probes)", c.Answer, obj, c.Limit, len(c.Probes))
}
