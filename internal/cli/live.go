package cli

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/apiperf/apiperf/live"
	"github.com/apiperf/apiperf/result"
)

// liveFlags are the flags that watch a command while it runs (run, sweep, capacity).
type liveFlags struct {
	listen string
	hlog   string
}

func (f *liveFlags) register(fs *pflag.FlagSet, hlog bool) {
	fs.StringVar(&f.listen, "listen", "", "serve Prometheus /metrics and a live page at / on this address while the command runs, e.g. 127.0.0.1:9464")
	if hlog {
		fs.StringVar(&f.hlog, "hlog", "", "write the latency of every second to this HdrHistogram interval log (.hlog)")
	}
}

// start starts the live session of a command: the terminal view when stderr is a terminal
// (not with -q), the listener, the interval logs (one file, or one per level in hlogDir).
func (f *liveFlags) start(e *env, doc *result.Run, quiet bool, hlogDir string) (*live.Session, error) {
	cfg := live.Config{Listen: f.listen, Hlog: f.hlog, HlogDir: hlogDir, Kind: doc.Kind, Target: doc.Scenario.Redact().URL, Labels: doc.RedactedLabels()}
	if e.isTerminal && !quiet {
		cfg.Term = e.stderr
	}
	s, err := live.Start(cfg)
	if err != nil {
		return nil, asUsage(err)
	}
	for _, w := range s.Warnings() {
		fmt.Fprintf(e.stderr, "apiperf: warning: %s\n", w)
	}
	if a := s.Addr(); a != "" && !quiet {
		fmt.Fprintf(e.stderr, "apiperf: live page and /metrics at http://%s/\n", a)
	}
	return s, nil
}
