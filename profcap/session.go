package profcap

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apiperf/apiperf/exectrace"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/procfs"
	"github.com/apiperf/apiperf/sweep"
)

// ProfilesDir is where profiles are saved, next to run.json: profiles/<label>/cpu.pb.gz.
const ProfilesDir = "profiles"

// Profile level keywords of Session.Levels.
const (
	LevelsAll  = "all"
	LevelsPeak = "peak"
	LevelsLast = "last"
)

// DefaultLevels are the sweep levels whose profiles are kept: the level with the highest
// QPS and the last one.
var DefaultLevels = []string{LevelsPeak, LevelsLast}

// storedTopRows is how many rows run.json keeps per top table (diffs need the tail).
const storedTopRows = 60

// MaxUnlistedPct is the largest CPU share a function left out of a stored top table may
// have: tables keep every function down to half of it, so a diff can tell a function that
// is gone from one that was cut off.
const MaxUnlistedPct = 1.0

// Client fetches profiles and metrics on connections of its own, never the load's.
var Client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2, DisableCompression: true}}

// Session captures from the target while load steps run: the metrics scraper for the
// whole of each step, the profiles at their place in its window. Begin starts a step's
// capture; Finish keeps what --profile-levels chose and makes the Record. Its zero value
// (nothing to capture) does nothing.
type Session struct {
	Pprof   string // net/http/pprof base URL; "" captures no profile
	Metrics string // Prometheus text endpoint; "" scrapes nothing
	PID     int    // the target's process id: its CPU and RSS sampled from /proc; 0: none
	// PIDSource says how PID was found ("--target-pid", "listening on 127.0.0.1:8080"),
	// or why no PID was (PID 0), for the record.
	PIDSource string
	// Machine reads the whole machine's CPU (/proc/stat) at each step's start and end.
	Machine bool
	Levels  []string // steps whose profiles are kept: LevelsPeak, LevelsLast, LevelsAll, labels or numbers
	TopN    int      // rows of the top tables shown (at least storedTopRows are kept)
	// Trace is how long to record the target's execution trace at each step, after its
	// CPU profile; 0 records none.
	Trace time.Duration

	steps []*StepCapture
}

// Enabled reports whether anything is captured.
func (s *Session) Enabled() bool { return s != nil && (s.Pprof != "" || s.Metrics != "" || s.PID > 0) }

// StepCapture is the capture alongside one load step (a measure.Step is what the step measured). Its goroutines end in Wait.
type StepCapture struct {
	label  string
	rep    int
	start  time.Time
	req    Request
	cancel context.CancelFunc // ends the scraper
	abort  context.CancelFunc // ends pending profile fetches
	wg     sync.WaitGroup
	pmu    sync.Mutex // guards swarn: the scraper and the /proc sampler both add to it
	done   chan struct{}

	profiles *Profiles
	series   *Series
	process  *Series               // the /proc samples
	machine  [2]*procfs.Machine    // the machine's CPU at the step's start and end
	pid      int                   // the target's process
	peers    []procfs.Peer         // its outbound connections at the step's end
	peerCPU0 map[int]time.Duration // the CPU time of the processes at their other end, at the start
	peerT0   time.Time
	note     string   // why the CPU profile was skipped
	swarn    []string // the scraper's warnings
	pwarn    []string // the profile capture's warnings
	warnings []string // all of them, once Wait has returned
}

// Begin starts capturing for a step of length window with the given label and
// repetition. It returns at once (nil when nothing is captured); the load starts right
// after it, and Wait must be called when it ends.
func (s *Session) Begin(ctx context.Context, label string, rep int, window time.Duration) *StepCapture {
	if !s.Enabled() {
		return nil
	}
	c := &StepCapture{label: label, rep: rep, start: time.Now(), done: make(chan struct{}), pid: s.PID}
	s.steps = append(s.steps, c)
	if s.Machine {
		c.machine[0] = readMachine()
	}
	if c.pid > 0 { // the processes of this machine the target talks to (a database), off the load's path
		c.wg.Go(func() {
			peers, _ := procfs.Outbound(c.pid)
			c.peerCPU0, c.peerT0 = procfs.PeerCPU(peers), time.Now()
		})
	}
	if s.Metrics != "" {
		sctx, cancel := context.WithCancel(ctx)
		c.cancel = cancel
		sc := &Scraper{URL: s.Metrics, Client: Client}
		c.wg.Go(func() {
			series, warns := sc.Run(sctx)
			c.series = &series
			c.addWarnings(warns)
		})
	}
	if s.PID > 0 {
		sctx, cancel := context.WithCancel(ctx)
		prev := c.cancel
		c.cancel = func() {
			cancel()
			if prev != nil {
				prev()
			}
		}
		ps := &ProcSampler{PID: s.PID}
		c.wg.Go(func() {
			series, warns := ps.Run(sctx)
			c.process = &series
			c.addWarnings(warns)
		})
	}
	if s.Pprof == "" {
		close(c.done)
		return c
	}
	c.req, c.note = Request{Base: strings.TrimRight(s.Pprof, "/"), CPU: window, Heap: true, Goroutines: true, Contention: true, Trace: s.Trace}.Within(window)
	req := c.req
	pctx, abort := context.WithCancel(ctx)
	c.abort = abort
	go func() {
		defer close(c.done)
		c.profiles, c.pwarn = Capture(pctx, req, Client)
	}()
	return c
}

func (c *StepCapture) addWarnings(w []string) {
	c.pmu.Lock()
	c.swarn = append(c.swarn, w...)
	c.pmu.Unlock()
}

// readMachine is the machine's CPU now, nil when /proc/stat cannot be read.
func readMachine() *procfs.Machine {
	m, err := procfs.ReadMachine()
	if err != nil {
		return nil
	}
	return &m
}

// peerCores sets the CPU the local peers' processes used between two readings dt apart,
// of the processes read at both (a database's backend for a connection opened meanwhile
// is left out: what it used before the step is unknown).
func peerCores(peers []procfs.Peer, cpu0, cpu1 map[int]time.Duration, dt time.Duration) {
	if cpu0 == nil || dt <= 0 {
		return
	}
	for i := range peers {
		var used time.Duration
		for _, pid := range peers[i].PIDs {
			t0, ok0 := cpu0[pid]
			if t1, ok1 := cpu1[pid]; ok0 && ok1 {
				used += max(0, t1-t0)
			}
		}
		peers[i].CPUCores = used.Seconds() / dt.Seconds()
	}
}

// Wait ends the scraper as soon as the load has ended and waits, bounded, for the
// profiles: pending fetches get the rest of their window plus slack, then are abandoned.
func (c *StepCapture) Wait() {
	if c == nil {
		return
	}
	if c.machine[0] != nil {
		c.machine[1] = readMachine()
	}
	var peerCPU1 map[int]time.Duration
	var peerT1 time.Time
	if c.pid > 0 {
		c.peers, _ = procfs.Outbound(c.pid) // the pools' connections, still open as the load ends
		peerCPU1, peerT1 = procfs.PeerCPU(c.peers), time.Now()
	}
	if c.cancel != nil {
		c.cancel()
	}
	c.wg.Wait()
	peerCores(c.peers, c.peerCPU0, peerCPU1, peerT1.Sub(c.peerT0))
	defer func() {
		if c.note != "" {
			c.warnings = append(c.warnings, c.note)
		}
		c.warnings = append(append(c.warnings, c.pwarn...), c.swarn...)
	}()
	if c.abort == nil {
		return
	}
	bound := DefaultSlack + time.Second
	if end := max(c.req.CPUAfter+c.req.CPU, c.req.TraceAfter+c.req.Trace); end > 0 {
		bound += max(0, end-time.Since(c.start))
	}
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
		c.abort()
		<-c.done
	}
	c.abort()
}

// Finish keeps the profiles of the steps chosen by Levels (every step of a plain run),
// saves them as .pb.gz under dir/profiles/<label>/, analyses them and returns the record
// (nil when nothing was captured). Capture problems become warnings, never errors.
func (s *Session) Finish(steps []*measure.Step, dir string) *Record {
	if !s.Enabled() || len(s.steps) == 0 {
		return nil
	}
	tc := &Record{Pprof: s.Pprof, Metrics: s.Metrics, PIDSource: s.PIDSource}
	keep := func(*measure.Step) bool { return true }
	if len(s.Levels) > 0 && len(steps) > 1 {
		tc.ProfileLevels = s.Levels
		keep = chooseSteps(steps, s.Levels)
	}
	dropped := 0
	for _, c := range s.steps {
		ts := StepRecord{Label: c.label, Rep: c.rep, Start: c.start.UTC(), Warnings: c.warnings}
		step := findStep(steps, c.label, c.rep)
		if c.series != nil {
			ts.Series = c.series
			to := time.Since(c.start)
			if step != nil {
				to = step.Elapsed.Duration() + c.series.Interval
			}
			sum := c.series.Summarize(0, to)
			ts.Summary = &sum
		}
		if c.process != nil {
			ts.Process = c.process
			to := time.Since(c.start)
			if step != nil {
				to = step.Elapsed.Duration() + c.process.Interval
			}
			sum := c.process.Summarize(0, to)
			ts.ProcessSummary = &sum
		}
		ts.Outbound = c.peers
		if m0, m1 := c.machine[0], c.machine[1]; m0 != nil && m1 != nil {
			use := m1.Since(*m0)
			ts.Machine = &use
		}
		if s.Pprof != "" && c.req.CPU > 0 {
			ts.CPUFrom, ts.CPUSeconds = c.req.CPUAfter, int(c.req.CPU/time.Second)
		}
		switch {
		case c.profiles == nil || len(c.profiles.All()) == 0 && c.profiles.Trace == nil:
		case step == nil || !keep(step):
			dropped++
			ts.CPUFrom, ts.CPUSeconds = 0, 0
			c.profiles.Trace.Remove()
		default:
			if len(c.profiles.All()) > 0 {
				ts.Profiles, ts.Files, ts.Warnings = s.keep(c, dir, ts.Warnings)
			}
			ts.Trace, ts.Files, ts.Warnings = keepTrace(c, dir, ts.Files, ts.Warnings)
		}
		tc.Steps = append(tc.Steps, ts)
	}
	if dropped > 0 {
		levels := "other levels"
		if dropped == 1 {
			levels = "other level"
		}
		tc.Warnings = append(tc.Warnings, fmt.Sprintf("profiles captured at %d %s were not kept (--profile-levels %s)", dropped, levels, strings.Join(s.Levels, ",")))
	}
	return tc
}

// keepTrace saves one step's execution trace beside its profiles and sums it up.
func keepTrace(c *StepCapture, dir string, files, warns []string) (*TraceRecord, []string, []string) {
	t := c.profiles.Trace
	if t == nil {
		return nil, files, warns
	}
	sub := filepath.Join(ProfilesDir, stepDir(c.label, c.rep))
	if err := t.Save(filepath.Join(dir, sub)); err != nil {
		t.Remove()
		return nil, files, append(warns, err.Error())
	}
	files = append(files, filepath.ToSlash(filepath.Join(sub, exectrace.FileName)))
	sum, err := t.Summarize()
	if err != nil {
		return nil, files, append(warns, "trace: "+err.Error())
	}
	return &TraceRecord{From: c.req.TraceAfter, Length: c.req.Trace, Bytes: t.Bytes, Summary: sum}, files, warns
}

// keep analyses and saves one step's profiles.
func (s *Session) keep(c *StepCapture, dir string, warns []string) (*Analysis, []string, []string) {
	a, aw := Analyze(c.profiles, 1<<20)
	warns = append(warns, aw...)
	for _, t := range []*TopTable{a.CPU, a.AllocSpace, a.InuseSpace} {
		trimTop(t, max(s.TopN, storedTopRows))
	}
	if a.Flame != nil {
		pruned := a.Flame.Pruned(1.0 / SVGWidth)
		a.Flame = &pruned
	}
	sub := filepath.Join(ProfilesDir, stepDir(c.label, c.rep))
	if err := c.profiles.Save(filepath.Join(dir, sub)); err != nil {
		return &a, nil, append(warns, err.Error())
	}
	var files []string
	for _, p := range c.profiles.All() {
		files = append(files, filepath.ToSlash(filepath.Join(sub, p.Kind.FileName())))
	}
	return &a, files, warns
}

// trimTop keeps n rows of t by flat and, by cum, n rows or every function down to
// MaxUnlistedPct/2 of the total, whichever is more.
func trimTop(t *TopTable, n int) {
	if t == nil {
		return
	}
	t.ByFlat = t.ByFlat[:min(n, len(t.ByFlat))]
	keep := min(n, len(t.ByCum))
	for keep < len(t.ByCum) && t.ByCum[keep].CumPct >= MaxUnlistedPct/2 {
		keep++
	}
	t.ByCum = t.ByCum[:keep]
}

// LevelNumber reads a level label ("c=50", "rate=100/s", as sweep.Label writes them) or a
// bare number ("50") as a level; -1 if it is none.
func LevelNumber(s string) float64 {
	if v, _, ok := sweep.ParseLabel(s); ok {
		return v
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 {
		return -1
	}
	return v
}

// chooseSteps returns which steps' profiles levels keeps.
func chooseSteps(steps []*measure.Step, levels []string) func(*measure.Step) bool {
	chosen := map[*measure.Step]bool{}
	var peak []*measure.Step // the repetitions of the table's peak level (sweep.Peak)
	if lv := sweep.Levels(steps); len(lv) > 0 {
		if p := sweep.Peak(lv); p >= 0 {
			for _, j := range lv[p].Steps {
				peak = append(peak, steps[j])
			}
		}
	}
	for _, l := range levels {
		switch l {
		case LevelsAll:
			return func(*measure.Step) bool { return true }
		case LevelsPeak:
			for _, s := range peak {
				chosen[s] = true
			}
		case LevelsLast:
			chosen[steps[len(steps)-1]] = true
		default:
			for _, s := range steps {
				if s.Label == l || LevelNumber(s.Label) == LevelNumber(l) {
					chosen[s] = true
				}
			}
		}
	}
	return func(s *measure.Step) bool { return chosen[s] }
}

func findStep(steps []*measure.Step, label string, rep int) *measure.Step {
	i := slices.IndexFunc(steps, func(s *measure.Step) bool { return s.Label == label && s.Rep == rep })
	if i < 0 {
		return nil
	}
	return steps[i]
}

// stepDir names a step's profile directory: its label with unsafe characters replaced.
func stepDir(label string, rep int) string {
	b := []byte(label)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '=' || c == '.' || c == '-') {
			b[i] = '_'
		}
	}
	if rep > 0 {
		return fmt.Sprintf("%s-rep%d", b, rep)
	}
	return string(b)
}
