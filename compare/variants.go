package compare

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/apiperf/apiperf/result"
)

// VariantSpec is one variant of a variant sweep: a name for its run directory and the table,
// the URL to load, and the process to sample from /proc (0: none).
type VariantSpec struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	PID  int    `json:"pid,omitempty"`
}

// String is the target as given on the command line, e.g. "gin=http://127.0.0.1:8081/users/7".
func (t VariantSpec) String() string { return t.Name + "=" + t.URL }

// ParseTarget reads a --variant value, NAME=URL.
func ParseTarget(s string) (VariantSpec, error) {
	name, u, ok := strings.Cut(s, "=")
	if !ok || name == "" || u == "" {
		return VariantSpec{}, fmt.Errorf("variant %q: want NAME=URL", s)
	}
	return VariantSpec{Name: strings.TrimSpace(name), URL: strings.TrimSpace(u)}, nil
}

// variantName is what a run directory may be called.
var variantName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ReservedName is the directory the comparison is written to, beside the variants' runs.
const ReservedName = "compare"

// ValidateTargets reports every problem with a variant sweep's targets at once: at least
// two, names usable as directory names, unique and not ReservedName, http(s) URLs with a host.
func ValidateTargets(ts []VariantSpec) error {
	var errs []error
	if len(ts) < 2 {
		errs = append(errs, fmt.Errorf("a variant sweep needs at least two variants, got %d", len(ts)))
	}
	seen := map[string]bool{}
	for _, t := range ts {
		switch {
		case !variantName.MatchString(t.Name):
			errs = append(errs, fmt.Errorf("variant %q: the name must be letters, digits, '.', '_' or '-'", t.Name))
		case t.Name == ReservedName:
			errs = append(errs, fmt.Errorf("variant %q: the name is taken by the comparison's directory", t.Name))
		case seen[t.Name]:
			errs = append(errs, fmt.Errorf("variant %q: the name is given twice", t.Name))
		}
		seen[t.Name] = true
		if u, err := url.Parse(t.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("variant %s: %q is not an http:// or https:// URL with a host", t.Name, t.URL))
		}
		if t.PID < 0 {
			errs = append(errs, fmt.Errorf("variant %s: pid %d is not a process id", t.Name, t.PID))
		}
	}
	return errors.Join(errs...)
}

// SweepFunc sweeps one variant with the sweep's plan and returns its run and where it was
// saved; first says it is the reference (the one a --vs-native sweep accompanies).
type SweepFunc func(ctx context.Context, t VariantSpec, first bool) (r *result.Run, dir string, err error)

// SweepVariants sweeps each target in turn with sweep, then compares the runs, the first as
// the reference. A variant whose sweep fails is left out with a warning and the others are
// still compared (the failures are returned joined); when ctx ends, what was measured is
// compared. A native sweep kept with the first run gives every variant its "% of native".
func SweepVariants(ctx context.Context, ts []VariantSpec, sweep SweepFunc) (*Multi, error) {
	var vs []Variant
	var errs, warns []string
	for i, t := range ts {
		if ctx.Err() != nil {
			warns = append(warns, fmt.Sprintf("interrupted: %d of %d variants swept", i, len(ts)))
			break
		}
		r, dir, err := sweep(ctx, t, i == 0)
		if err != nil {
			errs = append(errs, fmt.Sprintf("variant %s: %v", t.Name, err))
		}
		if r == nil || r.Sweep == nil || len(r.Sweep.Levels) == 0 {
			warns = append(warns, fmt.Sprintf("%s: no level measured; left out", t.Name))
			continue
		}
		v := VariantOf(t.Name, r)
		v.Source = dir
		vs = append(vs, v)
	}
	m := NewMulti(vs) // gives every variant the first one's "% of native"
	m.Warnings = append(warns, m.Warnings...)
	if len(errs) > 0 {
		return m, errors.New(strings.Join(errs, "; "))
	}
	return m, nil
}
