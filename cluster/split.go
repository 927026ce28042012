package cluster

import (
	"errors"
	"fmt"
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
)

// Split divides cfg among n workers exactly: connections, the open-loop pool limit and the
// request count are shared out with the remainder going to the first workers, so the totals
// are cfg's; the rate is shared evenly. Worker k of n takes requests k, k+n, k+2n... of the
// combined open-loop schedule: rate R/n, phase k/R (Offsets). Threads are the worker's
// business (each uses its own cores, no more than its connections).
func Split(cfg load.Config, n int) ([]load.Config, error) {
	if n < 1 {
		return nil, fmt.Errorf("workers must be at least 1, got %d", n)
	}
	var errs []error
	if cfg.Connections < n {
		errs = append(errs, fmt.Errorf("%d connections cannot be split over %d workers (each needs at least one)", cfg.Connections, n))
	}
	if cfg.Requests > 0 && cfg.Requests < int64(n) {
		errs = append(errs, fmt.Errorf("%d requests cannot be split over %d workers (each needs at least one)", cfg.Requests, n))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	shares := make([]load.Config, n)
	for k := range shares {
		s := cfg
		s.Connections = share(cfg.Connections, n, k)
		s.Requests = share(cfg.Requests, n, k)
		if cfg.MaxConnections > 0 {
			s.MaxConnections = max(share(cfg.MaxConnections, n, k), s.Connections)
		}
		if cfg.Rate > 0 {
			s.Rate = cfg.Rate / float64(n)
		}
		shares[k] = s
	}
	return shares, nil
}

// share is worker k's part of total over n: total/n, plus one for the first total%n workers.
func share[T int | int64](total T, n, k int) T {
	q, r := total/T(n), total%T(n)
	if T(k) < r {
		q++
	}
	return q
}

// Offsets are the open-loop phases: worker k starts k/R after the common start, so its
// j-th request is due exactly when request k+j*n of the combined schedule is. Closed loop:
// all zero.
func Offsets(cfg load.Config, n int) []measure.Duration {
	off := make([]measure.Duration, n)
	if cfg.Rate > 0 {
		for k := range off {
			off[k] = measure.Duration(load.Pacer{Rate: cfg.Rate}.Due(int64(k)))
		}
	}
	return off
}

// plainDuration is d as a time.Duration (for arithmetic).
func plainDuration(d measure.Duration) time.Duration { return time.Duration(d) }
