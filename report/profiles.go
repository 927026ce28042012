package report

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/apiperf/apiperf/compare"
	"github.com/apiperf/apiperf/profcap"
)

// TargetText writes the top of each kept CPU profile (`top -cum`, rows rows), the metrics
// and /proc summaries to w, after the load summary; profile paths are joined to dir, where
// they were saved, so they can be pasted into go tool pprof.
func TargetText(w io.Writer, tc *profcap.Record, rows int, dir string) error {
	return render(w, "the target profiles", func(w io.Writer) { targetText(w, tc, rows, dir) })
}

func targetText(w io.Writer, tc *profcap.Record, rows int, dir string) {
	if tc == nil {
		return
	}
	for _, s := range tc.Steps {
		if s.Profiles != nil && s.Profiles.CPU != nil {
			t := *s.Profiles.CPU
			t.ByCum = t.ByCum[:min(rows, len(t.ByCum))]
			fmt.Fprintf(w, "\nTarget CPU profile at %s (%ds), top -cum:\n%s", s.Label, s.CPUSeconds, t)
			if sh := s.Profiles.Shares; sh != nil {
				fmt.Fprintf(w, "GC %.1f%% of CPU, allocation %.1f%%\n", sh.GCPct, sh.AllocPct)
			}
		}
		if s.Profiles != nil {
			for _, c := range []*profcap.Contention{s.Profiles.Block, s.Profiles.Mutex} {
				contentionText(w, c, s.Label, rows)
			}
		}
		if s.Summary != nil && s.Summary.Points > 0 {
			fmt.Fprintf(w, "Target metrics at %s: %s\n", s.Label, metricsLine(s.Summary))
		}
		if p := s.ProcessSummary; p != nil && p.Points > 0 && p.CPUCores != nil && p.RSSBytes != nil {
			fmt.Fprintf(w, "Target process at %s: CPU %.2f cores (max %.2f), RSS %.1f MiB (max %.1f)\n", s.Label,
				p.CPUCores.Mean, p.CPUCores.Max, p.RSSBytes.Mean/(1<<20), p.RSSBytes.Max/(1<<20))
		}
	}
	traceText(w, tc) // report/trace.go
	for _, s := range tc.Steps {
		var profiles, traces []string
		for _, f := range s.Files {
			if isTraceFile(f) {
				traces = append(traces, filepath.Join(dir, f))
			} else {
				profiles = append(profiles, filepath.Join(dir, f))
			}
		}
		if len(profiles) > 0 {
			fmt.Fprintf(w, "Profiles: %s (open with go tool pprof)\n", strings.Join(profiles, " "))
		}
		if len(traces) > 0 {
			fmt.Fprintf(w, "Trace: %s (open with go tool trace)\n", strings.Join(traces, " "))
		}
	}
}

// contentionText writes the top rows sites of a block or mutex profile: time waited there,
// its share, how many goroutines waited on average, and how often.
func contentionText(w io.Writer, c *profcap.Contention, label string, rows int) {
	if c == nil || len(c.Sites) == 0 {
		return
	}
	what := "where goroutines blocked"
	if c.Kind == profcap.KindMutex {
		what = "lock holders that made others wait"
	}
	fmt.Fprintf(w, "Target %s profile at %s (%.0fs), %s:\n", c.Kind, label, c.Seconds, what)
	fmt.Fprintf(w, "%12s %7s %8s %8s  %s\n", "waited", "share", "waiting", "events", "site")
	for _, site := range c.Sites[:min(rows, len(c.Sites))] {
		waiting := "-"
		if c.Seconds > 0 {
			waiting = fmt.Sprintf("%.1f", float64(site.DelayNs)/1e9/c.Seconds)
		}
		d := time.Duration(site.DelayNs)
		if d >= time.Second {
			d = d.Round(time.Millisecond)
		} else {
			d = d.Round(time.Microsecond)
		}
		fmt.Fprintf(w, "%12v %6.1f%% %8s %8d  %s\n", d, c.Pct(site), waiting, site.Events, site.Site())
	}
}

// metricsLine is one line of a metrics summary: means over the step.
func metricsLine(s *profcap.Summary) string {
	var parts []string
	if s.CPUCores != nil {
		parts = append(parts, fmt.Sprintf("CPU %.2f cores", s.CPUCores.Mean))
	}
	if s.RSSBytes != nil {
		parts = append(parts, fmt.Sprintf("RSS %.1f MiB", s.RSSBytes.Mean/(1<<20)))
	}
	if s.Goroutines != nil {
		parts = append(parts, fmt.Sprintf("goroutines %.0f (max %.0f)", s.Goroutines.Mean, s.Goroutines.Max))
	}
	if s.HeapInuseBytes != nil {
		parts = append(parts, fmt.Sprintf("heap in use %.1f MiB", s.HeapInuseBytes.Mean/(1<<20)))
	}
	parts = append(parts, fmt.Sprintf("%.0f GCs", s.GCs))
	if s.GCPauseMeanSeconds != nil {
		parts = append(parts, fmt.Sprintf("mean pause %v", time.Duration(*s.GCPauseMeanSeconds*float64(time.Second)).Round(time.Microsecond)))
	}
	return strings.Join(parts, ", ")
}

// ProfileDiffText writes the functions whose share of the target's CPU grew or shrank the
// most between two runs; nothing when d has none.
func ProfileDiffText(w io.Writer, d *compare.ProfileDiff) error {
	return render(w, "the profile diff", func(w io.Writer) { profileDiffText(w, d) })
}

func profileDiffText(w io.Writer, d *compare.ProfileDiff) {
	if d == nil || len(d.Deltas) == 0 {
		return
	}
	fmt.Fprintf(w, "\nTarget CPU share, A at %s -> B at %s (percentage points of CPU time):\n", d.LevelA, d.LevelB)
	fmt.Fprintf(w, "%8s %8s %8s  %8s %8s %8s  %s\n", "cum A", "cum B", "delta", "flat A", "flat B", "delta", "function")
	for _, x := range d.Deltas {
		fmt.Fprintf(w, "%7.2f%% %7.2f%% %+7.2f  %7.2f%% %7.2f%% %+7.2f  %s\n",
			x.CumPctBefore, x.CumPctAfter, x.CumDelta, x.FlatPctBefore, x.FlatPctAfter, x.FlatDelta, x.Function)
	}
}
