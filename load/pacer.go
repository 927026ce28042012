package load

import (
	"math"
	"time"
)

// Pacer is the open-loop schedule: request i is due at start + i/Rate.
type Pacer struct {
	Rate float64 // requests per second
}

// Due returns when request i (from 0) is due, as an offset from the start.
func (p Pacer) Due(i int64) time.Duration {
	return time.Duration(math.Round(float64(i) * float64(time.Second) / p.Rate))
}

// Count returns how many requests are due by offset t (request 0 is due at 0).
func (p Pacer) Count(t time.Duration) int64 {
	if t < 0 {
		return 0
	}
	n := int64(math.Floor(t.Seconds()*p.Rate)) + 1
	// Guard against float rounding: Due(n-1) must be <= t and Due(n) > t.
	for n > 0 && p.Due(n-1) > t {
		n--
	}
	for p.Due(n) <= t {
		n++
	}
	return n
}
