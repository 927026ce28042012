package profcap

import (
	"context"
	"fmt"
	"time"

	"github.com/apiperf/apiperf/procfs"
)

// ProcSampler samples a process's CPU and RSS from /proc every Interval while a load runs:
// the --target-pid view of a target on the same machine, instrumented or not.
type ProcSampler struct {
	PID      int           `json:"pid"`
	Interval time.Duration `json:"interval,omitempty"` // 0: DefaultInterval
}

// Run samples at once and then every Interval until ctx is done, and returns the timeline
// (CPUCores and RSSBytes set; Series.URL is "/proc/PID", Series.Cores the CPUs it may use)
// and its warnings. It never fails; the caller owns its goroutine.
func (s *ProcSampler) Run(ctx context.Context) (Series, []string) {
	interval := s.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	series := Series{URL: fmt.Sprintf("/proc/%d", s.PID), Interval: interval, Cores: procfs.Cores(s.PID)}
	var lastErr error
	var prev procfs.Stat
	var prevAt time.Duration
	start := time.Now()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for ctx.Err() == nil {
		st, err := procfs.Read(s.PID)
		at := time.Since(start)
		series.Scrapes++
		if err != nil {
			series.Failed++
			lastErr = err
		} else {
			rss := float64(st.RSSBytes)
			p := Point{Offset: at, RSSBytes: &rss}
			if series.Scrapes-series.Failed > 1 && at > prevAt {
				dt := (at - prevAt).Seconds()
				cores := (st.CPU - prev.CPU).Seconds() / dt
				p.CPUCores = &cores
				if st.RunWait >= prev.RunWait && st.RunWait > 0 {
					wait := (st.RunWait - prev.RunWait).Seconds() / dt
					p.RunWaitCores = &wait
				}
			}
			series.Points = append(series.Points, p)
			prev, prevAt = st, at
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
	var warns []string
	if series.Failed > 0 {
		warns = append(warns, fmt.Sprintf("process %d: %d of %d samples failed: %v", s.PID, series.Failed, series.Scrapes, lastErr))
	}
	return series, warns
}
