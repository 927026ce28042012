package conditions

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Keys are the fields a history query may select runs by (Match), with what each matches.
var Keys = []string{
	"cpu",        // CPU model, any part of it, without case
	"cpus",       // logical CPUs
	"kernel",     // kernel release, from its start
	"gomaxprocs", // apiperf's GOMAXPROCS
	"apiperf",    // apiperf's version, from its start
	"governor",   // CPU frequency governor
	"rev",        // the target's revision, from its start
	"go",         // the Go version of the target's build
	"race",       // true: the target was built with -race
	"busy",       // true: the machine was busy (DefaultThresholds); false: it was measured not to be
	"known",      // false: the run has no conditions (an older apiperf's)
}

// CheckKey returns an error naming the keys when key is not one of Keys.
func CheckKey(key string) error {
	if !slices.Contains(Keys, key) {
		return fmt.Errorf("unknown conditions field %q (want one of %s)", key, strings.Join(Keys, ", "))
	}
	return nil
}

// Match says whether r's field key matches value (see Keys). A run without conditions
// matches only known=false.
func (r *Record) Match(key, value string) bool {
	if key == "known" {
		return strconv.FormatBool(r != nil) == value
	}
	if r == nil {
		return false
	}
	g := r.Generator
	var b *Build
	if r.Target != nil {
		b = r.Target.Build
	}
	switch key {
	case "cpu":
		return value != "" && strings.Contains(strings.ToLower(g.CPUModel), strings.ToLower(value))
	case "cpus":
		return strconv.Itoa(g.CPUs) == value
	case "kernel":
		return value != "" && strings.HasPrefix(g.Kernel, value)
	case "gomaxprocs":
		return strconv.Itoa(g.GOMAXPROCS) == value
	case "apiperf":
		return value != "" && strings.HasPrefix(g.Apiperf, value)
	case "governor":
		return g.Governor == value
	case "rev":
		return b != nil && value != "" && strings.HasPrefix(b.Revision, value)
	case "go":
		return b != nil && b.GoVersion == value
	case "race":
		return strconv.FormatBool(b != nil && b.Race) == value
	case "busy":
		busy := r.Busy(DefaultThresholds) != ""
		return (busy || r.busyKnown()) && strconv.FormatBool(busy) == value
	}
	return false
}

// busyKnown says whether the record can tell a quiet machine: some step measured the CPU
// other processes took apart from the target's (no steps, or every step's Others holding the
// target, say nothing).
func (r *Record) busyKnown() bool {
	for _, s := range r.Steps {
		if !s.OthersHasTarget {
			return true
		}
	}
	return false
}

// Changed says what changed from the conditions of one run (prev) to the next (r): the
// generator's machine fields that make runs not comparable and the target's build fields,
// or that one of them is unknown; empty when nothing did (or both are unknown).
func Changed(prev, r *Record) []string {
	switch {
	case prev == nil && r == nil:
		return nil
	case prev == nil || r == nil:
		return []string{"conditions known on one side only"}
	}
	c := Compare(prev, r, DefaultThresholds)
	var out []string
	for _, d := range c.Machine {
		out = append(out, d.Field)
	}
	for _, d := range c.Build {
		out = append(out, "target "+d.Field)
	}
	return out
}
