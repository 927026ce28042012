package profcap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"

	"github.com/apiperf/apiperf/exectrace"
	"github.com/apiperf/apiperf/inflate"
	"github.com/apiperf/apiperf/outfile"
)

// KindTrace names the execution trace (/debug/pprof/trace) among the captured kinds.
const KindTrace Kind = "trace"

// DefaultTrace is how long the execution trace of a level lasts unless told otherwise.
const DefaultTrace = 1

// MaxTraceBytes bounds a saved execution trace: a busy service writes a few MB per
// second of trace, 10 MB at 7k req/s on the test target; a bigger one is skipped.
const MaxTraceBytes = 256 << 20

// TraceFile is a captured execution trace, spilled to a temporary file while the sweep goes
// on (traces are MBs and are read only at the levels kept); Save moves it beside the level's profiles.
type TraceFile struct {
	path  string
	saved bool
	Bytes int64
}

// fetchTrace streams the trace at u into a temporary file and checks its header: a target
// that is not Go, or a Go older than 1.22, gives an error the capture reports once.
func fetchTrace(ctx context.Context, client *http.Client, u string) (*TraceFile, error) {
	body, err := get(ctx, client, u)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	f, err := outfile.CreateTemp("", "apiperf-trace-", ".out")
	if err != nil {
		return nil, fmt.Errorf("spilling trace: %w", err)
	}
	t := &TraceFile{path: f.Name()}
	t.Bytes, err = io.Copy(f, inflate.NewReader(body, MaxTraceBytes))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if inflate.IsTooLarge(err) {
		err = fmt.Errorf("trace %w; skipped", err)
	}
	if err == nil {
		err = checkTraceHeader(t.path)
	}
	if err != nil {
		t.Remove()
		return nil, fmt.Errorf("reading trace: %w", err)
	}
	return t, nil
}

// checkTraceHeader reads the header of the trace at path: a Go trace of format 1.22 or later.
func checkTraceHeader(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, 64)
	n, _ := io.ReadFull(f, head)
	if looksLikeHTML(head[:n]) {
		return errors.New("got an HTML page, not a trace (is the base URL the pprof root?)")
	}
	v, err := exectrace.Version(head[:n])
	if err != nil {
		return err
	}
	if v < exectrace.MinVersion {
		return fmt.Errorf("trace format of go 1.%d predates go 1.%d's; not read", v, exectrace.MinVersion)
	}
	return nil
}

// Summarize reads the trace and sums it up.
func (t *TraceFile) Summarize() (*exectrace.Summary, error) {
	f, err := os.Open(t.path)
	if err != nil {
		return nil, fmt.Errorf("reading trace: %w", err)
	}
	defer f.Close()
	return exectrace.Read(f)
}

// Save moves the trace into dir as trace.out.
func (t *TraceFile) Save(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("saving trace: %w", err)
	}
	to := filepath.Join(dir, exectrace.FileName)
	if err := os.Rename(t.path, to); err == nil {
		t.path, t.saved = to, true
		return nil
	}
	if err := copyFile(t.path, to); err != nil { // another file system
		return fmt.Errorf("saving trace: %w", err)
	}
	t.Remove()
	t.path, t.saved = to, true
	return nil
}

// Remove deletes the trace's temporary file (a trace of a level not kept).
func (t *TraceFile) Remove() {
	if t != nil && !t.saved {
		os.Remove(t.path)
	}
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
