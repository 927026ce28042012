package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/sweep"
)

// repStep is one repetition of c=10: n responses over one second, all at latency lat.
func repStep(rep int, n int64, lat time.Duration) *measure.Step {
	h := measure.NewHistogram()
	h.RecordN(lat, n)
	return &measure.Step{Label: "c=10", Rep: rep, Concurrency: 10, Elapsed: measure.Duration(time.Second),
		Attempts: n, Requests: n, Successes: n, Status: map[int]int64{200: n}, Latency: h, AllAttempts: h.Clone()}
}

// TestOneLevelEverywhere proves a level repeated [normal, normal, slow] shows the same QPS
// and p99 in the terminal table, the .dat file, run.json and report.html: the median QPS of
// the repetitions (1000, not the mean 833.3) and the p99 of all responses (the slow
// repetition's 900 ms, not the median 11 ms).
func TestOneLevelEverywhere(t *testing.T) {
	obj, _ := sweep.ParseObjective(sweep.DefaultObjective)
	r := &result.Run{Version: result.Version, Kind: result.KindSweep, Name: "reps",
		Scenario: scenario.Scenario{URL: "http://127.0.0.1:8080/"},
		Load:     load.Config{Connections: 10, Threads: 1, Duration: measure.Duration(time.Second)},
		Steps:    []*measure.Step{repStep(0, 1000, 10*time.Millisecond), repStep(1, 1000, 11*time.Millisecond), repStep(2, 500, 900*time.Millisecond)},
		Sweep:    sweep.NewRecord(sweep.Plan{Levels: []int{10}, Count: 3}, obj, sweep.DefaultRules),
	}
	r.Sweep.Analyze(r.Steps)
	l := r.Sweep.Levels[0]
	if l.QPS != 1000 || l.P99 < measure.Duration(890*time.Millisecond) || l.P99 > measure.Duration(910*time.Millisecond) {
		t.Fatalf("level = QPS %v p99 %v; want the median 1000 and the pooled ~900ms", l.QPS, l.P99)
	}
	p99 := FormatDuration(l.P99.Duration())
	mean := l.MeanMillis()

	var table bytes.Buffer
	SweepTable(&table, r)
	row := lineWith(table.String(), "c=10 ")
	if !strings.Contains(row, " 1000.0 ") || !strings.Contains(row, p99) {
		t.Errorf("terminal table row %q; want QPS 1000.0 and p99 %s", row, p99)
	}
	if !strings.Contains(table.String(), "knee: none") {
		t.Errorf("terminal table %q: want no knee (the pooled p99 misses p99<=500ms)", table.String())
	}

	dir := t.TempDir()
	if _, err := WriteAll(dir, r); err != nil {
		t.Fatal(err)
	}
	dat := string(mustRead(t, filepath.Join(dir, "reps.dat")))
	if want := fmt.Sprintf("10 1000.00 %s 100.00\n", datFloat(mean)); dat != want {
		t.Errorf(".dat = %q; want %q (median QPS, pooled mean)", dat, want)
	}
	html := string(mustRead(t, filepath.Join(dir, HTMLFile)))
	if !strings.Contains(html, "<td>c=10</td><td>3</td><td>1000.00</td>") || !strings.Contains(html, "<td>"+p99+"</td>") || !strings.Contains(html, "knee: none") {
		t.Errorf("report.html lacks the level row with 3 reps, QPS 1000.00, p99 %s and no knee", p99)
	}
	b, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "run.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := result.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Sweep.Levels; len(got) != 1 || got[0].QPS != 1000 || got[0].P99 != l.P99 || back.Sweep.Knee != -1 {
		t.Errorf("run.json levels = %+v knee %d; want QPS 1000, p99 %v, no knee", got, back.Sweep.Knee, l.P99)
	}
}

// lineWith returns the first line of s that contains sub.
func lineWith(s, sub string) string {
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, sub) {
			return line
		}
	}
	return ""
}
