package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/apiperf/apiperf/cluster"
	"github.com/apiperf/apiperf/live"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/report"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/sweep"
)

// loadSession is what run, sweep and capacity set up around their steps and tear down
// after them, in one order: the live view (--listen, --hlog) first, then the scale-out
// coordinator (--workers), whose merged intervals the live view shows.
type loadSession struct {
	watch *live.Session
	coord *cluster.Coordinator // nil without --workers
	cf    *clusterFlags
}

// startLoad binds the live view and creates --hlog before any traffic, then gathers the
// workers. The caller defers close.
func startLoad(ctx context.Context, e *env, lv *liveFlags, cf *clusterFlags, doc *result.Run, quiet bool, hlogDir string,
	src *source, expected measure.StatusSet, extra []string) (*loadSession, error) {
	watch, err := lv.start(e, doc, quiet, hlogDir)
	if err != nil {
		return nil, err
	}
	coord, err := cf.coordinate(ctx, e, src, expected, extra)
	if err != nil {
		watch.Close(ctx)
		return nil, err
	}
	if coord != nil {
		coord.WatchIntervals(watch.Feed())
	}
	return &loadSession{watch: watch, coord: coord, cf: cf}, nil
}

// step is the session's step function: the coordinator's when scaling out, else local.
func (s *loadSession) step(local sweep.StepFunc) sweep.StepFunc { return stepFunc(s.coord, local) }

// hook keeps the workers' health under each measured step's label (nil: not scaled out).
func (s *loadSession) hook() sweep.Hook {
	if s.coord == nil {
		return nil
	}
	return s.coord.Hook
}

// finish records the workers' shares in doc and closes the live view; a live view that
// does not close cleanly is a warning, never a failed run.
func (s *loadSession) finish(ctx context.Context, e *env, doc *result.Run) {
	if s.coord != nil {
		doc.Cluster = s.coord.Record()
	}
	if err := s.watch.Close(ctx); err != nil {
		fmt.Fprintf(e.stderr, "apiperf: warning: %v\n", err)
	}
}

// serveResults serves dir, the finished run's directory, to `apiperf k8s fetch` when
// --serve-results asks (scaled out only); not fetched in time is a warning: the run's
// outcome stays its own.
func (s *loadSession) serveResults(ctx context.Context, e *env, dir string) {
	if s.coord == nil || s.cf.serve <= 0 {
		return
	}
	if err := cluster.ServeResults(ctx, s.cf.joinAddr, dir, s.cf.token, s.cf.serve, e.stderr); err != nil {
		fmt.Fprintf(e.stderr, "apiperf: warning: %v\n", err)
	}
}

// serveRun is serveResults for a run: its --results-dir directory, or else one made under
// TMPDIR for the while it is served, with run.json and the outputs rendered from it.
func (s *loadSession) serveRun(ctx context.Context, e *env, doc *result.Run, dir string) {
	if s.coord == nil || s.cf.serve <= 0 {
		return
	}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "apiperf-results-")
		if err == nil {
			defer os.RemoveAll(tmp)
			err = writeRunDir(tmp, doc)
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "apiperf: warning: the results to serve: %v\n", err)
			return
		}
		dir = tmp
	}
	s.serveResults(ctx, e, dir)
}

// writeRunDir writes a run's directory: run.json and, when it has steps, everything
// rendered from it (report.html, charts, .dat, bench.txt, workers.txt).
func writeRunDir(dir string, doc *result.Run) error {
	if err := doc.Save(filepath.Join(dir, "run.json")); err != nil {
		return err
	}
	if len(doc.Steps) == 0 {
		return nil
	}
	_, err := report.WriteAll(dir, doc)
	return err
}

// close ends the coordinator and its workers' connections.
func (s *loadSession) close() {
	if s.coord != nil {
		s.coord.Close()
	}
}

// partial says whether workers were lost during the session, and if so says which on
// stderr ("apiperf: partial sweep: ..."), what naming the run.
func (s *loadSession) partial(e *env, what string) bool {
	if s.coord == nil || !s.coord.Partial() {
		return false
	}
	fmt.Fprintf(e.stderr, "apiperf: partial %s: %s\n", what, strings.Join(s.coord.Lost(), "; "))
	return true
}
