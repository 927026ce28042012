package cli

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apiperf/apiperf/load"
)

// countValue is a count that takes wrk's k/M/G suffixes (x1000): -c 10k.
type countValue struct{ n *int64 }

func (c countValue) String() string {
	if c.n == nil {
		return "0"
	}
	return strconv.FormatInt(*c.n, 10)
}
func (c countValue) Type() string { return "count" }
func (c countValue) Set(s string) error {
	v, err := parseCount(s)
	if err != nil {
		return err
	}
	*c.n = v
	return nil
}

// parseCount reads a whole number with an optional k, M or G suffix (x1000 each).
func parseCount(s string) (int64, error) {
	f, err := parseScaled(s)
	if err != nil {
		return 0, err
	}
	if f != math.Trunc(f) || f > math.MaxInt64/2 {
		return 0, fmt.Errorf("%q is not a whole number", s)
	}
	return int64(f), nil
}

// parseScaled reads a number with an optional k, M or G suffix.
func parseScaled(s string) (float64, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'k', 'K':
			mult, t = 1e3, t[:n-1]
		case 'm', 'M':
			mult, t = 1e6, t[:n-1]
		case 'g', 'G':
			mult, t = 1e9, t[:n-1]
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, fmt.Errorf("%q is not a number like 100, 2.5k or 1M", s)
	}
	return f * mult, nil
}

// intCount adapts an int field to countValue.
type intCount struct{ n *int }

func (c intCount) String() string { return strconv.Itoa(*c.n) }
func (c intCount) Type() string   { return "count" }
func (c intCount) Set(s string) error {
	v, err := parseCount(s)
	if err != nil {
		return err
	}
	if v > math.MaxInt32 {
		return fmt.Errorf("%q is too large", s)
	}
	*c.n = int(v)
	return nil
}

// rateValue is a rate in requests per second: 2500, 2.5k, 0.5.
type rateValue struct{ r *float64 }

func (r rateValue) String() string { return load.FormatRate(*r.r) }
func (r rateValue) Type() string   { return "rate" }
func (r rateValue) Set(s string) error {
	v, err := parseScaled(strings.TrimSuffix(s, "/s"))
	if err != nil {
		return err
	}
	*r.r = v
	return nil
}

// durationValue takes wrk's forms (10 = 10s, 2m, 1h) and Go's (500ms, 1.5s, 1m30s).
type durationValue struct{ d *time.Duration }

func (d durationValue) String() string { return d.d.String() }
func (d durationValue) Type() string   { return "duration" }
func (d durationValue) Set(s string) error {
	v, err := parseDuration(s)
	if err != nil {
		return err
	}
	*d.d = v
	return nil
}

// parseDuration reads a duration; a bare number is seconds, as in wrk.
func parseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(t, 64); err == nil {
		if f < 0 || math.IsNaN(f) || f > 1e9 {
			return 0, fmt.Errorf("%q is not a duration like 10s, 500ms or 2m", s)
		}
		return time.Duration(math.Round(f * float64(time.Second))), nil // 1.61 is 1.61s, not 1.609999999s
	}
	d, err := time.ParseDuration(t)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a duration like 10s, 500ms or 2m", s)
	}
	return d, nil
}
