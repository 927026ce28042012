package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/store/storetest"
	"github.com/apiperf/apiperf/sweep"
)

// testRun is a run of url with labels, started at start, with reps repetitions of c=10.
func testRun(url string, start time.Time, labels map[string]string, reps int) *result.Run {
	r := &result.Run{
		Version: result.Version, Tool: "apiperf test", Kind: result.KindRun, Host: "h",
		Command: []string{"apiperf", "run", url}, Labels: labels,
		Scenario: scenario.Scenario{URL: url}, Load: load.Config{Connections: 10, Threads: 1},
		Start: start, End: start.Add(time.Second),
	}
	for i := range reps {
		h := measure.NewHistogram()
		h.RecordN(time.Duration(i+1)*time.Millisecond, 1000)
		r.Steps = append(r.Steps, &measure.Step{Label: "c=10", Rep: i, Concurrency: 10,
			Elapsed: measure.Duration(time.Second), Attempts: 1000, Requests: 1000, Successes: 990, Latency: h, AllAttempts: h})
	}
	return r
}

func p99(l sweep.Level) float64 { return l.Millis(l.P99) }

func openTemp(t *testing.T) (*DB, string) {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "sub", "history.db"))
}

// openAt opens the history at path (a file or a PostgreSQL URL), closed after the test.
func openAt(t *testing.T, path string) (*DB, string) {
	t.Helper()
	db, err := Open(path)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

func TestRecordAndList(t *testing.T) {
	for name, path := range backends(t) {
		t.Run(name, func(t *testing.T) { recordAndList(t, path(t)) })
	}
}

func recordAndList(t *testing.T, path string) {
	ctx := context.Background()
	db, _ := openAt(t, path)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)
	runs := []*result.Run{
		testRun("http://127.0.0.1:1/a", t0, map[string]string{"branch": "main", "commit": "aaa"}, 2),
		testRun("http://127.0.0.1:1/a", t0.Add(24*time.Hour), map[string]string{"branch": "feature"}, 1),
		testRun("http://127.0.0.1:1/b", t0.Add(48*time.Hour), map[string]string{"branch": "main"}, 3),
	}
	for _, r := range runs {
		if _, added, err := db.Record(ctx, r, ""); err != nil || !added {
			t.Fatalf("Record = added %v, %v; want added", added, err)
		}
	}
	// Recording the same run again adds nothing.
	if id, added, err := db.Record(ctx, runs[0], "x/run.json"); err != nil || added || id != 1 {
		t.Errorf("Record(same run) = id %d, added %v, %v; want id 1, not added", id, added, err)
	}
	tests := []struct {
		query string
		want  []int64 // ids, oldest first
	}{
		{"label=branch:main", []int64{1, 3}},               // label filter
		{"label=branch:main,latest", []int64{3}},           // newest matching run
		{"url=http://127.0.0.1:1/a", []int64{1, 2}},        // URL filter
		{"since=2026-03-02", []int64{2, 3}},                // date filter, inclusive
		{"since=2026-03-02,until=2026-03-03", []int64{2}},  // date range
		{"label=branch:main,label=commit:aaa", []int64{1}}, // every label must match
		{"label=branch:none", nil},                         // nothing matches
		{"kind=sweep", nil},                                // kind filter
		{"latest", []int64{3}},                             // newest run overall
	}
	for _, tt := range tests {
		f, err := ParseQuery(tt.query)
		if err != nil {
			t.Fatalf("ParseQuery(%q): %v", tt.query, err)
		}
		got, err := db.List(ctx, f)
		if err != nil {
			t.Fatalf("List(%q): %v", tt.query, err)
		}
		var ids []int64
		for _, e := range got {
			ids = append(ids, e.ID)
		}
		if fmt.Sprint(ids) != fmt.Sprint(tt.want) {
			t.Errorf("List(%q) = ids %v; want %v", tt.query, ids, tt.want)
		}
	}
	all, _ := db.List(ctx, Filter{})
	e := all[0]
	if !e.Start.Equal(t0) || e.Labels["commit"] != "aaa" || len(e.Levels) != 1 || e.Levels[0].Reps != 2 || e.Levels[0].Label != "c=10" ||
		e.Levels[0].QPS != 1000 || e.Levels[0].Success != 99 || p99(e.Levels[0]) < 1.99 || p99(e.Levels[0]) > 2.01 {
		t.Errorf("List()[0] = %+v; want start %v, commit aaa, one level c=10 of 2 reps at 1000 req/s, 99%% success, pooled p99 2 ms", e, t0)
	}
	back, err := db.Run(ctx, 3)
	if err != nil || back.Scenario.URL != runs[2].Scenario.URL || len(back.Steps) != 3 || !back.Steps[2].Latency.Equal(runs[2].Steps[2].Latency) {
		t.Errorf("Run(3) = %v, %v; want the recorded document back with its histograms", back, err)
	}
	if _, err := db.Run(ctx, 99); err == nil || !strings.Contains(err.Error(), "no run #99") {
		t.Errorf("Run(99) error %v; want no run #99", err)
	}
}

func TestParseQueryErrors(t *testing.T) {
	tests := []struct{ query, want string }{
		{"", "empty history query"},                      // nothing asked
		{"label=branch", "want label=KEY:VALUE"},         // label without a value
		{"branch:main", `unknown term "branch:main"`},    // a bare label
		{"since=yesterday", `"yesterday" is not a date`}, // bad date
	}
	for _, tt := range tests {
		if _, err := ParseQuery(tt.query); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseQuery(%q) error %v; want %q", tt.query, err, tt.want)
		}
	}
}

func TestImport(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range 3 {
		p := filepath.Join(dir, "runs", strconv.Itoa(i), "run.json")
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := testRun("http://127.0.0.1:1/", t0.Add(time.Duration(i)*time.Hour), nil, 1).Save(p); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "runs", "bad.json"), []byte("{"), 0o644) // not a run.json name: ignored
	os.MkdirAll(filepath.Join(dir, "broken"), 0o755)
	os.WriteFile(filepath.Join(dir, "broken", "run.json"), []byte("{\n\"version\": 1,\n\"steps\": [}"), 0o644)
	db, _ := openTemp(t)
	st, err := db.Import(ctx, dir)
	if err != nil || st.Found != 4 || st.Added != 3 || len(st.Skipped) != 1 || !strings.Contains(st.Skipped[0], "run.json:3") {
		t.Fatalf("Import = %+v, %v; want 4 found, 3 added, the broken file skipped with its line", st, err)
	}
	// Importing again adds nothing.
	if st, err := db.Import(ctx, dir); err != nil || st.Added != 0 {
		t.Errorf("second Import = %+v, %v; want nothing added", st, err)
	}
}

func TestDamagedDatabase(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "history.db")
	runJSON := filepath.Join(dir, "r", "run.json")
	os.MkdirAll(filepath.Dir(runJSON), 0o755)
	testRun("http://127.0.0.1:1/", time.Now().UTC(), nil, 1).Save(runJSON)
	before, _ := os.ReadFile(runJSON)
	// A file of garbage where the database should be.
	junk := []byte(strings.Repeat("this is not an SQLite database\n", 200))
	os.WriteFile(path, junk, 0o644)
	_, err := Open(path)
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "apiperf history import DIR") {
		t.Fatalf("Open(garbage) error %v; want ErrDamaged with the way out", err)
	}
	if after, _ := os.ReadFile(runJSON); string(after) != string(before) {
		t.Error("the run.json changed while opening a damaged database")
	}
	// Moving the file away and importing rebuilds the history.
	os.Rename(path, path+".damaged")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if st, err := db.Import(context.Background(), dir); err != nil || st.Added != 1 {
		t.Errorf("Import after rebuild = %+v, %v; want 1 added", st, err)
	}
}

// A real database whose pages were overwritten is also reported as damaged.
func TestCorruptedPages(t *testing.T) {
	db, path := openTemp(t)
	for i := range 50 {
		db.Record(context.Background(), testRun("http://127.0.0.1:1/", time.Unix(int64(i), 0).UTC(), nil, 3), "")
	}
	db.Close()
	os.Remove(path + "-wal")
	os.Remove(path + "-shm")
	b, _ := os.ReadFile(path)
	for i := 100; i < len(b); i++ { // keep the first bytes of the header, trash the rest
		b[i] = 0xA5
	}
	os.WriteFile(path, b, 0o644)
	db2, err := Open(path)
	if err == nil {
		_, err = db2.List(context.Background(), Filter{})
		db2.Close()
	}
	if !errors.Is(err, ErrDamaged) {
		t.Errorf("using a database with trashed pages: error %v; want ErrDamaged", err)
	}
}

// Goroutines recording at once over separate connections lose nothing.
func TestConcurrentRecord(t *testing.T) {
	for name, db := range backends(t) {
		t.Run(name, func(t *testing.T) { concurrentRecord(t, db(t)) })
	}
}

func concurrentRecord(t *testing.T, path string) {
	const writers, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			db, err := Open(path)
			if err != nil {
				errs <- err
				return
			}
			defer db.Close()
			for i := range each {
				r := testRun("http://127.0.0.1:1/", time.Unix(int64(w*1000+i), 0).UTC(), map[string]string{"w": strconv.Itoa(w)}, 2)
				if _, _, err := db.Record(context.Background(), r, ""); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	db, _ := Open(path)
	defer db.Close()
	if got, _ := db.List(context.Background(), Filter{}); len(got) != writers*each {
		t.Errorf("after %d concurrent records: %d runs listed", writers*each, len(got))
	}
}

// Four OS processes (this test binary, re-executed) recording into one database at once
// lose nothing and store nothing twice: two write 25 runs each, two others the same runs again.
func TestTwoProcesses(t *testing.T) {
	if p := os.Getenv("APIPERF_STORE_WRITER"); p != "" {
		writerProcess(t, p)
		return
	}
	for name, db := range backends(t) {
		t.Run(name, func(t *testing.T) { twoProcesses(t, db(t)) })
	}
}

// twoProcesses has two processes record each runs into the database at path, then both
// again: every run is stored exactly once.
func twoProcesses(t *testing.T, path string) {
	const each = 25
	var cmds []*exec.Cmd
	for w := range 4 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestTwoProcesses$")
		cmd.Env = append(os.Environ(), "APIPERF_STORE_WRITER="+path, "APIPERF_STORE_ID="+strconv.Itoa(w%2), "APIPERF_STORE_N="+strconv.Itoa(each))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("writer process: %v", err)
		}
	}
	db, _ := Open(path)
	defer db.Close()
	got, err := db.List(context.Background(), Filter{})
	if err != nil || len(got) != 2*each {
		t.Errorf("after two writers recorded %d runs each, twice over (four processes at once): %d listed, %v", each, len(got), err)
	}
	for _, e := range got {
		if len(e.Levels) != 1 || e.Levels[0].Reps != 2 {
			t.Errorf("run #%d has levels %+v; want one of 2 repetitions", e.ID, e.Levels)
		}
	}
}

func writerProcess(t *testing.T, path string) {
	w, _ := strconv.Atoi(os.Getenv("APIPERF_STORE_ID"))
	n, _ := strconv.Atoi(os.Getenv("APIPERF_STORE_N"))
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range n {
		r := testRun("http://127.0.0.1:1/", time.Unix(int64(w*1000+i), 0).UTC(), map[string]string{"writer": strconv.Itoa(w)}, 2)
		if _, _, err := db.Record(context.Background(), r, ""); err != nil {
			t.Fatal(err)
		}
	}
}

// backends are the databases the history's tests run on (storetest.Backends).
func backends(t *testing.T) map[string]func(t *testing.T) string { return storetest.Backends(t) }

// postgresSchemaURL is a schema of its own for one test in the PostgreSQL at base.
func postgresSchemaURL(t *testing.T, base string) string { return storetest.PostgresSchema(t, base) }
