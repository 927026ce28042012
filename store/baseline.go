package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apiperf/apiperf/result"
)

// AutoLabels are the labels apiperf adds to every run by itself (the git commit and branch
// around the working directory). They are recorded and can narrow a query, but a query of
// them alone does not make a run a baseline: Baseline then also wants the same Identity.
var AutoLabels = []string{"commit", "branch"}

// Identity is what a run measured: its target, its scenario and its load shape. A gate
// compares runs of one identity; anything else is a different experiment.
type Identity struct {
	Method string `json:"method"`
	URL    string `json:"url"`
	// Scenario fingerprints what was sent besides method and URL (headers, body, script,
	// mix); "" for a plain request without a body.
	Scenario string `json:"scenario,omitempty"`
	// Shape is the kind of run and its levels, e.g. "sweep c=10,50,100" or "run rate=500/s".
	Shape string `json:"shape"`
}

// IdentityOf returns r's identity.
func IdentityOf(r *result.Run) Identity {
	id := Identity{Method: r.Scenario.MethodOrDefault(), URL: r.Scenario.URL, Shape: shape(r) + protocol(r)}
	sc := r.Scenario
	sc.URL, sc.Method, sc.BodyFile = "", "", "" // the body counts, not where it was read from
	if b, err := json.Marshal(sc); err == nil && string(b) != `{"url":""}` {
		sum := sha256.Sum256(b)
		id.Scenario = hex.EncodeToString(sum[:4])
	}
	return id
}

// protocol is "" for HTTP/1.1 and " http2 streams=N" for HTTP/2: another protocol is
// another experiment.
func protocol(r *result.Run) string {
	if !r.Load.HTTP2 {
		return ""
	}
	return " http2 streams=" + strconv.Itoa(r.Load.StreamsPerConn())
}

// shape is r's kind and levels: the sweep plan's levels, or the one level of a run.
func shape(r *result.Run) string {
	var levels []string
	switch {
	case r.Sweep != nil && len(r.Sweep.Plan.Rates) > 0:
		for _, v := range r.Sweep.Plan.Rates {
			levels = append(levels, strconv.FormatFloat(v, 'g', -1, 64))
		}
		return r.Kind + " rate=" + strings.Join(levels, ",") + "/s"
	case r.Sweep != nil && len(r.Sweep.Plan.Levels) > 0:
		for _, v := range r.Sweep.Plan.Levels {
			levels = append(levels, strconv.Itoa(v))
		}
		return r.Kind + " c=" + strings.Join(levels, ",")
	case r.Kind == result.KindCapacity:
		return r.Kind
	case r.Load.OpenLoop():
		return r.Kind + " rate=" + strconv.FormatFloat(r.Load.Rate, 'g', -1, 64) + "/s"
	}
	return r.Kind + " c=" + strconv.Itoa(r.Load.Connections)
}

// String describes the identity in one line: "GET http://127.0.0.1:8080/x (run c=50)".
func (id Identity) String() string {
	s := id.Method + " " + id.URL + " (" + id.Shape
	if id.Scenario != "" {
		s += ", scenario " + id.Scenario
	}
	return s + ")"
}

// Differences lists how other differs from id, e.g. `URL http://a/x, not http://b/x`; none
// when the two are the same experiment.
func (id Identity) Differences(other Identity) []string {
	var out []string
	add := func(what, a, b string) {
		if a != b {
			if a == "" {
				a = "none"
			}
			if b == "" {
				b = "none"
			}
			out = append(out, fmt.Sprintf("%s %s, not %s", what, b, a))
		}
	}
	add("URL", id.URL, other.URL)
	add("method", id.Method, other.Method)
	add("scenario", id.Scenario, other.Scenario)
	add("load shape", id.Shape, other.Shape)
	return out
}

// userLabelled reports whether f selects a label the user set explicitly (not an AutoLabel).
func (f Filter) userLabelled() bool {
	for k := range f.Labels {
		if !slices.Contains(AutoLabels, k) {
			return true
		}
	}
	return false
}

// Baseline returns the run to compare cur with, chosen by f and never cur itself:
//   - f.ID set: that run;
//   - f selects a label the user set (--label): the newest run carrying it;
//   - otherwise (automatic labels such as branch, url, since, latest): the newest matching
//     run of cur's Identity, so that "label=branch:main" means "this experiment on main".
//
// The caller checks the identity of what comes back when it was chosen by id or user label.
func (d *DB) Baseline(ctx context.Context, f Filter, cur *result.Run) (*result.Run, int64, error) {
	if f.ID != 0 {
		r, err := d.Run(ctx, f.ID)
		return r, f.ID, err
	}
	f.Limit = 0
	runs, err := d.List(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	want, curKey := IdentityOf(cur), Key(cur)
	sameOnly := !f.userLabelled()
	var other *Entry
	for i := len(runs) - 1; i >= 0; i-- {
		e := &runs[i]
		if sameOnly && (e.URL != want.URL || e.Method != want.Method) {
			if other == nil {
				other = e
			}
			continue
		}
		r, err := d.Run(ctx, e.ID)
		if err != nil {
			return nil, 0, err
		}
		if Key(r) == curKey {
			continue
		}
		if sameOnly && IdentityOf(r) != want {
			if other == nil {
				other = e
			}
			continue
		}
		return r, e.ID, nil
	}
	msg := fmt.Sprintf("no recorded run matches in %s", d.path)
	if sameOnly {
		msg = fmt.Sprintf("no recorded run of %s matches in %s", want, d.path)
		if other != nil {
			msg += fmt.Sprintf(" (the newest run of another target or shape that matches is #%d, %s %s; choose it by id and --allow-mismatch to compare anyway)",
				other.ID, other.Method, other.URL)
		}
	}
	return nil, 0, fmt.Errorf("%s", msg)
}
