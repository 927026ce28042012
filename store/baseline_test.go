package store

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/result"
)

// TestBaselineTwoURLs records runs of two URLs and two load shapes and checks which one each
// baseline query picks for a current run of the first URL.
func TestBaselineTwoURLs(t *testing.T) {
	for name, path := range backends(t) {
		t.Run(name, func(t *testing.T) { baselineTwoURLs(t, path(t)) })
	}
}

func baselineTwoURLs(t *testing.T, path string) {
	db, _ := openAt(t, path)
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const a, b = "http://127.0.0.1:8080/x", "http://127.0.0.1:8081/x"
	main := map[string]string{"branch": "main", "commit": "aaa"}
	wide := testRun(a, t0.Add(90*time.Minute), main, 2)
	wide.Load.Connections = 50
	runs := []*struct {
		name string
		id   int64
	}{{"#1 a on main", 0}, {"#2 b on main, newer", 0}, {"#3 a c=50 on main, newer still", 0}, {"#4 a labelled side=base on a branch", 0}, {"#5 current", 0}}
	docs := []*result.Run{
		testRun(a, t0, main, 2),
		testRun(b, t0.Add(time.Hour), main, 2),
		wide,
		testRun(a, t0.Add(2*time.Hour), map[string]string{"branch": "feature", "side": "base"}, 2),
		testRun(a, t0.Add(3*time.Hour), map[string]string{"branch": "feature"}, 2),
	}
	for i, d := range docs {
		id, _, err := db.Record(ctx, d, "")
		if err != nil {
			t.Fatal(err)
		}
		runs[i].id = id
	}
	cur := docs[4]
	for _, tc := range []struct {
		query   string
		want    int64  // the baseline's id; 0 when an error is wanted
		wantErr string // part of the error
	}{
		{"label=branch:main", 1, ""},                  // the automatic branch label alone: same URL and shape only, not #2 or #3
		{"label=branch:main,label=commit:aaa", 1, ""}, // automatic labels only narrow
		{"latest", 4, ""},                             // the newest run of the same experiment, never the current one
		{"label=side:base", 4, ""},                    // a label the user set picks that run
		{"2", 2, ""},                                  // an id picks that run, whatever it measured (the caller checks)
		{"#3", 3, ""},                                 // as does #id
		{"label=branch:gone", 0, "no recorded run of GET " + a},                         // nothing on that branch
		{"url=" + b, 0, "the newest run of another target or shape that matches is #2"}, // other target: said, not taken
	} {
		f, err := ParseQuery(tc.query)
		if err != nil {
			t.Fatalf("ParseQuery(%q): %v", tc.query, err)
		}
		_, id, err := db.Baseline(ctx, f, cur)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("Baseline(%q) = #%d, %v; want an error containing %q", tc.query, id, err, tc.wantErr)
		case tc.wantErr == "" && (err != nil || id != tc.want):
			t.Errorf("Baseline(%q) = #%d, %v; want #%d (%s)", tc.query, id, err, tc.want, runs[tc.want-1].name)
		}
	}
}

func TestIdentityDifferences(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	a := testRun("http://127.0.0.1:8080/x", t0, nil, 1)
	b := testRun("http://127.0.0.1:8081/x", t0.Add(time.Hour), map[string]string{"branch": "main"}, 3)
	if d := IdentityOf(a).Differences(IdentityOf(testRun(a.Scenario.URL, t0.Add(time.Hour), nil, 5))); len(d) != 0 {
		t.Errorf("runs of one URL and shape differ by %v; want nothing (labels, times and repetitions do not count)", d)
	}
	b.Scenario.Body = `{"x":1}`
	b.Load.Rate = 500
	got := strings.Join(IdentityOf(a).Differences(IdentityOf(b)), "; ")
	want := "URL http://127.0.0.1:8081/x, not http://127.0.0.1:8080/x; scenario "
	if !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "not none; load shape run rate=500/s, not run c=10") {
		t.Errorf("Differences = %q; want URL, scenario and load shape named", got)
	}
	if s := IdentityOf(a).String(); s != "GET http://127.0.0.1:8080/x (run c=10)" {
		t.Errorf("Identity.String() = %q", s)
	}
}
