package compare

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// Method says in one line how an A/B result was decided.
func (r *ABResult) Method() string {
	looks := ""
	if r.Looks > 1 {
		looks = fmt.Sprintf(" x %d looks (pairs added until settled)", r.Looks)
	}
	return fmt.Sprintf("paired: Wilcoxon signed-rank test of the per-pair change B vs A, Hodges-Lehmann estimate; "+
		"each check at alpha %.3g (%g over %d gated checks%s), a check fails only when significant and over budget",
		r.CheckAlpha, r.Config.Alpha, r.gatedChecks(), looks)
}

func (r *ABResult) gatedChecks() int {
	if r.CheckAlpha == 0 {
		return 0
	}
	return int(r.Config.Alpha/r.CheckAlpha/float64(max(r.Looks, 1)) + 0.5)
}

// Text writes a plain-text summary for a terminal: one line per check with its ratio and
// confidence interval, what the comparison could detect, the warnings, then the verdict.
func (r *ABResult) Text(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "A: %s\nB: %s\n%s\nbudgets: %s\n\n", r.A, r.B, r.Method(), r.budgets())
	fmt.Fprintf(bw, "%-10s %-10s %14s %14s %24s %8s  %s\n", "LEVEL", "METRIC", "A (median)", "B (median)", "B vs A [CI]", "p", "VERDICT")
	for _, c := range r.Checks {
		fmt.Fprintf(bw, "%-10s %-10s %14s %14s %24s %8.4f  %s\n", c.Level, metricTitle(c.Metric),
			formatGateValue(c.AMedian, c.Unit), formatGateValue(c.BMedian, c.Unit), abChange(c), c.P, abVerdict(c))
	}
	fmt.Fprintln(bw)
	for _, c := range r.Checks {
		if c.Power != nil {
			fmt.Fprintf(bw, "%s %s: %s\n", c.Level, metricTitle(c.Metric), c.Power.Sentence(c.Metric, "pairs"))
		}
	}
	r.Conditions.text(bw)
	for _, s := range r.Warnings {
		fmt.Fprintf(bw, "warning: %s\n", s)
	}
	switch r.Outcome() {
	case OutcomeFail:
		n := r.Regressions()
		fmt.Fprintf(bw, "ab: FAIL: %d regression%s of B against A\n", n, plural(n))
	case OutcomeInconclusive:
		fmt.Fprintf(bw, "ab: INCONCLUSIVE: %s of B against A; more pairs (--max-pairs) or less noise may decide\n", inconclusiveText(r.Inconclusive()))
	case OutcomeNotComparable:
		fmt.Fprintf(bw, "ab: %s\n", r.Conditions.notComparable())
	default:
		fmt.Fprintln(bw, "ab: PASS: no regression of B against A")
	}
	return bw.Flush()
}

// Markdown writes the result as Markdown, for a pull-request comment.
func (r *ABResult) Markdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	verdict := mdVerdict(r.Outcome(), r.Regressions(), r.Inconclusive())
	fmt.Fprintf(bw, "## apiperf ab: %s\n\nA: %s · B: %s  \nBudgets: %s  \n%s\n\n", verdict, mdCode(r.A), mdCode(r.B), r.budgets(), mdEscape(r.Method()))
	fmt.Fprintln(bw, "| Level | Metric | A (median) | B (median) | B vs A [CI] | p | pairs | Verdict | Could detect |")
	fmt.Fprintln(bw, "|---|---|--:|--:|--:|--:|--:|---|---|")
	for _, c := range r.Checks {
		detect := "-"
		if c.Power != nil {
			detect = mdEscape(c.Power.Sentence(c.Metric, "pairs"))
		}
		fmt.Fprintf(bw, "| %s | %s | %s | %s | %s | %.4f | %d | %s | %s |\n", mdEscape(c.Level), metricTitle(c.Metric),
			formatGateValue(c.AMedian, c.Unit), formatGateValue(c.BMedian, c.Unit), mdEscape(abChange(c)), c.P, len(c.A), abVerdict(c), detect)
	}
	r.Conditions.markdown(bw)
	if len(r.Warnings) > 0 {
		fmt.Fprintln(bw, "\n**Warnings**")
		for _, s := range r.Warnings {
			fmt.Fprintf(bw, "- %s\n", mdEscape(s))
		}
	}
	return bw.Flush()
}

// budgets prints the gate's budgets, with the CPU per request when it was checked.
func (r *ABResult) budgets() string {
	s := r.Config.String()
	for _, c := range r.Checks {
		if c.Metric == MetricCPU {
			return s + fmt.Sprintf(", target CPU per request rise <= %g%%", r.Config.MaxCPURise)
		}
	}
	return s
}

// abChange shows the change with its interval: "x0.912 [0.89, 0.93]" for a ratio,
// "+0.120 pt [0.05, 0.20]" for the error rate.
func abChange(c ABCheck) string {
	if c.Metric == MetricErrorRate {
		s := fmt.Sprintf("%+.3f pt", c.Change)
		if c.CI != nil {
			s += fmt.Sprintf(" [%+.3f, %+.3f]", c.CI.Lo, c.CI.Hi)
		}
		return s
	}
	ratio := func(pct float64) string { return strconv.FormatFloat(1+pct/100, 'f', 3, 64) }
	s := "x" + ratio(c.Change)
	if c.CI != nil {
		s += " [" + ratio(c.CI.Lo) + ", " + ratio(c.CI.Hi) + "]"
	}
	return s
}

func abVerdict(c ABCheck) string {
	switch {
	case !c.Gated:
		if c.Significant {
			return "(not gated) significant"
		}
		return "(not gated)"
	case c.Regression:
		return "FAIL: significant and over budget"
	case c.Inconclusive && !c.Tested:
		return "INCONCLUSIVE: over budget, not tested (too few pairs)"
	case c.Inconclusive:
		return "INCONCLUSIVE: over budget but not significant"
	case c.Significant:
		return "pass: significant, within budget"
	}
	return "pass"
}
