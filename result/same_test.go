package result

import (
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

// Finding 7 of issue 12: merge refuses the same run twice (the same file, or a copy of it),
// which would double its counts; two generators' runs still merge.
func TestMergeRefusesTheSameRunTwice(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	mk := func(host string) *Run {
		s := &measure.Step{Label: "c=2", Start: t0, Attempts: 10, Requests: 10, Successes: 10,
			Latency: measure.NewHistogram(), AllAttempts: measure.NewHistogram()}
		return &Run{Version: Version, Kind: KindRun, Host: host, Start: t0, Scenario: scenario.Scenario{URL: "http://127.0.0.1:1/"}, Steps: []*measure.Step{s}}
	}
	a := mk("gen-a")
	b, err := a.Encode()
	if err != nil {
		t.Fatal(err)
	}
	copyOfA, err := Decode("copy.json", b)
	if err != nil {
		t.Fatal(err)
	}
	for _, runs := range [][]*Run{{a, a}, {a, copyOfA}, {mk("gen-b"), a, copyOfA}} {
		if _, err := Merge(runs); err == nil || !strings.Contains(err.Error(), "again") {
			t.Errorf("Merge of a run and itself = %v; want a refusal", err)
		}
	}
	if _, err := Merge([]*Run{a, mk("gen-b")}); err != nil {
		t.Errorf("Merge of two generators' runs = %v; want it merged", err)
	}
}
