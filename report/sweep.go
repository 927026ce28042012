package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/sweep"
	"github.com/apiperf/apiperf/verdict"
)

// SweepTable writes the terminal table of a sweep (or capacity search): one row per level,
// the same levels every other output shows, then the headlines (peak, knee, vs native) and
// why the sweep stopped early, if it did.
func SweepTable(w io.Writer, doc *result.Run) error {
	return render(w, "the sweep table", func(w io.Writer) { sweepTable(w, doc) })
}

func sweepTable(w io.Writer, doc *result.Run) {
	sw := doc.Sweep
	open := sw.Plan.Open()
	fmt.Fprintf(w, "%-14s %10s", "level", "QPS")
	if open {
		fmt.Fprintf(w, " %10s", "achieved/s")
	}
	fmt.Fprintf(w, " %9s %9s %9s %9s %9s %9s %8s", "mean", "p50", "p90", "p99", "p99.9", "success", "errors")
	streams := slices.ContainsFunc(sw.Levels, func(l sweep.Level) bool { return l.Stream != nil })
	if streams {
		fmt.Fprintf(w, " %9s %9s", "1st p99", "gap p99")
	}
	usage := targetUsage(doc)
	if usage != nil {
		fmt.Fprintf(w, " %10s %10s", "target CPU", "target RSS")
	}
	fmt.Fprintln(w)
	for i, p := range sw.Levels {
		fmt.Fprintf(w, "%-14s %10.1f", p.Label, p.QPS)
		if open {
			fmt.Fprintf(w, " %10.1f", p.Achieved)
		}
		fmt.Fprintf(w, " %9s %9s %9s %9s %9s %8s%% %8d", FormatDuration(p.Mean.Duration()),
			FormatDuration(p.P50.Duration()), FormatDuration(p.P90.Duration()),
			FormatDuration(p.P99.Duration()), FormatDuration(p.P999.Duration()), FormatSuccess(p.Success), p.Errors.Total())
		if streams {
			first, gap := "-", "-"
			if st := p.Stream; st != nil {
				first, gap = FormatDuration(st.FirstP99.Duration()), FormatDuration(st.GapP99.Duration())
			}
			fmt.Fprintf(w, " %9s %9s", first, gap)
		}
		if usage != nil {
			cpu, rss := "-", "-"
			if u := usage[i]; u != nil && u.CPUCores > 0 {
				cpu = fmt.Sprintf("%.2f", u.CPUCores)
			}
			if u := usage[i]; u != nil && u.RSSBytes > 0 {
				rss = fmt.Sprintf("%.1fM", u.RSSBytes/(1<<20))
			}
			fmt.Fprintf(w, " %10s %10s", cpu, rss)
		}
		var notes []string
		if cls := p.Errors.String(); cls != "" {
			notes = append(notes, cls)
		}
		if n := levelNotes(sw, i); n != "" {
			notes = append(notes, n)
		}
		if len(notes) > 0 {
			fmt.Fprintf(w, "  %s", strings.Join(notes, "; "))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	for _, h := range sw.Headlines() {
		fmt.Fprintln(w, h)
	}
	if sw.Stop != nil {
		fmt.Fprintln(w, sw.Stop)
	}
}

// Repetitions writes, for a run repeated with --count, the one line of its level: the
// figures every report of the run shows (sweep.Reduce); nothing for a single step.
func Repetitions(w io.Writer, doc *result.Run) error {
	return render(w, "the repetitions", func(w io.Writer) { repetitions(w, doc) })
}

func repetitions(w io.Writer, doc *result.Run) {
	if len(doc.Steps) < 2 {
		return
	}
	for _, l := range doc.Levels().Levels {
		fmt.Fprintf(w, "Level %s of %d repetitions: %.2f req/s (median), p99 %s (all responses), success %s%%\n",
			l.Label, l.Reps, l.QPS, FormatDuration(l.P99.Duration()), FormatSuccess(l.Success))
	}
}

// CapacityTable writes the probes of a capacity search, one row each with its verdict and
// the reason, then the answer line (which agrees with the rows: it rests on their verdicts).
func CapacityTable(w io.Writer, doc *result.Run) error {
	return render(w, "the capacity table", func(w io.Writer) { capacityTable(w, doc) })
}

func capacityTable(w io.Writer, doc *result.Run) {
	c := doc.Capacity
	if c == nil {
		return
	}
	fmt.Fprintf(w, "%-6s %12s %15s %9s %9s  %-12s %s\n", "probe", "rate/s", "sent/due", "p99", "success", "verdict", "reason")
	for i, p := range c.Probes {
		verdict := p.Verdict
		if p.Confirms {
			verdict += " (2nd)"
		}
		fmt.Fprintf(w, "%-6d %12s %15s %9s %8s%%  %-12s %s\n", i+1, load.FormatRate(p.Rate), fmt.Sprintf("%d/%d", p.Sent, p.Due),
			FormatDuration(p.P99.Duration()), FormatSuccess(p.Success), verdict, p.Reason)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, c.Headline())
}

// targetUsage is the target's CPU (cores) and RSS per level as the verdict reads them
// (--target-pid, else --metrics), or nil when no level has them.
func targetUsage(doc *result.Run) []*verdict.Usage {
	in, ok := doc.VerdictInput()
	if !ok || len(in.Levels) != len(doc.Sweep.Levels) {
		return nil
	}
	out := make([]*verdict.Usage, len(in.Levels))
	found := false
	for i, l := range in.Levels {
		if l.Target != nil && (l.Target.CPUCores > 0 || l.Target.RSSBytes > 0) {
			out[i], found = l.Target, true
		}
	}
	if !found {
		return nil
	}
	return out
}
