package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// The secrets every command is given, and must never write anywhere.
var redactSecrets = []string{"URLPASS7731", "QTOKEN7731", "AUTHVAL7731", "BODYVAL7731", "CUSTOM7731", "MTOKEN7731", "PKEY7731"}

// redactServer answers 200 to everything on loopback.
func redactServer(t *testing.T) string {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		io.Copy(io.Discard, r.Body)
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// dumpDB returns every value of every table of a history database, gzip columns unpacked.
func dumpDB(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out strings.Builder
	tables, err := db.Query("SELECT name FROM sqlite_master WHERE type = 'table'")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for tables.Next() {
		var n string
		tables.Scan(&n)
		names = append(names, n)
	}
	tables.Close()
	for _, n := range names {
		rows, err := db.Query("SELECT * FROM " + n)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			rows.Scan(ptrs...)
			for _, v := range vals {
				b, ok := v.([]byte)
				if !ok {
					fmt.Fprintf(&out, "%v\n", v)
					continue
				}
				if zr, err := gzip.NewReader(bytes.NewReader(b)); err == nil {
					if u, err := io.ReadAll(zr); err == nil {
						b = u
					}
				}
				out.Write(b)
				out.WriteByte('\n')
			}
		}
		rows.Close()
	}
	return out.String()
}

// Finding 2, 3 and 7 (body) of issue 12: a URL password, a ?token= value, an Authorization
// value, a --body value and a --redact parameter are in no file written by run, sweep,
// capacity, gate, merge and history, in no history database row, and on neither stream.
func TestNoSecretInAnyOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every command against a loopback server")
	}
	base := redactServer(t)
	u := strings.Replace(base, "http://", "http://alice:URLPASS7731@", 1) + "/p?token=QTOKEN7731&mine=CUSTOM7731&page=2"
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	secret := []string{"-H", "Authorization: Bearer AUTHVAL7731", "-m", "POST", "--body", "BODYVAL7731",
		"--redact", "mine", "-t", "1", "--db", db}
	var streams strings.Builder
	cli := func(want int, args ...string) {
		t.Helper()
		var o, e bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		code := Run(ctx, args, &o, &e)
		streams.WriteString(o.String() + e.String())
		if code != want {
			t.Fatalf("apiperf %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, &o, &e)
		}
	}
	runA, runB := filepath.Join(dir, "a", "run.json"), filepath.Join(dir, "b", "run.json")
	os.Mkdir(filepath.Dir(runA), 0o755)
	os.Mkdir(filepath.Dir(runB), 0o755)
	// The capture endpoints answer 404: their warnings quote their URLs.
	cli(0, append([]string{"run", "-c", "2", "-d", "1s", "--latency", "-o", runA, "--bench", filepath.Join(dir, "bench.txt"),
		"--metrics", base + "/metrics?token=MTOKEN7731", "--pprof", base + "/debug/pprof?api_key=PKEY7731", u}, secret...)...)
	cli(0, append([]string{"run", "-c", "2", "-n", "40", "--json", "-o", runB, "--hlog", filepath.Join(dir, "run.hlog"), u}, secret...)...)
	cli(0, append([]string{"sweep", "--levels", "1,2", "-d", "200ms", "--warmup", "0", "--dir", filepath.Join(dir, "sweeps"), u}, secret...)...)
	cli(0, append([]string{"capacity", "--start", "50", "--max-rate", "100", "-d", "300ms", "--warmup", "0", "--slo", "p99<=1s",
		"--dir", filepath.Join(dir, "cap"), u}, secret...)...)
	cli(0, "merge", "-o", filepath.Join(dir, "merged", "run.json"), runA, runB)
	// The gate may pass or fail on two tiny runs; either way it writes what it writes.
	var o, e bytes.Buffer
	Run(context.Background(), []string{"gate", "--baseline", runA, "--current", runB, "--db", db,
		"--markdown", filepath.Join(dir, "gate.md"), "--json", filepath.Join(dir, "gate.json")}, &o, &e)
	streams.WriteString(o.String() + e.String())
	cli(0, "compare", "--dir", filepath.Join(dir, "compare"), filepath.Dir(runA), filepath.Dir(runB))
	cli(0, "diff", "--dir", filepath.Join(dir, "diff"), filepath.Dir(runA), filepath.Dir(runB))
	o.Reset()
	e.Reset()
	Run(context.Background(), append([]string{"ab", "-c", "1", "-d", "100ms", "--warmup", "0", "--count", "10", "-o", filepath.Join(dir, "ab"),
		"--markdown", filepath.Join(dir, "ab.md"), "--json", filepath.Join(dir, "ab.json"), u, u}, secret[:len(secret)-2]...), &o, &e)
	streams.WriteString(o.String() + e.String())
	if _, err := os.Stat(filepath.Join(dir, "ab.md")); err != nil {
		t.Errorf("ab wrote no Markdown: %v\n%s", err, &e)
	}
	cli(0, "history", "list", "--db", db)
	cli(0, "history", "list", "--json", "--db", db)
	cli(0, "history", "trend", "--db", db, "-o", filepath.Join(dir, "trend"))
	cli(0, "report", filepath.Dir(runA))

	files := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, _ := os.ReadFile(p)
		text := string(b)
		if strings.HasSuffix(p, ".db") {
			text = dumpDB(t, p)
		}
		for _, s := range redactSecrets {
			if strings.Contains(text, s) || strings.Contains(p, s) {
				t.Errorf("%s holds the secret %s", p, s)
			}
		}
		return nil
	})
	for _, s := range redactSecrets {
		if strings.Contains(streams.String(), s) {
			t.Errorf("stdout or stderr holds the secret %s", s)
		}
	}
	if files < 20 {
		t.Errorf("only %d files written; want every command's outputs", files)
	}
	doc, err := os.ReadFile(runA)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"alice:REDACTED@", "token=REDACTED", "mine=REDACTED", "page=2", `"body_size": 11`, "Authorization: REDACTED"} {
		if !bytes.Contains(doc, []byte(want)) {
			t.Errorf("run.json lacks %q (the redaction rule keeps what is not secret)", want)
		}
	}
}

// TestNoSecretFromTargetCmdline: a target's command line with secrets of every shape (a
// header, a DSN, a redis password, a --password=, an env-like TOKEN=), in a hand-edited
// run.json, is in no report rendered from it (conditions.FromCmdline redacts it when a run
// reads it from the target's pprof: TestFromCmdline).
func TestNoSecretFromTargetCmdline(t *testing.T) {
	secrets := []string{"HDRSECRET7732", "DSNPASS7732", "REQPASS7732", "PWSECRET7732", "ENVTOKEN7732"}
	cmdline := []string{"/usr/bin/svc", "-header", "Authorization: Bearer HDRSECRET7732",
		"-dsn", "postgres://app:DSNPASS7732@127.0.0.1/db", "-requirepass", "REQPASS7732",
		"--password=PWSECRET7732", "TOKEN=ENVTOKEN7732", "-port=8080"}
	dir := t.TempDir()
	out := filepath.Join(dir, "run.json")
	var o, e bytes.Buffer
	if code := Run(context.Background(), []string{"run", "-c", "1", "-t", "1", "-d", "300ms", "--no-history", "-o", out, redactServer(t) + "/"}, &o, &e); code != 0 {
		t.Fatalf("apiperf run: exit %d\n%s%s", code, &o, &e)
	}
	var doc map[string]any
	b, _ := os.ReadFile(out)
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	cond, ok := doc["conditions"].(map[string]any)
	if !ok {
		t.Fatalf("run.json has no conditions:\n%s", b)
	}
	cond["target"] = map[string]any{"found": "pprof cmdline", "cmdline": cmdline}
	b, _ = json.Marshal(doc)
	os.WriteFile(out, b, 0o644)
	o.Reset()
	e.Reset()
	if code := Run(context.Background(), []string{"report", dir}, &o, &e); code != 0 {
		t.Fatalf("apiperf report: exit %d\n%s%s", code, &o, &e)
	}
	html, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil || !bytes.Contains(html, []byte("-port=8080")) {
		t.Fatalf("report.html (%v) shows no target command line; want it, redacted", err)
	}
	for _, s := range secrets {
		if bytes.Contains(html, []byte(s)) || strings.Contains(o.String()+e.String(), s) {
			t.Errorf("report.html or the output holds the target's secret %s", s)
		}
	}
}

// TestNoSecretOnTheLivePage: while a run with secrets in its URL and a label runs, neither
// /metrics nor /live.json shows them (the live session was given the URL and the labels as
// the run document held them before its header redacted them).
func TestNoSecretOnTheLivePage(t *testing.T) {
	base := redactServer(t)
	u := strings.Replace(base, "http://", "http://alice:URLPASS7731@", 1) + "/p?token=QTOKEN7731&mine=CUSTOM7731&page=2"
	listen := freeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	wait := startRun(ctx, "run", "-q", "-c", "1", "-t", "1", "-d", "3s", "--no-history", "--listen", listen, "--redact", "mine",
		"--label", "db=postgres://app:PKEY7731@127.0.0.1/db", "-o", filepath.Join(t.TempDir(), "run.json"), u)
	metrics := scrapeFor(t, "http://"+listen+"/metrics", []string{"apiperf_requests_total{"}, 20*time.Second)
	page := waitHTTP(t, "http://"+listen+"/live.json", 5*time.Second)
	if code, _, stderr := wait(); code != 0 {
		t.Fatalf("run exited %d: %s", code, stderr)
	}
	for name, b := range map[string][]byte{"/metrics": metrics, "/live.json": page} {
		for _, s := range redactSecrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds the secret %s:\n%s", name, s, b)
			}
		}
		for _, want := range []string{"alice:REDACTED@", "page=2"} {
			if !bytes.Contains(b, []byte(want)) {
				t.Errorf("%s lacks %q (the target's URL, redacted):\n%s", name, want, b)
			}
		}
	}
}
