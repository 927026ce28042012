package conditions

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Difference is one field whose value differs between runs A and B.
type Difference struct {
	Field string `json:"field"`
	A     string `json:"a"`
	B     string `json:"b"`
}

// String prints "CPU model (A: Intel Xeon, B: AMD EPYC)".
func (d Difference) String() string { return d.Between("A", "B") }

// Between prints the difference with the runs' names: "CPU model (base: Intel Xeon, new: AMD EPYC)".
func (d Difference) Between(a, b string) string {
	return fmt.Sprintf("%s (%s: %s, %s: %s)", d.Field, a, d.A, b, d.B)
}

// Comparison is what two runs' conditions say about comparing them.
type Comparison struct {
	A, B string `json:"-"` // each side's conditions in one line (String)
	// Unknown names the sides without a record: "A", "B".
	Unknown []string `json:"unknown,omitempty"`
	// Machine lists how the generators' machines differ: when not empty, the runs are
	// not comparable.
	Machine []Difference `json:"machine,omitempty"`
	// Build lists how the targets' builds differ (what changed between A and B).
	Build []Difference `json:"build,omitempty"`
	// BusyA and BusyB say why each side's machine was busy ("" when it was not).
	BusyA string `json:"busy_a,omitempty"`
	BusyB string `json:"busy_b,omitempty"`
}

// Compare checks the conditions of runs A and B (either may be nil: unknown) under t.
func Compare(a, b *Record, t Thresholds) Comparison {
	c := Comparison{A: a.String(), B: b.String(), BusyA: a.Busy(t), BusyB: b.Busy(t)}
	if a == nil {
		c.Unknown = append(c.Unknown, "A")
	}
	if b == nil {
		c.Unknown = append(c.Unknown, "B")
	}
	if a == nil || b == nil {
		return c
	}
	ga, gb := a.Generator, b.Generator
	c.Machine = differences([]field{
		{"CPU model", ga.CPUModel, gb.CPUModel},
		{"logical CPUs", strconv.Itoa(ga.CPUs), strconv.Itoa(gb.CPUs)},
		{"kernel", ga.Kernel, gb.Kernel},
		{"GOMAXPROCS", strconv.Itoa(ga.GOMAXPROCS), strconv.Itoa(gb.GOMAXPROCS)},
		{"apiperf major version", major(ga.Apiperf), major(gb.Apiperf)},
	})
	c.Build = buildDifferences(a.Target, b.Target)
	return c
}

type field struct{ name, a, b string }

// differences keeps the fields whose values differ and are both known.
func differences(fs []field) []Difference {
	var out []Difference
	for _, f := range fs {
		if f.a != f.b && f.a != "" && f.b != "" {
			out = append(out, Difference{Field: f.name, A: f.a, B: f.b})
		}
	}
	return out
}

// major is a release's major version ("v1" of "v1.2.3"); "" for a development build,
// whose version says nothing of compatibility.
func major(v string) string {
	if !strings.HasPrefix(v, "v") {
		return ""
	}
	m, _, _ := strings.Cut(v, ".")
	m, _, _ = strings.Cut(m, " ")
	return m
}

// buildDifferences lists how the targets' Go builds differ: revision, modified tree, Go
// version, -race, module version and the settings that change speed.
func buildDifferences(a, b *Target) []Difference {
	if a == nil || b == nil || a.Build == nil || b.Build == nil {
		return nil
	}
	ba, bb := a.Build, b.Build
	rev := func(x *Build) string {
		s := ShortRev(x.Revision)
		if x.Modified {
			s += " (modified)"
		}
		return s
	}
	fs := []field{
		{"revision", rev(ba), rev(bb)},
		{"Go version", ba.GoVersion, bb.GoVersion},
		{"module version", ba.Version, bb.Version},
		{"-race", strconv.FormatBool(ba.Race), strconv.FormatBool(bb.Race)},
		{"GOMAXPROCS", itoa(a.GOMAXPROCS), itoa(b.GOMAXPROCS)},
	}
	keys := slices.Sorted(maps.Keys(ba.Settings))
	for k := range bb.Settings {
		if _, ok := ba.Settings[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		va, vb := ba.Settings[k], bb.Settings[k]
		if va != vb {
			fs = append(fs, field{k, orUnknown(va, "unset"), orUnknown(vb, "unset")})
		}
	}
	return differences(fs)
}

func itoa(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// Comparable says whether the generators' machines match (or are not known).
func (c Comparison) Comparable() bool { return len(c.Machine) == 0 }

// Lines renders the comparison for a text report, naming the runs a and b: both sides'
// conditions, what changed in the target's build, then the warnings ("not comparable"
// naming the fields, busy machines).
func (c Comparison) Lines(a, b string) []string {
	out := []string{"conditions " + a + ": " + c.A, "conditions " + b + ": " + c.B}
	if len(c.Build) > 0 {
		out = append(out, "target build changed: "+joinDiffs(c.Build, a, b))
	}
	return append(out, c.Warnings(a, b)...)
}

// Warnings are what gate and ab warn of (and --strict-conditions fails on), naming the
// runs a and b: machines that differ, and a busy machine on either side.
func (c Comparison) Warnings(a, b string) []string {
	var out []string
	if !c.Comparable() {
		out = append(out, "not comparable: the generators' machines differ: "+joinDiffs(c.Machine, a, b))
	}
	for _, s := range []struct{ side, why string }{{a, c.BusyA}, {b, c.BusyB}} {
		if s.why != "" {
			out = append(out, fmt.Sprintf("busy machine on %s: %s", s.side, s.why))
		}
	}
	return out
}

func joinDiffs(ds []Difference, a, b string) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = d.Between(a, b)
	}
	return strings.Join(s, "; ")
}
