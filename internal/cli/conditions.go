package cli

import (
	"context"
	"net/netip"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/apiperf/apiperf/cluster"
	"github.com/apiperf/apiperf/conditions"
	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/profcap"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/sweep"
)

// cmdlineTimeout bounds the fetch of the target's pprof cmdline.
const cmdlineTimeout = 2 * time.Second

// startConditions starts the record of a run's conditions before any traffic: the
// generator's machine, and the target's process p (findProcess: --target-pid, else the
// process listening on the target's loopback address), else what its pprof cmdline says.
func startConditions(ctx context.Context, cfg load.Config, tgt scenario.Target, tf *targetFlags, p targetProcess, redact []string) *conditions.Session {
	var t *conditions.Target
	local := isLoopbackHost(tgt.Host)
	if p.err == nil && p.pid > 0 && (local || p.how == "--target-pid") {
		t = conditions.ReadTarget(p.pid, p.how)
	}
	if t == nil && tf.pprof != "" {
		t = pprofCmdline(ctx, tf.pprof, redact)
	}
	s := conditions.NewSession(conditions.ReadGenerator(version(), cfg.Threads), t)
	s.TargetLocal = local
	return s
}

// isLoopbackHost says whether host names this machine's loopback interface.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// pprofCmdline asks the target's net/http/pprof for its command line; nil when it cannot.
func pprofCmdline(ctx context.Context, base string, redact []string) *conditions.Target {
	body, err := profcap.FetchCmdline(ctx, base, cmdlineTimeout)
	if err != nil {
		return nil
	}
	return conditions.FromCmdline(body, redact)
}

// conditionsHook samples the machine around every measured step (warmups are not).
func conditionsHook(s *conditions.Session) sweep.Hook {
	return func(_ context.Context, i sweep.StepInfo) func(*measure.Step) {
		if i.Warmup {
			return nil
		}
		return s.Begin(i.Label, i.Rep)
	}
}

// localHook is h when the steps run on this machine; scaled out (c not nil), the load runs
// on the workers' machines, which this one's /proc says nothing of: no hook.
func localHook(c *cluster.Coordinator, h sweep.Hook) sweep.Hook {
	if c != nil {
		return nil
	}
	return h
}

// strictConditionsFlag registers gate's and ab's --strict-conditions.
func strictConditionsFlag(fs *pflag.FlagSet) *bool {
	return fs.Bool("strict-conditions", false, "exit 2 when the runs are not comparable (their generators' machines differ) or either ran on a busy machine, instead of warning")
}

// sampled wraps an A/B side's step function so that s samples the machine around each
// measured step (labelled as the step will be: its level, repetitions from 0). A step of
// another length than base's is a warmup: run, not recorded.
func sampled(s *conditions.Session, base load.Config, f sweep.StepFunc) sweep.StepFunc {
	reps := map[string]int{}
	return func(ctx context.Context, c load.Config) (*measure.Step, error) {
		if c.Duration != base.Duration || c.Requests != base.Requests {
			return f(ctx, c)
		}
		label := sweep.ConfigLabel(c)
		end := s.Begin(label, reps[label])
		reps[label]++
		st, err := f(ctx, c)
		if err != nil {
			end(nil)
			return st, err
		}
		end(st)
		return st, nil
	}
}
