package compare

import (
	"encoding/json"
	"fmt"
)

// Outcome is what a gate or an A/B comparison decided.
type Outcome string

const (
	// OutcomePass: no gated check's estimate is over budget, or every one that is lies
	// within the history's run-to-run noise.
	OutcomePass Outcome = "pass"
	// OutcomeFail: some check is a regression.
	OutcomeFail Outcome = "fail"
	// OutcomeInconclusive: no regression, but some gated check's estimate is over budget
	// without being significant: the data neither shows a regression nor rules one out.
	OutcomeInconclusive Outcome = "inconclusive"
	// OutcomeNotComparable: the conditions warn (machines differ, a busy machine) and the
	// comparison was asked to refuse such runs (--strict-conditions): nothing is judged.
	OutcomeNotComparable Outcome = "not_comparable"
)

// decide is the outcome of regressions failing checks and inconclusive ones, unless the
// conditions refuse the comparison.
func decide(regressions, inconclusive int, refused bool) Outcome {
	switch {
	case refused:
		return OutcomeNotComparable
	case regressions > 0:
		return OutcomeFail
	case inconclusive > 0:
		return OutcomeInconclusive
	}
	return OutcomePass
}

// indentJSON encodes v as indented JSON, newline-terminated.
func indentJSON(what string, v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", what, err)
	}
	return append(b, '\n'), nil
}

// CheckLine is one check of a gate or an A/B comparison as a CI report lists it: its level
// and metric, the values compared, the decision in words, and that decision's outcome
// (pass, fail, inconclusive; not comparable for every check of refused runs).
type CheckLine struct {
	Level, Metric, Values, Verdict string
	Outcome                        Outcome
}

// Lines are the gate's checks as CI report lines.
func (g *GateResult) Lines() []CheckLine {
	out := make([]CheckLine, 0, len(g.Checks))
	for _, c := range g.Checks {
		l := CheckLine{Level: c.Level, Metric: metricTitle(c.Metric), Verdict: checkVerdict(c),
			Values: fmt.Sprintf("%s -> %s (%s, p=%.3f)", formatGateValue(c.BaselineMedian, c.Unit), formatGateValue(c.CurrentMedian, c.Unit), formatChange(c), c.P)}
		l.Outcome = lineOutcome(g.Outcome(), c.Regression, c.Inconclusive)
		out = append(out, l)
	}
	return out
}

// Lines are the A/B comparison's gated checks as CI report lines.
func (r *ABResult) Lines() []CheckLine {
	var out []CheckLine
	for _, c := range r.Checks {
		if !c.Gated {
			continue
		}
		l := CheckLine{Level: c.Level, Metric: metricTitle(c.Metric), Verdict: abVerdict(c),
			Values: fmt.Sprintf("A %s, B %s (B vs A %s, p=%.4f)", formatGateValue(c.AMedian, c.Unit), formatGateValue(c.BMedian, c.Unit), abChange(c), c.P)}
		l.Outcome = lineOutcome(r.Outcome(), c.Regression, c.Inconclusive)
		out = append(out, l)
	}
	return out
}

// lineOutcome is one check's outcome within a comparison whose outcome is whole.
func lineOutcome(whole Outcome, regression, inconclusive bool) Outcome {
	switch {
	case whole == OutcomeNotComparable:
		return OutcomeNotComparable
	case regression:
		return OutcomeFail
	case inconclusive:
		return OutcomeInconclusive
	}
	return OutcomePass
}
