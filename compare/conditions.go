package compare

import (
	"fmt"
	"io"
	"strings"

	"github.com/apiperf/apiperf/conditions"
	"github.com/apiperf/apiperf/result"
)

// ConditionsCheck is what a comparison says of its runs' conditions (package conditions).
type ConditionsCheck struct {
	// Lines are each run's conditions and what changed in the target's build.
	Lines []string `json:"lines"`
	// Warnings say the runs are not comparable (their generators' machines differ) or ran
	// on a busy machine; gate and ab --strict-conditions fail on them.
	Warnings []string `json:"warnings,omitempty"`
	// Machine lists how the generators' machines differ (empty: comparable).
	Machine []conditions.Difference `json:"machine,omitempty"`
}

// CheckConditions compares the conditions of runs a and b, named na and nb in its lines.
func CheckConditions(a, b *result.Run, na, nb string) *ConditionsCheck {
	return checkRecords(a.Conditions, b.Conditions, na, nb)
}

func checkRecords(a, b *conditions.Record, na, nb string) *ConditionsCheck {
	c := conditions.Compare(a, b, conditions.DefaultThresholds)
	out := &ConditionsCheck{Warnings: c.Warnings(na, nb), Machine: c.Machine}
	lines := c.Lines(na, nb)
	out.Lines = lines[:len(lines)-len(out.Warnings)]
	if len(c.Unknown) == 2 {
		out.Lines = []string{"conditions unknown for every run (made by an apiperf that did not record them)"}
	}
	return out
}

// Comparable says whether the runs' machines match (or are not known).
func (c *ConditionsCheck) Comparable() bool { return c == nil || len(c.Machine) == 0 }

// conditionsOfDiff is the check of a diff's sides; nil when a side is a classic .dat file,
// which records no conditions by design.
func conditionsOfDiff(a, b Side) *ConditionsCheck {
	if a.Classic || b.Classic {
		return nil
	}
	return checkRecords(a.Conditions, b.Conditions, a.Name, b.Name)
}

// conditionsOfMulti checks every variant's conditions against the first's.
func conditionsOfMulti(vs []Variant) *ConditionsCheck {
	if len(vs) < 2 {
		return nil
	}
	out := &ConditionsCheck{}
	known := 0
	for _, v := range vs {
		if v.Conditions != nil {
			known++
		}
	}
	ref := vs[0]
	for i, v := range vs[1:] {
		c := checkRecords(ref.Conditions, v.Conditions, ref.Name, v.Name)
		if known == 0 {
			out.Lines = c.Lines
			return out
		}
		if i > 0 {
			c.Lines = c.Lines[1:] // the reference's line once
		}
		out.Lines = append(out.Lines, c.Lines...)
		out.Warnings = append(out.Warnings, c.Warnings...)
		out.Machine = append(out.Machine, c.Machine...)
	}
	return out
}

// SetConditions keeps c in g: its lines shown before the warnings, its warnings among g's.
func (g *GateResult) SetConditions(c *ConditionsCheck) {
	g.Conditions = c
	g.Warnings = append(g.Warnings, c.warnings()...)
}

// SetConditions keeps c in r: its lines shown before the warnings, its warnings among r's.
func (r *ABResult) SetConditions(c *ConditionsCheck) {
	r.Conditions = c
	r.Warnings = append(r.Warnings, c.warnings()...)
}

// refuses says whether c refuses a comparison made with strict conditions: it warns.
func (c *ConditionsCheck) refuses(strict bool) bool { return strict && c != nil && len(c.Warnings) > 0 }

// notComparable is the headline's reason for OutcomeNotComparable.
func (c *ConditionsCheck) notComparable() string {
	return "NOT COMPARABLE (--strict-conditions): " + strings.Join(c.warnings(), "; ")
}

func (c *ConditionsCheck) warnings() []string {
	if c == nil {
		return nil
	}
	return c.Warnings
}

// text writes the lines, one each (nothing for nil).
func (c *ConditionsCheck) text(w io.Writer) {
	if c == nil {
		return
	}
	for _, l := range c.Lines {
		fmt.Fprintln(w, l)
	}
}

// markdown writes the lines as a Conditions list (nothing for nil).
func (c *ConditionsCheck) markdown(w io.Writer) {
	if c == nil || len(c.Lines) == 0 {
		return
	}
	fmt.Fprintln(w, "\n**Conditions**")
	for _, l := range c.Lines {
		fmt.Fprintf(w, "- %s\n", mdEscape(l))
	}
}
