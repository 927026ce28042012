package compare

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/sweep"
)

func TestValidateTargets(t *testing.T) {
	ok := []VariantSpec{{Name: "net-http", URL: "http://127.0.0.1:8080/"}, {Name: "gin", URL: "http://127.0.0.1:8081/"}}
	tests := []struct {
		name string
		ts   []VariantSpec
		want []string // substrings of the error; none for valid
	}{
		// Two named http targets are a sweep.
		{"ok", ok, nil},
		// One variant compares with nothing.
		{"one", ok[:1], []string{"at least two variants, got 1"}},
		// Names become directories: no slashes, no duplicates, not the comparison's own.
		{"names", []VariantSpec{{Name: "a/b", URL: "http://h/"}, {Name: "x", URL: "http://h/"}, {Name: "x", URL: "http://h/"}, {Name: "compare", URL: "http://h/"}},
			[]string{`"a/b": the name must be`, `"x": the name is given twice`, `"compare": the name is taken`}},
		// Every bad URL is named at once.
		{"urls", []VariantSpec{{Name: "a", URL: "ftp://h/"}, {Name: "b", URL: "127.0.0.1:8080"}},
			[]string{`variant a: "ftp://h/"`, `variant b: "127.0.0.1:8080"`}},
	}
	for _, tt := range tests {
		err := ValidateTargets(tt.ts)
		if len(tt.want) == 0 {
			if err != nil {
				t.Errorf("%s: ValidateTargets = %v, want nil", tt.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: ValidateTargets = nil, want %q", tt.name, tt.want)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: ValidateTargets = %q, want it to contain %q", tt.name, err, w)
			}
		}
	}
}

func TestParseTarget(t *testing.T) {
	got, err := ParseTarget("gin=http://127.0.0.1:8081/users/7?a=b=c")
	if err != nil || got.Name != "gin" || got.URL != "http://127.0.0.1:8081/users/7?a=b=c" {
		t.Errorf("ParseTarget = %+v, %v; want gin and the URL with its own '='", got, err)
	}
	for _, bad := range []string{"http://h/", "=http://h/", "gin="} {
		if _, err := ParseTarget(bad); err == nil {
			t.Errorf("ParseTarget(%q) = nil error, want NAME=URL", bad)
		}
	}
}

// fakeRun is a swept run whose peak is qps at c=10 (and native's, when given).
func fakeRun(qps, native float64) *result.Run {
	r := &result.Run{Sweep: &sweep.Record{Peak: 0, Levels: []sweep.Level{{Value: 10, Label: "c=10", QPS: qps, Attempts: 1000}}}}
	if native > 0 {
		r.Native = &result.Run{Sweep: &sweep.Record{Peak: 0, Levels: []sweep.Level{{Value: 10, Label: "c=10", QPS: native, Attempts: 1000}}}}
	}
	return r
}

func TestSweepVariants(t *testing.T) {
	ts := []VariantSpec{{Name: "all", URL: "http://h/1"}, {Name: "some", URL: "http://h/2"}, {Name: "broken", URL: "http://h/3"}, {Name: "none", URL: "http://h/4"}}
	var order []string
	fn := func(_ context.Context, tg VariantSpec, first bool) (*result.Run, string, error) {
		order = append(order, tg.Name)
		if first != (tg.Name == "all") {
			t.Errorf("sweep(%s) first = %v", tg.Name, first)
		}
		switch tg.Name {
		case "all":
			return fakeRun(1000, 4000), "out/all", nil // the reference, with the one native sweep
		case "some":
			return fakeRun(1500, 0), "out/some", nil
		case "broken":
			return nil, "", errors.New("target unreachable")
		}
		return fakeRun(2000, 0), "out/none", nil
	}
	m, err := SweepVariants(context.Background(), ts, fn)
	if strings.Join(order, ",") != "all,some,broken,none" {
		t.Errorf("swept %v, want every variant in order", order)
	}
	if err == nil || !strings.Contains(err.Error(), "variant broken: target unreachable") {
		t.Errorf("SweepVariants error = %v, want the broken variant's", err)
	}
	var names []string
	for _, v := range m.Variants {
		names = append(names, v.Name+"@"+v.Source)
	}
	if got := strings.Join(names, " "); got != "all@out/all some@out/some none@out/none" {
		t.Errorf("compared %s, want the three swept variants with their run directories", got)
	}
	// % of the first and of native (the reference's native sweep, for every variant).
	for i, want := range [][2]float64{{100, 25}, {150, 37.5}, {200, 50}} {
		if f, n := m.PctOfFirst(i), m.PctOfNative(i); f != want[0] || n != want[1] {
			t.Errorf("%s: %% of first %v, of native %v; want %v", m.Variants[i].Name, f, n, want)
		}
	}
	if w := strings.Join(m.Warnings, "\n"); !strings.Contains(w, "broken: no level measured; left out") || strings.Contains(w, "native") {
		t.Errorf("Warnings = %q, want the left-out variant and no note on native (an explanation, not a caveat)", m.Warnings)
	}
	if n := strings.Join(m.Notes, "\n"); !strings.Contains(n, "plain net/http's peak of 4000 req/s, swept once with all's plan") {
		t.Errorf("Notes = %q, want what %% of native is measured against", m.Notes)
	}

	// Interrupted after the first: what was measured is compared, and it says so.
	ctx, cancel := context.WithCancel(context.Background())
	m, err = SweepVariants(ctx, ts[:2], func(_ context.Context, tg VariantSpec, _ bool) (*result.Run, string, error) {
		cancel()
		return fakeRun(1000, 0), "out/" + tg.Name, nil
	})
	if err != nil || len(m.Variants) != 1 || !strings.Contains(strings.Join(m.Warnings, "\n"), "interrupted: 1 of 2 variants swept") {
		t.Errorf("interrupted SweepVariants = %d variants, %q, %v; want 1 and the interruption", len(m.Variants), m.Warnings, err)
	}
}
