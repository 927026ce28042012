package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/store"
)

func testRecording(t *testing.T, url string) *store.Recording {
	t.Helper()
	h := measure.NewHistogram()
	h.RecordN(2*time.Millisecond, 100)
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r := &result.Run{Version: result.Version, Tool: "apiperf test", Kind: result.KindRun, Host: "h",
		Command: []string{"apiperf", "run", url}, Scenario: scenario.Scenario{URL: url},
		Load: load.Config{Connections: 2, Threads: 1}, Start: start, End: start.Add(time.Second),
		Steps: []*measure.Step{{Label: "c=2", Concurrency: 2, Elapsed: measure.Duration(time.Second),
			Attempts: 100, Requests: 100, Successes: 100, Latency: h, AllAttempts: h}}}
	rec, err := store.NewRecording(r, "")
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// listed returns the URLs of the runs recorded in the history at db.
func listed(t *testing.T, db string) []string {
	t.Helper()
	code, out, stderr := runCLI(t, "history", "--db", db, "--json")
	if code != ExitOK {
		t.Fatalf("apiperf history --db %s = exit %d, stderr %s", db, code, stderr)
	}
	var runs []struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
		t.Fatalf("history --json: %v in %s", err, out)
	}
	var urls []string
	for _, r := range runs {
		urls = append(urls, r.URL)
	}
	return urls
}

// `history record` inserts a recording read from a file; twice adds it once.
func TestHistoryRecordCommand(t *testing.T) {
	dir := t.TempDir()
	db, file := filepath.Join(dir, "h.db"), filepath.Join(dir, "rec.json")
	b, _ := json.Marshal(testRecording(t, "http://127.0.0.1:1/rec"))
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if code, _, stderr := runCLI(t, "history", "record", "--db", db, file); code != ExitOK {
			t.Fatalf("apiperf history record = exit %d, stderr %s", code, stderr)
		}
	}
	if got := listed(t, db); strings.Join(got, " ") != "http://127.0.0.1:1/rec" {
		t.Errorf("history after recording twice = %v; want the one run", got)
	}
	os.WriteFile(file, []byte("{not json"), 0o644)
	if code, _, stderr := runCLI(t, "history", "record", "--db", db, file); code != ExitUsage || !strings.Contains(stderr, "reading the recording") {
		t.Errorf("history record of a broken file = exit %d, stderr %q; want exit 2 naming the recording", code, stderr)
	}
}

// A run's recording goes through a child process (this test binary acting as apiperf),
// the way the apiperf command records every run.
func TestRecordInChild(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(asApiperfEnv, "1")
	db := filepath.Join(t.TempDir(), "h.db")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := recordInChild(ctx, exe, db, testRecording(t, "http://127.0.0.1:1/child")); err != nil {
		t.Fatalf("recordInChild: %v", err)
	}
	if got := listed(t, db); strings.Join(got, " ") != "http://127.0.0.1:1/child" {
		t.Errorf("history after the child recorded = %v; want the one run", got)
	}
	// A child that cannot record reports why.
	os.WriteFile(db, []byte(strings.Repeat("not a database ", 20)), 0o644)
	err = recordInChild(ctx, exe, db, testRecording(t, "http://127.0.0.1:1/child"))
	if err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("recordInChild into a damaged database = %v; want its error", err)
	}
}

// In a test binary, runs record in their own process: the child would not be apiperf.
func TestRecorderIsApiperfOnly(t *testing.T) {
	if exe := recorderExe(); exe != "" {
		t.Errorf("recorderExe() in a test binary = %q; want \"\" (record in-process)", exe)
	}
}
