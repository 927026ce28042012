package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/apiperf/apiperf/store"
)

// HistoryList writes recorded runs as a table, one row each with the level that stands for it
// (its last level; a capacity search's answer) as every report of the run shows it (QPS, p99,
// success), and a note when that level was generator-limited.
func HistoryList(w io.Writer, runs []store.Entry) error {
	return render(w, "the history list", func(w io.Writer) { historyList(w, runs) })
}

func historyList(w io.Writer, runs []store.Entry) {
	fmt.Fprintf(w, "%-5s %-19s %-8s %-40s %-14s %12s %10s %9s  %s\n", "ID", "START (UTC)", "KIND", "URL", "LEVEL", "REQ/S", "P99", "SUCCESS", "LABELS")
	for _, r := range runs {
		level, qps, p99, ok, note := "-", "-", "-", "-", ""
		if lv, has := r.Headline(); has {
			level = fmt.Sprintf("%s x%d", lv.Label, lv.Reps)
			qps, ok = fmt.Sprintf("%.2f", lv.QPS), FormatSuccess(lv.Success)+"%"
			if lv.Responses > 0 {
				p99 = FormatTimeUS(lv.Millis(lv.P99) * 1000)
			}
			if lv.GeneratorLimited() {
				note = "  (" + lv.GeneratorLimit.Brief() + ")"
			}
		}
		what := r.Method + " " + r.URL
		if r.HTTP2 {
			what += " (h2)"
		}
		line := fmt.Sprintf("%-5d %-19s %-8s %-40s %-14s %12s %10s %9s  %s", r.ID, r.Start.Format(time.DateTime), r.Kind,
			what, level, qps, p99, ok, formatLabels(r.Labels))
		fmt.Fprintln(w, strings.TrimRight(line, " ")+note)
	}
}

// formatLabels lists labels as key=value in key order, a commit cut to 12 characters.
func formatLabels(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		v := m[k]
		if k == "commit" && len(v) > 12 {
			v = v[:12]
		}
		parts[i] = k + "=" + v
	}
	return strings.Join(parts, " ")
}
