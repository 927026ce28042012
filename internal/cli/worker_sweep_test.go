package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apiperf/apiperf/report"
)

// TestClusterSweepSameFiles runs a three-level sweep on one machine and across a coordinator
// and three worker processes (the commands of `apiperf k8s`): both write the same set of
// files, run.json with the same schema (the cluster record aside), a .dat with the same
// columns and levels, and exactly -n requests per level, counted by the server too.
func TestClusterSweepSameFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("processes")
	}
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	const perLevel = 900
	sweepArgs := []string{"--levels", "3,6,9", "-n", "900", "--warmup", "0", "--no-stop", "--name", "so"}
	one, three := t.TempDir(), t.TempDir()

	var stdout, stderr bytes.Buffer
	args := append(append([]string{"sweep", "--dir", one}, sweepArgs...), srv.URL)
	if code := Run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("apiperf %q exited %d\nstdout:\n%s\nstderr:\n%s", args, code, stdout.String(), stderr.String())
	}
	if n := served.Load(); n != 3*perLevel {
		t.Fatalf("the single-machine sweep sent %d requests, want %d", n, 3*perLevel)
	}

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	coordArgv, workerArgv := clusterCommands(t, exe, freeAddr(t), "sweep", srv.URL, append([]string{"--dir", three}, sweepArgs...)...)
	coord := startApiperf(t, coordArgv[1:]...)
	var workers []*proc
	for range 3 {
		workers = append(workers, startApiperf(t, workerArgv[1:]...))
	}
	if code := coord.wait(90 * time.Second); code != 0 {
		t.Fatalf("coordinator %q exited %d; stderr:\n%s", coordArgv, code, coord.stderr.String())
	}
	for k, w := range workers {
		if code := w.wait(10 * time.Second); code != 0 {
			t.Errorf("worker %d exited %d, want 0; stderr:\n%s", k+1, code, w.stderr.String())
		}
	}
	if n := served.Load(); n != 6*perLevel {
		t.Errorf("the scaled-out sweep sent %d requests, want %d", n-3*perLevel, 3*perLevel)
	}

	a, b := filepath.Join(one, "so"), filepath.Join(three, "so")
	// Scaled out, the workers table is one more file.
	if fa, fb := fileSet(t, a), slices.DeleteFunc(fileSet(t, b), func(f string) bool { return f == report.WorkersFile }); !reflect.DeepEqual(fa, fb) {
		t.Errorf("files differ:\n single machine: %q\n 3 workers:      %q", fa, fb)
	}

	ja, jb := readJSON(t, filepath.Join(a, "run.json")), readJSON(t, filepath.Join(b, "run.json"))
	if _, ok := jb["cluster"]; !ok {
		t.Error("the scaled-out run.json has no cluster record")
	}
	delete(jb, "cluster")
	// Scaled out, the steps run on the workers' machines, which the coordinator's /proc says
	// nothing of: its conditions have the machine but no steps.
	for _, doc := range []map[string]any{ja, jb} {
		if c, ok := doc["conditions"].(map[string]any); ok {
			delete(c, "steps")
		}
	}
	pa, pb := keyPaths(ja, ""), keyPaths(jb, "")
	// Whether apiperf's threads were short of CPU is the machine's at that moment, not the schema's.
	machine := func(p string) bool { return strings.HasSuffix(p, "/generator_bound") }
	pa, pb = slices.DeleteFunc(pa, machine), slices.DeleteFunc(pb, machine)
	if !reflect.DeepEqual(pa, pb) {
		t.Errorf("run.json schemas differ:\n only single machine: %q\n only 3 workers: %q", minus(pa, pb), minus(pb, pa))
	}
	t.Logf("compared %d files and %d run.json key paths", len(fileSet(t, a)), len(pa))
	for _, doc := range []map[string]any{ja, jb} {
		var got []string
		for _, s := range doc["steps"].([]any) {
			s := s.(map[string]any)
			got = append(got, jsonText(s["concurrency"])+":"+jsonText(s["requests"]))
		}
		if want := []string{"3:900", "6:900", "9:900"}; !reflect.DeepEqual(got, want) {
			t.Errorf("run.json steps (concurrency:requests) %q, want %q", got, want)
		}
	}

	da, db := datTable(t, filepath.Join(a, "so.dat")), datTable(t, filepath.Join(b, "so.dat"))
	if !reflect.DeepEqual(da, db) {
		t.Errorf(".dat columns and levels differ: single machine %q, 3 workers %q", da, db)
	}
}

// fileSet lists the files under dir, relative to it.
func fileSet(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// keyPaths is the set of object key paths in a JSON value ("/steps[]/latency/p99"). Left out
// are what the data decides, not the schema: warnings (caveats such as a peak at the last
// level) and what is inside the verdict's sections (which claims and notes it makes).
func keyPaths(v any, prefix string) []string {
	set := map[string]bool{}
	var walk func(v any, p string)
	walk = func(v any, p string) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if k == "warnings" {
					continue
				}
				set[p+"/"+k] = true
				if p != "/verdict" {
					walk(x, p+"/"+k)
				}
			}
		case []any:
			for _, x := range v {
				walk(x, p+"[]")
			}
		}
	}
	walk(v, prefix)
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func minus(a, b []string) []string {
	in := map[string]bool{}
	for _, x := range b {
		in[x] = true
	}
	var out []string
	for _, x := range a {
		if !in[x] {
			out = append(out, x)
		}
	}
	return out
}

// datTable is a .dat file reduced to what must match: per line, the column count and the level.
func datTable(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		out = append(out, f[0]+" ("+jsonText(len(f))+" columns)")
	}
	return out
}
