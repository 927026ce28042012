package result

import "github.com/apiperf/apiperf/scenario"

// Redact applies the redaction rule (scenario/redact.go) to everything in r that came from
// the user or the target: the scenario, the command line, labels, warnings and the capture's
// URLs, for r and its native run. It changes r in place, is idempotent, and every writer of
// a run (Encode, so run.json, --json and the history database; the reports) calls it.
func (r *Run) Redact() {
	if r == nil {
		return
	}
	extra, keep := r.Scenario.SecretParams, r.Scenario.KeepBody
	text := func(s string) string { return scenario.RedactText(s, extra...) }
	r.Scenario = r.Scenario.Redact()
	if r.Command != nil {
		r.Command = scenario.RedactArgs(r.Command, extra, keep)
	}
	r.Name = text(r.Name)
	if r.Labels != nil {
		r.Labels = r.RedactedLabels()
	}
	for i, w := range r.Warnings {
		r.Warnings[i] = text(w)
	}
	for _, s := range r.Steps {
		if s == nil {
			continue
		}
		s.Label = text(s.Label)
		for i, w := range s.Warnings {
			s.Warnings[i] = text(w)
		}
	}
	if t := r.Target; t != nil {
		t.Pprof, t.Metrics = text(t.Pprof), text(t.Metrics)
		for i, w := range t.Warnings {
			t.Warnings[i] = text(w)
		}
		for i := range t.Steps {
			ts := &t.Steps[i]
			for j, w := range ts.Warnings {
				ts.Warnings[j] = text(w)
			}
			if ts.Series != nil {
				ts.Series.URL = text(ts.Series.URL)
			}
		}
	}
	if c := r.Conditions; c != nil && c.Target != nil && c.Target.Cmdline != nil {
		c.Target.Cmdline = scenario.RedactArgs(c.Target.Cmdline, extra, false)
	}
	if r.Native != nil {
		if r.Native.Scenario.SecretParams == nil {
			r.Native.Scenario.SecretParams = extra
		}
		r.Native.Redact()
	}
}

// RedactedLabels is a copy of r's labels with the redaction rule applied to their values (a
// label may be a DSN or a URL with a token): what a reader of the run while it runs (the live
// page, /metrics) may show. r's own map is not changed, nor shared.
func (r *Run) RedactedLabels() map[string]string {
	out := make(map[string]string, len(r.Labels))
	for k, v := range r.Labels {
		out[k] = scenario.RedactText(v, r.Scenario.SecretParams...)
	}
	return out
}
