package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/apiperf/apiperf/compare"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/profcap"
	"github.com/apiperf/apiperf/report"
	"github.com/apiperf/apiperf/result"
)

// ProfilesDir is where profiles are saved, next to run.json: profiles/<label>/cpu.pb.gz.
const ProfilesDir = "profiles"

// Profile level keywords of --profile-levels.
const (
	levelsAll  = "all"
	levelsPeak = "peak"
	levelsLast = "last"
)

// storedTopRows is how many rows run.json keeps per top table (diffs need the tail).
const storedTopRows = 60

// defaultProfileLevels is --profile-levels' default: the level with the highest QPS and the last one.
var defaultProfileLevels = []string{levelsPeak, levelsLast}

// targetFlags are --pprof, --metrics and --profile-levels: what to capture from the target
// while the load runs (run and sweep).
type targetFlags struct {
	pprof   string
	metrics string
	levels  []string
	topN    int
	// dir is where finish saved the profiles: their paths are printed joined to it, so that
	// they can be copied into go tool pprof from the working directory.
	dir string
	pid int // --target-pid: sample this process's CPU and RSS from /proc
}

func (f *targetFlags) register(fs *pflag.FlagSet, sweep bool) {
	fs.StringVar(&f.pprof, "pprof", "", "capture the target's CPU, heap and goroutine profiles from its net/http/pprof `base` URL, e.g. http://127.0.0.1:6060/debug/pprof")
	fs.StringVar(&f.metrics, "metrics", "", "scrape the target's Prometheus text endpoint `URL` every second while the load runs")
	fs.IntVar(&f.topN, "profile-top", 20, "rows in the profile top tables")
	fs.IntVar(&f.pid, "target-pid", 0, "sample the target process `PID`'s CPU and RSS from /proc every second (same machine; any language)")
	if sweep {
		f.levels = defaultProfileLevels
		fs.StringSliceVar(&f.levels, "profile-levels", defaultProfileLevels, "sweep levels whose profiles are kept: peak, last, all, or levels like 50 or c=50 (profiles are captured at every level, so each sees the same overhead)")
	}
}

// enabled reports whether anything is captured from the target.
func (f *targetFlags) enabled() bool {
	return f != nil && (f.pprof != "" || f.metrics != "" || f.pid > 0)
}

// validate checks the URLs and levels; window is the duration of one step (0: unbounded).
func (f *targetFlags) validate(window time.Duration) error {
	var errs []error
	for _, u := range []struct{ flag, v string }{{"--pprof", f.pprof}, {"--metrics", f.metrics}} {
		if u.v == "" {
			continue
		}
		p, err := url.Parse(u.v)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			errs = append(errs, fmt.Errorf("%s %q: want an http:// or https:// URL with a host", u.flag, u.v))
		}
	}
	if f.pprof != "" && window <= 0 {
		errs = append(errs, errors.New("--pprof needs a duration (-d) to place the CPU profile inside the load"))
	}
	if f.pid < 0 {
		errs = append(errs, fmt.Errorf("--target-pid %d: want a process id", f.pid))
	} else if f.pid > 0 {
		if _, err := profcap.ReadProc(f.pid); err != nil {
			errs = append(errs, fmt.Errorf("--target-pid: %w", err))
		}
	}
	if f.topN < 1 {
		errs = append(errs, fmt.Errorf("--profile-top %d: want at least 1", f.topN))
	}
	for _, l := range f.levels {
		if l != levelsAll && l != levelsPeak && l != levelsLast && levelNumber(l) < 0 {
			errs = append(errs, fmt.Errorf("--profile-levels %q: want peak, last, all, or a level like 50, c=50 or rate=100/s", l))
		}
	}
	return errors.Join(errs...)
}

// levelNumber reads "50", "c=50" or "rate=100/s" as a level; -1 if it is none.
func levelNumber(s string) float64 {
	s = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(s, "c="), "rate="), "/s")
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 {
		return -1
	}
	return v
}

// stepCapture is what runs alongside one load step: the metrics scraper for the whole step
// and the profiles at their places in the window. Its goroutines end in wait.
type stepCapture struct {
	label  string
	rep    int
	start  time.Time
	req    profcap.Request
	cancel context.CancelFunc // ends the scraper
	abort  context.CancelFunc // ends pending profile fetches
	wg     sync.WaitGroup
	pmu    sync.Mutex // guards swarn: the scraper and the /proc sampler both add to it
	done   chan struct{}

	profiles *profcap.Profiles
	series   *profcap.Series
	process  *profcap.Series // --target-pid samples
	note     string          // why the CPU profile was skipped
	swarn    []string        // the scraper's warnings
	pwarn    []string        // the profile capture's warnings
	warnings []string        // all of them, once wait has returned
}

// profileClient fetches profiles and metrics on connections of its own, never the load's.
var profileClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2, DisableCompression: true}}

// start begins capturing for a step of length window with the given label. It returns at
// once (nil when nothing is captured); the load starts right after it.
func (f *targetFlags) start(ctx context.Context, label string, rep int, window time.Duration) *stepCapture {
	if !f.enabled() {
		return nil
	}
	c := &stepCapture{label: label, rep: rep, start: time.Now(), done: make(chan struct{})}
	if f.metrics != "" {
		sctx, cancel := context.WithCancel(ctx)
		c.cancel = cancel
		s := &profcap.Scraper{URL: f.metrics, Client: profileClient}
		c.wg.Go(func() {
			series, warns := s.Run(sctx)
			c.series = &series
			c.pmu.Lock()
			c.swarn = append(c.swarn, warns...)
			c.pmu.Unlock()
		})
	}
	if f.pid > 0 {
		sctx, cancel := context.WithCancel(ctx)
		prev := c.cancel
		c.cancel = func() {
			cancel()
			if prev != nil {
				prev()
			}
		}
		s := &profcap.ProcSampler{PID: f.pid}
		c.wg.Go(func() {
			series, warns := s.Run(sctx)
			c.process = &series
			c.pmu.Lock()
			c.swarn = append(c.swarn, warns...)
			c.pmu.Unlock()
		})
	}
	if f.pprof != "" {
		c.req, c.note = profcap.Request{Base: strings.TrimRight(f.pprof, "/"), CPU: window, Heap: true, Goroutines: true}.Within(window)
		req := c.req
		pctx, abort := context.WithCancel(ctx)
		c.abort = abort
		go func() {
			defer close(c.done)
			c.profiles, c.pwarn = profcap.Capture(pctx, req, profileClient)
		}()
	} else {
		close(c.done)
	}
	return c
}

// wait ends the scraper as soon as the load has ended and waits, bounded, for the
// profiles: pending fetches get the rest of their window plus slack, then are abandoned.
func (c *stepCapture) wait() {
	if c == nil {
		return
	}
	if c.cancel != nil {
		c.cancel()
	}
	c.wg.Wait()
	defer func() {
		if c.note != "" {
			c.warnings = append(c.warnings, c.note)
		}
		c.warnings = append(append(c.warnings, c.pwarn...), c.swarn...)
	}()
	if c.abort == nil {
		return
	}
	bound := profcap.DefaultSlack + time.Second
	if end := c.req.CPUAfter + c.req.CPU; c.req.CPU > 0 {
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

// finish keeps the profiles of the steps chosen by --profile-levels (every step of a
// plain run), saves them as .pb.gz under dir/profiles/<label>/, analyses them and sets
// doc.Target. Capture problems become warnings of the run, never errors.
func (f *targetFlags) finish(doc *result.Run, dir string, caps []*stepCapture) {
	if !f.enabled() || len(caps) == 0 {
		return
	}
	f.dir = dir
	tc := &result.TargetCapture{Pprof: f.pprof, Metrics: f.metrics}
	keep := func(*measure.Step) bool { return true }
	if len(f.levels) > 0 && len(doc.Steps) > 1 {
		tc.ProfileLevels = f.levels
		keep = chooseSteps(doc.Steps, f.levels)
	}
	dropped := 0
	for _, c := range caps {
		if c == nil {
			continue
		}
		ts := result.TargetStep{Label: c.label, Rep: c.rep, Start: c.start.UTC(), Warnings: c.warnings}
		step := findStep(doc.Steps, c.label, c.rep)
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
		if f.pprof != "" && c.req.CPU > 0 {
			ts.CPUFrom, ts.CPUSeconds = c.req.CPUAfter, int(c.req.CPU/time.Second)
		}
		switch {
		case c.profiles == nil || len(c.profiles.All()) == 0:
		case step == nil || !keep(step):
			dropped++
			ts.CPUFrom, ts.CPUSeconds = 0, 0
		default:
			ts.Profiles, ts.Files, ts.Warnings = f.keepProfiles(c, dir, ts.Warnings)
		}
		tc.Steps = append(tc.Steps, ts)
	}
	if dropped > 0 {
		tc.Warnings = append(tc.Warnings, fmt.Sprintf("profiles captured at %s were not kept (--profile-levels %s)", report.Plural(dropped, "other level"), strings.Join(f.levels, ",")))
	}
	for _, w := range tc.AllWarnings() {
		doc.Warnings = append(doc.Warnings, "target: "+w)
	}
	doc.Target = tc
}

// keepProfiles analyses and saves one step's profiles.
func (f *targetFlags) keepProfiles(c *stepCapture, dir string, warns []string) (*profcap.Analysis, []string, []string) {
	a, aw := profcap.Analyze(c.profiles, 1<<20)
	warns = append(warns, aw...)
	for _, t := range []*profcap.TopTable{a.CPU, a.AllocSpace, a.InuseSpace} {
		trimTop(t, max(f.topN, storedTopRows))
	}
	if a.Flame != nil {
		pruned := a.Flame.Pruned(1.0 / profcap.SVGWidth)
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
// compare.MaxUnlistedPct/2 of the total, whichever is more, so a diff of two runs can
// tell a function that is gone from one cut off.
func trimTop(t *profcap.TopTable, n int) {
	if t == nil {
		return
	}
	t.ByFlat = t.ByFlat[:min(n, len(t.ByFlat))]
	keep := min(n, len(t.ByCum))
	for keep < len(t.ByCum) && t.ByCum[keep].CumPct >= compare.MaxUnlistedPct/2 {
		keep++
	}
	t.ByCum = t.ByCum[:keep]
}

// chooseSteps returns which steps' profiles --profile-levels keeps.
func chooseSteps(steps []*measure.Step, levels []string) func(*measure.Step) bool {
	chosen := map[*measure.Step]bool{}
	peak := steps[0]
	for _, s := range steps {
		if s.QPS() > peak.QPS() {
			peak = s
		}
	}
	for _, l := range levels {
		switch l {
		case levelsAll:
			return func(*measure.Step) bool { return true }
		case levelsPeak:
			chosen[peak] = true
		case levelsLast:
			chosen[steps[len(steps)-1]] = true
		default:
			for _, s := range steps {
				if s.Label == l || levelNumber(s.Label) == levelNumber(l) {
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

// report prints the capture's warnings to stderr and, for a text report, the top tables
// and metrics summary to stdout.
func (f *targetFlags) report(e *env, doc *result.Run, text bool) {
	if !f.enabled() || doc.Target == nil {
		return
	}
	for _, w := range doc.Target.AllWarnings() {
		fmt.Fprintf(e.stderr, "apiperf: warning: target: %s\n", w)
	}
	if text {
		printTarget(e.stdout, doc.Target, f.topN, f.dir)
	}
}

// printTarget writes the top of each kept CPU profile (`top -cum`) and the metrics
// summary to w, after the load summary; profile paths are joined to dir, where they are.
func printTarget(w io.Writer, tc *result.TargetCapture, rows int, dir string) {
	if tc == nil {
		return
	}
	for _, s := range tc.Steps {
		if s.Profiles != nil && s.Profiles.CPU != nil {
			t := *s.Profiles.CPU
			t.ByCum = t.ByCum[:min(rows, len(t.ByCum))]
			fmt.Fprintf(w, "\nTarget CPU profile at %s (%ds), top -cum:\n%s", s.Label, s.CPUSeconds, t)
			if sh := s.Profiles.Shares; sh != nil {
				fmt.Fprintf(w, "GC %.1f%% of CPU, allocation %.1f%%\n", sh.GCPct, sh.AllocPct)
			}
		}
		if s.Summary != nil && s.Summary.Points > 0 {
			fmt.Fprintf(w, "Target metrics at %s: %s\n", s.Label, metricsLine(s.Summary))
		}
		if p := s.ProcessSummary; p != nil && p.Points > 0 && p.CPUCores != nil && p.RSSBytes != nil {
			fmt.Fprintf(w, "Target process at %s: CPU %.2f cores (max %.2f), RSS %.1f MiB (max %.1f)\n", s.Label,
				p.CPUCores.Mean, p.CPUCores.Max, p.RSSBytes.Mean/(1<<20), p.RSSBytes.Max/(1<<20))
		}
	}
	for _, s := range tc.Steps {
		if len(s.Files) > 0 {
			paths := make([]string, len(s.Files))
			for i, f := range s.Files {
				paths[i] = filepath.Join(dir, f)
			}
			fmt.Fprintf(w, "Profiles: %s (open with go tool pprof)\n", strings.Join(paths, " "))
		}
	}
}

// metricsLine is one line of a metrics summary: means over the step.
func metricsLine(s *profcap.Summary) string {
	var parts []string
	if s.CPUCores != nil {
		parts = append(parts, fmt.Sprintf("CPU %.2f cores", s.CPUCores.Mean))
	}
	if s.RSSBytes != nil {
		parts = append(parts, fmt.Sprintf("RSS %.1f MiB", s.RSSBytes.Mean/(1<<20)))
	}
	if s.Goroutines != nil {
		parts = append(parts, fmt.Sprintf("goroutines %.0f (max %.0f)", s.Goroutines.Mean, s.Goroutines.Max))
	}
	if s.HeapInuseBytes != nil {
		parts = append(parts, fmt.Sprintf("heap in use %.1f MiB", s.HeapInuseBytes.Mean/(1<<20)))
	}
	parts = append(parts, fmt.Sprintf("%.0f GCs", s.GCs))
	if s.GCPauseMeanSeconds != nil {
		parts = append(parts, fmt.Sprintf("mean pause %v", time.Duration(*s.GCPauseMeanSeconds*float64(time.Second)).Round(time.Microsecond)))
	}
	return strings.Join(parts, ", ")
}

// profileOutDir is where a run's profiles go: next to -o's file, else the working directory.
func profileOutDir(out string) string {
	if out == "" {
		return "."
	}
	return filepath.Dir(out)
}

// printProfileDiff prints, for two runs that both hold CPU profiles of the target, the
// functions whose share of CPU grew or shrank the most. .dat files and runs without
// profiles print nothing.
func printProfileDiff(w io.Writer, pathA, pathB string) {
	var runs [2]*result.Run
	for i, p := range []string{pathA, pathB} {
		if ok, err := isRunFile(p); err != nil || !ok {
			return
		}
		r, err := result.Load(p)
		if err != nil {
			return
		}
		runs[i] = r
	}
	d := compare.DiffProfiles(runs[0], runs[1], compare.DefaultProfileRows)
	if d == nil || len(d.Deltas) == 0 {
		return
	}
	fmt.Fprintf(w, "\nTarget CPU share, A at %s -> B at %s (percentage points of CPU time):\n", d.LevelA, d.LevelB)
	fmt.Fprintf(w, "%8s %8s %8s  %8s %8s %8s  %s\n", "cum A", "cum B", "delta", "flat A", "flat B", "delta", "function")
	for _, x := range d.Deltas {
		fmt.Fprintf(w, "%7.2f%% %7.2f%% %+7.2f  %7.2f%% %7.2f%% %+7.2f  %s\n",
			x.CumPctBefore, x.CumPctAfter, x.CumDelta, x.FlatPctBefore, x.FlatPctAfter, x.FlatDelta, x.Function)
	}
}
