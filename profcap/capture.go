// Package profcap captures a target's pprof profiles, Prometheus runtime metrics and /proc
// samples while a load runs (a Session, one StepCapture per load step) and turns them into top
// tables, a flame graph and a metrics timeline (the Record run.json keeps) and the verdict's Evidence.
package profcap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/google/pprof/profile"

	"github.com/apiperf/apiperf/inflate"
	"github.com/apiperf/apiperf/outfile"
)

// DefaultSlack is how much longer than its own duration a profile fetch may
// take before it is abandoned (a heap or goroutine profile has duration zero).
const DefaultSlack = 5 * time.Second

// MaxProfileBytes bounds how much of one profile response is read (a profile of a real
// service is a few MB at most; a bigger answer is skipped with a warning that says so).
const MaxProfileBytes = 16 << 20

// MaxProfileUncompressed bounds what one gzipped profile may expand to: a gzip bomb served
// on the pprof port is refused at it, not decompressed whole.
const MaxProfileUncompressed = 64 << 20

// Kind names one of the captured profiles.
type Kind string

// The profiles Capture can fetch, in the order they are reported.
const (
	KindCPU       Kind = "cpu"
	KindHeap      Kind = "heap"
	KindGoroutine Kind = "goroutine"
	KindBlock     Kind = "block"
	KindMutex     Kind = "mutex"
)

// FileName is the name Save gives the profile, e.g. cpu.pb.gz.
func (k Kind) FileName() string { return string(k) + ".pb.gz" }

// Request says which profiles to capture from a target and how long to
// profile CPU. The zero value requests nothing and does not validate.
type Request struct {
	// Base is the pprof root, e.g. http://127.0.0.1:6060/debug/pprof.
	Base string `json:"base"`
	// CPU is how long to profile CPU; 0 skips the CPU profile. The target is
	// asked for whole seconds: CPU rounded to the nearest second, at least 1.
	CPU time.Duration `json:"cpu,omitempty"`
	// Heap captures the heap profile (inuse and alloc space).
	Heap bool `json:"heap,omitempty"`
	// Goroutines captures the goroutine profile.
	Goroutines bool `json:"goroutines,omitempty"`
	// Contention captures the block and mutex profiles over the CPU profile's seconds,
	// when the target enabled them; one it does not serve (404) or that has no samples
	// is left out without a warning. Needs CPU > 0.
	Contention bool `json:"contention,omitempty"`
	// Slack is added to each fetch's duration to form its deadline;
	// 0 means DefaultSlack.
	Slack time.Duration `json:"slack,omitempty"`
	// CPUAfter delays the start of the CPU profile (a settle time after the load starts).
	CPUAfter time.Duration `json:"cpu_after_ns,omitempty"`
	// SnapshotAfter delays the heap and goroutine fetches (near the end of the load).
	SnapshotAfter time.Duration `json:"snapshot_after_ns,omitempty"`
	// Trace is how long to record the execution trace (/debug/pprof/trace); 0 skips it.
	// TraceAfter delays its start: Within puts it after the CPU profile, because the
	// tracer's own work shows in a CPU profile taken at the same time (README, Explain).
	Trace      time.Duration `json:"trace_ns,omitempty"`
	TraceAfter time.Duration `json:"trace_after_ns,omitempty"`
}

// Settle bounds: the CPU profile starts after min(MaxSettle, window/5), the heap and
// goroutine snapshots min(MaxSnapshotLead, window/10) before the window ends, and the CPU
// profile ends at least CPUMargin before the window does.
const (
	MaxSettle       = time.Second
	MaxSnapshotLead = 500 * time.Millisecond
	CPUMargin       = 100 * time.Millisecond
)

// Within fits r into a load window of length w: the CPU profile starts after a settle
// time and lasts the whole seconds that end inside the window, less the trace's; the trace
// follows it; heap and goroutine snapshots come near the end. When no 1 s CPU profile fits,
// CPU is 0; when the trace does not fit after it, the trace is shortened (down to
// MinTrace) or skipped. The returned note says so (an empty note otherwise).
func (r Request) Within(w time.Duration) (Request, string) {
	settle := min(MaxSettle, w/5)
	r.SnapshotAfter = w - min(MaxSnapshotLead, w/10)
	room := w - settle - CPUMargin
	var notes []string
	if r.CPU > 0 {
		r.CPUAfter = settle
		n := (room - r.Trace) / time.Second
		if n < 1 && r.Trace > 0 {
			n = room / time.Second // the CPU profile first: the trace gets what is left
		}
		if n < 1 {
			r.CPU = 0
			notes = append(notes, fmt.Sprintf("cpu: no 1s profile fits in a %v window after a %v settle; skipped", w, settle))
		} else {
			r.CPU = min(r.CPU.Round(time.Second), n*time.Second)
		}
	}
	if r.Trace > 0 {
		start := settle
		if r.CPU > 0 {
			start += time.Duration(r.cpuSeconds()) * time.Second
		}
		r.TraceAfter = start
		switch left := w - CPUMargin - start; {
		case left < MinTrace:
			notes = append(notes, fmt.Sprintf("trace: no %v trace fits in a %v window after the CPU profile; skipped", MinTrace, w))
			r.Trace = 0
		case left < r.Trace:
			notes = append(notes, fmt.Sprintf("trace: shortened to %v to fit in a %v window after the CPU profile", left.Round(time.Millisecond), w))
			r.Trace = left.Round(time.Millisecond)
		}
	}
	return r, strings.Join(notes, "; ")
}

// MinTrace is the shortest execution trace Within keeps.
const MinTrace = 250 * time.Millisecond

// Validate reports every problem with r at once.
func (r Request) Validate() error {
	var errs []error
	u, err := url.Parse(r.Base)
	switch {
	case r.Base == "":
		errs = append(errs, errors.New("profile base URL is empty"))
	case err != nil:
		errs = append(errs, fmt.Errorf("profile base URL: %w", err))
	case u.Scheme != "http" && u.Scheme != "https":
		errs = append(errs, fmt.Errorf("profile base URL %q: scheme must be http or https", r.Base))
	case u.Host == "":
		errs = append(errs, fmt.Errorf("profile base URL %q: no host", r.Base))
	}
	if r.CPU < 0 {
		errs = append(errs, fmt.Errorf("CPU profile duration %v is negative", r.CPU))
	}
	if r.Trace < 0 {
		errs = append(errs, fmt.Errorf("trace duration %v is negative", r.Trace))
	}
	if r.Slack < 0 {
		errs = append(errs, fmt.Errorf("profile slack %v is negative", r.Slack))
	}
	if r.CPUAfter < 0 || r.SnapshotAfter < 0 || r.TraceAfter < 0 {
		errs = append(errs, fmt.Errorf("profile delays %v, %v and %v must not be negative", r.CPUAfter, r.SnapshotAfter, r.TraceAfter))
	}
	if r.CPU == 0 && !r.Heap && !r.Goroutines && r.Trace == 0 {
		errs = append(errs, errors.New("no profile requested (CPU, heap, goroutines or trace)"))
	}
	return errors.Join(errs...)
}

// String says what will be captured, e.g. "cpu 10s, heap, goroutine from http://h/debug/pprof".
func (r Request) String() string {
	var parts []string
	if r.CPU > 0 {
		parts = append(parts, fmt.Sprintf("cpu %ds", r.cpuSeconds()))
	}
	if r.Heap {
		parts = append(parts, "heap")
	}
	if r.Goroutines {
		parts = append(parts, "goroutine")
	}
	if r.Contention && r.CPU > 0 {
		parts = append(parts, "block and mutex if enabled")
	}
	if r.Trace > 0 {
		parts = append(parts, "trace "+r.Trace.String())
	}
	return strings.Join(parts, ", ") + " from " + r.Base
}

func (r Request) cpuSeconds() int {
	return max(1, int(math.Round(r.CPU.Seconds())))
}

func (r Request) slack() time.Duration {
	if r.Slack == 0 {
		return DefaultSlack
	}
	return r.Slack
}

// Profile is one captured profile: the bytes as served and their parse.
type Profile struct {
	Kind Kind
	// Raw is a gzipped profile.proto that `go tool pprof` opens.
	Raw []byte
	// Parsed is Raw decoded.
	Parsed *profile.Profile
}

// Profiles holds what Capture got; a profile that was not requested or
// could not be captured is nil.
type Profiles struct {
	CPU, Heap, Goroutine *Profile
	// Block and Mutex are nil unless the target enabled them and they have samples.
	Block, Mutex *Profile
	// Trace is the execution trace, not yet read.
	Trace *TraceFile
}

// All returns the captured profiles in report order.
func (p *Profiles) All() []*Profile {
	var all []*Profile
	for _, q := range []*Profile{p.CPU, p.Heap, p.Goroutine, p.Block, p.Mutex} {
		if q != nil {
			all = append(all, q)
		}
	}
	return all
}

// Save writes each captured profile to dir as <kind>.pb.gz, creating dir.
func (p *Profiles) Save(dir string) error {
	all := p.All()
	if len(all) == 0 {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("saving profiles: %w", err)
	}
	for _, q := range all {
		name := filepath.Join(dir, q.Kind.FileName())
		if err := outfile.Write(name, q.Raw); err != nil {
			return fmt.Errorf("saving %s profile: %w", q.Kind, err)
		}
	}
	return nil
}

type fetchResult struct {
	prof   *Profile
	trace  *TraceFile
	err    error
	absent bool // an optional profile the target does not serve or has no samples of
}

// optional kinds are captured only when the target enabled them.
func optional(k Kind) bool { return k == KindBlock || k == KindMutex }

// statusError is a profile endpoint's answer other than 200 OK.
type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string { return e.msg }

// notServed: the endpoint does not exist (404), as block and mutex do not on a target
// that serves only some profiles.
func notServed(err error) bool {
	var se *statusError
	return errors.As(err, &se) && se.code == http.StatusNotFound
}

// Capture fetches the requested profiles concurrently, each after its delay
// (CPUAfter, SnapshotAfter) and under its own deadline (its duration plus req.Slack). Failures never abort: they come back
// as one warning, "captured 2 of 3 profiles: heap: 404 Not Found". An invalid
// req is reported the same way. A nil client means http.DefaultClient; a
// client's own Timeout, if set, must exceed the CPU duration.
func Capture(ctx context.Context, req Request, client *http.Client) (*Profiles, []string) {
	out := &Profiles{}
	if err := req.Validate(); err != nil {
		return out, []string{"captured no profiles: " + strings.ReplaceAll(err.Error(), "\n", "; ")}
	}
	if client == nil {
		client = http.DefaultClient
	}
	base := strings.TrimRight(req.Base, "/")
	type job struct {
		kind  Kind
		url   string
		dur   time.Duration
		after time.Duration
	}
	var jobs []job
	if req.CPU > 0 {
		n := req.cpuSeconds()
		jobs = append(jobs, job{KindCPU, fmt.Sprintf("%s/profile?seconds=%d", base, n), time.Duration(n) * time.Second, req.CPUAfter})
	}
	if req.Heap {
		jobs = append(jobs, job{KindHeap, base + "/heap", 0, req.SnapshotAfter})
	}
	if req.Goroutines {
		jobs = append(jobs, job{KindGoroutine, base + "/goroutine", 0, req.SnapshotAfter})
	}
	if req.Trace > 0 {
		jobs = append(jobs, job{KindTrace, fmt.Sprintf("%s/trace?seconds=%g", base, req.Trace.Seconds()), req.Trace, req.TraceAfter})
	}
	if req.Contention && req.CPU > 0 {
		// Delta profiles over the CPU profile's seconds: what waited during the load.
		n := req.cpuSeconds()
		for _, k := range []Kind{KindBlock, KindMutex} {
			jobs = append(jobs, job{k, fmt.Sprintf("%s/%s?seconds=%d", base, k, n), time.Duration(n) * time.Second, req.CPUAfter})
		}
	}
	results := make([]fetchResult, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Go(func() {
			if !sleep(ctx, j.after) {
				results[i].err = fmt.Errorf("%s: cancelled before it started: %w", j.kind, context.Cause(ctx))
				return
			}
			fctx, cancel := context.WithTimeout(ctx, j.dur+req.slack())
			defer cancel()
			if j.kind == KindTrace {
				results[i].trace, results[i].err = fetchTrace(fctx, client, j.url)
				if results[i].err != nil {
					results[i].err = fmt.Errorf("%s: %w", j.kind, results[i].err)
				}
				return
			}
			p, err := fetch(fctx, client, j.url)
			if optional(j.kind) && (notServed(err) || err == nil && len(p.Parsed.Sample) == 0) {
				results[i].absent = true
				return
			}
			if err != nil {
				results[i].err = fmt.Errorf("%s: %w", j.kind, err)
				return
			}
			p.Kind = j.kind
			results[i].prof = p
		})
	}
	wg.Wait()

	var failures []string
	asked := len(jobs)
	for _, r := range results {
		if r.absent {
			asked--
			continue
		}
		if r.err != nil {
			failures = append(failures, r.err.Error())
			continue
		}
		if r.trace != nil {
			out.Trace = r.trace
			continue
		}
		switch r.prof.Kind {
		case KindCPU:
			out.CPU = r.prof
		case KindHeap:
			out.Heap = r.prof
		case KindGoroutine:
			out.Goroutine = r.prof
		case KindBlock:
			out.Block = r.prof
		case KindMutex:
			out.Mutex = r.prof
		}
	}
	if len(failures) == 0 {
		return out, nil
	}
	return out, []string{fmt.Sprintf("captured %d of %d profiles: %s",
		asked-len(failures), asked, strings.Join(failures, "; "))}
}

// sleep waits d; false if ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// fetch gets one profile and checks that it parses.
func fetch(ctx context.Context, client *http.Client, u string) (*Profile, error) {
	rc, err := get(ctx, client, u)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	body, err := inflate.ReadAll(rc, MaxProfileBytes)
	if inflate.IsTooLarge(err) {
		return nil, fmt.Errorf("response %v for a profile; skipped", err)
	}
	if err != nil {
		return nil, fmt.Errorf("reading body: %w", err)
	}
	if looksLikeHTML(body) {
		return nil, errors.New("got an HTML page, not a profile (is the base URL the pprof root?)")
	}
	data, gzipped := body, isGzip(body)
	if gzipped {
		// Decompressed here, under a bound: profile.ParseData would expand it whole.
		if data, err = inflate.Gzip(body, MaxProfileUncompressed); err != nil {
			if inflate.IsTooLarge(err) {
				return nil, fmt.Errorf("profile uncompressed %v; skipped", err)
			}
			return nil, fmt.Errorf("parsing profile: %w", err)
		}
		if isGzip(data) {
			return nil, errors.New("parsing profile: compressed twice")
		}
	}
	parsed, err := profile.ParseData(data)
	if err != nil {
		return nil, fmt.Errorf("parsing profile: %w", err)
	}
	raw := body
	if !gzipped {
		// Legacy or uncompressed: store what go tool pprof expects.
		var buf bytes.Buffer
		if err := parsed.Write(&buf); err != nil {
			return nil, fmt.Errorf("encoding profile: %w", err)
		}
		raw = buf.Bytes()
	}
	return &Profile{Raw: raw, Parsed: parsed}, nil
}

// get requests u and returns the body of a 200 OK answer; any other status is a *statusError.
func get(ctx context.Context, client *http.Client, u string) (io.ReadCloser, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("building request: %w", err)
	}
	resp, err := client.Do(hreq)
	if err != nil {
		return nil, fmt.Errorf("fetching: %w", unwrapURLError(err))
	}
	if resp.StatusCode == http.StatusOK {
		return resp.Body, nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 512))
	if err != nil {
		return nil, fmt.Errorf("reading body: %w", err)
	}
	msg := resp.Status
	if s := snippet(body); s != "" && !strings.Contains(strings.ToLower(s), strings.ToLower(http.StatusText(resp.StatusCode))) {
		msg += ": " + s
	}
	return nil, &statusError{resp.StatusCode, msg}
}

// unwrapURLError drops the method and URL that *url.Error repeats.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// isGzip reports whether b starts as a gzip stream does.
func isGzip(b []byte) bool { return bytes.HasPrefix(b, []byte{0x1f, 0x8b}) }

func looksLikeHTML(b []byte) bool {
	head := bytes.ToLower(bytes.TrimSpace(b[:min(len(b), 512)]))
	return bytes.HasPrefix(head, []byte("<!doctype html")) || bytes.HasPrefix(head, []byte("<html"))
}

// snippet is the first line of an error body, printable and short.
func snippet(b []byte) string {
	line, _, _ := bytes.Cut(b[:min(len(b), 512)], []byte("\n"))
	s := strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, strings.TrimSpace(string(line)))
	if r := []rune(s); len(r) > 120 {
		s = string(r[:120]) + "..."
	}
	return s
}
