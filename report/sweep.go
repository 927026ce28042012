package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/apiperf/apiperf/result"
)

// SweepTable writes the terminal table of a sweep (or capacity search): one row per level,
// the same levels every other output shows, then the headlines (peak, knee, vs native) and
// why the sweep stopped early, if it did.
func SweepTable(w io.Writer, doc *result.Run) {
	sw := doc.Sweep
	open := sw.Plan.Open()
	fmt.Fprintf(w, "%-14s %10s", "level", "QPS")
	if open {
		fmt.Fprintf(w, " %10s", "achieved/s")
	}
	fmt.Fprintf(w, " %9s %9s %9s %9s %9s %9s %8s\n", "mean", "p50", "p90", "p99", "p99.9", "success", "errors")
	for i, p := range sw.Levels {
		fmt.Fprintf(w, "%-14s %10.1f", p.Label, p.QPS)
		if open {
			fmt.Fprintf(w, " %10.1f", p.Achieved)
		}
		fmt.Fprintf(w, " %9s %9s %9s %9s %9s %8.2f%% %8d", FormatDuration(p.Mean.Duration()),
			FormatDuration(p.P50.Duration()), FormatDuration(p.P90.Duration()),
			FormatDuration(p.P99.Duration()), FormatDuration(p.P999.Duration()), p.Success, p.Errors.Total())
		var notes []string
		if cls := p.Errors.String(); cls != "" {
			notes = append(notes, cls)
		}
		if p.Interrupted {
			notes = append(notes, "interrupted (partial)")
		}
		if i == sw.Peak {
			notes = append(notes, "peak")
		}
		if i == sw.Knee {
			notes = append(notes, "knee")
		}
		if i == sw.Limit && sw.Limit != sw.Knee {
			notes = append(notes, "largest meeting the objective")
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
