package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/inflate"
	"github.com/apiperf/apiperf/internal/testenv"
)

// A recording that crossed a process boundary as JSON is stored exactly as Record stores
// the run: same rows in every table.
func TestRecordingRoundTrip(t *testing.T) {
	ctx := context.Background()
	r := testRun("http://127.0.0.1:1/a", time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), map[string]string{"branch": "main"}, 2)
	direct, _ := openTemp(t)
	if _, _, err := direct.Record(ctx, r, "x/run.json"); err != nil {
		t.Fatal(err)
	}
	rec, err := NewRecording(r, "x/run.json")
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	var back Recording
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	viaJSON, _ := openTemp(t)
	if id, added, err := viaJSON.Add(ctx, &back); err != nil || !added || id != 1 {
		t.Fatalf("Add(recording from JSON) = id %d, added %v, %v; want id 1, added", id, added, err)
	}
	if id, added, err := viaJSON.Add(ctx, &back); err != nil || added || id != 1 {
		t.Errorf("Add(same recording) = id %d, added %v, %v; want id 1, not added", id, added, err)
	}
	for _, q := range []string{
		"SELECT key, kind, name, url, method, host, start_ns, end_ns, source, spec, doc FROM runs",
		"SELECT run_id, key, value FROM labels",
		"SELECT run_id, idx, label, rep, concurrency, qps, mean_ms, p50_ms, p90_ms, p99_ms, success_pct, attempts, requests, latency FROM steps ORDER BY idx",
		"SELECT run_id, idx, label, qps, p99_ms, success_pct, level FROM levels ORDER BY idx",
	} {
		want, got := rows(t, direct, q), rows(t, viaJSON, q)
		if len(want) == 0 || !reflect.DeepEqual(got, want) {
			t.Errorf("%s\nvia a JSON recording: %v\nwant (Record): %v", q, got, want)
		}
	}
	if got, err := viaJSON.Run(ctx, 1); err != nil || got.Scenario.URL != r.Scenario.URL || len(got.Steps) != 2 {
		t.Errorf("Run(1) after Add = %+v, %v; want the recorded run with its 2 steps", got, err)
	}
}

func rows(t *testing.T, d *DB, q string) [][]any {
	t.Helper()
	rs, err := d.db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rs.Close()
	cols, _ := rs.Columns()
	var out [][]any
	for rs.Next() {
		row := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range row {
			ptrs[i] = &row[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, row)
	}
	return out
}

func TestCheckDB(t *testing.T) {
	dir := t.TempDir()
	db, good := openTemp(t)
	db.Close() // the header and schema are in the file, not only in the WAL
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	header, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	newer := append([]byte(nil), header...)
	binary.BigEndian.PutUint32(newer[60:], schemaVersion+1)
	for _, tc := range []struct {
		name, path string
		want       string // "" for no error
		damaged    bool
	}{
		{"absent: made at the end of the run", filepath.Join(dir, "none.db"), "", false},
		{"empty: SQLite takes it for a new database", write("empty.db", nil), "", false},
		{"a history database", good, "", false},
		{"garbage", write("junk.db", []byte(strings.Repeat("not a database ", 20))), "not an SQLite database", true},
		{"shorter than a header", write("short.db", []byte("SQLite format 3\x00")), "not an SQLite database", true},
		{"a newer apiperf's schema", write("newer.db", newer), "newer than this apiperf's", false},
		{"a directory", dir, "cannot read", false},
	} {
		err := CheckDB(tc.path)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: CheckDB = %v; want nil", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: CheckDB = %v; want an error with %q", tc.name, err, tc.want)
		case tc.damaged && !errors.Is(err, ErrDamaged):
			t.Errorf("%s: CheckDB = %v; want ErrDamaged", tc.name, err)
		}
	}
}

// TestStoredDocGzipBomb: a stored run document (the team's database is shared) that expands
// past the bound is refused at it, not decompressed whole.
func TestStoredDocGzipBomb(t *testing.T) {
	gz := bytes.NewBuffer(testenv.GzipBomb(maxDocBytes>>20+1, 1<<20)) // 1 MiB members, one past the bound
	if _, err := decodeDoc("run #1", gz.Bytes()); !inflate.IsTooLarge(err) || !strings.Contains(err.Error(), "run #1") {
		t.Errorf("decodeDoc(%d KB expanding past %d MiB) = %v; want a too-large error naming the run", gz.Len()>>10, maxDocBytes>>20, err)
	}
}
