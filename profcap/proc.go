package profcap

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of CPU times in /proc/PID/stat (100 on every Linux port).
const clockTicks = 100

// ProcStat is one reading of a process from /proc: CPU time used since it started and
// resident memory now.
type ProcStat struct {
	CPU      time.Duration
	RSSBytes int64
	// RunWait is how long the process's threads have waited on a run queue for a CPU
	// (the sum of /proc/PID/task/*/schedstat's second field); 0 when not available.
	RunWait time.Duration
}

// ReadProc reads the CPU time (user + system) and the resident set size of process pid
// from /proc/PID/stat and /proc/PID/statm. It works for any process, Go or not.
func ReadProc(pid int) (ProcStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ProcStat{}, fmt.Errorf("reading process %d: %w", pid, err)
	}
	// The command name (field 2) is in parentheses and may hold spaces: fields start after ") ".
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ProcStat{}, fmt.Errorf("reading process %d: malformed stat %q", pid, snippet(b))
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return ProcStat{}, fmt.Errorf("reading process %d: stat has %d fields", pid, len(f)+2)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return ProcStat{}, fmt.Errorf("reading process %d: bad CPU times %q %q", pid, f[11], f[12])
	}
	m, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid))
	if err != nil {
		return ProcStat{}, fmt.Errorf("reading process %d: %w", pid, err)
	}
	mf := strings.Fields(string(m))
	if len(mf) < 2 {
		return ProcStat{}, fmt.Errorf("reading process %d: malformed statm %q", pid, snippet(m))
	}
	pages, err := strconv.ParseInt(mf[1], 10, 64)
	if err != nil {
		return ProcStat{}, fmt.Errorf("reading process %d: bad resident size %q", pid, mf[1])
	}
	return ProcStat{
		CPU:      time.Duration(utime+stime) * (time.Second / clockTicks),
		RSSBytes: pages * int64(os.Getpagesize()),
		RunWait:  runWait(pid),
	}, nil
}

// runWait sums the run-queue wait of every thread of pid, from /proc/PID/task/*/schedstat.
func runWait(pid int) time.Duration {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var sum time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread ended, or no schedstat in this kernel
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			continue
		}
		if ns, err := strconv.ParseInt(f[1], 10, 64); err == nil {
			sum += time.Duration(ns)
		}
	}
	return sum
}

// ProcCores is how many CPUs process pid may run on (its affinity, /proc/PID/status
// Cpus_allowed_list), or 0 when that cannot be read.
func ProcCores(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return countCPUList(strings.TrimSpace(v))
		}
	}
	return 0
}

// countCPUList counts the CPUs of a list such as "0-3,6,8-9".
func countCPUList(s string) int {
	n := 0
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return 0
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0
			}
		}
		n += b - a + 1
	}
	return n
}

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
	series := Series{URL: fmt.Sprintf("/proc/%d", s.PID), Interval: interval, Cores: ProcCores(s.PID)}
	var lastErr error
	var prev ProcStat
	var prevAt time.Duration
	start := time.Now()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for ctx.Err() == nil {
		st, err := ReadProc(s.PID)
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
