package result

import (
	"errors"
	"fmt"
	"sort"
)

// Merge combines runs of the same test made by several generators at once (one per host) into
// one run: steps with the same label are merged exactly (histograms, counts, timelines aligned
// by wall clock), connections and threads add up. The runs must load the same URL and be of
// the same kind.
func Merge(runs []*Run) (*Run, error) {
	if len(runs) == 0 {
		return nil, errors.New("nothing to merge")
	}
	first := runs[0]
	var errs []error
	for i, r := range runs[1:] {
		if r.Kind != first.Kind {
			errs = append(errs, fmt.Errorf("run %d is a %s, run 1 a %s", i+2, r.Kind, first.Kind))
		}
		if r.Scenario.URL != first.Scenario.URL || r.Scenario.MethodOrDefault() != first.Scenario.MethodOrDefault() {
			errs = append(errs, fmt.Errorf("run %d loads %s, run 1 %s", i+2, r.Scenario, first.Scenario))
		}
		if r.Load.OpenLoop() != first.Load.OpenLoop() {
			errs = append(errs, fmt.Errorf("run %d and run 1 differ in open/closed loop", i+2))
		}
	}
	for i := range runs {
		for j := range i {
			if sameRun(runs[i], runs[j]) {
				errs = append(errs, fmt.Errorf("run %d is run %d again (same host, start and counts): merging it would count its requests twice", i+1, j+1))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := &Run{
		Version: Version, Tool: first.Tool, Kind: first.Kind, Name: first.Name, Command: first.Command,
		Scenario: first.Scenario, Load: first.Load, Start: first.Start, End: first.End, Labels: first.Labels,
	}
	if first.Sweep != nil {
		sw := *first.Sweep // analyzed anew below: its levels are the merged steps'
		out.Sweep = &sw
	}
	out.Load.Connections, out.Load.Threads, out.Load.Requests, out.Load.Rate = 0, 0, 0, 0
	out.Load.MaxConnections = 0
	byLabel := map[string]int{}
	var hosts []string
	for _, r := range runs {
		out.Load.Connections += r.Load.Connections
		out.Load.Threads += r.Load.Threads
		out.Load.Requests += r.Load.Requests
		out.Load.Rate += r.Load.Rate
		out.Load.MaxConnections += r.Load.MaxConnections
		if r.Start.Before(out.Start) {
			out.Start = r.Start
		}
		if r.End.After(out.End) {
			out.End = r.End
		}
		if r.Host != "" {
			hosts = append(hosts, r.Host)
		}
		for _, w := range r.Warnings {
			out.Warnings = append(out.Warnings, hostPrefix(r.Host)+w)
		}
		for _, s := range r.Steps {
			key := fmt.Sprintf("%s#%d", s.Label, s.Rep)
			i, ok := byLabel[key]
			if !ok {
				c := s.Clone() // merging into it never changes the input
				byLabel[key] = len(out.Steps)
				out.Steps = append(out.Steps, c)
				continue
			}
			out.Steps[i].Merge(s)
		}
	}
	sort.Strings(hosts)
	if len(hosts) > 0 {
		out.Host = fmt.Sprint(hosts)
	}
	if out.Sweep != nil {
		out.Warnings = append(out.Warnings, out.Sweep.Analyze(out.Steps)...)
	}
	return out, nil
}

func hostPrefix(h string) string {
	if h == "" {
		return ""
	}
	return h + ": "
}

// sameRun reports whether a and b are one measurement (the same file given twice, or a copy):
// the same host and start, and steps that started together with the same attempts.
func sameRun(a, b *Run) bool {
	if a == b {
		return true
	}
	if a.Host != b.Host || !a.Start.Equal(b.Start) || len(a.Steps) != len(b.Steps) {
		return false
	}
	for i, s := range a.Steps {
		o := b.Steps[i]
		if s == nil || o == nil || !s.Start.Equal(o.Start) || s.Attempts != o.Attempts {
			return false
		}
	}
	return true
}
