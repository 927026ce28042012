package compare

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Markdown writes the gate's summary as Markdown, for a pull-request comment: the verdict,
// a table of every check, and the warnings.
func (g *GateResult) Markdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "## apiperf gate: %s\n\n", mdVerdict(g.Outcome(), g.Regressions(), g.Inconclusive()))
	fmt.Fprintf(bw, "Baseline: %s · Current: %s  \n", mdCode(g.Baseline), mdCode(g.Current))
	fmt.Fprintf(bw, "Budgets: %s (two-sided Mann-Whitney U test over the repetitions; a check fails only when the change is significant and over budget)\n\n",
		g.Config.String())
	fmt.Fprintln(bw, "| Level | Metric | Baseline (median) | Current (median) | Change | p | n | Verdict | Could detect |")
	fmt.Fprintln(bw, "|---|---|--:|--:|--:|--:|--:|---|---|")
	for _, c := range g.Checks {
		p := strconv.FormatFloat(c.P, 'f', 3, 64)
		if !c.Tested {
			p += " (not tested)"
		}
		detect := "-"
		if c.Power != nil {
			detect = mdEscape(c.Power.Sentence(c.Metric, "repetitions each"))
		}
		fmt.Fprintf(bw, "| %s | %s | %s | %s | %s | %s | %d+%d | %s | %s |\n",
			mdEscape(c.Level), metricTitle(c.Metric), formatGateValue(c.BaselineMedian, c.Unit),
			formatGateValue(c.CurrentMedian, c.Unit), formatChange(c), p, len(c.Baseline), len(c.Current), checkVerdict(c), detect)
	}
	g.Conditions.markdown(bw)
	if len(g.Warnings) > 0 {
		fmt.Fprintln(bw, "\n**Warnings**")
		for _, s := range g.Warnings {
			fmt.Fprintf(bw, "- %s\n", mdEscape(s))
		}
	}
	return bw.Flush()
}

// Text writes a plain-text summary for a terminal: one line per check, the warnings,
// then the verdict.
func (g *GateResult) Text(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, c := range g.Checks {
		fmt.Fprintf(bw, "%-10s %-10s %12s -> %-12s %8s  p=%.3f  %s\n", c.Level, metricTitle(c.Metric),
			formatGateValue(c.BaselineMedian, c.Unit), formatGateValue(c.CurrentMedian, c.Unit),
			formatChange(c), c.P, checkVerdict(c))
	}
	for _, c := range g.Checks {
		if c.Power != nil {
			fmt.Fprintf(bw, "%s %s: %s\n", c.Level, metricTitle(c.Metric), c.Power.Sentence(c.Metric, "repetitions each"))
		}
	}
	g.Conditions.text(bw)
	for _, s := range g.Warnings {
		fmt.Fprintf(bw, "warning: %s\n", s)
	}
	switch g.Outcome() {
	case OutcomeFail:
		n := g.Regressions()
		fmt.Fprintf(bw, "gate: FAIL: %d regression%s against %s\n", n, plural(n), g.Baseline)
	case OutcomeInconclusive:
		fmt.Fprintf(bw, "gate: INCONCLUSIVE: %s against %s; more repetitions (--count) may decide\n", inconclusiveText(g.Inconclusive()), g.Baseline)
	case OutcomeNotComparable:
		fmt.Fprintf(bw, "gate: %s\n", g.Conditions.notComparable())
	default:
		fmt.Fprintf(bw, "gate: PASS against %s\n", g.Baseline)
	}
	return bw.Flush()
}

func checkVerdict(c GateCheck) string {
	switch {
	case c.Regression && !c.Tested:
		return "FAIL: over budget (not statistically tested)"
	case c.Regression && c.NoiseBand != nil:
		return "FAIL: significant, over budget and beyond the history's noise (" + formatBand(c) + ")"
	case c.Regression:
		return "FAIL: significant and over budget"
	case c.OverBudget && !c.BeyondNoise:
		return "pass: over budget but within the history's run-to-run noise (" + formatBand(c) + ")"
	case c.Inconclusive:
		return "INCONCLUSIVE: over budget but not significant"
	case c.Significant:
		return "pass: significant, within budget"
	}
	return "pass"
}

// mdVerdict is a Markdown headline's verdict: "PASS", "FAIL (2 regressions)" or
// "INCONCLUSIVE (1 check over budget, not significant)".
func mdVerdict(o Outcome, regressions, inconclusive int) string {
	switch o {
	case OutcomeFail:
		return fmt.Sprintf("FAIL (%d regression%s)", regressions, plural(regressions))
	case OutcomeInconclusive:
		return fmt.Sprintf("INCONCLUSIVE (%s)", inconclusiveText(inconclusive))
	case OutcomeNotComparable:
		return "NOT COMPARABLE (--strict-conditions: the conditions warn)"
	}
	return "PASS"
}

// inconclusiveText says how many checks were over budget without being significant.
func inconclusiveText(n int) string {
	return fmt.Sprintf("%d check%s over budget, not significant", n, plural(n))
}

func metricTitle(m string) string {
	switch m {
	case MetricQPS:
		return "QPS"
	case MetricErrorRate:
		return "error rate"
	case MetricCPU:
		return "CPU/req"
	}
	return m
}

func formatGateValue(v float64, unit string) string {
	switch unit {
	case "ms":
		return strconv.FormatFloat(v, 'f', 3, 64) + " ms"
	case "%":
		return strconv.FormatFloat(v, 'f', 3, 64) + "%"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + unit
}

func formatChange(c GateCheck) string {
	if c.Metric == MetricErrorRate {
		return fmt.Sprintf("%+.3f pt", c.Change)
	}
	return fmt.Sprintf("%+.1f%%", c.Change)
}

// formatBand shows a check's noise band: "±7.1%" or "±0.050 pt".
func formatBand(c GateCheck) string {
	if c.Metric == MetricErrorRate {
		return fmt.Sprintf("±%.3f pt", c.NoiseBand.Band)
	}
	return fmt.Sprintf("±%.1f%%", c.NoiseBand.Band)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// mdEscape keeps user text (paths, queries, labels) from breaking a Markdown table or
// injecting markup.
func mdEscape(s string) string {
	r := strings.NewReplacer("\\", "\\\\", "|", "\\|", "`", "\\`", "*", "\\*", "_", "\\_",
		"<", "&lt;", ">", "&gt;", "[", "\\[", "]", "\\]", "\n", " ")
	return r.Replace(s)
}

// mdCode shows s as inline code, with a fence longer than any backtick run in s.
func mdCode(s string) string {
	s = strings.NewReplacer("\n", " ", "|", "\\|").Replace(s)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence + " " + s + " " + fence
}
