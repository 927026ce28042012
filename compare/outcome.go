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
