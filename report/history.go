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
	type row struct{ what, level, qps, p99, ok, note string }
	rows := make([]row, len(runs))
	urlW, levelW := 40, 14 // at least; wider for a longer URL or level, so the columns hold
	for i, r := range runs {
		x := row{level: "-", qps: "-", p99: "-", ok: "-"}
		if lv, has := r.Headline(); has {
			x.level = fmt.Sprintf("%s x%d", lv.Label, lv.Reps)
			x.qps, x.ok = fmt.Sprintf("%.2f", lv.QPS), FormatSuccess(lv.Success)+"%"
			if lv.Responses > 0 {
				x.p99 = FormatTimeUS(lv.Millis(lv.P99) * 1000)
			}
			if lv.GeneratorLimited() {
				x.note = "  (" + lv.GeneratorLimit.Brief() + ")"
			}
		}
		x.what = r.Method + " " + r.URL
		if r.HTTP2 {
			x.what += " (h2)"
		}
		urlW, levelW = max(urlW, len(x.what)), max(levelW, len(x.level))
		rows[i] = x
	}
	fmt.Fprintf(w, "%-5s %-19s %-8s %-*s %-*s %12s %10s %9s  %s\n", "ID", "START (UTC)", "KIND", urlW, "URL", levelW, "LEVEL", "REQ/S", "P99", "SUCCESS", "LABELS")
	for i, r := range runs {
		x := rows[i]
		line := fmt.Sprintf("%-5d %-19s %-8s %-*s %-*s %12s %10s %9s  %s", r.ID, r.Start.Format(time.DateTime), r.Kind,
			urlW, x.what, levelW, x.level, x.qps, x.p99, x.ok, formatLabels(r.Labels))
		fmt.Fprintln(w, strings.TrimRight(line, " ")+x.note)
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
